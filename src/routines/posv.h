// ?POSV: solves A X = B for a symmetric positive definite A by its Cholesky factorization (?POTRF, then ?POTRS); the
// uplo triangle of A is overwritten by the factor, B by X. The factorization happens even with no right-hand sides.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_POSV_RESULT(T) void
#define BO_POSV_PARAMS(T, I)                                                                     \
  (const char* uplo, const I* n, const I* nrhs, T* a, const I* lda, T* b, const I* ldb, I* info, \
   fortran_strlen uplo_len)
#define BO_POSV_ARGS (uplo, n, nrhs, a, lda, b, ldb, info, uplo_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Posv {
  static constexpr bo_routine_kind kKind = BO_KIND_POSV;
  template <class J>
  using WithInt = Posv<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_POSV_RESULT(T) BO_POSV_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, N, NRHS, A, LDA, B, LDB, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char ul = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), nrhs = *std::get<NRHS>(x), lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x);
    if (const I bad = cholesky_solve_invalid(ul, n, nrhs, lda, ldb)) return lapack_invalid(out, bad, info);
    if (n == 0) return Prep::kQuick;
    *call = bo_call{
        kRoutine, {ul},    n,   n, nrhs,         0,       0, std::get<A>(x), lda, nullptr, 0, std::get<B>(x), ldb, 0,
        0,        nullptr, out, 0, kIntBytes<I>, nullptr, 0, nullptr,        0,   0};
    return Prep::kRun;
  }

  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), nrhs = I(c.k), lda = I(c.lda), ldb = I(c.ldc);
    fn(&c.op[0], &n, &nrhs, static_cast<T*>(const_cast<void*>(c.a)), &lda, static_cast<T*>(c.c), &ldb,
       static_cast<I*>(c.info), 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[0] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kInOut, c.n, c.n, c.lda};
    if (c.k == 0) return 1;
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.n, c.k, c.ldc};
    return 2;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return potrf_work(double(c.n)) + solve_work(double(c.n), double(c.k)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"posv", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c n=%lld nrhs=%lld", c.op[0], (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using posv = Posv<T, I>;
}

}  // namespace bo::routines
