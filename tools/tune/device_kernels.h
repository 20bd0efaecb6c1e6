// Device helpers of the tuner: operand initialisation, output poisoning, result comparison (float and double
// operands; complex ones as their interleaved parts), and seed 000's SREAD / SMSET bandwidth kernels.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

namespace bo::tune {

// x[i] = uniform in [-1, 1), from a hash of (seed, i): reproducible, never all zeros.
void fill_uniform(float* x, int64_t n, uint32_t seed, cudaStream_t st);
void fill_uniform(double* x, int64_t n, uint32_t seed, cudaStream_t st);
// A well-conditioned n x n lower triangle (diagonal 2, off-diagonal uniform / n) with the strict upper
// triangle set to NaN, so a kernel reading it fails validation.
void fill_lower_triangle(float* a, int64_t n, int64_t lda, uint32_t seed, cudaStream_t st);
void fill_lower_triangle(double* a, int64_t n, int64_t lda, uint32_t seed, cudaStream_t st);
// The same for complex elements, their real and imaginary parts interleaved in `a` (lda in elements): diagonal 2 + 0i,
// off-diagonal parts uniform / n, the strict upper triangle NaN in both parts.
void fill_lower_triangle_complex(float* a, int64_t n, int64_t lda, uint32_t seed, cudaStream_t st);
void fill_lower_triangle_complex(double* a, int64_t n, int64_t lda, uint32_t seed, cudaStream_t st);
void fill_nan(float* x, int64_t n, cudaStream_t st);
void fill_nan(double* x, int64_t n, cudaStream_t st);
// max_i |x_i - ref_i| / (scale_i), scale_i = tol_abs + tol_rel * |ref_i|; NaN anywhere gives +inf. Result
// written to *out (device memory).
void max_scaled_error(const float* x, const float* ref, int64_t n, float tol_abs, float tol_rel, float* out,
                      cudaStream_t st);
// The same for double operands (the tolerances and the comparison in double; the ratio written as a float).
void max_scaled_error(const double* x, const double* ref, int64_t n, double tol_abs, double tol_rel, float* out,
                      cudaStream_t st);

// Measured bandwidth (GB/s) of reading / writing `bytes` with the best of a few launch shapes (seed 000
// tunes these kernels too). buf must hold `bytes`.
double measure_read_gbs(const void* buf, size_t bytes, int reps);
double measure_write_gbs(void* buf, size_t bytes, int reps);

}  // namespace bo::tune
