// ?TRSM: B := alpha op(A)^-1 B (side L) or alpha B op(A)^-1 (side R), A triangular.
#pragma once

#include <cstdio>

#include "routines/descriptor.h"

// The Fortran entry point's result and parameters, written once: the descriptor's type below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_TRSM_RESULT(T) void
#define BO_TRSM_PARAMS(T, I)                                                                                         \
  (const char* side, const char* uplo, const char* transa, const char* diag, const I* m, const I* n, const T* alpha, \
   const T* a, const I* lda, T* b, const I* ldb, fortran_strlen side_len, fortran_strlen uplo_len,                   \
   fortran_strlen transa_len, fortran_strlen diag_len)
#define BO_TRSM_ARGS (side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, side_len, uplo_len, transa_len, diag_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Trsm {
  static constexpr bo_routine_kind kKind = BO_KIND_TRSM;
  template <class J>
  using WithInt = Trsm<T, J>;  // the same routine in another interface's integer type
  using Fortran = BO_TRSM_RESULT(T) BO_TRSM_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { SIDE, UPLO, TRANSA, DIAG, M, N, ALPHA, A, LDA, B, LDB };

  // NROWA follows SIDE before SIDE itself is checked, as in the reference (an invalid SIDE reports 1 anyway).
  static Prep prepare(const Args& x, bo_call* call, I* info) {
    const char sd = upper(*std::get<SIDE>(x)), ul = upper(*std::get<UPLO>(x));
    const char ta = upper(*std::get<TRANSA>(x)), dg = upper(*std::get<DIAG>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x);
    *info = !is_side(sd)                    ? 1
            : !is_uplo(ul)                  ? 2
            : !is_trans(ta)                 ? 3
            : !is_diag(dg)                  ? 4
            : m < 0                         ? 5
            : n < 0                         ? 6
            : lda < max1(sd == 'L' ? m : n) ? 9
            : ldb < max1(m)                 ? 11
                                            : 0;
    if (*info) return Prep::kInvalid;
    if (m == 0 || n == 0) return Prep::kQuick;
    // The reference zeroes B without reading A: no GPU work (the module is promised alpha != 0).
    const T alpha = *std::get<ALPHA>(x);
    if (alpha == T(0)) return Prep::kQuickCpu;
    *call = bo_call{kRoutine,
                    {sd, ul, ta, dg},
                    m,
                    n,
                    0,
                    re(alpha),
                    0,
                    std::get<A>(x),
                    lda,
                    nullptr,
                    0,
                    std::get<B>(x),
                    ldb,
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
    set_imaginary(call, alpha, T(0));
    return Prep::kRun;
  }

  // The triangle's order: m for side L, n for side R.
  static int64_t order(const bo_call& c) { return c.op[0] == 'L' ? c.m : c.n; }

  // The normalised call through a Fortran entry point.
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I m = I(c.m), n = I(c.n), lda = I(c.lda), ldb = I(c.ldc);
    const T alpha = alpha_of<T>(c);
    fn(&c.op[0], &c.op[1], &c.op[2], &c.op[3], &m, &n, &alpha, static_cast<const T*>(c.a), &lda, static_cast<T*>(c.c),
       &ldb, 1, 1, 1, 1);
  }

  static int operands(const bo_call& c, Operand* out) {
    const int64_t t = order(c);
    out[0] = {0, c.op[1] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kIn, t, t, c.lda};
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.ldc};
    return 2;
  }

  // m n t: the triangle's order times the other dimension times t.
  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return double(c.m) * double(c.n) * double(order(c)); }
  static double flops(const bo_call& c) { return kFlopScale<T> * work(c); }

  // A narrow block of right-hand sides (at most 256: LAPACK's solves, potrs with 64 right-hand sides) runs at a
  // fraction of a square solve's rate at the same flops: OpenBLAS's dtrsm m = 8192 with 64 right-hand sides at about
  // 110 GFLOP/s on the lent H100 machine, square ones at 300-500; one class for both predicted it 2-4x too fast.
  static constexpr ShapeClassInfo kClasses[] = {{"trsm", 1, false}, {"trsm.narrow", 1, false}};
  static int shape_class(const bo_call& c) { return (c.op[0] == 'L' ? c.n : c.m) <= 256 ? 1 : 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c%c%c m=%lld n=%lld", c.op[0], c.op[1], c.op[2], c.op[3], (long long)c.m,
                  (long long)c.n);
  }
};

// The lower-case name the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using trsm = Trsm<T, I>;
}

}  // namespace bo::routines
