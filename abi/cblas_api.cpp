// The exported CBLAS entry points: valid calls become column-major Fortran calls routed like the Fortran
// entry points; invalid ones go unchanged to the CPU library's own CBLAS so its error protocol applies.
#include <cblas.h>

#include "abi/arg_checks.h"
#include "abi/signatures.h"
#include "dispatch/cpu_blas.h"
#include "dispatch/routines.h"
#include "dispatch/runtime.h"

using namespace blasoffload;

#define BO_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

const char kN = 'N', kT = 'T', kC = 'C', kU = 'U', kL = 'L', kR = 'R';

// Option letter for a CBLAS transpose; nullptr if the enum value is invalid.
const char* trans_letter(CBLAS_TRANSPOSE t) {
  switch (t) {
    case CblasNoTrans:
      return &kN;
    case CblasTrans:
      return &kT;
    case CblasConjTrans:
      return &kC;
    default:
      return nullptr;
  }
}
// Row-major flips a transpose: A^T in row-major is A in column-major (conjugation is moot for reals).
const char* flipped_trans_letter(CBLAS_TRANSPOSE t) {
  switch (t) {
    case CblasNoTrans:
      return &kT;
    case CblasTrans:
    case CblasConjTrans:
      return &kN;
    default:
      return nullptr;
  }
}
const char* uplo_letter(CBLAS_UPLO u, bool flip) {
  if (u == CblasUpper) return flip ? &kL : &kU;
  if (u == CblasLower) return flip ? &kU : &kL;
  return nullptr;
}
// Row-major swaps the sides: column-major storage sees the row-major X = B op(A)^-1 as X^T = op(A^T)^-1 B^T, a
// left-side solve with the stored matrix A^T (whose triangle is the other one) and the same op.
const char* side_letter(CBLAS_SIDE s, bool flip) {
  if (s == CblasLeft) return flip ? &kR : &kL;
  if (s == CblasRight) return flip ? &kL : &kR;
  return nullptr;
}
const char* diag_letter(CBLAS_DIAG d) {
  if (d == CblasUnit) return &kU;
  if (d == CblasNonUnit) return &kN;
  return nullptr;
}

// Entered from a CBLAS entry: the scope is open, so the CPU CBLAS may call its Fortran routine back
// through us without being counted twice.
template <class Fn>
Fn* cpu_cblas(Fn* fn, const char* name) {
  if (!fn) cpu_blas_missing(name);
  return fn;
}

}  // namespace

