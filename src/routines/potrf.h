// ?POTRF: the Cholesky factorization of a symmetric positive definite matrix, A = U^T U (uplo U) or L L^T (uplo L);
// only the uplo triangle is read and overwritten.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_POTRF_RESULT(T) void
#define BO_POTRF_PARAMS(T, I) (const char* uplo, const I* n, T* a, const I* lda, I* info, fortran_strlen uplo_len)
#define BO_POTRF_ARGS (uplo, n, a, lda, info, uplo_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Potrf {
  static constexpr bo_routine_kind kKind = BO_KIND_POTRF;
  template <class J>
  using WithInt = Potrf<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_POTRF_RESULT(T) BO_POTRF_PARAMS(T, I);
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
    *call = bo_call{kRoutine, {ul}, n, n, 0,       0,   0, std::get<A>(x), lda,     nullptr, 0,
                    nullptr,  0,    0, 0, nullptr, out, 0, kIntBytes<I>,   nullptr, 0,       nullptr,
                    0,        0};
    return Prep::kRun;
  }

  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), lda = I(c.lda);
    fn(&c.op[0], &n, static_cast<T*>(const_cast<void*>(c.a)), &lda, static_cast<I*>(c.info), 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[0] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kInOut, c.n, c.n, c.lda};
    return 1;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return potrf_work(double(c.n)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"potrf", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c n=%lld lda=%lld", c.op[0], (long long)c.n, (long long)c.lda);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using potrf = Potrf<T, I>;
}

}  // namespace bo::routines
