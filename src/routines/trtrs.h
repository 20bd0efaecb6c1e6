// ?TRTRS: solves op(A) X = B for a triangular A after checking it is not singular (a zero on a non-unit diagonal:
// INFO = its index, nothing solved); B overwritten by X.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_TRTRS_RESULT(T) void
#define BO_TRTRS_PARAMS(T, I)                                                                                        \
  (const char* uplo, const char* trans, const char* diag, const I* n, const I* nrhs, const T* a, const I* lda, T* b, \
   const I* ldb, I* info, fortran_strlen uplo_len, fortran_strlen trans_len, fortran_strlen diag_len)
#define BO_TRTRS_ARGS (uplo, trans, diag, n, nrhs, a, lda, b, ldb, info, uplo_len, trans_len, diag_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Trtrs : SolveFamily<T, 1> {
  static constexpr bo_routine_kind kKind = BO_KIND_TRTRS;
  template <class J>
  using WithInt = Trtrs<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_TRTRS_RESULT(T) BO_TRTRS_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, TRANS, DIAG, N, NRHS, A, LDA, B, LDB, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char ul = upper(*std::get<UPLO>(x)), t = upper(*std::get<TRANS>(x)), dg = upper(*std::get<DIAG>(x));
    const I n = *std::get<N>(x), nrhs = *std::get<NRHS>(x), lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x);
    if (!is_uplo(ul)) return lapack_invalid(out, 1, info);
    if (!is_trans(t)) return lapack_invalid(out, 2, info);
    if (!is_diag(dg)) return lapack_invalid(out, 3, info);
    if (n < 0) return lapack_invalid(out, 4, info);
    if (nrhs < 0) return lapack_invalid(out, 5, info);
    if (lda < max1(n)) return lapack_invalid(out, 7, info);
    if (ldb < max1(n)) return lapack_invalid(out, 9, info);
    if (n == 0) return Prep::kQuick;
    // No right-hand sides: only the singularity check, a scan of the diagonal the CPU LAPACK does at once.
    if (nrhs == 0) return Prep::kQuickCpu;
    *call = bo_call{kRoutine,
                    {ul, t, dg},
                    n,
                    n,
                    nrhs,
                    0,
                    0,
                    std::get<A>(x),
                    lda,
                    nullptr,
                    0,
                    std::get<B>(x),
                    ldb,
                    0,
                    0,
                    nullptr,
                    out,
                    0,
                    kIntBytes<I>,
                    nullptr,
                    0,
                    nullptr,
                    0,
                    0};
    return Prep::kRun;
  }

  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), nrhs = I(c.k), lda = I(c.lda), ldb = I(c.ldc);
    fn(&c.op[0], &c.op[1], &c.op[2], &n, &nrhs, static_cast<const T*>(c.a), &lda, static_cast<T*>(c.c), &ldb,
       static_cast<I*>(c.info), 1, 1, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[0] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kIn, c.n, c.n, c.lda};
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.n, c.k, c.ldc};
    return 2;
  }
  // Few right-hand sides (.vec, a bytes class), a narrow block or a wide one (.narrow, .mat: flops): lapack.h.
  static constexpr ShapeClassInfo kClasses[] = {
      {"trtrs.vec", 1.0 / kSolveFewRhs, true}, {"trtrs.narrow", 2, false}, {"trtrs.mat", 2, false}};

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c%c n=%lld nrhs=%lld", c.op[0], c.op[1], c.op[2], (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using trtrs = Trtrs<T, I>;
}

}  // namespace bo::routines
