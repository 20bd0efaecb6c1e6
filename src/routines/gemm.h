// ?GEMM: C := alpha op(A) op(B) + beta C (op: none, the transpose, or the conjugate transpose).
#pragma once

#include <cstdio>

#include "routines/descriptor.h"

// The Fortran entry point's result and parameters, written once: the descriptor's type below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_GEMM_RESULT(T) void
#define BO_GEMM_PARAMS(T, I)                                                                               \
  (const char* transa, const char* transb, const I* m, const I* n, const I* k, const T* alpha, const T* a, \
   const I* lda, const T* b, const I* ldb, const T* beta, T* c, const I* ldc, fortran_strlen transa_len,   \
   fortran_strlen transb_len)
#define BO_GEMM_ARGS (transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Gemm {
  static constexpr bo_routine_kind kKind = BO_KIND_GEMM;
  template <class J>
  using WithInt = Gemm<T, J>;  // the same routine in another interface's integer type
  using Fortran = BO_GEMM_RESULT(T) BO_GEMM_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { TRANSA, TRANSB, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    const char ta = upper(*std::get<TRANSA>(x)), tb = upper(*std::get<TRANSB>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), k = *std::get<K>(x);
    const I lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x), ldc = *std::get<LDC>(x);
    *info = !is_trans(ta)                   ? 1
            : !is_trans(tb)                 ? 2
            : m < 0                         ? 3
            : n < 0                         ? 4
            : k < 0                         ? 5
            : lda < max1(ta == 'N' ? m : k) ? 8
            : ldb < max1(tb == 'N' ? k : n) ? 10
            : ldc < max1(m)                 ? 13
                                            : 0;
    if (*info) return Prep::kInvalid;
    const T alpha = *std::get<ALPHA>(x), beta = *std::get<BETA>(x);
    if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return Prep::kQuick;
    *call = bo_call{kRoutine,
                    {ta, tb},
                    m,
                    n,
                    k,
                    re(alpha),
                    re(beta),
                    std::get<A>(x),
                    lda,
                    std::get<B>(x),
                    ldb,
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

  // With alpha = 0 or k = 0 neither A nor B is read (C := beta C).
  // The normalised call through a Fortran entry point (the module's CPU share of a hybrid gemm goes this way).
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I m = I(c.m), n = I(c.n), k = I(c.k), lda = I(c.lda), ldb = I(c.ldb), ldc = I(c.ldc);
    const T alpha = alpha_of<T>(c), beta = beta_of<T>(c);
    fn(&c.op[0], &c.op[1], &m, &n, &k, &alpha, static_cast<const T*>(c.a), &lda, static_cast<const T*>(c.b), &ldb,
       &beta, static_cast<T*>(c.c), &ldc, 1, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    int n = 0;
    if (!alpha_is_zero(c) && c.k != 0) {
      const bool na = c.op[0] == 'N', nb = c.op[1] == 'N';
      out[n++] = {0, Operand::kMatrix, Operand::kIn, na ? c.m : c.k, na ? c.k : c.m, c.lda};
      out[n++] = {1, Operand::kMatrix, Operand::kIn, nb ? c.k : c.n, nb ? c.n : c.k, c.ldb};
    }
    out[n++] = {2, Operand::kMatrix, beta_is_zero(c) ? Operand::kOut : Operand::kInOut, c.m, c.n, c.ldc};
    return n;
  }

  // The policy credits device copies of A, B and C (left-looking factorizations re-read their factored columns).
  static constexpr bool kResidencyInPolicy = true;

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return double(c.m) * double(c.n) * double(c.k); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  // A CPU BLAS's gemm rate depends on a small dimension (packing and parallel efficiency: LAPACK's rank-64 updates
  // run well below square products).
  static constexpr ShapeClassInfo kClasses[] = {
      {"gemm.square", 2, false}, {"gemm.rank_k", 2, false}, {"gemm.panel", 2, false}};
  static int shape_class(const bo_call& c) { return c.k <= 256 ? 1 : (c.m < c.n ? c.m : c.n) <= 256 ? 2 : 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c m=%lld n=%lld k=%lld", c.op[0], c.op[1], (long long)c.m, (long long)c.n,
                  (long long)c.k);
  }
};

// The lower-case name the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using gemm = Gemm<T, I>;
}

}  // namespace bo::routines
