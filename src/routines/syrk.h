// ?SYRK and ?HERK, the rank-k updates of C's uplo triangle: C := alpha A op(A) + beta C (trans N) or
// alpha op(A) A + beta C (T; C), where op is the transpose (syrk) or the conjugate transpose (herk: real alpha, beta).
#pragma once

#include <cstdio>
#include <type_traits>

#include "routines/descriptor.h"

// The Fortran entry points' results and parameters, written once: the descriptors' types below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_SYRK_RESULT(T) void
#define BO_SYRK_PARAMS_OF(T, I, S)                                                                        \
  (const char* uplo, const char* trans, const I* n, const I* k, const S* alpha, const T* a, const I* lda, \
   const S* beta, T* c, const I* ldc, fortran_strlen uplo_len, fortran_strlen trans_len)
#define BO_SYRK_PARAMS(T, I) BO_SYRK_PARAMS_OF(T, I, T)
#define BO_SYRK_ARGS (uplo, trans, n, k, alpha, a, lda, beta, c, ldc, uplo_len, trans_len)
#define BO_HERK_RESULT(T) void
#define BO_HERK_PARAMS(T, I) BO_SYRK_PARAMS_OF(T, I, bo::routines::RealOf<T>)
#define BO_HERK_ARGS BO_SYRK_ARGS

namespace bo::routines {

// One template for both: kHermitian picks herk (complex elements, trans N or C, real scalars, C's diagonal real).
template <class T, class I, bool kHermitian>
struct RankK {
  static constexpr bo_routine_kind kKind = kHermitian ? BO_KIND_HERK : BO_KIND_SYRK;
  template <class J>
  using WithInt = RankK<T, J, kHermitian>;  // the same routine in another interface's integer type
  using Scalar = std::conditional_t<kHermitian, RealOf<T>, T>;
  using Fortran = BO_SYRK_RESULT(T) BO_SYRK_PARAMS_OF(T, I, Scalar);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, TRANS, N, K, ALPHA, A, LDA, BETA, C, LDC };

  // The transposes the routine takes: syrk N, T and, for real elements, C (the same as T); herk N and C.
  static bool valid_trans(char t) {
    if constexpr (kHermitian)
      return t == 'N' || t == 'C';
    else if constexpr (kIsComplex<T>)
      return t == 'N' || t == 'T';
    else
      return is_trans(t);
  }

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    const char ul = upper(*std::get<UPLO>(x)), t = upper(*std::get<TRANS>(x));
    const I n = *std::get<N>(x), k = *std::get<K>(x), lda = *std::get<LDA>(x), ldc = *std::get<LDC>(x);
    *info = !is_uplo(ul)                   ? 1
            : !valid_trans(t)              ? 2
            : n < 0                        ? 3
            : k < 0                        ? 4
            : lda < max1(t == 'N' ? n : k) ? 7
            : ldc < max1(n)                ? 10
                                           : 0;
    if (*info) return Prep::kInvalid;
    const Scalar alpha = *std::get<ALPHA>(x), beta = *std::get<BETA>(x);
    if (n == 0 || ((alpha == Scalar(0) || k == 0) && beta == Scalar(1))) return Prep::kQuick;
    // What is left of alpha = 0 or k = 0 is the reference's scaling of C's triangle (herk: also its diagonal made
    // real): no GPU work (the module is promised alpha != 0, k >= 1).
    if (alpha == Scalar(0) || k == 0) return Prep::kQuickCpu;
    const char tr = t == 'N' ? 'N' : kHermitian ? 'C' : 'T';  // real syrk: trans C is T
    *call = bo_call{kRoutine,
                    {ul, tr},
                    0,
                    n,
                    k,
                    re(alpha),
                    re(beta),
                    std::get<A>(x),
                    lda,
                    nullptr,
                    0,
                    std::get<C>(x),
                    ldc,
                    0,
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
    set_imaginary(call, alpha, beta);
    return Prep::kRun;
  }

  // The normalised call through a Fortran entry point.
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), k = I(c.k), lda = I(c.lda), ldc = I(c.ldc);
    const Scalar alpha = scalar<Scalar>(c.alpha, c.alpha_i), beta = scalar<Scalar>(c.beta, c.beta_i);
    fn(&c.op[0], &c.op[1], &n, &k, &alpha, static_cast<const T*>(c.a), &lda, &beta, static_cast<T*>(c.c), &ldc, 1, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    const bool nt = c.op[1] == 'N';
    out[0] = {0, Operand::kMatrix, Operand::kIn, nt ? c.n : c.k, nt ? c.k : c.n, c.lda};
    out[1] = {2,
              c.op[0] == 'L' ? Operand::kLower : Operand::kUpper,
              beta_is_zero(c) ? Operand::kOut : Operand::kInOut,
              c.n,
              c.n,
              c.ldc};
    return 2;
  }

  // Half of the n x n x k product: n^2 k multiply-adds' worth of flops (four times as many for complex elements).
  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return double(c.n) * double(c.n) * double(c.k); }
  static double flops(const bo_call& c) { return kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{kHermitian ? "herk" : "syrk", 1, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c n=%lld k=%lld", c.op[0], c.op[1], (long long)c.n, (long long)c.k);
  }
};

template <class T, class I = blas_int>
using Syrk = RankK<T, I, false>;
template <class T, class I = blas_int>
using Herk = RankK<T, I, true>;

// The lower-case names the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using syrk = Syrk<T, I>;
template <class T, class I = blas_int>
using herk = Herk<T, I>;
}  // namespace by_name

}  // namespace bo::routines
