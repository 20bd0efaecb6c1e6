// What the module's two LAPACK executors (lapack_exec.cu: LU and Cholesky; lapack_decomp_exec.cu: QR, eigenvalues,
// SVD, inverses) share: pivots across integer widths, the scans for non-finite values and for LAPACK's scaling range,
// the upload clock, and the end of a write-back that failed half-way.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>

#include "abi/blas_types.h"
#include "offload/cuda_module_api.h"
#include "offload/module/device.h"
#include "offload/module/staged_seen.h"
#include "routines/descriptor.h"
#include "routines/operand.h"

namespace bom {
namespace {

using bo::routines::Operand;

// The caller's pivots are int32 or, from an ILP64 interface, int64 (bo_call::int_bytes); cuSOLVER's are int32. The
// core sends only calls whose sizes fit int32 here, so the pivots (row numbers) do too.
void copy_pivots_in(int* to, const bo_call& c, int64_t n) {
  if (c.int_bytes == 8) {
    const auto* from = static_cast<const int64_t*>(c.ipiv);
    for (int64_t i = 0; i < n; ++i) to[i] = int(from[i]);
  } else {
    std::memcpy(to, c.ipiv, sizeof(int) * size_t(n));
  }
}
// INFO = 0 in the caller's integer width: a call the GPU completed.
void set_info_zero(const bo_call& c) {
  if (c.int_bytes == 8)
    *static_cast<int64_t*>(c.info) = 0;
  else
    *static_cast<int*>(c.info) = 0;
}
void copy_pivots_out(const bo_call& c, const int* from, int64_t n) {
  if (c.int_bytes == 8) {
    auto* to = static_cast<int64_t*>(c.ipiv);
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
  } else {
    std::memcpy(c.ipiv, from, sizeof(int) * size_t(n));
  }
}

// Sets *flag when an element of the rows x cols operand (a triangle: only its part, without the diagonal when unit
// says it is not read) is Inf or NaN. R is the real type; a complex element is kParts = 2 of them, non-finite when
// either part is.
template <class R, int kParts>
__global__ void find_nonfinite(const R* a, int64_t rows, int64_t cols, int64_t ld, int shape, int unit, int* flag) {
  for (int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    const int64_t r0 = shape == Operand::kLower ? j + unit : 0;
    const int64_t r1 = shape == Operand::kUpper ? (j + 1 - unit < rows ? j + 1 - unit : rows) : rows;
    bool bad = false;
    for (int64_t i = r0 + threadIdx.x; i < r1; i += blockDim.x)
      for (int p = 0; p < kParts; ++p) bad |= !isfinite(a[(i + j * ld) * kParts + p]);
    if (__syncthreads_or(bad) && threadIdx.x == 0) *flag = 1;
  }
}

// The real type of an element type and its parts (std::complex is two reals, as cuComplex is).
template <class T>
struct Parts {
  using Real = bo::routines::RealOf<T>;
  static constexpr int kCount = bo::routines::kIsComplex<T> ? 2 : 1;
};

template <class T>
cudaError_t scan(const T* dev, const Operand& o, int64_t ld, int* flag, cudaStream_t st, bool unit = false) {
  using P = Parts<T>;
  const int64_t cols = o.shape == Operand::kMatrix ? o.cols : o.rows;
  const unsigned blocks = unsigned(std::min<int64_t>(cols, 65535));
  find_nonfinite<typename P::Real, P::kCount><<<blocks, 256, 0, st>>>(
      reinterpret_cast<const typename P::Real*>(dev), o.rows, cols, ld, int(o.shape), unit ? 1 : 0, flag);
  return cudaGetLastError();
}

[[noreturn]] void write_back_failed(const char* routine, cudaError_t e) {
  fatal_gpu_failure(routine, "failed on the GPU while its results were being written to the program's memory",
                    "the call's input is partly overwritten and cannot be recomputed on the CPU", e);
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// Times a call's staged uploads when they are large (staged_seen.h): an event before the first piece is packed and one
// after the last is queued, on the call's stream, read once the stream is synchronised. Anything failing here only
// leaves the upload untimed.
class UploadClock {
 public:
  UploadClock(double bytes, cudaStream_t st) : bytes_(bytes), st_(st) {
    if (bytes_ < kSeenMinBytes) return;
    if (cudaEventCreate(&ev_[0]) != cudaSuccess || cudaEventCreate(&ev_[1]) != cudaSuccess ||
        cudaEventRecord(ev_[0], st_) != cudaSuccess)
      failed();
  }
  void uploaded() {
    if (ev_[1] && cudaEventRecord(ev_[1], st_) != cudaSuccess) failed();
  }
  // After the stream's synchronisation: the upload's time to the module's record.
  void synchronised() {
    float ms = 0;
    if (!ev_[1]) return;
    if (cudaEventElapsedTime(&ms, ev_[0], ev_[1]) == cudaSuccess)
      note_staged_upload(bytes_, double(ms));
    else
      failed();
  }
  ~UploadClock() { destroy(); }

 private:
  void destroy() {
    for (cudaEvent_t& e : ev_)
      if (e) cudaEventDestroy(e), e = nullptr;
  }
  void failed() {
    destroy();
    cudaGetLastError();  // the clock's failure is not the call's: the call's own checks must not see it
  }
  double bytes_;
  cudaStream_t st_;
  cudaEvent_t ev_[2] = {nullptr, nullptr};
};

// The largest magnitude of an operand's elements (its triangle's, for a triangle), as the bits of a non-negative double
// (which order as unsigned integers): *out must be 0 first. NaNs are the non-finite scan's business and left out. A
// complex element (kParts = 2 reals) counts by its modulus, as LAPACK's CLANGE and CLANHE 'M' do.
template <class R, int kParts>
__global__ void max_abs_bits(const R* a, int64_t rows, int64_t cols, int64_t ld, int shape, unsigned long long* out) {
  for (int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    const int64_t r0 = shape == Operand::kLower ? j : 0;
    const int64_t r1 = shape == Operand::kUpper ? (j + 1 < rows ? j + 1 : rows) : rows;
    double m = 0;
    for (int64_t i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
      const R* e = a + (i + j * ld) * kParts;
      const double v = kParts == 1 ? fabs(double(e[0])) : hypot(double(e[0]), double(e[kParts - 1]));
      if (v > m) m = v;  // false for NaN
    }
    for (int off = 16; off > 0; off /= 2) m = fmax(m, __shfl_down_sync(0xffffffffu, m, off));
    if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(out, (unsigned long long)__double_as_longlong(m));
  }
}
template <class T>
cudaError_t max_abs(const T* dev, const Operand& o, int64_t ld, unsigned long long* out, cudaStream_t st) {
  using P = Parts<T>;
  const int64_t cols = o.shape == Operand::kMatrix ? o.cols : o.rows;
  if (o.rows <= 0 || cols <= 0) return cudaSuccess;
  const unsigned blocks = unsigned(std::min<int64_t>(cols, 65535));
  max_abs_bits<typename P::Real, P::kCount>
      <<<blocks, 256, 0, st>>>(reinterpret_cast<const typename P::Real*>(dev), o.rows, cols, ld, int(o.shape), out);
  return cudaGetLastError();
}
// Runs f(float()) or f(double()) for a call of a real precision; a complex call is not (BO_CUDA_UNSUPPORTED).
template <class F>
int by_real_precision(const bo_call& c, F&& f) {
  switch (bo_routine_precision(c.routine)) {
    case BO_PREC_S:
      return f(float());
    case BO_PREC_D:
      return f(double());
    default:
      return BO_CUDA_UNSUPPORTED;
  }
}
// Runs f(T()) with the call's element type, of the four precisions (the run<T> of part 1 and part 2).
template <class F>
int by_precision(const bo_call& c, F&& f) {
  switch (bo_routine_precision(c.routine)) {
    case BO_PREC_C:
      return f(bo_cfloat());
    case BO_PREC_Z:
      return f(bo_cdouble());
    default:
      return by_real_precision(c, f);
  }
}

inline double bits_to_double(unsigned long long b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

// dst (leading dimension ldd) := src (rows x cols, leading dimension lds), or its transpose (cols x rows), converted.
template <class To, class From>
__global__ void copy_convert(To* dst, int64_t ldd, const From* src, int64_t lds, int64_t rows, int64_t cols,
                             bool transposed) {
  __shared__ From tile[32][33];
  const int64_t bi = int64_t(blockIdx.x) * 32, bj = int64_t(blockIdx.y) * 32;
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t i = bi + threadIdx.x, j = bj + k;
    if (i < rows && j < cols) tile[k][threadIdx.x] = src[i + j * lds];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    if (transposed) {
      const int64_t j = bj + threadIdx.x, i = bi + k;  // dst(j, i) = src(i, j)
      if (i < rows && j < cols) dst[j + i * ldd] = To(tile[threadIdx.x][k]);
    } else {
      const int64_t i = bi + threadIdx.x, j = bj + k;
      if (i < rows && j < cols) dst[i + j * ldd] = To(tile[k][threadIdx.x]);
    }
  }
}
// dst (leading dimension ldd, cols x rows) := the conjugate transpose of src (rows x cols, leading dimension lds), of
// R's made of kParts parts: a complex matrix's adjoint, where put's shared tile cannot hold std::complex.
template <class R, int kParts>
__global__ void adjoint_parts(R* dst, int64_t ldd, const R* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t j = blockIdx.y; j < cols; j += gridDim.y)
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += int64_t(gridDim.x) * blockDim.x)
      for (int p = 0; p < kParts; ++p)
        dst[(j + i * ldd) * kParts + p] = p ? -src[(i + j * lds) * kParts + p] : src[(i + j * lds) * kParts];
}

template <class To, class From>
cudaError_t put(To* dst, int64_t ldd, const From* src, int64_t lds, int64_t rows, int64_t cols, bool transposed,
                cudaStream_t st) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const dim3 grid(unsigned((rows + 31) / 32), unsigned((cols + 31) / 32)), block(32, 8);
  copy_convert<To, From><<<grid, block, 0, st>>>(dst, ldd, src, lds, rows, cols, transposed);
  return cudaGetLastError();
}

// dst := src^H (src rows x cols): put's transpose for a real T, the conjugate transpose for a complex one.
template <class T>
cudaError_t put_adjoint(T* dst, int64_t ldd, const T* src, int64_t lds, int64_t rows, int64_t cols, cudaStream_t st) {
  using P = Parts<T>;
  if constexpr (P::kCount == 1) {
    return put(dst, ldd, src, lds, rows, cols, true, st);
  } else {
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    const dim3 grid(unsigned(std::min<int64_t>((rows + 255) / 256, 1024)), unsigned(std::min<int64_t>(cols, 65535)));
    adjoint_parts<typename P::Real, P::kCount><<<grid, 256, 0, st>>>(
        reinterpret_cast<typename P::Real*>(dst), ldd, reinterpret_cast<const typename P::Real*>(src), lds, rows, cols);
    return cudaGetLastError();
  }
}

}  // namespace
}  // namespace bom
