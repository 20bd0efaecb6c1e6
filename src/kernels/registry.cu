// Every compiled kernel configuration, by name, behind the C table of kernels/registry.h, and the choice
// among them (tuned table, else built-in defaults). The configurations come from registry_*.cu: the
// tuning spaces' compiled points (kernels/spaces.h) plus a few hand-written fallbacks.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common.cuh"
#include "kernels/registry.h"
#include "kernels/registry_build.h"
#include "kernels/sgemv.cuh"
#include "kernels/tuned_select.h"
#include "kernels/vendor_cublas.h"

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

namespace reg {

const char* keep(std::string s) {
  static std::vector<std::unique_ptr<std::string>> names;
  names.push_back(std::make_unique<std::string>(std::move(s)));
  return names.back()->c_str();
}
std::string strip_transposes(const std::string& name) {
  const size_t n = name.size();
  if (n > 3 && name.compare(0, 6, "sgemm_") == 0 && name[n - 3] == '_') return name.substr(0, n - 3);
  return name;
}

}  // namespace reg

namespace {

using Args = bo_kernel_args;
using reg::VendorEntry;

// The lists. Hand-written entries first: they are the built-in defaults' fallbacks (any alignment).
std::vector<bo_kernel_entry> build() {
  std::vector<bo_kernel_entry> v;
  reg::add_snrm2(v);
  reg::add_sgemv(v);
  reg::add_strsv(v);
  reg::add_sgemm(v);
  reg::add_level3(v);
  v.push_back({"cublas_snrm2", "cublas", BO_K_SNRM2, 2, &VendorEntry::can, &VendorEntry::ws, &VendorEntry::nrm2});
  v.push_back({"cublas_sgemv", "cublas", BO_K_SGEMV, 1, &VendorEntry::can, &VendorEntry::ws, &VendorEntry::gemv});
  v.push_back({"cublas_strsv", "cublas", BO_K_STRSV, 1, &VendorEntry::can, &VendorEntry::ws, &VendorEntry::trsv});
  v.push_back({"cublas_sgemm", "cublas", BO_K_SGEMM, 1, &VendorEntry::can, &VendorEntry::ws, &VendorEntry::gemm});
  return v;
}

const std::vector<bo_kernel_entry>& entries() {
  static const std::vector<bo_kernel_entry> v = build();
  return v;
}

// Index of the entry named `name` (names are unique), looked up once per default rather than per call.
int index_of(const char* name) {
  const auto& v = entries();
  for (size_t i = 0; i < v.size(); ++i)
    if (std::strcmp(v[i].name, name) == 0) return int(i);
  return -1;
}

// Built-in defaults: what the H100 measurements of the GPU-path issue chose, for GPUs without a table.
int select_builtin(int routine, const Args* a) {
  static const int kNrm2 = index_of("snrm2_1p_256_4_v4"), kGemvN = index_of("sgemv_n_32x8_u4_r4"),
                   kGemvT = index_of("sgemv_tv_8w_u4"), kTrsv = index_of("strsv_wave_128_256");
  const auto& v = entries();
  int pick = -1;
  if (routine == BO_K_SNRM2) pick = kNrm2;
  if (routine == BO_K_SGEMV) pick = a->opa == 'N' ? kGemvN : kGemvT;
  if (routine == BO_K_STRSV) pick = kTrsv;
  if (pick >= 0 && v[size_t(pick)].can_implement(a)) return pick;
  const bool small_gemm = routine == BO_K_SGEMM && cdiv(a->m, 128) * cdiv(a->n, 128) < 132;
  int first = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].routine != routine || v[i].vendor || !v[i].can_implement(a)) continue;
    if (first < 0) first = int(i);
    if (small_gemm && std::strncmp(v[i].name, "sgemm_64x64", 11) == 0) return int(i);
    if (!small_gemm) return int(i);
  }
  return first;
}

int select_ex(int routine, const Args* a, int policy) {
  if (policy != BO_SELECT_BUILTIN) {
    const int t = tuned_select(routine, a, policy == BO_SELECT_OWN);
    if (t >= 0) return t;
  }
  return select_builtin(routine, a);
}
int select_tuned(int routine, const Args* a) { return select_ex(routine, a, BO_SELECT_TUNED); }

}  // namespace

const bo_kernel_entry* registry_entries(size_t* count) {
  *count = entries().size();
  return entries().data();
}

const bo_kernel_registry* registry() {
  static const bo_kernel_registry r = {3u,         entries().size(),   entries().data(),           &select_tuned,
                                       &select_ex, &tuned_params_info, &vendor::cublas_description};
  return &r;
}

}  // namespace bok
