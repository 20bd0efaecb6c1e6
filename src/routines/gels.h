// ?GELS: the least-squares solution of min ||B - A X|| (m >= n, TRANS N) or the minimum-norm solution of A^T X = B
// (m >= n, TRANS T; A^H X = B, TRANS C, for the complex ones) through the QR factorization of A, which is left in A;
// other shapes (LQ, m < n) stay on the CPU.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_GELS_RESULT(T) void
#define BO_GELS_PARAMS(T, I)                                                                                  \
  (const char* trans, const I* m, const I* n, const I* nrhs, T* a, const I* lda, T* b, const I* ldb, T* work, \
   const I* lwork, I* info, fortran_strlen trans_len)
#define BO_GELS_ARGS (trans, m, n, nrhs, a, lda, b, ldb, work, lwork, info, trans_len)

namespace bo::routines {

template <class T, class I = blas_int>
struct Gels {
  static constexpr bo_routine_kind kKind = BO_KIND_GELS;
  template <class J>
  using WithInt = Gels<T, J>;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_GELS_RESULT(T) BO_GELS_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { TRANS, M, N, NRHS, A, LDA, B, LDB, WORK, LWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char trans = upper(*std::get<TRANS>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), nrhs = *std::get<NRHS>(x), lda = *std::get<LDA>(x),
            ldb = *std::get<LDB>(x), lwork = *std::get<LWORK>(x);
    const I mn = m < n ? m : n, mx = m < n ? n : m;
    if (trans != 'N' && trans != (kIsComplex<T> ? 'C' : 'T')) return lapack_invalid(out, 1, info);
    if (m < 0) return lapack_invalid(out, 2, info);
    if (n < 0) return lapack_invalid(out, 3, info);
    if (nrhs < 0) return lapack_invalid(out, 4, info);
    if (lda < max1(m)) return lapack_invalid(out, 6, info);
    if (ldb < max1(mx)) return lapack_invalid(out, 8, info);
    // The minimum, mn + max(mn, nrhs), is the same in every LAPACK version; the CPU answers queries and zero sizes
    // (it zeroes B).
    if (lwork < max1(I(mn + (mn > nrhs ? mn : nrhs))) || mn == 0 || nrhs == 0) return Prep::kQuickCpu;
    bo_call c{};
    c.routine = kRoutine;
    c.op[0] = trans;
    c.m = m, c.n = n, c.k = nrhs, c.a = std::get<A>(x), c.lda = lda;
    c.c = std::get<B>(x), c.ldc = ldb;
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  // The GPU path: QR (m >= n) only; LAPACK's LQ for m < n stays on the CPU.
  static bool gpu_covers(const bo_call& c) { return c.m >= c.n; }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.lda};
    out[1] = {2, Operand::kMatrix, Operand::kInOut, c.m > c.n ? c.m : c.n, c.k, c.ldc};
    return 2;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) {
    const double m = double(c.m), n = double(c.n), k = c.m < c.n ? m : n;
    return geqrf_work(m, n) + ormqr_work(m > n ? m : n, double(c.k), k, true) + 0.5 * k * k * double(c.k);
  }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"gels", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c m=%lld n=%lld nrhs=%lld", c.op[0], (long long)c.m, (long long)c.n, (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using gels = Gels<T, I>;
}

}  // namespace bo::routines
