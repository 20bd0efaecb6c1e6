// ?GETRS: solves A X = B or A^T X = B with the LU factors of ?GETRF (B overwritten by X).
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GETRS_RESULT(T) void
#define BO_GETRS_PARAMS(T, I)                                                                                          \
  (const char* trans, const I* n, const I* nrhs, const T* a, const I* lda, const I* ipiv, T* b, const I* ldb, I* info, \
   fortran_strlen trans_len)
#define BO_GETRS_ARGS (trans, n, nrhs, a, lda, ipiv, b, ldb, info, trans_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Getrs : SolveFamily<T, 2> {
  static constexpr bo_routine_kind kKind = BO_KIND_GETRS;
  template <class J>
  using WithInt = Getrs<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GETRS_RESULT(T) BO_GETRS_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { TRANS, N, NRHS, A, LDA, IPIV, B, LDB, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char t = upper(*std::get<TRANS>(x));
    const I n = *std::get<N>(x), nrhs = *std::get<NRHS>(x), lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x);
    if (!is_trans(t)) return lapack_invalid(out, 1, info);
    if (n < 0) return lapack_invalid(out, 2, info);
    if (nrhs < 0) return lapack_invalid(out, 3, info);
    if (lda < max1(n)) return lapack_invalid(out, 5, info);
    if (ldb < max1(n)) return lapack_invalid(out, 8, info);
    if (n == 0 || nrhs == 0) return Prep::kQuick;
    *call = bo_call{kRoutine,
                    {t},
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
                    const_cast<I*>(std::get<IPIV>(x)),
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
    fn(&c.op[0], &n, &nrhs, static_cast<const T*>(c.a), &lda, static_cast<const I*>(c.ipiv), static_cast<T*>(c.c), &ldb,
       static_cast<I*>(c.info), 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kIn, c.n, c.n, c.lda};
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.n, c.k, c.ldc};
    return 2;
  }
  // Few right-hand sides (.vec, a bytes class), a narrow block or a wide one (.narrow, .mat: flops): lapack.h.
  static constexpr ShapeClassInfo kClasses[] = {
      {"getrs.vec", 1.0 / kSolveFewRhs, true}, {"getrs.narrow", 2, false}, {"getrs.mat", 2, false}};

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c n=%lld nrhs=%lld", c.op[0], (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using getrs = Getrs<T, I>;
}

}  // namespace bo::routines
