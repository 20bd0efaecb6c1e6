// cuSOLVER (dense LU, Cholesky, QR, symmetric eigenproblem, SVD) for the module's LAPACK path: opened at run time
// (never linked), so the module works without it and LAPACK calls then stay on the CPU LAPACK.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include "abi/blas_types.h"
#include "routines/descriptor.h"

namespace bok::vendor {

// True once libcusolver was opened and every symbol resolved (first call tries; BLASOFFLOAD_CUSOLVER=off or a path
// overrides the search). Thread-safe.
bool cusolver_available();
// True when, besides, the complex routines (C, Z: part 1 and part 2) resolved: a library without them keeps the real
// routines.
bool cusolver_complex_available();
// Whether the first try to open it has finished (without trying): the policy's question before a LAPACK call, which
// must not pay the opening when it is short.
bool cusolver_tried();
// The BLASOFFLOAD_CUSOLVER setting as the module's configuration gives it; called by the module's init before any use.
void set_cusolver_setting(const char* value);
// "cuSOLVER 12.0.3 (libcusolver.so.12)", or why it is unavailable.
const char* cusolver_description();

// LAPACK semantics on device pointers (column-major, 1-based pivots), enqueued on `st` with this thread's handle. Each
// returns a cudaError_t (cuSOLVER failures map to cudaErrorUnknown / cudaErrorMemoryAllocation); INFO lands in the
// device integer dev_info. Dimensions must fit in int (the caller checks). The *_work functions give the workspace
// elements the factorization needs (0 on failure with *err set). One overload per element type T (float, double,
// bo_cfloat, bo_cdouble); the complex ones take TRANS 'C' (the conjugate transpose) and give cudaErrorNotSupported
// (also as *err) when cusolver_complex_available() is false.
#define BO_CUSOLVER_PART1_DECL(T)                                                                                      \
  int64_t cusolver_getrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err);                     \
  int64_t cusolver_potrf_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err);                     \
  int cusolver_getrf(int64_t m, int64_t n, T* a, int64_t lda, T* work, int* ipiv, int* dev_info, cudaStream_t st);     \
  int cusolver_getrs(char trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb, \
                     int* dev_info, cudaStream_t st);                                                                  \
  int cusolver_potrf(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* dev_info, cudaStream_t st); \
  int cusolver_potrs(char uplo, int64_t n, int64_t nrhs, const T* a, int64_t lda, T* b, int64_t ldb, int* dev_info,    \
                     cudaStream_t st);
BO_CUSOLVER_PART1_DECL(float)
BO_CUSOLVER_PART1_DECL(double)
BO_CUSOLVER_PART1_DECL(bo_cfloat)
BO_CUSOLVER_PART1_DECL(bo_cdouble)
#undef BO_CUSOLVER_PART1_DECL

// The real type beneath an element type (the descriptors' RealOf): the eigenvalues', singular values' and gesvd's
// RWORK's.
template <class T>
using SolverReal = bo::routines::RealOf<T>;

// Part 2 (QR, the symmetric and Hermitian eigenproblem, the SVD, the Cholesky inverse), for T of the four element types
// (instantiated for each): the workspace in elements (0 with *err set on failure), then the routine. The complex ones
// are cuSOLVER's ungqr, unmqr (TRANS 'C'), heevd, and give cudaErrorNotSupported without the complex group.
template <class T>
int64_t cusolver_geqrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err);
template <class T>
int cusolver_geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau, T* work, int64_t lwork, int* dev_info,
                   cudaStream_t st);
template <class T>
int64_t cusolver_orgqr_work(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* tau, cudaStream_t st,
                            int* err);
template <class T>
int cusolver_orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau, T* work, int64_t lwork,
                   int* dev_info, cudaStream_t st);
template <class T>
int64_t cusolver_ormqr_work(char side, char trans, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                            const T* tau, const T* c, int64_t ldc, cudaStream_t st, int* err);
template <class T>
int cusolver_ormqr(char side, char trans, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* tau, T* c,
                   int64_t ldc, T* work, int64_t lwork, int* dev_info, cudaStream_t st);
template <class T>
int64_t cusolver_syevd_work(char jobz, char uplo, int64_t n, const T* a, int64_t lda, const SolverReal<T>* w,
                            cudaStream_t st, int* err);
template <class T>
int cusolver_syevd(char jobz, char uplo, int64_t n, T* a, int64_t lda, SolverReal<T>* w, T* work, int64_t lwork,
                   int* dev_info, cudaStream_t st);
// m >= n; rwork: min(m, n) - 1 elements (the unconverged superdiagonal).
template <class T>
int64_t cusolver_gesvd_work(int64_t m, int64_t n, cudaStream_t st, int* err);
template <class T>
int cusolver_gesvd(char jobu, char jobvt, int64_t m, int64_t n, T* a, int64_t lda, SolverReal<T>* s, T* u, int64_t ldu,
                   T* vt, int64_t ldvt, T* work, int64_t lwork, SolverReal<T>* rwork, int* dev_info, cudaStream_t st);
// The SVD by polar decomposition (cusolverDnXgesvdp), in double precision, m >= n, economy size: U m x n, V (not V^T)
// n x n, only with vectors. Its device and host workspace are its own; *err_sigma is its estimate of the singular
// values' error. cudaErrorNotSupported without it (cuSOLVER before 11.1).
bool cusolver_polar_available();
int cusolver_gesvdp(bool vectors, int64_t m, int64_t n, double* a, int64_t lda, double* s, double* u, int64_t ldu,
                    double* v, int64_t ldv, int* dev_info, double* err_sigma, cudaStream_t st);
template <class T>
int64_t cusolver_potri_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err);
template <class T>
int cusolver_potri(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* dev_info, cudaStream_t st);

}  // namespace bok::vendor
