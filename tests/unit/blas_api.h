// The function types of the exported routines for element type T (float: s, double: d), written from the BLAS
// standard rather than taken from the library's headers, so the tests check the public ABI itself; the CBLAS types
// are asserted equal to the system <cblas.h> declarations.
#pragma once

#include <cblas.h>

#include <type_traits>

#include "abi/blas_types.h"

namespace bt {

template <class T>
struct Api {
  using I = blasoffload::blas_int;
  using L = blasoffload::fortran_strlen;  // gfortran's hidden CHARACTER lengths
  using gemm = void(const char* transa, const char* transb, const I* m, const I* n, const I* k, const T* alpha,
                    const T* a, const I* lda, const T* b, const I* ldb, const T* beta, T* c, const I* ldc, L, L);
  using gemv = void(const char* trans, const I* m, const I* n, const T* alpha, const T* a, const I* lda, const T* x,
                    const I* incx, const T* beta, T* y, const I* incy, L);
  using trsv = void(const char* uplo, const char* trans, const char* diag, const I* n, const T* a, const I* lda, T* x,
                    const I* incx, L, L, L);
  using nrm2 = T(const I* n, const T* x, const I* incx);
  using trsm = void(const char* side, const char* uplo, const char* transa, const char* diag, const I* m, const I* n,
                    const T* alpha, const T* a, const I* lda, T* b, const I* ldb, L, L, L, L);
  using syrk = void(const char* uplo, const char* trans, const I* n, const I* k, const T* alpha, const T* a,
                    const I* lda, const T* beta, T* c, const I* ldc, L, L);

  using cblas_gemm = void(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int m, int n, int k, T alpha, const T* a,
                          int lda, const T* b, int ldb, T beta, T* c, int ldc);
  using cblas_gemv = void(CBLAS_LAYOUT, CBLAS_TRANSPOSE, int m, int n, T alpha, const T* a, int lda, const T* x,
                          int incx, T beta, T* y, int incy);
  using cblas_trsv = void(CBLAS_LAYOUT, CBLAS_UPLO, CBLAS_TRANSPOSE, CBLAS_DIAG, int n, const T* a, int lda, T* x,
                          int incx);
  using cblas_nrm2 = T(int n, const T* x, int incx);
  using cblas_trsm = void(CBLAS_LAYOUT, CBLAS_SIDE, CBLAS_UPLO, CBLAS_TRANSPOSE, CBLAS_DIAG, int m, int n, T alpha,
                          const T* a, int lda, T* b, int ldb);
  using cblas_syrk = void(CBLAS_LAYOUT, CBLAS_UPLO, CBLAS_TRANSPOSE, int n, int k, T alpha, const T* a, int lda, T beta,
                          T* c, int ldc);
};

// Our CBLAS types are the system header's, in both precisions.
#define BT_SAME_AS_CBLAS_H(name)                                                      \
  static_assert(std::is_same_v<Api<float>::cblas_##name, decltype(::cblas_s##name)>); \
  static_assert(std::is_same_v<Api<double>::cblas_##name, decltype(::cblas_d##name)>);
BT_SAME_AS_CBLAS_H(gemm)
BT_SAME_AS_CBLAS_H(gemv)
BT_SAME_AS_CBLAS_H(trsv)
BT_SAME_AS_CBLAS_H(nrm2)
BT_SAME_AS_CBLAS_H(trsm)
BT_SAME_AS_CBLAS_H(syrk)
#undef BT_SAME_AS_CBLAS_H

}  // namespace bt
