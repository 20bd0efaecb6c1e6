// ?GEMV: y := alpha op(A) x + beta y.
#pragma once

#include <cstdio>

#include "routines/descriptor.h"

// The Fortran entry point's result and parameters, written once: the descriptor's type below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_GEMV_RESULT(T) void
#define BO_GEMV_PARAMS(T, I)                                                                                       \
  (const char* trans, const I* m, const I* n, const T* alpha, const T* a, const I* lda, const T* x, const I* incx, \
   const T* beta, T* y, const I* incy, fortran_strlen trans_len)
#define BO_GEMV_ARGS (trans, m, n, alpha, a, lda, x, incx, beta, y, incy, trans_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Gemv {
  static constexpr bo_routine_kind kKind = BO_KIND_GEMV;
  template <class J>
  using WithInt = Gemv<T, J>;  // the same routine in another interface's integer type
  using Fortran = BO_GEMV_RESULT(T) BO_GEMV_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { TRANS, M, N, ALPHA, A, LDA, X, INCX, BETA, Y, INCY };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    const char t = upper(*std::get<TRANS>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x);
    const I incx = *std::get<INCX>(x), incy = *std::get<INCY>(x);
    *info = !is_trans(t) ? 1 : m < 0 ? 2 : n < 0 ? 3 : lda < max1(m) ? 6 : incx == 0 ? 8 : incy == 0 ? 11 : 0;
    if (*info) return Prep::kInvalid;
    const T alpha = *std::get<ALPHA>(x), beta = *std::get<BETA>(x);
    if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return Prep::kQuick;
    *call = bo_call{kRoutine,
                    {t},
                    m,
                    n,
                    0,
                    re(alpha),
                    re(beta),
                    std::get<A>(x),
                    lda,
                    std::get<X>(x),
                    0,
                    std::get<Y>(x),
                    0,
                    incx,
                    incy,
                    nullptr,
                    nullptr,
                    0,
                    kIntBytes<I>,
                    nullptr,
                    0,
                    nullptr,
                    0,
                    0};
    set_imaginary(call, alpha, beta);
    return Prep::kRun;
  }

  // With alpha = 0 neither A nor x is read (y := beta y).
  // The normalised call through a Fortran entry point.
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I m = I(c.m), n = I(c.n), lda = I(c.lda), incx = I(c.incx), incy = I(c.incy);
    const T alpha = alpha_of<T>(c), beta = beta_of<T>(c);
    fn(&c.op[0], &m, &n, &alpha, static_cast<const T*>(c.a), &lda, static_cast<const T*>(c.b), &incx, &beta,
       static_cast<T*>(c.c), &incy, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    const int64_t lx = c.op[0] == 'N' ? c.n : c.m, ly = c.op[0] == 'N' ? c.m : c.n;
    int n = 0;
    if (!alpha_is_zero(c)) {
      out[n++] = {0, Operand::kMatrix, Operand::kIn, c.m, c.n, c.lda};
      out[n++] = {1, Operand::kVector, Operand::kIn, lx, 1, c.incx, Operand::kIncx};
    }
    out[n++] = {2, Operand::kVector, beta_is_zero(c) ? Operand::kOut : Operand::kInOut, ly, 1, c.incy, Operand::kIncy};
    return n;
  }

  // The policy credits a device copy of A (power iterations use it unchanged).
  static constexpr bool kResidencyInPolicy = true;

  static constexpr int kWorkDims = 2;
  static double work(const bo_call& c) { return double(c.m) * double(c.n); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  // The transpose changes the access pattern (axpy against dot form). Sizes: the matrix's bytes.
  static constexpr ShapeClassInfo kClasses[] = {{"gemv.n", 1, true}, {"gemv.t", 1, true}};
  static int shape_class(const bo_call& c) { return c.op[0] == 'N' ? 0 : 1; }
  static double class_size(const bo_call& c) { return sizeof(T) * work(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c m=%lld n=%lld incx=%lld incy=%lld", c.op[0], (long long)c.m, (long long)c.n,
                  (long long)c.incx, (long long)c.incy);
  }
};

// The lower-case name the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using gemv = Gemv<T, I>;
}

}  // namespace bo::routines
