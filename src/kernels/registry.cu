// Every compiled kernel configuration, by name, behind the C table of kernels/registry.h, and the choice
// among them (tuned table, else built-in defaults). The configurations come from registry_*.cu: the
// tuning spaces' compiled points (kernels/spaces.h) plus a few hand-written fallbacks, per element type.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common.cuh"
#include "kernels/launch.h"
#include "kernels/registry.h"
#include "kernels/registry_build.h"
#include "kernels/tuned_select.h"
#include "kernels/vendor_cublas.h"
#include "offload/one_time_cost.h"

namespace bok {

namespace {

template <class T>
__global__ void scale_vector_kernel(int64_t n, T beta, T* y, int64_t incy) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T* p = y + vidx(i, n, incy);
    *p = beta == T(0) ? T(0) : beta * *p;
  }
}
template <class T>
__global__ void scale_matrix_kernel(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += int64_t(gridDim.x) * blockDim.x) {
      T* p = c + i + j * ldc;
      *p = beta == T(0) ? T(0) : beta * *p;
    }
}

}  // namespace

template <class T>
cudaError_t scale_vector(int64_t n, T beta, T* y, int64_t incy, cudaStream_t s) {
  if (n == 0 || beta == T(1)) return cudaSuccess;
  int64_t g = cdiv(n, 256);
  scale_vector_kernel<T><<<unsigned(g > 4096 ? 4096 : g), 256, 0, s>>>(n, beta, y, incy);
  return cudaGetLastError();
}
template <class T>
cudaError_t scale_matrix(int64_t m, int64_t n, T beta, T* c, int64_t ldc, cudaStream_t s) {
  if (m == 0 || n == 0 || beta == T(1)) return cudaSuccess;
  int64_t gx = cdiv(m, 256);
  dim3 grid(unsigned(gx > 64 ? 64 : gx), unsigned(n > 65535 ? 65535 : n));
  scale_matrix_kernel<T><<<grid, 256, 0, s>>>(m, n, beta, c, ldc);
  return cudaGetLastError();
}
template cudaError_t scale_vector<float>(int64_t, float, float*, int64_t, cudaStream_t);
template cudaError_t scale_vector<double>(int64_t, double, double*, int64_t, cudaStream_t);
template cudaError_t scale_matrix<float>(int64_t, int64_t, float, float*, int64_t, cudaStream_t);
template cudaError_t scale_matrix<double>(int64_t, int64_t, double, double*, int64_t, cudaStream_t);

namespace reg {

const char* keep(std::string s) {
  static std::vector<std::unique_ptr<std::string>> names;
  names.push_back(std::make_unique<std::string>(std::move(s)));
  return names.back()->c_str();
}
std::string strip_transposes(const std::string& name) {
  const size_t n = name.size();
  if (n > 3 && (name.compare(0, 6, "sgemm_") == 0 || name.compare(0, 6, "dgemm_") == 0) && name[n - 3] == '_')
    return name.substr(0, n - 3);
  return name;
}

}  // namespace reg

