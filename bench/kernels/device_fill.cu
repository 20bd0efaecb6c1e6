// Kernels behind device_fill.h: counter-based hashing, so every element is independent of launch geometry.
#include <cmath>

#include "device_fill.h"

namespace bo_bench {
namespace {

__device__ __forceinline__ uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// (k + 0.5) / 2^23 - 1 over 24-bit k never hits 0 (that would need k + 0.5 = 2^23); the double fill uses 53-bit k
// so that double operands carry full significands.
template <typename T>
__device__ __forceinline__ T Uniform(uint64_t seed, uint64_t i);
template <>
__device__ __forceinline__ float Uniform<float>(uint64_t seed, uint64_t i) {
  const uint64_t k = SplitMix64(seed * 0x632be59bd9b4e019ull + i) >> 40;
  return float((double(k) + 0.5) * (1.0 / 8388608.0) - 1.0);
}
template <>
__device__ __forceinline__ double Uniform<double>(uint64_t seed, uint64_t i) {
  const uint64_t k = SplitMix64(seed * 0x632be59bd9b4e019ull + i) >> 11;
  return (double(k) + 0.5) * (1.0 / 4503599627370496.0) - 1.0;
}

template <typename T>
__global__ void FillUniformKernel(T* p, size_t count, uint64_t seed, size_t first) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    p[i] = Uniform<T>(seed, first + i);
}

template <typename T>
__global__ void FillLowerKernel(T* a, int64_t n, size_t copies, size_t stride, uint64_t seed) {
  const size_t per_copy = size_t(n) * size_t(n);
  const size_t total = per_copy * copies;
  const T off_scale = T(1) / T(n);
  for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t < total; t += size_t(gridDim.x) * blockDim.x) {
    const size_t c = t / per_copy, e = t % per_copy;
    const int64_t i = int64_t(e % size_t(n)), j = int64_t(e / size_t(n));
    const T u = Uniform<T>(seed, t);
    a[c * stride + e] = i > j ? u * off_scale : i == j ? T(2) + T(0.25) * u : T(NAN);
  }
}

unsigned Blocks(size_t count) {
  const size_t b = (count + 255) / 256;
  return unsigned(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

}  // namespace

template <typename T>
cudaError_t FillUniform(T* p, size_t count, uint64_t seed, size_t first, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  FillUniformKernel<T><<<Blocks(count), 256, 0, stream>>>(p, count, seed, first);
  return cudaGetLastError();
}

template <typename T>
cudaError_t FillLowerTriangular(T* a, int64_t n, size_t copies, size_t stride, uint64_t seed, cudaStream_t stream) {
  const size_t total = size_t(n) * size_t(n) * copies;
  if (total == 0) return cudaSuccess;
  FillLowerKernel<T><<<Blocks(total), 256, 0, stream>>>(a, n, copies, stride, seed);
  return cudaGetLastError();
}

template cudaError_t FillUniform<float>(float*, size_t, uint64_t, size_t, cudaStream_t);
template cudaError_t FillUniform<double>(double*, size_t, uint64_t, size_t, cudaStream_t);
template cudaError_t FillLowerTriangular<float>(float*, int64_t, size_t, size_t, uint64_t, cudaStream_t);
template cudaError_t FillLowerTriangular<double>(double*, int64_t, size_t, size_t, uint64_t, cudaStream_t);

}  // namespace bo_bench
