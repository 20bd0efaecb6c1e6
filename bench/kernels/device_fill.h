// Device-side initialisation of benchmark operands (float or double), so that gigabytes of rotating copies are filled
// in milliseconds instead of seconds of host random-number generation and PCIe copies.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace bo_bench {

// p[i] = a pseudo-random value in (-1, 1), never exactly 0, from a hash of (seed, first + i): refilling a slice
// with the same seed and `first` reproduces it exactly (the verification runs rely on that). T: float or double.
template <typename T>
cudaError_t FillUniform(T* p, size_t count, uint64_t seed, size_t first, cudaStream_t stream);

// `copies` column-major n x n matrices (lda = n), `stride` elements apart: a well-conditioned lower triangle
// (diagonal in (1.75, 2.25), off-diagonal uniform in (-1/n, 1/n): diagonally dominant by rows and by columns, so
// both L x = b and L^T x = b stay bounded) and a NaN upper triangle, so a kernel that reads it produces NaN.
template <typename T>
cudaError_t FillLowerTriangular(T* a, int64_t n, size_t copies, size_t stride, uint64_t seed, cudaStream_t stream);

}  // namespace bo_bench