namespace {

using Args = bo_kernel_args;
template <class T>
using VE = reg::VendorEntry<T>;

// The complex routines: cuBLAS's, except the norms (registry_blas12.cu: ours on the real kernels; cuBLAS's scnrm2 and
// dznrm2 return Inf for a vector holding both Inf and NaN, so they are timed as the reference only).
template <class T>
void add_complex(std::vector<bo_kernel_entry>& v, bo_precision p) {
  auto add = [&](bo_routine_kind kind, int vendor, int (*fn)(const Args*, void*, void*)) {
    const int routine = bo_routine_id(kind, p);
    v.push_back({reg::keep(std::string("cublas_") + bo_routine_name(routine)), "cublas", routine, vendor, &VE<T>::can,
                 &VE<T>::ws, fn});
  };
  add(BO_KIND_NRM2, 2, &VE<T>::nrm2);
  add(BO_KIND_GEMV, 1, &VE<T>::gemv);
  add(BO_KIND_TRSV, 1, &VE<T>::trsv);
  add(BO_KIND_GEMM, 1, &VE<T>::gemm);
  add(BO_KIND_TRSM, 1, &VE<T>::trsm);
  add(BO_KIND_SYRK, 1, &VE<T>::syrk);
  add(BO_KIND_HERK, 1, &VE<T>::herk);
}

// The lists. Hand-written entries first: they are the built-in defaults' fallbacks (any alignment).
std::vector<bo_kernel_entry> build() {
  std::vector<bo_kernel_entry> v;
  reg::add_nrm2(v);
  reg::add_gemv(v);
  reg::add_trsv(v);
  reg::add_gemm(v);
  reg::add_level3(v);
  v.push_back({"cublas_snrm2", "cublas", BO_R_SNRM2, 2, &VE<float>::can, &VE<float>::ws, &VE<float>::nrm2});
  v.push_back({"cublas_sgemv", "cublas", BO_R_SGEMV, 1, &VE<float>::can, &VE<float>::ws, &VE<float>::gemv});
  v.push_back({"cublas_strsv", "cublas", BO_R_STRSV, 1, &VE<float>::can, &VE<float>::ws, &VE<float>::trsv});
  v.push_back({"cublas_sgemm", "cublas", BO_R_SGEMM, 1, &VE<float>::can, &VE<float>::ws, &VE<float>::gemm});
  // cuBLAS's dnrm2, like its snrm2, returns Inf for a vector holding both Inf and NaN (the reference BLAS: NaN):
  // timed as the reference only.
  v.push_back({"cublas_dnrm2", "cublas", BO_R_DNRM2, 2, &VE<double>::can, &VE<double>::ws, &VE<double>::nrm2});
  v.push_back({"cublas_dgemv", "cublas", BO_R_DGEMV, 1, &VE<double>::can, &VE<double>::ws, &VE<double>::gemv});
  v.push_back({"cublas_dtrsv", "cublas", BO_R_DTRSV, 1, &VE<double>::can, &VE<double>::ws, &VE<double>::trsv});
  v.push_back({"cublas_dgemm", "cublas", BO_R_DGEMM, 1, &VE<double>::can, &VE<double>::ws, &VE<double>::gemm});
  add_complex<bo_cfloat>(v, BO_PREC_C);
  add_complex<bo_cdouble>(v, BO_PREC_Z);
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

// cuBLAS takes 32-bit dimensions, leading dimensions and increments.
bool fits_int32(const Args* a) {
  const int64_t v[] = {a->m, a->n, a->k, a->lda, a->ldb, a->ldc, a->incx, a->incy};
  for (int64_t x : v)
    if (x < -2147483647 || x > 2147483647) return false;
  return true;
}

// Built-in defaults, single precision: what the H100 measurements of the GPU-path issue chose, for GPUs without a
// table.
int select_builtin_s(int routine, const Args* a) {
  static const int kNrm2 = index_of("snrm2_1p_256_4_v4"), kGemvN = index_of("sgemv_n_32x8_u4_r4"),
                   kGemvT = index_of("sgemv_tv_8w_u4"), kTrsv = index_of("strsv_wave_128_256");
  const auto& v = entries();
  int pick = -1;
  if (routine == BO_R_SNRM2) pick = kNrm2;
  if (routine == BO_R_SGEMV) pick = a->op[0] == 'N' ? kGemvN : kGemvT;
  if (routine == BO_R_STRSV) pick = kTrsv;
  if (pick >= 0 && v[size_t(pick)].can_implement(a)) return pick;
  const bool small_gemm = routine == BO_R_SGEMM && cdiv(a->m, 128) * cdiv(a->n, 128) < 132;
  int first = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].routine != routine || v[i].vendor || !v[i].can_implement(a)) continue;
    if (first < 0) first = int(i);
    if (small_gemm && std::strncmp(v[i].name, "sgemm_64x64", 11) == 0) return int(i);
    if (!small_gemm) return int(i);
  }
  return first;
}

