// ?ORGQR and ?UNGQR (its complex form): the m x n matrix Q with orthonormal columns from the first k reflectors of
// ?GEQRF (A and TAU).
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_ORGQR_RESULT(T) void
#define BO_ORGQR_PARAMS(T, I) \
  (const I* m, const I* n, const I* k, T* a, const I* lda, const T* tau, T* work, const I* lwork, I* info)
#define BO_ORGQR_ARGS (m, n, k, a, lda, tau, work, lwork, info)
#define BO_UNGQR_RESULT BO_ORGQR_RESULT
#define BO_UNGQR_PARAMS BO_ORGQR_PARAMS
#define BO_UNGQR_ARGS BO_ORGQR_ARGS

namespace bo::routines {

template <class T, class I = blas_int, bo_routine_kind Kind = BO_KIND_ORGQR>
struct Orgqr {
  static constexpr bo_routine_kind kKind = Kind;
  template <class J>
  using WithInt = Orgqr<T, J, Kind>;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_ORGQR_RESULT(T) BO_ORGQR_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { M, N, K, A, LDA, TAU, WORK, LWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const I m = *std::get<M>(x), n = *std::get<N>(x), k = *std::get<K>(x), lda = *std::get<LDA>(x),
            lwork = *std::get<LWORK>(x);
    if (m < 0) return lapack_invalid(out, 1, info);
    if (n < 0 || n > m) return lapack_invalid(out, 2, info);
    if (k < 0 || k > n) return lapack_invalid(out, 3, info);
    if (lda < max1(m)) return lapack_invalid(out, 5, info);
    if (lwork < max1(n) || n == 0) return Prep::kQuickCpu;
    bo_call c{};
    c.routine = kRoutine;
    c.m = m, c.n = n, c.k = k, c.a = std::get<A>(x), c.lda = lda;
    c.b = std::get<TAU>(x), c.ldb = k;
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.lda};
    if (c.k == 0) return 1;
    out[1] = {1, Operand::kMatrix, Operand::kIn, c.k, 1, c.k};
    return 2;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return orgqr_work(double(c.m), double(c.n), double(c.k)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{Kind == BO_KIND_ORGQR ? "orgqr" : "ungqr", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "m=%lld n=%lld k=%lld", (long long)c.m, (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using orgqr = Orgqr<T, I>;
template <class T, class I = blas_int>
using ungqr = Orgqr<T, I, BO_KIND_UNGQR>;
}  // namespace by_name

}  // namespace bo::routines