BO_EXPORT void cblas_sgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb,
                           const CBLAS_INT m, const CBLAS_INT n, const CBLAS_INT k, const float alpha, const float* a,
                           const CBLAS_INT lda, const float* b, const CBLAS_INT ldb, const float beta, float* c,
                           const CBLAS_INT ldc) noexcept {
  const bool was_reentered = reentered();
  CallScope scope;
  ensure_initialized();
  const bool row = layout == CblasRowMajor;
  const char* ta = trans_letter(transa);
  const char* tb = trans_letter(transb);
  bool valid = (row || layout == CblasColMajor) && ta && tb;
  // Row-major C = A B is column-major C^T = B^T A^T.
  const SgemmCall call = row ? SgemmCall{tb, ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc, 1, 1}
                             : SgemmCall{ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1};
  valid =
      valid && check_sgemm(*call.transa, *call.transb, *call.m, *call.n, *call.k, *call.lda, *call.ldb, *call.ldc) == 0;
  if (!valid || was_reentered) {
    cpu_cblas(g_cpu.sgemm_c, "cblas_sgemm")(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  run_sgemm(call);
}

BO_EXPORT void cblas_sgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const CBLAS_INT m, const CBLAS_INT n,
                           const float alpha, const float* a, const CBLAS_INT lda, const float* x, const CBLAS_INT incx,
                           const float beta, float* y, const CBLAS_INT incy) noexcept {
  const bool was_reentered = reentered();
  CallScope scope;
  ensure_initialized();
  const bool row = layout == CblasRowMajor;
  const char* t = row ? flipped_trans_letter(trans) : trans_letter(trans);
  bool valid = (row || layout == CblasColMajor) && t;
  const SgemvCall call = row ? SgemvCall{t, &n, &m, &alpha, a, &lda, x, &incx, &beta, y, &incy, 1}
                             : SgemvCall{t, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy, 1};
  valid = valid && check_sgemv(*call.trans, *call.m, *call.n, *call.lda, *call.incx, *call.incy) == 0;
  if (!valid || was_reentered) {
    cpu_cblas(g_cpu.sgemv_c, "cblas_sgemv")(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
    return;
  }
  run_sgemv(call);
}

BO_EXPORT void cblas_strsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans,
                           const CBLAS_DIAG diag, const CBLAS_INT n, const float* a, const CBLAS_INT lda, float* x,
                           const CBLAS_INT incx) noexcept {
  const bool was_reentered = reentered();
  CallScope scope;
  ensure_initialized();
  const bool row = layout == CblasRowMajor;
  const char* ul = uplo_letter(uplo, row);
  const char* t = row ? flipped_trans_letter(trans) : trans_letter(trans);
  const char* d = diag_letter(diag);
  const bool valid = (row || layout == CblasColMajor) && ul && t && d && check_strsv(*ul, *t, *d, n, lda, incx) == 0;
  if (!valid || was_reentered) {
    cpu_cblas(g_cpu.strsv_c, "cblas_strsv")(layout, uplo, trans, diag, n, a, lda, x, incx);
    return;
  }
  run_strsv(StrsvCall{ul, t, d, &n, a, &lda, x, &incx, 1, 1, 1});
}

BO_EXPORT float cblas_snrm2(const CBLAS_INT n, const float* x, const CBLAS_INT incx) noexcept {
  if (reentered()) return cpu_cblas(g_cpu.snrm2_c, "cblas_snrm2")(n, x, incx);
  CallScope scope;
  ensure_initialized();
  return run_snrm2(&n, x, &incx);
}

BO_EXPORT void cblas_strsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side, const CBLAS_UPLO uplo,
                           const CBLAS_TRANSPOSE transa, const CBLAS_DIAG diag, const CBLAS_INT m, const CBLAS_INT n,
                           const float alpha, const float* a, const CBLAS_INT lda, float* b,
                           const CBLAS_INT ldb) noexcept {
  const bool was_reentered = reentered();
  CallScope scope;
  ensure_initialized();
  const bool row = layout == CblasRowMajor;
  const char* sd = side_letter(side, row);
  const char* ul = uplo_letter(uplo, row);
  // The transpose is kept (see side_letter).
  const char* ta = trans_letter(transa);
  const char* d = diag_letter(diag);
  bool valid = (row || layout == CblasColMajor) && sd && ul && ta && d;
  // Row-major B (m x n) is column-major B^T (n x m).
  const StrsmCall call = row ? StrsmCall{sd, ul, ta, d, &n, &m, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1}
                             : StrsmCall{sd, ul, ta, d, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1};
  valid = valid && check_strsm(*sd, *ul, *ta, *d, *call.m, *call.n, lda, ldb) == 0;
  if (!valid || was_reentered) {
    cpu_cblas(g_cpu.strsm_c, "cblas_strsm")(layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
    return;
  }
  run_strsm(call);
}

BO_EXPORT void cblas_ssyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans,
                           const CBLAS_INT n, const CBLAS_INT k, const float alpha, const float* a, const CBLAS_INT lda,
                           const float beta, float* c, const CBLAS_INT ldc) noexcept {
  const bool was_reentered = reentered();
  CallScope scope;
  ensure_initialized();
  const bool row = layout == CblasRowMajor;
  // Row-major C's upper triangle is column-major C^T's lower one, and row-major A A^T is (A^T)^T A^T.
  const char* ul = uplo_letter(uplo, row);
  const char* t = row ? flipped_trans_letter(trans) : trans_letter(trans);
  const bool valid = (row || layout == CblasColMajor) && ul && t && check_ssyrk(*ul, *t, n, k, lda, ldc) == 0;
  if (!valid || was_reentered) {
    cpu_cblas(g_cpu.ssyrk_c, "cblas_ssyrk")(layout, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
    return;
  }
  run_ssyrk(SsyrkCall{ul, t, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1});
}