// Built-in defaults, double precision (no measured table yet): cuBLAS where it is available and takes the
// arguments (the safe choice: 1.0x cuBLAS), except nrm2, whose cuBLAS result differs from the reference BLAS for
// Inf with NaN; else our own default (named below where there is one, else the family's first entry that can run the
// arguments: the hand-written fallbacks come first).
int select_builtin_d(int routine, const Args* a, bool own_only) {
  const auto& v = entries();
  if (!own_only && vendor::cublas_available() && fits_int32(a))
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].routine == routine && v[i].vendor == 1 && v[i].can_implement(a)) return int(i);
  static const int kNrm2 = index_of("dnrm2_1p_256_4_v2"), kGemvN = index_of("dgemv_n_32x8_u4_r2"),
                   kGemvT = index_of("dgemv_tv_8w_u4"), kTrsv = index_of("dtrsv_wave_64_256");
  int pick = -1;
  if (routine == BO_R_DNRM2) pick = kNrm2;
  if (routine == BO_R_DGEMV) pick = a->op[0] == 'N' ? kGemvN : kGemvT;
  if (routine == BO_R_DTRSV) pick = kTrsv;
  if (pick >= 0 && v[size_t(pick)].can_implement(a)) return pick;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].routine == routine && !v[i].vendor && v[i].can_implement(a)) return int(i);
  return -1;
}

// Built-in defaults, complex: cuBLAS (our own kernels exist only for the norms, which cuBLAS gets wrong for Inf with
// NaN); the norms' first own entry.
int select_builtin_complex(int routine, const Args* a, bool own_only) {
  const auto& v = entries();
  const bool norm = bo_routine_kind_of(routine) == BO_KIND_NRM2;
  if (!norm && (own_only || !fits_int32(a))) return -1;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].routine == routine && v[i].vendor == (norm ? 0 : 1) && v[i].can_implement(a)) return int(i);
  return -1;
}

int select_builtin(int routine, const Args* a, bool own_only) {
  if (routine < 0 || routine >= BO_R_COUNT) return -1;
  switch (bo_routine_precision(routine)) {
    case BO_PREC_S:
      return select_builtin_s(routine, a);
    case BO_PREC_D:
      return select_builtin_d(routine, a, own_only);
    default:
      return select_builtin_complex(routine, a, own_only);
  }
}

int select_ex(int routine, const Args* a, int policy) {
  if (policy != BO_SELECT_BUILTIN) {
    const int t = tuned_select(routine, a, policy == BO_SELECT_OWN);
    if (t >= 0) return t;
  }
  return select_builtin(routine, a, policy == BO_SELECT_OWN);
}
int select_tuned(int routine, const Args* a) { return select_ex(routine, a, BO_SELECT_TUNED); }

}  // namespace

const bo_kernel_entry* registry_entries(size_t* count) {
  *count = entries().size();
  return entries().data();
}

cudaError_t launch(int index, const bo_kernel_args* args, void* workspace, cudaStream_t stream) {
  static std::atomic<bool>* const launched = new std::atomic<bool>[entries().size()]();  // never freed: exit-safe
  const bo_kernel_entry& e = entries()[size_t(index)];
  // A trsm entry waits for its own inversion's check (trsm.cu): GPU work, not a one-time cost. The kernels it
  // launches are timed at their first launch instead.
  if (launched[index].load(std::memory_order_relaxed) || bo_routine_kind_of(e.routine) == BO_KIND_TRSM)
    return cudaError_t(e.launch(args, workspace, stream));
  bo::one_time::Timer one_time;
  const cudaError_t r = cudaError_t(e.launch(args, workspace, stream));
  launched[index].store(true, std::memory_order_relaxed);
  return r;
}

const bo_kernel_registry* registry() {
  static const bo_kernel_registry r = {5u,         entries().size(),   entries().data(),           &select_tuned,
                                       &select_ex, &tuned_params_info, &vendor::cublas_description};
  return &r;
}

}  // namespace bok
