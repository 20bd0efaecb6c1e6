// Helpers shared by the kernels: strided vector indexing, the element-type traits (FMA, 16-byte vectors, the
// precision letter of derived names), the beta scalings and the opt-in to large dynamic shared memory.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <string>
#include <type_traits>

namespace bok {

// BLAS strided vector: logical element i of an n-vector with increment inc (either sign; a negative
// increment starts at the end: element i lives at x[(n-1-i)*|inc|]).
__host__ __device__ inline int64_t vidx(int64_t i, int64_t n, int64_t inc) {
  return inc > 0 ? i * inc : (n - 1 - i) * (-inc);
}

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Above 48 KB of dynamic shared memory a kernel must opt in, once per device: the attribute belongs to the current
// device's context, so a kernel that opted in on GPU 0 fails to launch on GPU 1 (cudaErrorInvalidValue) until it opts
// in there too. `done` is the kernel's own mask of devices that have (one static per kernel instantiation).
template <class Kernel>
cudaError_t allow_dynamic_smem(Kernel* kernel, int bytes, std::atomic<uint64_t>& done) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  const uint64_t bit = dev >= 0 && dev < 64 ? uint64_t(1) << dev : 0;
  if (bit != 0 && (done.load(std::memory_order_relaxed) & bit)) return cudaSuccess;
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess) done.fetch_or(bit, std::memory_order_relaxed);
  return e;
}

// Fused multiply-add in the element type (fmaf for float: the single-precision kernels' instructions unchanged).
__device__ __forceinline__ float bo_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double bo_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float bo_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double bo_abs(double a) { return fabs(a); }

// 16-byte vectors: 4 floats (float4) or 2 doubles (double2); kN elements.
template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using V = float4;
  static constexpr int kN = 4;
};
template <>
struct Vec16<double> {
  using V = double2;
  static constexpr int kN = 2;
};
template <class T>
using vec16_t = typename Vec16<T>::V;
template <class T>
inline constexpr int kVecN = Vec16<T>::kN;

// Component q of a vector register (q is a compile-time constant after unrolling: no local memory).
__device__ __forceinline__ float vget(const float4& v, int q) {
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}
__device__ __forceinline__ float vget(const float2& v, int q) { return q == 0 ? v.x : v.y; }
__device__ __forceinline__ double vget(const double2& v, int q) { return q == 0 ? v.x : v.y; }
__device__ __forceinline__ float4 vmake(const float (&e)[4]) { return make_float4(e[0], e[1], e[2], e[3]); }
__device__ __forceinline__ double2 vmake(const double (&e)[2]) { return make_double2(e[0], e[1]); }

// The precision letter of derived names: "s" or "d".
template <class T>
inline const char* prec_letter() {
  return std::is_same_v<T, double> ? "d" : "s";
}

// y = beta*y over an n-vector (beta == 0: y = 0 without reading y, so NaN in y does not propagate).
template <class T>
cudaError_t scale_vector(int64_t n, T beta, T* y, int64_t incy, cudaStream_t s);
// C = beta*C over m x n (beta == 0: C = 0 without reading C).
template <class T>
cudaError_t scale_matrix(int64_t m, int64_t n, T beta, T* c, int64_t ldc, cudaStream_t s);

}  // namespace bok
