// ?SYEVD and ?SYEV, and their complex forms ?HEEVD and ?HEEV: all eigenvalues (ascending, in W, real) and, with
// JOBZ = V, the orthonormal eigenvectors (in A) of a symmetric (Hermitian) matrix of which the UPLO triangle is read.
// Both run the GPU's divide and conquer; LAPACK allows their eigenvectors to differ from the CPU's by signs and, for
// repeated eigenvalues, by the choice of basis.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_SYEVD_RESULT(T) void
#define BO_SYEVD_PARAMS(T, I)                                                                                   \
  (const char* jobz, const char* uplo, const I* n, T* a, const I* lda, T* w, T* work, const I* lwork, I* iwork, \
   const I* liwork, I* info, fortran_strlen jobz_len, fortran_strlen uplo_len)
#define BO_SYEVD_ARGS (jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, jobz_len, uplo_len)
#define BO_SYEV_RESULT(T) void
#define BO_SYEV_PARAMS(T, I)                                                                                   \
  (const char* jobz, const char* uplo, const I* n, T* a, const I* lda, T* w, T* work, const I* lwork, I* info, \
   fortran_strlen jobz_len, fortran_strlen uplo_len)
#define BO_SYEV_ARGS (jobz, uplo, n, a, lda, w, work, lwork, info, jobz_len, uplo_len)
// The Hermitian ones: W real, and a real workspace RWORK (?HEEVD's with its own size LRWORK and query).
#define BO_HEEVD_RESULT(T) void
#define BO_HEEVD_PARAMS(T, I)                                                                               \
  (const char* jobz, const char* uplo, const I* n, T* a, const I* lda, bo::routines::RealOf<T>* w, T* work, \
   const I* lwork, bo::routines::RealOf<T>* rwork, const I* lrwork, I* iwork, const I* liwork, I* info,     \
   fortran_strlen jobz_len, fortran_strlen uplo_len)
#define BO_HEEVD_ARGS (jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, jobz_len, uplo_len)
#define BO_HEEV_RESULT(T) void
#define BO_HEEV_PARAMS(T, I)                                                                                \
  (const char* jobz, const char* uplo, const I* n, T* a, const I* lda, bo::routines::RealOf<T>* w, T* work, \
   const I* lwork, bo::routines::RealOf<T>* rwork, I* info, fortran_strlen jobz_len, fortran_strlen uplo_len)
#define BO_HEEV_ARGS (jobz, uplo, n, a, lda, w, work, lwork, rwork, info, jobz_len, uplo_len)

namespace bo::routines {

// What the two share: the checks before the workspace, the normalised call, operands, work and classes.
template <class T, bo_routine_kind Kind>
struct SymmetricEigen {
  static constexpr bo_routine_kind kKind = Kind;
  static constexpr Interface kInterface = Interface::kLapack;
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);

  // 0 when the arguments before the workspace are legal, else the argument number (JOBZ 1, UPLO 2, N 3, LDA 5).
  template <class I>
  static int invalid(char jobz, char uplo, I n, I lda) {
    return jobz != 'N' && jobz != 'V' ? 1 : !is_uplo(uplo) ? 2 : n < 0 ? 3 : lda < max1(n) ? 5 : 0;
  }
  template <class I>
  static bo_call normalised(char jobz, char uplo, I n, T* a, I lda, RealOf<T>* w, I* info) {
    bo_call c{};
    c.routine = kRoutine;
    c.op[0] = jobz, c.op[1] = uplo;
    c.m = n, c.n = n, c.a = a, c.lda = lda, c.b = w, c.ldb = n;
    c.info = info, c.int_bytes = kIntBytes<I>;
    return c;
  }

  // A is read as its triangle and, with vectors, written whole (the eigenvectors); without, LAPACK destroys its
  // triangle and the GPU path leaves it as it was.
  static int operands(const bo_call& c, Operand* out) {
    const bool v = c.op[0] == 'V';
    if (v)
      out[0] = {0, Operand::kMatrix, Operand::kInOut, c.n, c.n, c.lda};
    else
      out[0] = {0, c.op[1] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kIn, c.n, c.n, c.lda};
    out[1] = {1, Operand::kMatrix, Operand::kOut, c.n, 1, c.n};
    out[1].real = kIsComplex<T>;
    return 2;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return syev_work(double(c.n), c.op[0] == 'V'); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }
  static int shape_class(const bo_call& c) { return c.op[0] == 'V' ? 0 : 1; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c n=%lld lda=%lld", c.op[0], c.op[1], (long long)c.n, (long long)c.lda);
  }
};

