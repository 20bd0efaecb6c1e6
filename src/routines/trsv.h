// ?TRSV: x := op(A)^-1 x, A triangular.
#pragma once

#include <cstdio>

#include "routines/descriptor.h"

// The Fortran entry point's result and parameters, written once: the descriptor's type below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_TRSV_RESULT(T) void
#define BO_TRSV_PARAMS(T, I)                                                                                         \
  (const char* uplo, const char* trans, const char* diag, const I* n, const T* a, const I* lda, T* x, const I* incx, \
   fortran_strlen uplo_len, fortran_strlen trans_len, fortran_strlen diag_len)
#define BO_TRSV_ARGS (uplo, trans, diag, n, a, lda, x, incx, uplo_len, trans_len, diag_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Trsv {
  static constexpr bo_routine_kind kKind = BO_KIND_TRSV;
  template <class J>
  using WithInt = Trsv<T, J>;  // the same routine in another interface's integer type
  using Fortran = BO_TRSV_RESULT(T) BO_TRSV_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, TRANS, DIAG, N, A, LDA, X, INCX };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    const char ul = upper(*std::get<UPLO>(x)), t = upper(*std::get<TRANS>(x)), d = upper(*std::get<DIAG>(x));
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x), incx = *std::get<INCX>(x);
    *info = !is_uplo(ul) ? 1 : !is_trans(t) ? 2 : !is_diag(d) ? 3 : n < 0 ? 4 : lda < max1(n) ? 6 : incx == 0 ? 8 : 0;
    if (*info) return Prep::kInvalid;
    if (n == 0) return Prep::kQuick;
    *call = bo_call{kRoutine,
                    {ul, t, d},
                    0,
                    n,
                    0,
                    0,
                    0,
                    std::get<A>(x),
                    lda,
                    nullptr,
                    0,
                    std::get<X>(x),
                    0,
                    incx,
                    0,
                    nullptr,
                    nullptr,
                    0,
                    kIntBytes<I>,
                    nullptr,
                    0,
                    nullptr,
                    0,
                    0};
    return Prep::kRun;
  }

  // The normalised call through a Fortran entry point.
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), lda = I(c.lda), incx = I(c.incx);
    fn(&c.op[0], &c.op[1], &c.op[2], &n, static_cast<const T*>(c.a), &lda, static_cast<T*>(c.c), &incx, 1, 1, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[0] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kIn, c.n, c.n, c.lda};
    out[1] = {2, Operand::kVector, Operand::kInOut, c.n, 1, c.incx, Operand::kIncx};
    return 2;
  }

  // The policy credits a device copy of the triangle (repeated solves with one factor).
  static constexpr bool kResidencyInPolicy = true;

  static constexpr int kWorkDims = 2;
  static double work(const bo_call& c) { return double(c.n) * double(c.n); }
  static double flops(const bo_call& c) { return kFlopScale<T> * work(c); }

  // Sizes: the triangle's bytes, about half of work() elements.
  static constexpr ShapeClassInfo kClasses[] = {{"trsv.n", 0.5, true}, {"trsv.t", 0.5, true}};
  static int shape_class(const bo_call& c) { return c.op[1] == 'N' ? 0 : 1; }
  static double class_size(const bo_call& c) { return sizeof(T) * double(c.n) * double(c.n + 1) / 2; }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c%c n=%lld incx=%lld", c.op[0], c.op[1], c.op[2], (long long)c.n, (long long)c.incx);
  }
};

// The lower-case name the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using trsv = Trsv<T, I>;
}

}  // namespace bo::routines
