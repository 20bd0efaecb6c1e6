// Registry entries of strsm and ssyrk (ours and cuBLAS), and what their drivers share (level3_common.cuh): the
// registry's own choice of sgemm/sgemv/strsv for their inner products.
#include "kernels/level3_common.cuh"
#include "kernels/registry_build.h"
#include "kernels/ssyrk.cuh"
#include "kernels/strsm.cuh"

namespace bok {

const bo_kernel_registry* registry();

cudaError_t level3_gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                        const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t st, void* gemv_ws,
                        size_t gemv_bytes) {
  const bo_kernel_registry* reg = registry();
  if (m <= 0 || n <= 0) return cudaSuccess;
  if (n == 1 || m == 1) {
    // y = alpha op(A) x + beta y (n == 1), or its transpose: C^T = op(B)^T op(A)^T (m == 1).
    bo_kernel_args v{};
    if (n == 1)
      v = {ta, 0, 0, ta == 'N' ? m : k, ta == 'N' ? k : m, 0, alpha, beta, a, lda, b, 0, c, 0, tb == 'N' ? 1 : ldb, 1};
    else
      v = {tb == 'N' ? 'T' : 'N', 0,  0, tb == 'N' ? k : n, tb == 'N' ? n : k, 0, alpha, beta, b, ldb, a, 0, c, 0,
           ta == 'N' ? lda : 1,   ldc};
    const int i = reg->select(BO_K_SGEMV, &v);
    if (i >= 0 && reg->entries[i].workspace_bytes(&v) <= gemv_bytes)
      return cudaError_t(reg->entries[i].launch(&v, gemv_ws, st));
  }
  const bo_kernel_args g{ta, tb, 0, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc, 0, 0};
  const int i = reg->select(BO_K_SGEMM, &g);
  if (i < 0 || reg->entries[i].workspace_bytes(&g) != 0) return cudaErrorNotSupported;
  return cudaError_t(reg->entries[i].launch(&g, nullptr, st));
}

size_t level3_strsv_workspace(char uplo, char trans, char diag, int64_t n) {
  const bo_kernel_registry* reg = registry();
  const bo_kernel_args v{uplo, trans, diag, 0, n, 0, 0.0f, 0.0f, nullptr, n, nullptr, 0, nullptr, 0, 1, 0};
  const int i = reg->select(BO_K_STRSV, &v);
  return i < 0 ? 0 : reg->entries[i].workspace_bytes(&v) + 256;
}

cudaError_t level3_strsv(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda, float* x,
                         int64_t incx, void* ws, cudaStream_t st) {
  const bo_kernel_registry* reg = registry();
  const bo_kernel_args v{uplo, trans, diag, 0, n, 0, 0.0f, 0.0f, a, lda, nullptr, 0, x, 0, incx, 0};
  const int i = reg->select(BO_K_STRSV, &v);
  if (i < 0) return cudaErrorNotSupported;
  return cudaError_t(reg->entries[i].launch(&v, ws, st));
}

namespace reg {
namespace {

template <class K>
struct StrsmEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->m, a->n); }
  static size_t ws(const Args* a) { return K::workspace(a->opa, a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->opa, a->opb, a->opc, a->opd, a->m, a->n, a->alpha, a->a, a->lda, a->c, a->ldc, w, S(s));
  }
};
struct StrsmTrsvEntry {
  static int can(const Args* a) { return a->opa == 'L' ? a->n == 1 && a->m >= 1 : a->m == 1 && a->n >= 1; }
  static size_t ws(const Args* a) { return strsm_trsv_workspace(a->opa, a->opb, a->opc, a->opd, a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return strsm_trsv(a->opa, a->opb, a->opc, a->opd, a->m, a->n, a->alpha, a->a, a->lda, a->c, a->ldc, w, S(s));
  }
};
template <class K>
struct SsyrkEntry {
  static int can(const Args* a) { return K::can_implement(a->n, a->k); }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->opa, a->opb, a->n, a->k, a->alpha, a->a, a->lda, a->beta, a->c, a->ldc, S(s));
  }
};
struct Level3Vendor {
  static int trsm(const Args* a, void*, void* s) {
    return vendor::cublas_strsm(a->opa, a->opb, a->opc, a->opd, a->m, a->n, a->alpha, a->a, a->lda, a->c, a->ldc, S(s));
  }
  static int syrk(const Args* a, void*, void* s) {
    return vendor::cublas_ssyrk(a->opa, a->opb, a->n, a->k, a->alpha, a->a, a->lda, a->beta, a->c, a->ldc, S(s));
  }
};

template <class K, template <class> class E>
void add(std::vector<bo_kernel_entry>& v, int routine) {
  const std::string name = K::name();
  v.push_back({keep(name), keep(name), routine, 0, &E<K>::can, &E<K>::ws, &E<K>::launch});
}

}  // namespace

void add_level3(std::vector<bo_kernel_entry>& v) {
  add<StrsmInv<64>, StrsmEntry>(v, BO_K_STRSM);  // first: the built-in default
  add<StrsmInv<32>, StrsmEntry>(v, BO_K_STRSM);
  add<StrsmInv<128>, StrsmEntry>(v, BO_K_STRSM);
  add<StrsmInv<256>, StrsmEntry>(v, BO_K_STRSM);
  add<StrsmInv<512>, StrsmEntry>(v, BO_K_STRSM);
  v.push_back(
      {"strsm_trsv", "strsm_trsv", BO_K_STRSM, 0, &StrsmTrsvEntry::can, &StrsmTrsvEntry::ws, &StrsmTrsvEntry::launch});
  add<SsyrkGemm<256>, SsyrkEntry>(v, BO_K_SSYRK);  // first: the built-in default
  add<SsyrkGemm<128>, SsyrkEntry>(v, BO_K_SSYRK);
  add<SsyrkGemm<512>, SsyrkEntry>(v, BO_K_SSYRK);
  v.push_back({"cublas_strsm", "cublas", BO_K_STRSM, 1, &VendorEntry::can, &VendorEntry::ws, &Level3Vendor::trsm});
  v.push_back({"cublas_ssyrk", "cublas", BO_K_SSYRK, 1, &VendorEntry::can, &VendorEntry::ws, &Level3Vendor::syrk});
}

}  // namespace reg
}  // namespace bok
