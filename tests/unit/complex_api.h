// The function types of the complex BLAS routines (c and z), written from the BLAS standard rather than taken from the
// library's headers, and checked against the system <cblas.h>; free of GoogleTest, so complex_probe.cpp uses it too.
#pragma once

#include <cblas.h>

#include <complex>
#include <type_traits>

#include "abi/blas_types.h"

namespace bt::cx {

// The function types of the complex routines, from the BLAS standard (Fortran: every argument by reference, herk's
// scalars and the norms real; CBLAS: complex scalars and arrays as void pointers, herk's scalars real values).
template <class T>
struct CApi {
  using R = typename T::value_type;
  using I = blasoffload::blas_int;
  using L = blasoffload::fortran_strlen;
  using gemm = void(const char* transa, const char* transb, const I* m, const I* n, const I* k, const T* alpha,
                    const T* a, const I* lda, const T* b, const I* ldb, const T* beta, T* c, const I* ldc, L, L);
  using gemv = void(const char* trans, const I* m, const I* n, const T* alpha, const T* a, const I* lda, const T* x,
                    const I* incx, const T* beta, T* y, const I* incy, L);
  using trsv = void(const char* uplo, const char* trans, const char* diag, const I* n, const T* a, const I* lda, T* x,
                    const I* incx, L, L, L);
  using nrm2 = R(const I* n, const T* x, const I* incx);
  using trsm = void(const char* side, const char* uplo, const char* transa, const char* diag, const I* m, const I* n,
                    const T* alpha, const T* a, const I* lda, T* b, const I* ldb, L, L, L, L);
  using syrk = void(const char* uplo, const char* trans, const I* n, const I* k, const T* alpha, const T* a,
                    const I* lda, const T* beta, T* c, const I* ldc, L, L);
  using herk = void(const char* uplo, const char* trans, const I* n, const I* k, const R* alpha, const T* a,
                    const I* lda, const R* beta, T* c, const I* ldc, L, L);

  using cblas_gemm = void(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int m, int n, int k, const void* alpha,
                          const void* a, int lda, const void* b, int ldb, const void* beta, void* c, int ldc);
  using cblas_gemv = void(CBLAS_LAYOUT, CBLAS_TRANSPOSE, int m, int n, const void* alpha, const void* a, int lda,
                          const void* x, int incx, const void* beta, void* y, int incy);
  using cblas_trsv = void(CBLAS_LAYOUT, CBLAS_UPLO, CBLAS_TRANSPOSE, CBLAS_DIAG, int n, const void* a, int lda, void* x,
                          int incx);
  using cblas_nrm2 = R(int n, const void* x, int incx);
  using cblas_trsm = void(CBLAS_LAYOUT, CBLAS_SIDE, CBLAS_UPLO, CBLAS_TRANSPOSE, CBLAS_DIAG, int m, int n,
                          const void* alpha, const void* a, int lda, void* b, int ldb);
  using cblas_syrk = void(CBLAS_LAYOUT, CBLAS_UPLO, CBLAS_TRANSPOSE, int n, int k, const void* alpha, const void* a,
                          int lda, const void* beta, void* c, int ldc);
  using cblas_herk = void(CBLAS_LAYOUT, CBLAS_UPLO, CBLAS_TRANSPOSE, int n, int k, R alpha, const void* a, int lda,
                          R beta, void* c, int ldc);
};

// The CBLAS types are the system header's.
#define BT_SAME_AS_CBLAS_H_C(name, cname, zname)                                           \
  static_assert(std::is_same_v<CApi<bo_cfloat>::cblas_##name, decltype(::cblas_##cname)>); \
  static_assert(std::is_same_v<CApi<bo_cdouble>::cblas_##name, decltype(::cblas_##zname)>);
BT_SAME_AS_CBLAS_H_C(gemm, cgemm, zgemm)
BT_SAME_AS_CBLAS_H_C(gemv, cgemv, zgemv)
BT_SAME_AS_CBLAS_H_C(trsv, ctrsv, ztrsv)
BT_SAME_AS_CBLAS_H_C(nrm2, scnrm2, dznrm2)
BT_SAME_AS_CBLAS_H_C(trsm, ctrsm, ztrsm)
BT_SAME_AS_CBLAS_H_C(syrk, csyrk, zsyrk)
BT_SAME_AS_CBLAS_H_C(herk, cherk, zherk)
#undef BT_SAME_AS_CBLAS_H_C

}  // namespace bt::cx
