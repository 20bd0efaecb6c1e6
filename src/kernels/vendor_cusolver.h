// cuSOLVER (dense LU and Cholesky) for the module's LAPACK path: opened at run time (never linked), so the module
// works without it and LAPACK calls then stay on the CPU LAPACK.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

namespace bok::vendor {

// True once libcusolver was opened and every symbol resolved (first call tries; BLASOFFLOAD_CUSOLVER=off or a path
// overrides the search). Thread-safe.
bool cusolver_available();
// Whether the first try to open it has finished (without trying): the policy's question before a LAPACK call, which
// must not pay the opening when it is short.
bool cusolver_tried();
// The BLASOFFLOAD_CUSOLVER setting as the module's configuration gives it; called by the module's init before any use.
void set_cusolver_setting(const char* value);
// "cuSOLVER 12.0.3 (libcusolver.so.12)", or why it is unavailable.
const char* cusolver_description();

// LAPACK semantics on device pointers (column-major, 1-based pivots), enqueued on `st` with this thread's handle. Each
// returns a cudaError_t (cuSOLVER failures map to cudaErrorUnknown / cudaErrorMemoryAllocation); INFO lands in the
// device integer dev_info. Dimensions must fit in int (the caller checks). One overload per element type.
// Workspace elements the factorization needs (0 on failure with *err set).
int64_t cusolver_getrf_work(int64_t m, int64_t n, float* a, int64_t lda, cudaStream_t st, int* err);
int64_t cusolver_getrf_work(int64_t m, int64_t n, double* a, int64_t lda, cudaStream_t st, int* err);
int64_t cusolver_potrf_work(char uplo, int64_t n, float* a, int64_t lda, cudaStream_t st, int* err);
int64_t cusolver_potrf_work(char uplo, int64_t n, double* a, int64_t lda, cudaStream_t st, int* err);
int cusolver_getrf(int64_t m, int64_t n, float* a, int64_t lda, float* work, int* ipiv, int* dev_info, cudaStream_t st);
int cusolver_getrf(int64_t m, int64_t n, double* a, int64_t lda, double* work, int* ipiv, int* dev_info,
                   cudaStream_t st);
int cusolver_getrs(char trans, int64_t n, int64_t nrhs, const float* a, int64_t lda, const int* ipiv, float* b,
                   int64_t ldb, int* dev_info, cudaStream_t st);
int cusolver_getrs(char trans, int64_t n, int64_t nrhs, const double* a, int64_t lda, const int* ipiv, double* b,
                   int64_t ldb, int* dev_info, cudaStream_t st);
int cusolver_potrf(char uplo, int64_t n, float* a, int64_t lda, float* work, int64_t lwork, int* dev_info,
                   cudaStream_t st);
int cusolver_potrf(char uplo, int64_t n, double* a, int64_t lda, double* work, int64_t lwork, int* dev_info,
                   cudaStream_t st);
int cusolver_potrs(char uplo, int64_t n, int64_t nrhs, const float* a, int64_t lda, float* b, int64_t ldb,
                   int* dev_info, cudaStream_t st);
int cusolver_potrs(char uplo, int64_t n, int64_t nrhs, const double* a, int64_t lda, double* b, int64_t ldb,
                   int* dev_info, cudaStream_t st);

}  // namespace bok::vendor
