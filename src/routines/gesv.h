// ?GESV: solves A X = B by the LU factorization with partial pivoting (?GETRF, then ?GETRS); A is overwritten by its
// factors, B by X. The factorization happens even with no right-hand sides.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GESV_RESULT(T) void
#define BO_GESV_PARAMS(T, I) (const I* n, const I* nrhs, T* a, const I* lda, I* ipiv, T* b, const I* ldb, I* info)
#define BO_GESV_ARGS (n, nrhs, a, lda, ipiv, b, ldb, info)

namespace bo::routines {

template <class T, class I = blas_int>
struct Gesv {
  static constexpr bo_routine_kind kKind = BO_KIND_GESV;
  template <class J>
  using WithInt = Gesv<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GESV_RESULT(T) BO_GESV_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { N, NRHS, A, LDA, IPIV, B, LDB, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const I n = *std::get<N>(x), nrhs = *std::get<NRHS>(x), lda = *std::get<LDA>(x), ldb = *std::get<LDB>(x);
    if (n < 0) return lapack_invalid(out, 1, info);
    if (nrhs < 0) return lapack_invalid(out, 2, info);
    if (lda < max1(n)) return lapack_invalid(out, 4, info);
    if (ldb < max1(n)) return lapack_invalid(out, 7, info);
    if (n == 0) return Prep::kQuick;
    *call = bo_call{kRoutine,
                    {},
                    n,
                    n,
                    nrhs,
                    0,
                    0,
                    std::get<A>(x),
                    lda,
                    nullptr,
                    0,
                    std::get<B>(x),
                    ldb,
                    0,
                    0,
                    std::get<IPIV>(x),
                    out,
                    0,
                    kIntBytes<I>,
                    nullptr,
                    0,
                    nullptr,
                    0,
                    0};
    return Prep::kRun;
  }

  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), nrhs = I(c.k), lda = I(c.lda), ldb = I(c.ldc);
    fn(&n, &nrhs, static_cast<T*>(const_cast<void*>(c.a)), &lda, static_cast<I*>(c.ipiv), static_cast<T*>(c.c), &ldb,
       static_cast<I*>(c.info));
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.n, c.n, c.lda};
    if (c.k == 0) return 1;
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.n, c.k, c.ldc};
    return 2;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) {
    return getrf_work(double(c.n), double(c.n)) + solve_work(double(c.n), double(c.k));
  }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"gesv", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "n=%lld nrhs=%lld", (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using gesv = Gesv<T, I>;
}

}  // namespace bo::routines
