// ?GETRF: the LU factorization with partial pivoting (row interchanges) of an m x n matrix, A = P L U.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GETRF_RESULT(T) void
#define BO_GETRF_PARAMS(T, I) (const I* m, const I* n, T* a, const I* lda, I* ipiv, I* info)
#define BO_GETRF_ARGS (m, n, a, lda, ipiv, info)

namespace bo::routines {

template <class T, class I = blas_int>
struct Getrf {
  static constexpr bo_routine_kind kKind = BO_KIND_GETRF;
  template <class J>
  using WithInt = Getrf<T, J>;  // the same routine in another interface's integer type
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GETRF_RESULT(T) BO_GETRF_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { M, N, A, LDA, IPIV, INFO };

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const I m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (m < 0) return lapack_invalid(out, 1, info);
    if (n < 0) return lapack_invalid(out, 2, info);
    if (lda < max1(m)) return lapack_invalid(out, 4, info);
    if (m == 0 || n == 0) return Prep::kQuick;
    *call = bo_call{kRoutine,
                    {},
                    m,
                    n,
                    0,
                    0,
                    0,
                    std::get<A>(x),
                    lda,
                    nullptr,
                    0,
                    nullptr,
                    0,
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
    const I m = I(c.m), n = I(c.n), lda = I(c.lda);
    fn(&m, &n, static_cast<T*>(const_cast<void*>(c.a)), &lda, static_cast<I*>(c.ipiv), static_cast<I*>(c.info));
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.lda};
    return 1;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return getrf_work(double(c.m), double(c.n)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"getrf", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "m=%lld n=%lld lda=%lld", (long long)c.m, (long long)c.n, (long long)c.lda);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using getrf = Getrf<T, I>;
}

}  // namespace bo::routines
