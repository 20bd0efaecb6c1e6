// ?ORMQR and ?UNMQR (its complex form): C := Q C, Q^T C, C Q or C Q^T (Q^H, TRANS C, for the complex one) for the Q
// of ?GEQRF's k reflectors (A and TAU); A is only read (LAPACK may change and restore it, the GPU never writes it).
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_ORMQR_RESULT(T) void
#define BO_ORMQR_PARAMS(T, I)                                                                                       \
  (const char* side, const char* trans, const I* m, const I* n, const I* k, T* a, const I* lda, const T* tau, T* c, \
   const I* ldc, T* work, const I* lwork, I* info, fortran_strlen side_len, fortran_strlen trans_len)
#define BO_ORMQR_ARGS (side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, side_len, trans_len)
#define BO_UNMQR_RESULT BO_ORMQR_RESULT
#define BO_UNMQR_PARAMS BO_ORMQR_PARAMS
#define BO_UNMQR_ARGS BO_ORMQR_ARGS

namespace bo::routines {

template <class T, class I = blas_int, bo_routine_kind Kind = BO_KIND_ORMQR>
struct Ormqr {
  static constexpr bo_routine_kind kKind = Kind;
  template <class J>
  using WithInt = Ormqr<T, J, Kind>;
  static constexpr Interface kInterface = Interface::kLapack;
  using Fortran = BO_ORMQR_RESULT(T) BO_ORMQR_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { SIDE, TRANS, M, N, K, A, LDA, TAU, C, LDC, WORK, LWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char side = upper(*std::get<SIDE>(x)), trans = upper(*std::get<TRANS>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), k = *std::get<K>(x), lda = *std::get<LDA>(x),
            ldc = *std::get<LDC>(x), lwork = *std::get<LWORK>(x);
    const I nq = side == 'L' ? m : n, nw = side == 'L' ? n : m;
    if (!is_side(side)) return lapack_invalid(out, 1, info);
    if (trans != 'N' && trans != (kIsComplex<T> ? 'C' : 'T')) return lapack_invalid(out, 2, info);
    if (m < 0) return lapack_invalid(out, 3, info);
    if (n < 0) return lapack_invalid(out, 4, info);
    if (k < 0 || k > nq) return lapack_invalid(out, 5, info);
    if (lda < max1(nq)) return lapack_invalid(out, 7, info);
    if (ldc < max1(m)) return lapack_invalid(out, 10, info);
    if (lwork < max1(nw) || m == 0 || n == 0 || k == 0) return Prep::kQuickCpu;
    bo_call c{};
    c.routine = kRoutine;
    c.op[0] = side, c.op[1] = trans;
    c.m = m, c.n = n, c.k = k, c.a = std::get<A>(x), c.lda = lda;
    c.b = std::get<TAU>(x), c.ldb = k;
    c.c = std::get<C>(x), c.ldc = ldc;
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  static int operands(const bo_call& c, Operand* out) {
    const int64_t nq = c.op[0] == 'L' ? c.m : c.n;
    out[0] = {0, Operand::kMatrix, Operand::kIn, nq, c.k, c.lda};
    out[1] = {1, Operand::kMatrix, Operand::kIn, c.k, 1, c.k};
    out[2] = {2, Operand::kMatrix, Operand::kInOut, c.m, c.n, c.ldc};
    return 3;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return ormqr_work(double(c.m), double(c.n), double(c.k), c.op[0] == 'L'); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{Kind == BO_KIND_ORMQR ? "ormqr" : "unmqr", 2, false}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c m=%lld n=%lld k=%lld", c.op[0], c.op[1], (long long)c.m, (long long)c.n,
                  (long long)c.k);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using ormqr = Ormqr<T, I>;
template <class T, class I = blas_int>
using unmqr = Ormqr<T, I, BO_KIND_UNMQR>;
}  // namespace by_name

}  // namespace bo::routines
