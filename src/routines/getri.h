// ?GETRI: the inverse of a matrix from its LU factors and pivots (?GETRF), over the factors. A zero on U's diagonal
// (INFO > 0) is found where the matrix is and left to the CPU LAPACK, whose INFO and partial output are the reference.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GETRI_RESULT(T) void
#define BO_GETRI_PARAMS(T, I) (const I* n, T* a, const I* lda, const I* ipiv, T* work, const I* lwork, I* info)
#define BO_GETRI_ARGS (n, a, lda, ipiv, work, lwork, info)

namespace bo::routines {

template <class T, class I = blas_int>
struct Getri {
  static constexpr bo_routine_kind kKind = BO_KIND_GETRI;
  template <class J>
  using WithInt = Getri<T, J>;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GETRI_RESULT(T) BO_GETRI_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { N, A, LDA, IPIV, WORK, LWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (n < 0) return lapack_invalid(out, 1, info);
    if (lda < max1(n)) return lapack_invalid(out, 3, info);
    if (n == 0 || *std::get<LWORK>(x) < max1(n)) return Prep::kQuickCpu;
    bo_call c{};
    c.routine = kRoutine;
    c.m = n, c.n = n, c.a = std::get<A>(x), c.lda = lda;
    c.ipiv = const_cast<I*>(std::get<IPIV>(x));
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.n, c.n, c.lda};
    return 1;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return getri_work(double(c.n)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }
  static constexpr ShapeClassInfo kClasses[] = {{"getri", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "n=%lld lda=%lld", (long long)c.n, (long long)c.lda);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using getri = Getri<T, I>;
}

}  // namespace bo::routines
