// cuBLAS as one more tuning candidate: opened at run time (never linked), so the module works without it.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include "abi/blas_types.h"

namespace bok::vendor {

// True once libcublas was opened and every real (S, D) symbol resolved (first call tries; BLASOFFLOAD_CUBLAS=off or
// a path overrides the search). Thread-safe.
bool cublas_available();
// True when, besides, every complex (C, Z) symbol resolved: a library without them keeps the real routines.
bool cublas_complex_available();
// The BLASOFFLOAD_CUBLAS setting as the module's configuration gives it (environment or config file); called by
// the module's init before any cuBLAS use. Without it (tuner, benchmarks) the environment is read.
void set_cublas_setting(const char* value);
// "cuBLAS 13.0.2 (/usr/local/cuda/lib64/libcublas.so.13)", or why it is unavailable.
const char* cublas_description();

// BLAS semantics on device pointers, enqueued on `st` with this thread's handle; return a cudaError_t
// (cuBLAS failures map to cudaErrorUnknown / cudaErrorMemoryAllocation). One overload per element type (the
// cuBLAS S and D routines).
// Complex elements: bo_cfloat and bo_cdouble are laid out as cuComplex and cuDoubleComplex; nrm2 returns the real norm
// (scnrm2, dznrm2) and herk takes real alpha and beta. T the element type, R its real type.
#define BO_CUBLAS_DECL(T, R)                                                                                       \
  int cublas_nrm2(int64_t n, const T* x, int64_t incx, R* result_dev, cudaStream_t st);                            \
  int cublas_gemv(char trans, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,    \
                  T beta, T* y, int64_t incy, cudaStream_t st);                                                    \
  int cublas_trsv(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx,        \
                  cudaStream_t st);                                                                                \
  int cublas_gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, \
                  int64_t ldb, T beta, T* c, int64_t ldc, cudaStream_t st);                                        \
  int cublas_trsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,         \
                  int64_t lda, T* b, int64_t ldb, cudaStream_t st);                                                \
  int cublas_syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta, T* c,     \
                  int64_t ldc, cudaStream_t st);
BO_CUBLAS_DECL(float, float)
BO_CUBLAS_DECL(double, double)
BO_CUBLAS_DECL(bo_cfloat, float)
BO_CUBLAS_DECL(bo_cdouble, double)
#undef BO_CUBLAS_DECL
int cublas_herk(char uplo, char trans, int64_t n, int64_t k, float alpha, const bo_cfloat* a, int64_t lda, float beta,
                bo_cfloat* c, int64_t ldc, cudaStream_t st);
int cublas_herk(char uplo, char trans, int64_t n, int64_t k, double alpha, const bo_cdouble* a, int64_t lda,
                double beta, bo_cdouble* c, int64_t ldc, cudaStream_t st);

}  // namespace bok::vendor
