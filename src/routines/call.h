/* One normalised BLAS call: what the core hands the CUDA module, what the policy decides on and what a kernel of
 * the registry receives (with device pointers). Built once per call by the routine's descriptor
 * (src/routines/<routine>.h) after the reference checks and quick returns passed: option letters upper case,
 * dimensions and scalars read, element type implied by the routine. Plain C (the module boundary).
 *
 * Fields per routine kind (unused fields are 0):
 *   gemm: op = {transa, transb}, m, n, k, alpha, a/lda, b/ldb, beta, c/ldc
 *   gemv: op = {trans}, m, n, alpha, a/lda, b = x/incx, beta, c = y/incy
 *   trsv: op = {uplo, trans, diag}, n, a/lda, c = x/incx (solved in place)
 *   nrm2: n, b = x/incx (> 0), c = where the result goes (host scalar for the module, device scalar for a kernel)
 *   trsm: op = {side, uplo, transa, diag}, m, n, alpha (!= 0), a/lda, c = B/ldc (solved in place)
 *   syrk: op = {uplo, trans ('C' read as 'T')}, n, k, alpha (!= 0), a/lda, beta, c/ldc (only the triangle read and
 *         written)
 * LAPACK routines (A is read and written by the factorizations: a is then an output too; info points to the caller's
 * INFO, ipiv to its pivot array, both of int_bytes bytes (4, or 8 for the ILP64 families); nrhs is k):
 *   getrf: m, n, a/lda (the factors), ipiv, info
 *   getrs: op = {trans}, n, k = nrhs, a/lda (the factors), ipiv, c/ldc = B (solved in place), info
 *   gesv:  n, k = nrhs, a/lda (the factors), ipiv, c/ldc = B, info
 *   potrf: op = {uplo}, n, a/lda (only the triangle read and written), info
 *   potrs: op = {uplo}, n, k = nrhs, a/lda (the triangle), c/ldc = B, info
 *   posv:  op = {uplo}, n, k = nrhs, a/lda (the triangle, factored), c/ldc = B, info
 *   trtrs: op = {uplo, trans, diag}, n, k = nrhs (> 0), a/lda (the triangle), c/ldc = B, info
 * LAPACK part 2 (vectors of results are contiguous: their ld is their length):
 *   geqrf: m, n, a/lda (the factors), b = TAU (min(m, n)), info
 *   orgqr: m, n, k, a/lda (the reflectors in, Q out), b = TAU (k), info
 *   ormqr: op = {side, trans}, m, n, k, a/lda (the reflectors, read), b = TAU (k), c/ldc = C, info
 *   gels:  op = {trans}, m, n, k = nrhs, a/lda (the factors), c/ldc = B (max(m, n) rows), info
 *   syevd, syev: op = {jobz, uplo}, n, a/lda (the triangle read; the eigenvectors written when jobz is V), b = W, info
 *   syevr: op = {jobz, range, uplo}, n, a/lda (the triangle read), alpha = VL, beta = VU, incx = IL, incy = IU,
 *          b = W, c/ldc = Z, ipiv = ISUPPZ, found = M, info
 *   gesvd: op = {jobu, jobvt}, m, n, a/lda, b = S, c/ldc = U, d/ldd = VT, info
 *   gesdd: op = {jobz}, m, n, a/lda, b = S, c/ldc = U, d/ldd = VT, info
 *   getri: n, a/lda (the LU factors in, the inverse out), ipiv (read), info
 *   potri: op = {uplo}, n, a/lda (the Cholesky factor's triangle in, the inverse's out), info */
#ifndef BLASOFFLOAD_CALL_H
#define BLASOFFLOAD_CALL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bo_call {
  int32_t routine; /* enum bo_routine */
  char op[4];      /* option letters in the routine's Fortran order, upper case */
  int64_t m, n, k;
  double alpha, beta; /* exact for float and double elements */
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  void* c;
  int64_t ldc;
  int64_t incx, incy;
  void* ipiv; /* LAPACK only (see above) */
  void* info;
  int32_t family;    /* enum Family (abi/families.h): whose CPU library a CPU share or fallback is forwarded to */
  int32_t int_bytes; /* the caller's integer size: ipiv and info are int32 (4) or int64 (8) */
  void* d;           /* a fourth matrix (gesvd, gesdd: VT) */
  int64_t ldd;
  void* found; /* syevr: the number of eigenvalues found (int_bytes) */
  /* The imaginary parts of alpha and beta (complex routines; 0 for real ones and for herk's real scalars). */
  double alpha_i, beta_i;
};

#ifdef __cplusplus
}
#endif

#endif
