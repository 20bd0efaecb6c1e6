// Registry entries of trsm and syrk, s and d (ours and cuBLAS), and what their drivers share (level3_common.cuh):
// the registry's own choice of gemm/gemv/trsv of the same precision for their inner products.
#include <algorithm>

#include "kernels/launch.h"
#include "kernels/level3_common.cuh"
#include "kernels/registry_build.h"
#include "kernels/syrk.cuh"
#include "kernels/trsm.cuh"

namespace bok {

const bo_kernel_registry* registry();

namespace {
template <class T>
constexpr int rid(int s, int d) {
  return std::is_same_v<T, float> ? s : d;
}
}  // namespace

template <class T>
cudaError_t level3_gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                        int64_t ldb, T beta, T* c, int64_t ldc, cudaStream_t st, void* gemv_ws, size_t gemv_bytes) {
  const bo_kernel_registry* reg = registry();
  if (m <= 0 || n <= 0) return cudaSuccess;
  if (n == 1 || m == 1) {
    // y = alpha op(A) x + beta y (n == 1), or its transpose: C^T = op(B)^T op(A)^T (m == 1).
    bo_call v{};
    v.routine = rid<T>(BO_R_SGEMV, BO_R_DGEMV);
    v.alpha = alpha;
    v.beta = beta;
    v.c = c;
    if (n == 1) {
      v.op[0] = ta;
      v.m = ta == 'N' ? m : k;
      v.n = ta == 'N' ? k : m;
      v.a = a;
      v.lda = lda;
      v.b = b;
      v.incx = tb == 'N' ? 1 : ldb;
      v.incy = 1;
    } else {
      v.op[0] = tb == 'N' ? 'T' : 'N';
      v.m = tb == 'N' ? k : n;
      v.n = tb == 'N' ? n : k;
      v.a = b;
      v.lda = ldb;
      v.b = a;
      v.incx = ta == 'N' ? lda : 1;
      v.incy = ldc;
    }
    const int i = reg->select(v.routine, &v);
    if (i >= 0 && reg->entries[i].workspace_bytes(&v) <= gemv_bytes) return bok::launch(i, &v, gemv_ws, st);
  }
  bo_call g{};
  g.routine = rid<T>(BO_R_SGEMM, BO_R_DGEMM);
  g.op[0] = ta;
  g.op[1] = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha;
  g.beta = beta;
  g.a = a;
  g.lda = lda;
  g.b = b;
  g.ldb = ldb;
  g.c = c;
  g.ldc = ldc;
  const int i = reg->select(g.routine, &g);
  if (i < 0 || reg->entries[i].workspace_bytes(&g) != 0) return cudaErrorNotSupported;
  return bok::launch(i, &g, nullptr, st);
}

namespace {
template <class T>
bo_call trsv_call(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx) {
  bo_call v{};
  v.routine = rid<T>(BO_R_STRSV, BO_R_DTRSV);
  v.op[0] = uplo;
  v.op[1] = trans;
  v.op[2] = diag;
  v.n = n;
  v.a = a;
  v.lda = lda;
  v.c = x;
  v.incx = incx;
  return v;
}
}  // namespace

// The most any trsv entry needs at order n, not the one selected here: the launch selects with the call's own A, lda
// and increment, which the query does not have (the wavefront kernels take only vector-aligned columns, and need
// 8 bytes a row where the substitution kernels need 4 a block). Sizing for this query's choice gave a solve whose lda
// was aligned where n was not too small a workspace: its memset failed (cudaErrorInvalidValue).
template <class T>
size_t level3_trsv_workspace(char uplo, char trans, char diag, int64_t n) {
  const bo_kernel_registry* reg = registry();
  const bo_call v = trsv_call<T>(uplo, trans, diag, n, nullptr, n, nullptr, 1);
  size_t most = 0;
  for (size_t i = 0; i < reg->count; ++i)
    if (reg->entries[i].routine == v.routine) most = std::max(most, reg->entries[i].workspace_bytes(&v));
  return most + 256;
}

template <class T>
cudaError_t level3_trsv(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx,
                        void* ws, cudaStream_t st) {
  const bo_kernel_registry* reg = registry();
  const bo_call v = trsv_call<T>(uplo, trans, diag, n, a, lda, x, incx);
  const int i = reg->select(v.routine, &v);
  if (i < 0) return cudaErrorNotSupported;
  return bok::launch(i, &v, ws, st);
}

#define BO_LEVEL3_INSTANTIATE(T)                                                                                      \
  template cudaError_t level3_gemm<T>(char, char, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, \
                                      T, T*, int64_t, cudaStream_t, void*, size_t);                                   \
  template size_t level3_trsv_workspace<T>(char, char, char, int64_t);                                                \
  template cudaError_t level3_trsv<T>(char, char, char, int64_t, const T*, int64_t, T*, int64_t, void*, cudaStream_t);
