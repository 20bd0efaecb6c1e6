// Every compiled kernel configuration, by name, behind the C table of kernels/registry.h. The compiled
// set is kept small on purpose (build time on 2-core CI): add a configuration by adding one line to a
// list below.
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common.cuh"
#include "kernels/registry.h"
#include "kernels/sgemm.cuh"
#include "kernels/sgemv.cuh"
#include "kernels/snrm2.cuh"
#include "kernels/strsv.cuh"

namespace bok {

__global__ void scale_vector_kernel(int64_t n, float beta, float* y, int64_t incy) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float* p = y + vidx(i, n, incy);
    *p = beta == 0.0f ? 0.0f : beta * *p;
  }
}
__global__ void scale_matrix_kernel(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += int64_t(gridDim.x) * blockDim.x) {
      float* p = c + i + j * ldc;
      *p = beta == 0.0f ? 0.0f : beta * *p;
    }
}
cudaError_t scale_vector(int64_t n, float beta, float* y, int64_t incy, cudaStream_t s) {
  if (n == 0 || beta == 1.0f) return cudaSuccess;
  int64_t g = cdiv(n, 256);
  scale_vector_kernel<<<unsigned(g > 4096 ? 4096 : g), 256, 0, s>>>(n, beta, y, incy);
  return cudaGetLastError();
}
cudaError_t scale_matrix(int64_t m, int64_t n, float beta, float* c, int64_t ldc, cudaStream_t s) {
  if (m == 0 || n == 0 || beta == 1.0f) return cudaSuccess;
  int64_t gx = cdiv(m, 256);
  dim3 grid(unsigned(gx > 64 ? 64 : gx), unsigned(n > 65535 ? 65535 : n));
  scale_matrix_kernel<<<grid, 256, 0, s>>>(m, n, beta, c, ldc);
  return cudaGetLastError();
}

__global__ void sgemv_finalize_kernel(int64_t len, int splits, const float* __restrict__ partial, float alpha,
                                      float beta, float* __restrict__ y, int64_t incy) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= len) return;
  float s = 0.0f;
  for (int t = 0; t < splits; ++t) s += partial[int64_t(t) * len + i];
  float* p = y + vidx(i, len, incy);
  *p = beta == 0.0f ? alpha * s : fmaf(beta, *p, alpha * s);
}

namespace {

using Args = bo_kernel_args;
inline cudaStream_t S(void* s) { return static_cast<cudaStream_t>(s); }

template <class K>
struct Nrm2Entry {
  static int can(const Args* a) { return K::can_implement(a->n, a->incx); }
  static size_t ws(const Args* a) { return K::workspace(a->n); }
  static int launch(const Args* a, void* w, void* s) { return K::launch(a->n, a->b, a->incx, a->c, w, S(s)); }
};
template <class K>
struct GemvEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->m, a->n) && a->incx != 0 && a->incy != 0; }
  static size_t ws(const Args* a) { return K::workspace(a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->m, a->n, a->alpha, a->a, a->lda, a->b, a->incx, a->beta, a->c, a->incy, w, S(s));
  }
};
template <class K>
struct TrsvEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->opb, a->opc, a->n) && a->incx != 0; }
  static size_t ws(const Args* a) { return K::workspace(a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->opa, a->opb, a->opc, a->n, a->a, a->lda, a->c, a->incx, w, S(s));
  }
};
template <class K>
struct GemmEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->opb, a->m, a->n, a->k); }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->m, a->n, a->k, a->alpha, a->a, a->lda, a->b, a->ldb, a->beta, a->c, a->ldc, S(s));
  }
};

template <template <class> class E, class K>
bo_kernel_entry entry(int routine) {
  static const std::string name = K::name();  // lives for the process
  return {name.c_str(), routine, &E<K>::can, &E<K>::ws, &E<K>::launch};
}

template <int BM, int BN, int BK, int TM, int TN, int VEC, int STAGES = 1>
void add_gemm(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, false, false, STAGES>>(BO_K_SGEMM));
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, false, true, STAGES>>(BO_K_SGEMM));
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, true, false, STAGES>>(BO_K_SGEMM));
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, true, true, STAGES>>(BO_K_SGEMM));
}

// The lists. Within a routine, the first entry is the default for large problems.
std::vector<bo_kernel_entry> build() {
  std::vector<bo_kernel_entry> v;
  v.push_back(entry<Nrm2Entry, Snrm2<256, 4, 4>>(BO_K_SNRM2));
  v.push_back(entry<Nrm2Entry, Snrm2<512, 2, 4>>(BO_K_SNRM2));
  v.push_back(entry<Nrm2Entry, Snrm2<128, 8, 1>>(BO_K_SNRM2));
  v.push_back(entry<GemvEntry, SgemvN<32, 8, 4, 4>>(BO_K_SGEMV));
  v.push_back(entry<GemvEntry, SgemvN<64, 4, 4, 4>>(BO_K_SGEMV));
  v.push_back(entry<GemvEntry, SgemvN<32, 8, 4, 1>>(BO_K_SGEMV));
  v.push_back(entry<GemvEntry, SgemvT<8, 4>>(BO_K_SGEMV));
  v.push_back(entry<GemvEntry, SgemvT<4, 8>>(BO_K_SGEMV));
  v.push_back(entry<TrsvEntry, Strsv<64, 256, true>>(BO_K_STRSV));  // default: 0.73-0.79x cuBLAS vs 0.60-0.68x
  v.push_back(entry<TrsvEntry, Strsv<64, 256>>(BO_K_STRSV));
  v.push_back(entry<TrsvEntry, Strsv<32, 128>>(BO_K_STRSV));
  add_gemm<128, 128, 8, 8, 8, 4, 2>(v);  // default for large (37-39 TF/s vs 30-31 unpipelined, H100)
  add_gemm<128, 128, 8, 8, 8, 4>(v);
  add_gemm<64, 64, 8, 4, 4, 1>(v);
  return v;
}

const std::vector<bo_kernel_entry>& entries() {
  static const std::vector<bo_kernel_entry> v = build();
  return v;
}

int select(int routine, const Args* a) {
  const auto& v = entries();
  // Measured on the H100 (tests/gpu/results): for A^T x up to ~4096^2 the 4-warp, 8-deep unrolled
  // configuration is 10-15% faster; above it the 8-warp one.
  if (routine == BO_K_SGEMV && a->opa != 'N' && a->m * a->n <= (int64_t(1) << 25))
    for (size_t i = 0; i < v.size(); ++i)
      if (std::strcmp(v[i].name, "sgemv_t_4w_u8") == 0 && v[i].can_implement(a)) return int(i);
  const bool small_gemm = routine == BO_K_SGEMM && cdiv(a->m, 128) * cdiv(a->n, 128) < 132;
  int first = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].routine != routine || !v[i].can_implement(a)) continue;
    if (first < 0) first = int(i);
    if (small_gemm && std::strncmp(v[i].name, "sgemm_64x64", 11) == 0) return int(i);
    if (!small_gemm) return int(i);
  }
  return first;
}

}  // namespace

const bo_kernel_registry* registry() {
  static const bo_kernel_registry r = {1u, entries().size(), entries().data(), &select};
  return &r;
}

}  // namespace bok
