// Function types of every routine in routines.def: the Fortran ABI we export and forward, and the CBLAS
// types taken from the system <cblas.h> so our definitions are checked against it.
#pragma once

#include <cblas.h>

#include "blas_types.h"

namespace blasoffload {

using sgemm_fortran_t = void(const char* transa, const char* transb, const blas_int* m, const blas_int* n,
                             const blas_int* k, const float* alpha, const float* a, const blas_int* lda, const float* b,
                             const blas_int* ldb, const float* beta, float* c, const blas_int* ldc,
                             fortran_strlen transa_len, fortran_strlen transb_len);
using sgemv_fortran_t = void(const char* trans, const blas_int* m, const blas_int* n, const float* alpha,
                             const float* a, const blas_int* lda, const float* x, const blas_int* incx,
                             const float* beta, float* y, const blas_int* incy, fortran_strlen trans_len);
using strsv_fortran_t = void(const char* uplo, const char* trans, const char* diag, const blas_int* n, const float* a,
                             const blas_int* lda, float* x, const blas_int* incx, fortran_strlen uplo_len,
                             fortran_strlen trans_len, fortran_strlen diag_len);
using snrm2_fortran_t = float(const blas_int* n, const float* x, const blas_int* incx);
using strsm_fortran_t = void(const char* side, const char* uplo, const char* transa, const char* diag,
                             const blas_int* m, const blas_int* n, const float* alpha, const float* a,
                             const blas_int* lda, float* b, const blas_int* ldb, fortran_strlen side_len,
                             fortran_strlen uplo_len, fortran_strlen transa_len, fortran_strlen diag_len);
using ssyrk_fortran_t = void(const char* uplo, const char* trans, const blas_int* n, const blas_int* k,
                             const float* alpha, const float* a, const blas_int* lda, const float* beta, float* c,
                             const blas_int* ldc, fortran_strlen uplo_len, fortran_strlen trans_len);

using sgemm_cblas_t = decltype(::cblas_sgemm);
using sgemv_cblas_t = decltype(::cblas_sgemv);
using strsv_cblas_t = decltype(::cblas_strsv);
using snrm2_cblas_t = decltype(::cblas_snrm2);
using strsm_cblas_t = decltype(::cblas_strsm);
using ssyrk_cblas_t = decltype(::cblas_ssyrk);

// xerbla_(srname, info, srname_len): the reference BLAS error handler.
using xerbla_fortran_t = void(const char* srname, const blas_int* info, fortran_strlen srname_len);

}  // namespace blasoffload
