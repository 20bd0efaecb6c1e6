// ?SYRK: C := alpha A A^T + beta C (trans N) or alpha A^T A + beta C (T, C), only the uplo triangle of C.
#pragma once

#include <cstdio>

#include "routines/descriptor.h"

// The Fortran entry point's result and parameters, written once: the descriptor's type below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_SYRK_RESULT(T) void
#define BO_SYRK_PARAMS(T, I)                                                                              \
  (const char* uplo, const char* trans, const I* n, const I* k, const T* alpha, const T* a, const I* lda, \
   const T* beta, T* c, const I* ldc, fortran_strlen uplo_len, fortran_strlen trans_len)
#define BO_SYRK_ARGS (uplo, trans, n, k, alpha, a, lda, beta, c, ldc, uplo_len, trans_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Syrk {
  static constexpr bo_routine_kind kKind = BO_KIND_SYRK;
  template <class J>
  using WithInt = Syrk<T, J>;  // the same routine in another interface's integer type
  using Fortran = BO_SYRK_RESULT(T) BO_SYRK_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { UPLO, TRANS, N, K, ALPHA, A, LDA, BETA, C, LDC };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    const char ul = upper(*std::get<UPLO>(x)), t = upper(*std::get<TRANS>(x));
    const I n = *std::get<N>(x), k = *std::get<K>(x), lda = *std::get<LDA>(x), ldc = *std::get<LDC>(x);
    *info = !is_uplo(ul)                   ? 1
            : !is_trans(t)                 ? 2
            : n < 0                        ? 3
            : k < 0                        ? 4
            : lda < max1(t == 'N' ? n : k) ? 7
            : ldc < max1(n)                ? 10
                                           : 0;
    if (*info) return Prep::kInvalid;
    const T alpha = *std::get<ALPHA>(x), beta = *std::get<BETA>(x);
    if (n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return Prep::kQuick;
    // What is left of alpha = 0 or k = 0 is the reference's scaling of C's triangle: no GPU work (the module is
    // promised alpha != 0, k >= 1).
    if (alpha == T(0) || k == 0) return Prep::kQuickCpu;
    const char tr = t == 'N' ? 'N' : 'T';  // real elements: trans C is T
    *call = bo_call{kRoutine,       {ul, tr}, 0, n, k,       alpha,   beta, std::get<A>(x), lda,     nullptr, 0,
                    std::get<C>(x), ldc,      0, 0, nullptr, nullptr, 0,    kIntBytes<I>,   nullptr, 0,       nullptr};
    return Prep::kRun;
  }

  // The normalised call through a Fortran entry point.
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), k = I(c.k), lda = I(c.lda), ldc = I(c.ldc);
    const T alpha = T(c.alpha), beta = T(c.beta);
    fn(&c.op[0], &c.op[1], &n, &k, &alpha, static_cast<const T*>(c.a), &lda, &beta, static_cast<T*>(c.c), &ldc, 1, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    const bool nt = c.op[1] == 'N';
    out[0] = {0, Operand::kMatrix, Operand::kIn, nt ? c.n : c.k, nt ? c.k : c.n, c.lda};
    out[1] = {2,
              c.op[0] == 'L' ? Operand::kLower : Operand::kUpper,
              c.beta != 0 ? Operand::kInOut : Operand::kOut,
              c.n,
              c.n,
              c.ldc};
    return 2;
  }

  // Half of the n x n x k product: n^2 k flops.
  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return double(c.n) * double(c.n) * double(c.k); }
  static double flops(const bo_call& c) { return work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"syrk", 1, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return work(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c n=%lld k=%lld", c.op[0], c.op[1], (long long)c.n, (long long)c.k);
  }
};

// The lower-case name the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using syrk = Syrk<T, I>;
}

}  // namespace bo::routines
