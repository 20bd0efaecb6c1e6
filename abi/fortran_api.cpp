// The exported Fortran-ABI entry points (sgemm_ etc.) and their sgemm / SGEMM / SGEMM_ aliases.
#include "abi/signatures.h"
#include "dispatch/routines.h"
#include "dispatch/runtime.h"

using namespace blasoffload;

#define BO_EXPORT extern "C" __attribute__((visibility("default")))

BO_EXPORT void sgemm_(const char* transa, const char* transb, const blas_int* m, const blas_int* n, const blas_int* k,
                      const float* alpha, const float* a, const blas_int* lda, const float* b, const blas_int* ldb,
                      const float* beta, float* c, const blas_int* ldc, fortran_strlen transa_len,
                      fortran_strlen transb_len) noexcept {
  const SgemmCall call{transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len};
  if (reentered()) return forward_sgemm(call);
  CallScope scope;
  ensure_initialized();
  run_sgemm(call);
}

BO_EXPORT void sgemv_(const char* trans, const blas_int* m, const blas_int* n, const float* alpha, const float* a,
                      const blas_int* lda, const float* x, const blas_int* incx, const float* beta, float* y,
                      const blas_int* incy, fortran_strlen trans_len) noexcept {
  const SgemvCall call{trans, m, n, alpha, a, lda, x, incx, beta, y, incy, trans_len};
  if (reentered()) return forward_sgemv(call);
  CallScope scope;
  ensure_initialized();
  run_sgemv(call);
}

BO_EXPORT void strsv_(const char* uplo, const char* trans, const char* diag, const blas_int* n, const float* a,
                      const blas_int* lda, float* x, const blas_int* incx, fortran_strlen uplo_len,
                      fortran_strlen trans_len, fortran_strlen diag_len) noexcept {
  const StrsvCall call{uplo, trans, diag, n, a, lda, x, incx, uplo_len, trans_len, diag_len};
  if (reentered()) return forward_strsv(call);
  CallScope scope;
  ensure_initialized();
  run_strsv(call);
}

BO_EXPORT float snrm2_(const blas_int* n, const float* x, const blas_int* incx) noexcept {
  if (reentered()) return forward_snrm2(n, x, incx);
  CallScope scope;
  ensure_initialized();
  return run_snrm2(n, x, incx);
}

BO_EXPORT void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const blas_int* m,
                      const blas_int* n, const float* alpha, const float* a, const blas_int* lda, float* b,
                      const blas_int* ldb, fortran_strlen side_len, fortran_strlen uplo_len, fortran_strlen transa_len,
                      fortran_strlen diag_len) noexcept {
  const StrsmCall call{side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, side_len, uplo_len, transa_len, diag_len};
  if (reentered()) return forward_strsm(call);
  CallScope scope;
  ensure_initialized();
  run_strsm(call);
}

BO_EXPORT void ssyrk_(const char* uplo, const char* trans, const blas_int* n, const blas_int* k, const float* alpha,
                      const float* a, const blas_int* lda, const float* beta, float* c, const blas_int* ldc,
                      fortran_strlen uplo_len, fortran_strlen trans_len) noexcept {
  const SsyrkCall call{uplo, trans, n, k, alpha, a, lda, beta, c, ldc, uplo_len, trans_len};
  if (reentered()) return forward_ssyrk(call);
  CallScope scope;
  ensure_initialized();
  run_ssyrk(call);
}

// The other spellings compilers and NVBLAS-era codes use resolve to the same functions.
#define BO_ROUTINE(lower, UPPER)                                                 \
  BO_EXPORT lower##_fortran_t lower __attribute__((alias(#lower "_"), nothrow)); \
  BO_EXPORT lower##_fortran_t UPPER __attribute__((alias(#lower "_"), nothrow)); \
  BO_EXPORT lower##_fortran_t UPPER##_ __attribute__((alias(#lower "_"), nothrow));
#include "routines.def"
#undef BO_ROUTINE
