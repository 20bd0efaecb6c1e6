// ?GESVD and ?GESDD: the singular value decomposition A = U S V^T (A = U S V^H for the complex ones, whose S is real
// and which take a real workspace RWORK) of an m x n matrix: the singular values descending in S and, by the jobs, all
// or the first min(m, n) columns of U (in U or, job O, over A) and rows of V^T (in VT or over A). LAPACK allows
// singular vectors to differ from the CPU's by signs and, for repeated values, by the basis.
#pragma once

#include <algorithm>
#include <cstdio>
#include <type_traits>

#include "routines/lapack.h"

#define BO_GESVD_RESULT(T) void
#define BO_GESVD_PARAMS(T, I)                                                                                        \
  (const char* jobu, const char* jobvt, const I* m, const I* n, T* a, const I* lda, T* s, T* u, const I* ldu, T* vt, \
   const I* ldvt, T* work, const I* lwork, I* info, fortran_strlen jobu_len, fortran_strlen jobvt_len)
#define BO_GESVD_ARGS (jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, jobu_len, jobvt_len)
#define BO_GESDD_RESULT(T) void
#define BO_GESDD_PARAMS(T, I)                                                                                    \
  (const char* jobz, const I* m, const I* n, T* a, const I* lda, T* s, T* u, const I* ldu, T* vt, const I* ldvt, \
   T* work, const I* lwork, I* iwork, I* info, fortran_strlen jobz_len)
#define BO_GESDD_ARGS (jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, jobz_len)
// The complex forms' lists (RWORK before INFO, before IWORK), picked for c and z by abi/fortran_api.cpp's BO_BY_TYPE
// through BO_<NAME>_PARAMS_<T> and BO_<NAME>_ARGS_<T>.
#define BO_GESVD_CPARAMS(T, I)                                                                                        \
  (const char* jobu, const char* jobvt, const I* m, const I* n, T* a, const I* lda, bo::routines::RealOf<T>* s, T* u, \
   const I* ldu, T* vt, const I* ldvt, T* work, const I* lwork, bo::routines::RealOf<T>* rwork, I* info,              \
   fortran_strlen jobu_len, fortran_strlen jobvt_len)
#define BO_GESVD_CARGS (jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, jobu_len, jobvt_len)
#define BO_GESDD_CPARAMS(T, I)                                                                                   \
  (const char* jobz, const I* m, const I* n, T* a, const I* lda, bo::routines::RealOf<T>* s, T* u, const I* ldu, \
   T* vt, const I* ldvt, T* work, const I* lwork, bo::routines::RealOf<T>* rwork, I* iwork, I* info,             \
   fortran_strlen jobz_len)
#define BO_GESDD_CARGS (jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, jobz_len)
#define BO_GESVD_PARAMS_bo_cfloat ~, ~, BO_GESVD_CPARAMS
#define BO_GESVD_PARAMS_bo_cdouble ~, ~, BO_GESVD_CPARAMS
#define BO_GESVD_ARGS_bo_cfloat ~, ~, BO_GESVD_CARGS
#define BO_GESVD_ARGS_bo_cdouble ~, ~, BO_GESVD_CARGS
#define BO_GESDD_PARAMS_bo_cfloat ~, ~, BO_GESDD_CPARAMS
#define BO_GESDD_PARAMS_bo_cdouble ~, ~, BO_GESDD_CPARAMS
#define BO_GESDD_ARGS_bo_cfloat ~, ~, BO_GESDD_CARGS
#define BO_GESDD_ARGS_bo_cdouble ~, ~, BO_GESDD_CARGS

namespace bo::routines {

// What the two share. The normalised call carries the jobs as ?GESVD's (JOBU, JOBVT): GESDD's JOBZ A, S, N are
// (A, A), (S, S), (N, N), and O is (O, A) for m >= n (U over A, all of V^T) and (A, O) for m < n.
template <class T, bo_routine_kind Kind>
struct Svd {
  static constexpr bo_routine_kind kKind = Kind;
  static constexpr Interface kInterface = Interface::kLapack;
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);

