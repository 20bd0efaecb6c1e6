// ?POTRI: the inverse of a symmetric positive definite matrix from its Cholesky factor (?POTRF), in the UPLO triangle.
// A zero on the factor's diagonal (INFO > 0) is left to the CPU LAPACK.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_POTRI_RESULT(T) void
#define BO_POTRI_PARAMS(T, I) (const char* uplo, const I* n, T* a, const I* lda, I* info, fortran_strlen uplo_len)
#define BO_POTRI_ARGS (uplo, n, a, lda, info, uplo_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Potri {
  static constexpr bo_routine_kind kKind = BO_KIND_POTRI;
  template <class J>
  using WithInt = Potri<T, J>;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_POTRI_RESULT(T) BO_POTRI_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, N, A, LDA, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char ul = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (!is_uplo(ul)) return lapack_invalid(out, 1, info);
    if (n < 0) return lapack_invalid(out, 2, info);
    if (lda < max1(n)) return lapack_invalid(out, 4, info);
    if (n == 0) return Prep::kQuick;
    bo_call c{};
    c.routine = kRoutine;
    c.op[0] = ul;
    c.m = n, c.n = n, c.a = std::get<A>(x), c.lda = lda;
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[0] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kInOut, c.n, c.n, c.lda};
    return 1;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return potri_work(double(c.n)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }
  static constexpr ShapeClassInfo kClasses[] = {{"potri", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c n=%lld lda=%lld", c.op[0], (long long)c.n, (long long)c.lda);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using potri = Potri<T, I>;
}

}  // namespace bo::routines