template <class T, class I = blas_int>
struct Syevd : SymmetricEigen<T, BO_KIND_SYEVD> {
  template <class J>
  using WithInt = Syevd<T, J>;
  using Fortran = BO_SYEVD_RESULT(T) BO_SYEVD_PARAMS(T, I);
  using Args = typename Signature<Fortran>::Args;
  enum { JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, IWORK, LIWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = IWORK, kLiworkArg = LIWORK;
  static constexpr ShapeClassInfo kClasses[] = {{"syevd.vec", 2, false}, {"syevd.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char jobz = upper(*std::get<JOBZ>(x)), uplo = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (int i = Syevd::invalid(jobz, uplo, n, lda)) return lapack_invalid(out, i, info);
    // Queries, workspace below the minimum, and n <= 1 (no workspace needed) are the CPU's.
    const I lw = *std::get<LWORK>(x), liw = *std::get<LIWORK>(x);
    const I lwmin = jobz == 'V' ? 1 + 6 * n + 2 * n * n : 2 * n + 1, liwmin = jobz == 'V' ? 3 + 5 * n : 1;
    if (n <= 1 || lw < lwmin || liw < liwmin) return Prep::kQuickCpu;
    *call = Syevd::normalised(jobz, uplo, n, std::get<A>(x), lda, std::get<W>(x), out);
    return Prep::kRun;
  }
};

template <class T, class I = blas_int>
struct Syev : SymmetricEigen<T, BO_KIND_SYEV> {
  template <class J>
  using WithInt = Syev<T, J>;
  using Fortran = BO_SYEV_RESULT(T) BO_SYEV_PARAMS(T, I);
  using Args = typename Signature<Fortran>::Args;
  enum { JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;
  static constexpr ShapeClassInfo kClasses[] = {{"syev.vec", 2, false}, {"syev.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char jobz = upper(*std::get<JOBZ>(x)), uplo = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (int i = Syev::invalid(jobz, uplo, n, lda)) return lapack_invalid(out, i, info);
    if (n <= 1 || *std::get<LWORK>(x) < 3 * n - 1) return Prep::kQuickCpu;
    *call = Syev::normalised(jobz, uplo, n, std::get<A>(x), lda, std::get<W>(x), out);
    return Prep::kRun;
  }
};

template <class T, class I = blas_int>
struct Heevd : SymmetricEigen<T, BO_KIND_HEEVD> {
  template <class J>
  using WithInt = Heevd<T, J>;
  using Fortran = BO_HEEVD_RESULT(T) BO_HEEVD_PARAMS(T, I);
  using Args = typename Signature<Fortran>::Args;
  enum { JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, RWORK, LRWORK, IWORK, LIWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = IWORK, kLiworkArg = LIWORK;
  static constexpr int kRworkArg = RWORK, kLrworkArg = LRWORK;
  static constexpr ShapeClassInfo kClasses[] = {{"heevd.vec", 2, false}, {"heevd.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char jobz = upper(*std::get<JOBZ>(x)), uplo = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (int i = Heevd::invalid(jobz, uplo, n, lda)) return lapack_invalid(out, i, info);
    // Queries (any of LWORK, LRWORK, LIWORK = -1), workspace below reference LAPACK's minimum and n <= 1: the CPU's.
    const bool v = jobz == 'V';
    const I lwmin = v ? 2 * n + n * n : n + 1, lrwmin = v ? 1 + 5 * n + 2 * n * n : n, liwmin = v ? 3 + 5 * n : 1;
    if (n <= 1 || *std::get<LWORK>(x) < lwmin || *std::get<LRWORK>(x) < lrwmin || *std::get<LIWORK>(x) < liwmin)
      return Prep::kQuickCpu;
    *call = Heevd::normalised(jobz, uplo, n, std::get<A>(x), lda, std::get<W>(x), out);
    return Prep::kRun;
  }
};

template <class T, class I = blas_int>
struct Heev : SymmetricEigen<T, BO_KIND_HEEV> {
  template <class J>
  using WithInt = Heev<T, J>;
  using Fortran = BO_HEEV_RESULT(T) BO_HEEV_PARAMS(T, I);
  using Args = typename Signature<Fortran>::Args;
  enum { JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, RWORK, INFO };
  // RWORK (3 n - 2) is workspace only: no query answer of its own.
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = -1, kLiworkArg = -1;
  static constexpr ShapeClassInfo kClasses[] = {{"heev.vec", 2, false}, {"heev.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    I* out = std::get<INFO>(x);
    *out = 0;
    const char jobz = upper(*std::get<JOBZ>(x)), uplo = upper(*std::get<UPLO>(x));
    const I n = *std::get<N>(x), lda = *std::get<LDA>(x);
    if (int i = Heev::invalid(jobz, uplo, n, lda)) return lapack_invalid(out, i, info);
    if (n <= 1 || *std::get<LWORK>(x) < 2 * n - 1) return Prep::kQuickCpu;
    *call = Heev::normalised(jobz, uplo, n, std::get<A>(x), lda, std::get<W>(x), out);
    return Prep::kRun;
  }
};

namespace by_name {
template <class T, class I = blas_int>
using heevd = Heevd<T, I>;
template <class T, class I = blas_int>
using heev = Heev<T, I>;
template <class T, class I = blas_int>
using syevd = Syevd<T, I>;
template <class T, class I = blas_int>
using syev = Syev<T, I>;
}  // namespace by_name

}  // namespace bo::routines