  template <class I>
  static bo_call normalised(char jobu, char jobvt, I m, I n, T* a, I lda, RealOf<T>* s, T* u, I ldu, T* vt, I ldvt,
                            I* info) {
    bo_call c{};
    c.routine = kRoutine;
    c.op[0] = jobu, c.op[1] = jobvt;
    c.m = m, c.n = n, c.a = a, c.lda = lda, c.b = s, c.ldb = m < n ? m : n;
    c.c = u, c.ldc = ldu, c.d = vt, c.ldd = ldvt;
    c.info = info, c.int_bytes = kIntBytes<I>;
    return c;
  }

  // The GPU's SVD wants m >= n: a wide matrix goes through its transpose, which has no room for a job O.
  static bool gpu_covers(const bo_call& c) { return c.m >= c.n || (c.op[0] != 'O' && c.op[1] != 'O'); }

  // U's and V^T's columns and rows by job: A all of them, S min(m, n), O (over A) and N none of their own.
  static int operands(const bo_call& c, Operand* out) {
    const int64_t k = c.m < c.n ? c.m : c.n;
    const bool over_a = c.op[0] == 'O' || c.op[1] == 'O';
    int n = 0;
    out[n++] = {0, Operand::kMatrix, over_a ? Operand::kInOut : Operand::kIn, c.m, c.n, c.lda};
    out[n++] = {1, Operand::kMatrix, Operand::kOut, k, 1, k};
    out[n - 1].real = kIsComplex<T>;
    if (c.op[0] == 'A' || c.op[0] == 'S')
      out[n++] = {2, Operand::kMatrix, Operand::kOut, c.m, c.op[0] == 'A' ? c.m : k, c.ldc};
    if (c.op[1] == 'A' || c.op[1] == 'S')
      out[n++] = {3, Operand::kMatrix, Operand::kOut, c.op[1] == 'A' ? c.n : k, c.n, c.ldd};
    return n;
  }

  static bool vectors(const bo_call& c) { return c.op[0] != 'N' || c.op[1] != 'N'; }
  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return svd_work(double(c.m), double(c.n), vectors(c)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }
  static int shape_class(const bo_call& c) { return vectors(c) ? 0 : 1; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c m=%lld n=%lld lda=%lld", c.op[0], c.op[1], (long long)c.m, (long long)c.n,
                  (long long)c.lda);
  }
};

