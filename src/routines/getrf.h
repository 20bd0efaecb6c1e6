// ?GETRF: the LU factorization with partial pivoting (row interchanges) of an m x n matrix, A = P L U.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GETRF_RESULT(T) void
#define BO_GETRF_PARAMS(T) \
  (const blas_int* m, const blas_int* n, T* a, const blas_int* lda, blas_int* ipiv, blas_int* info)
#define BO_GETRF_ARGS (m, n, a, lda, ipiv, info)

namespace bo::routines {

template <class T>
struct Getrf {
  static constexpr bo_routine_kind kKind = BO_KIND_GETRF;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GETRF_RESULT(T) BO_GETRF_PARAMS(T);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { M, N, A, LDA, IPIV, INFO };

  static Prep prepare(const Args& x, bo_call* call, blas_int* info) {
    blas_int* out = std::get<INFO>(x);
    *out = 0;
    const blas_int m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (m < 0) return lapack_invalid(out, 1, info);
    if (n < 0) return lapack_invalid(out, 2, info);
    if (lda < max1(m)) return lapack_invalid(out, 4, info);
    if (m == 0 || n == 0) return Prep::kQuick;
    *call =
        bo_call{kRoutine, {}, m, n, 0, 0, 0, std::get<A>(x), lda, nullptr, 0, nullptr, 0, 0, 0, std::get<IPIV>(x), out};
    return Prep::kRun;
  }

  static void call_fortran(Fortran* fn, const bo_call& c) {
    const blas_int m = blas_int(c.m), n = blas_int(c.n), lda = blas_int(c.lda);
    fn(&m, &n, static_cast<T*>(const_cast<void*>(c.a)), &lda, static_cast<blas_int*>(c.ipiv),
       static_cast<blas_int*>(c.info));
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.lda};
    return 1;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return getrf_work(double(c.m), double(c.n)); }
  static double flops(const bo_call& c) { return 2 * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"getrf", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "m=%lld n=%lld lda=%lld", (long long)c.m, (long long)c.n, (long long)c.lda);
  }
};

namespace by_name {
template <class T>
using getrf = Getrf<T>;
}

}  // namespace bo::routines
