// ?POTRS: solves A X = B with the Cholesky factor of ?POTRF (the uplo triangle), B overwritten by X.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_POTRS_RESULT(T) void
#define BO_POTRS_PARAMS(T, I)                                                                          \
  (const char* uplo, const I* n, const I* nrhs, const T* a, const I* lda, T* b, const I* ldb, I* info, \
   fortran_strlen uplo_len)
#define BO_POTRS_ARGS (uplo, n, nrhs, a, lda, b, ldb, info, uplo_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Potrs : SolveFamily<T, 2> {
  static constexpr bo_routine_kind kKind = BO_KIND_POTRS;
  template <class J>
  using WithInt = Potrs<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_POTRS_RESULT(T) BO_POTRS_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, N, NRHS, A, LDA, B, LDB, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char ul = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), nrhs = *std::get<NRHS>(x), lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x);
    if (const I bad = cholesky_solve_invalid(ul, n, nrhs, lda, ldb)) return lapack_invalid(out, bad, info);
    if (n == 0 || nrhs == 0) return Prep::kQuick;
    *call = bo_call{
        kRoutine, {ul},    n,   n, nrhs,         0,       0, std::get<A>(x), lda, nullptr, 0, std::get<B>(x), ldb, 0,
        0,        nullptr, out, 0, kIntBytes<I>, nullptr, 0, nullptr,        0,   0};
    return Prep::kRun;
  }

  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), nrhs = I(c.k), lda = I(c.lda), ldb = I(c.ldc);
    fn(&c.op[0], &n, &nrhs, static_cast<const T*>(c.a), &lda, static_cast<T*>(c.c), &ldb, static_cast<I*>(c.info), 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[0] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kIn, c.n, c.n, c.lda};
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.n, c.k, c.ldc};
    return 2;
  }
  // Few right-hand sides (.vec, a bytes class), a narrow block or a wide one (.narrow, .mat: flops): lapack.h.
  static constexpr ShapeClassInfo kClasses[] = {
      {"potrs.vec", 1.0 / kSolveFewRhs, true}, {"potrs.narrow", 2, false}, {"potrs.mat", 2, false}};

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c n=%lld nrhs=%lld", c.op[0], (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using potrs = Potrs<T, I>;
}

}  // namespace bo::routines