template <class T, class I = blas_int>
struct Gesvd : Svd<T, BO_KIND_GESVD> {
  template <class J>
  using WithInt = Gesvd<T, J>;
  using Fortran = std::conditional_t<kIsComplex<T>, BO_GESVD_RESULT(T) BO_GESVD_CPARAMS(T, I),
                                     BO_GESVD_RESULT(T) BO_GESVD_PARAMS(T, I)>;
  using Args = typename Signature<Fortran>::Args;
  enum { JOBU, JOBVT, M, N, A, LDA, S, U, LDU, VT, LDVT, WORK, LWORK };
  static constexpr int INFO = kIsComplex<T> ? LWORK + 2 : LWORK + 1;  // the complex ones' RWORK comes first
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;
  static constexpr ShapeClassInfo kClasses[] = {{"gesvd.vec", 2, false}, {"gesvd.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char ju = upper(*std::get<JOBU>(x)), jv = upper(*std::get<JOBVT>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x), ldu = *std::get<LDU>(x),
            ldvt = *std::get<LDVT>(x);
    const I mn = m < n ? m : n;
    auto job = [](char j) { return j == 'A' || j == 'S' || j == 'O' || j == 'N'; };
    if (!job(ju)) return lapack_invalid(out, 1, info);
    if (!job(jv) || (ju == 'O' && jv == 'O')) return lapack_invalid(out, 2, info);
    if (m < 0) return lapack_invalid(out, 3, info);
    if (n < 0) return lapack_invalid(out, 4, info);
    if (lda < max1(m)) return lapack_invalid(out, 6, info);
    if (ldu < 1 || ((ju == 'A' || ju == 'S') && ldu < m)) return lapack_invalid(out, 9, info);
    if (ldvt < 1 || (jv == 'A' && ldvt < n) || (jv == 'S' && ldvt < mn)) return lapack_invalid(out, 11, info);
    // The minimum, max(3 min(m, n) + max(m, n), 5 min(m, n)) (complex: 2 min(m, n) + max(m, n)), in every version;
    // queries and empty matrices: the CPU.
    const I mx = m < n ? n : m;
    const I lwmin = kIsComplex<T> ? 2 * mn + mx : 3 * mn + mx > 5 * mn ? 3 * mn + mx : 5 * mn;
    if (mn == 0 || *std::get<LWORK>(x) < max1(lwmin)) return Prep::kQuickCpu;
    *call = Gesvd::normalised(ju, jv, m, n, std::get<A>(x), lda, std::get<S>(x), std::get<U>(x), ldu, std::get<VT>(x),
                              ldvt, out);
    return Prep::kRun;
  }
};

template <class T, class I = blas_int>
struct Gesdd : Svd<T, BO_KIND_GESDD> {
  template <class J>
  using WithInt = Gesdd<T, J>;
  using Fortran = std::conditional_t<kIsComplex<T>, BO_GESDD_RESULT(T) BO_GESDD_CPARAMS(T, I),
                                     BO_GESDD_RESULT(T) BO_GESDD_PARAMS(T, I)>;
  using Args = typename Signature<Fortran>::Args;
  enum { JOBZ, M, N, A, LDA, S, U, LDU, VT, LDVT, WORK, LWORK };
  static constexpr int INFO = kIsComplex<T> ? LWORK + 3 : LWORK + 2;  // after IWORK (and the complex ones' RWORK)
  // IWORK (8 min(m, n)) and RWORK are workspace only: no query answer of their own.
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;
  static constexpr ShapeClassInfo kClasses[] = {{"gesdd.vec", 2, false}, {"gesdd.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char jz = upper(*std::get<JOBZ>(x));
    const I m = *std::get<M>(x), n = *std::get<N>(x), lda = *std::get<LDA>(x), ldu = *std::get<LDU>(x),
            ldvt = *std::get<LDVT>(x);
    const I mn = m < n ? m : n;
    const bool as = jz == 'A' || jz == 'S';
    if (!as && jz != 'O' && jz != 'N') return lapack_invalid(out, 1, info);
    if (m < 0) return lapack_invalid(out, 2, info);
    if (n < 0) return lapack_invalid(out, 3, info);
    if (lda < max1(m)) return lapack_invalid(out, 5, info);
    if (ldu < 1 || (as && ldu < m) || (jz == 'O' && m < n && ldu < m)) return lapack_invalid(out, 8, info);
    if (ldvt < 1 || (jz == 'A' && ldvt < n) || (jz == 'S' && ldvt < mn) || (jz == 'O' && m >= n && ldvt < n))
      return lapack_invalid(out, 10, info);
    // Below reference LAPACK's minimum the CPU decides (its XERBLA). The minimum by its paths: a matrix much taller
    // (or wider) than square (mx >= 11 mn / 6) is reduced by QR (LQ) first.
    const I mx = m < n ? n : m, sq = mn * mn, bdspac = jz == 'N' ? 7 * mn : 3 * sq + 4 * mn;
    I lwmin = 0;
    if (kIsComplex<T>)  // the documented minimums, at or above every path's own (cgesdd's MINWRK)
      lwmin = jz == 'N' ? 2 * mn + mx : jz == 'O' ? 2 * sq + 2 * mn + mx : jz == 'S' ? sq + 3 * mn : sq + 2 * mn + mx;
    else if (mx >= I(mn * 11.0 / 6.0))
      lwmin = jz == 'N' ? bdspac + mn : jz == 'O' ? bdspac + 2 * sq + 3 * mn : bdspac + sq + 3 * mn;
    else
      lwmin = 3 * mn + std::max<I>(mx, jz == 'O' ? sq + bdspac : bdspac);
    if (mn == 0 || *std::get<LWORK>(x) < lwmin) return Prep::kQuickCpu;
    const char ju = jz == 'O' ? (m >= n ? 'O' : 'A') : jz, jv = jz == 'O' ? (m >= n ? 'A' : 'O') : jz;
    *call = Gesdd::normalised(ju, jv, m, n, std::get<A>(x), lda, std::get<S>(x), std::get<U>(x), ldu, std::get<VT>(x),
                              ldvt, out);
    return Prep::kRun;
  }
};

namespace by_name {
template <class T, class I = blas_int>
using gesvd = Gesvd<T, I>;
template <class T, class I = blas_int>
using gesdd = Gesdd<T, I>;
}  // namespace by_name

}  // namespace bo::routines
