// ?GEQRF: the QR factorization of an m x n matrix, A = Q R (R in the upper triangle, Q as min(m, n) Householder
// reflectors below it and in TAU).
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GEQRF_RESULT(T) void
#define BO_GEQRF_PARAMS(T, I) (const I* m, const I* n, T* a, const I* lda, T* tau, T* work, const I* lwork, I* info)
#define BO_GEQRF_ARGS (m, n, a, lda, tau, work, lwork, info)

namespace bo::routines {

template <class T, class I = blas_int>
struct Geqrf {
  static constexpr bo_routine_kind kKind = BO_KIND_GEQRF;
  template <class J>
  using WithInt = Geqrf<T, J>;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GEQRF_RESULT(T) BO_GEQRF_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { M, N, A, LDA, TAU, WORK, LWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const I m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x), lwork = *std::get<LWORK>(x);
    if (m < 0) return lapack_invalid(out, 1, info);
    if (n < 0) return lapack_invalid(out, 2, info);
    if (lda < max1(m)) return lapack_invalid(out, 4, info);
    if (lwork < max1(n) || m == 0 || n == 0) return Prep::kQuickCpu;  // a query, too little workspace, WORK(1) = 1
    bo_call c{};
    c.routine = kRoutine;
    c.m = m, c.n = n, c.a = std::get<A>(x), c.lda = lda;
    c.b = std::get<TAU>(x), c.ldb = m < n ? m : n;
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.lda};
    out[1] = {1, Operand::kMatrix, Operand::kOut, c.ldb, 1, c.ldb};
    return 2;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return geqrf_work(double(c.m), double(c.n)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"geqrf", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "m=%lld n=%lld lda=%lld", (long long)c.m, (long long)c.n, (long long)c.lda);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using geqrf = Geqrf<T, I>;
}

}  // namespace bo::routines
