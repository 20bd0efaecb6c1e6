// Helpers shared by the kernels.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <string>

namespace bok {

// BLAS strided vector: logical element i of an n-vector with increment inc (either sign; a negative
// increment starts at the end: element i lives at x[(n-1-i)*|inc|]).
__host__ __device__ inline int64_t vidx(int64_t i, int64_t n, int64_t inc) {
  return inc > 0 ? i * inc : (n - 1 - i) * (-inc);
}

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// y = beta*y over an n-vector (beta == 0: y = 0 without reading y, so NaN in y does not propagate).
__global__ void scale_vector_kernel(int64_t n, float beta, float* y, int64_t incy);
// C = beta*C over m x n (beta == 0: C = 0 without reading C).
__global__ void scale_matrix_kernel(int64_t m, int64_t n, float beta, float* c, int64_t ldc);

cudaError_t scale_vector(int64_t n, float beta, float* y, int64_t incy, cudaStream_t s);
cudaError_t scale_matrix(int64_t m, int64_t n, float beta, float* c, int64_t ldc, cudaStream_t s);

}  // namespace bok