BO_LEVEL3_INSTANTIATE(float)
BO_LEVEL3_INSTANTIATE(double)
#undef BO_LEVEL3_INSTANTIATE

namespace reg {
namespace {

template <class K>
struct TrsmEntry {
  using T = ElemT<K>;
  static int can(const Args* a) { return K::can_implement(a->op[0], a->m, a->n); }
  static size_t ws(const Args* a) { return K::workspace(a->op[0], a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->op[0], a->op[1], a->op[2], a->op[3], a->m, a->n, T(a->alpha), cp<T>(a->a), a->lda, mp<T>(a->c),
                     a->ldc, w, S(s));
  }
};
template <class T>
struct TrsmTrsvEntry {
  static int can(const Args* a) { return a->op[0] == 'L' ? a->n == 1 && a->m >= 1 : a->m == 1 && a->n >= 1; }
  static size_t ws(const Args* a) { return trsm_trsv_workspace<T>(a->op[0], a->op[1], a->op[2], a->op[3], a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return trsm_trsv<T>(a->op[0], a->op[1], a->op[2], a->op[3], a->m, a->n, T(a->alpha), cp<T>(a->a), a->lda,
                        mp<T>(a->c), a->ldc, w, S(s));
  }
};
template <class K>
struct SyrkEntry {
  using T = ElemT<K>;
  static int can(const Args* a) { return K::can_implement(a->n, a->k); }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->op[0], a->op[1], a->n, a->k, T(a->alpha), cp<T>(a->a), a->lda, T(a->beta), mp<T>(a->c), a->ldc,
                     S(s));
  }
};

template <class K, template <class> class E>
void add(std::vector<bo_kernel_entry>& v, int routine) {
  const std::string name = K::name();
  v.push_back({keep(name), keep(name), routine, 0, &E<K>::can, &E<K>::ws, &E<K>::launch});
}

}  // namespace

void add_level3(std::vector<bo_kernel_entry>& v) {
  add<TrsmInv<float, 64>, TrsmEntry>(v, BO_R_STRSM);  // first: the built-in default
  add<TrsmInv<float, 32>, TrsmEntry>(v, BO_R_STRSM);
  add<TrsmInv<float, 128>, TrsmEntry>(v, BO_R_STRSM);
  add<TrsmInv<float, 256>, TrsmEntry>(v, BO_R_STRSM);
  add<TrsmInv<float, 512>, TrsmEntry>(v, BO_R_STRSM);
  v.push_back({"strsm_trsv", "strsm_trsv", BO_R_STRSM, 0, &TrsmTrsvEntry<float>::can, &TrsmTrsvEntry<float>::ws,
               &TrsmTrsvEntry<float>::launch});
  add<SyrkGemm<float, 256>, SyrkEntry>(v, BO_R_SSYRK);  // first: the built-in default
  add<SyrkGemm<float, 128>, SyrkEntry>(v, BO_R_SSYRK);
  add<SyrkGemm<float, 512>, SyrkEntry>(v, BO_R_SSYRK);
  v.push_back({"cublas_strsm", "cublas", BO_R_STRSM, 1, &VendorEntry<float>::can, &VendorEntry<float>::ws,
               &VendorEntry<float>::trsm});
  v.push_back({"cublas_ssyrk", "cublas", BO_R_SSYRK, 1, &VendorEntry<float>::can, &VendorEntry<float>::ws,
               &VendorEntry<float>::syrk});
  // Double (the built-in own choice is the first of each; without a table cuBLAS is preferred, see registry.cu).
  add<TrsmInv<double, 64>, TrsmEntry>(v, BO_R_DTRSM);
  add<TrsmInv<double, 128>, TrsmEntry>(v, BO_R_DTRSM);
  add<TrsmInv<double, 256>, TrsmEntry>(v, BO_R_DTRSM);
  v.push_back({"dtrsm_trsv", "dtrsm_trsv", BO_R_DTRSM, 0, &TrsmTrsvEntry<double>::can, &TrsmTrsvEntry<double>::ws,
               &TrsmTrsvEntry<double>::launch});
  add<SyrkGemm<double, 256>, SyrkEntry>(v, BO_R_DSYRK);
  add<SyrkGemm<double, 128>, SyrkEntry>(v, BO_R_DSYRK);
  v.push_back({"cublas_dtrsm", "cublas", BO_R_DTRSM, 1, &VendorEntry<double>::can, &VendorEntry<double>::ws,
               &VendorEntry<double>::trsm});
  v.push_back({"cublas_dsyrk", "cublas", BO_R_DSYRK, 1, &VendorEntry<double>::can, &VendorEntry<double>::ws,
               &VendorEntry<double>::syrk});
}

}  // namespace reg
}  // namespace bok
