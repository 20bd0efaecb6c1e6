// ?SYEVR and ?HEEVR (complex Hermitian): selected eigenvalues (ascending, in W; M of them) and optionally eigenvectors
// (in Z) of a symmetric (Hermitian) matrix of which the UPLO triangle is read (and destroyed). The GPU path takes RANGE
// = A (all of them) by divide and conquer; ISUPPZ then gives each eigenvector's first and last nonzero row. RANGE = V
// and I stay on the CPU.
#pragma once

#include <cstdio>

#include "routines/lapack.h"

#define BO_SYEVR_RESULT(T) void
#define BO_SYEVR_PARAMS(T, I)                                                                                       \
  (const char* jobz, const char* range, const char* uplo, const I* n, T* a, const I* lda, const T* vl, const T* vu, \
   const I* il, const I* iu, const T* abstol, I* m, T* w, T* z, const I* ldz, I* isuppz, T* work, const I* lwork,   \
   I* iwork, const I* liwork, I* info, fortran_strlen jobz_len, fortran_strlen range_len, fortran_strlen uplo_len)
#define BO_SYEVR_ARGS                                                                                            \
  (jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, isuppz, work, lwork, iwork, liwork, info, \
   jobz_len, range_len, uplo_len)
// ?HEEVR: W, VL, VU, ABSTOL real; RWORK, LRWORK before IWORK.
#define BO_HEEVR_RESULT(T) void
#define BO_HEEVR_PARAMS(T, I)                                                                                       \
  (const char* jobz, const char* range, const char* uplo, const I* n, T* a, const I* lda,                           \
   const bo::routines::RealOf<T>* vl, const bo::routines::RealOf<T>* vu, const I* il, const I* iu,                  \
   const bo::routines::RealOf<T>* abstol, I* m, bo::routines::RealOf<T>* w, T* z, const I* ldz, I* isuppz, T* work, \
   const I* lwork, bo::routines::RealOf<T>* rwork, const I* lrwork, I* iwork, const I* liwork, I* info,             \
   fortran_strlen jobz_len, fortran_strlen range_len, fortran_strlen uplo_len)
#define BO_HEEVR_ARGS                                                                                             \
  (jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m, w, z, ldz, isuppz, work, lwork, rwork, lrwork, iwork, \
   liwork, info, jobz_len, range_len, uplo_len)

namespace bo::routines {

// What ?SYEVR and ?HEEVR (the complex form: W, VL, VU, ABSTOL real, a real workspace RWORK with its own size LRWORK
// and query) share: the checks before the workspace, the normalised call, operands, work and classes. D is the
// routine's descriptor (its argument names); lw_ok says whether its workspace sizes reach the reference's minimum.
template <class T, bo_routine_kind Kind>
struct SelectedEigen {
  static constexpr bo_routine_kind kKind = Kind;
  static constexpr Interface kInterface = Interface::kLapack;
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);

  template <class D, class I>
  static Prep prepare_as(const typename D::Args& x, bo_call* call, I* info, bool lw_ok) {
    I* out = std::get<D::INFO>(x);
    *out = 0;
    const char jobz = upper(*std::get<D::JOBZ>(x)), range = upper(*std::get<D::RANGE>(x)),
               uplo = upper(*std::get<D::UPLO>(x));
    const I n = *std::get<D::N>(x), lda = *std::get<D::LDA>(x), ldz = *std::get<D::LDZ>(x);
    if (jobz != 'N' && jobz != 'V') return lapack_invalid(out, 1, info);
    if (range != 'A' && range != 'V' && range != 'I') return lapack_invalid(out, 2, info);
    if (!is_uplo(uplo)) return lapack_invalid(out, 3, info);
    if (n < 0) return lapack_invalid(out, 4, info);
    if (lda < max1(n)) return lapack_invalid(out, 6, info);
    if (range == 'V' && n > 0 && !(*std::get<D::VL>(x) < *std::get<D::VU>(x))) return lapack_invalid(out, 8, info);
    if (range == 'I') {
      const I il = *std::get<D::IL>(x), iu = *std::get<D::IU>(x);
      if (il < 1 || il > max1(n)) return lapack_invalid(out, 9, info);
      if (iu < (n < il ? n : il) || iu > n) return lapack_invalid(out, 10, info);
    }
    if (ldz < 1 || (jobz == 'V' && ldz < n)) return lapack_invalid(out, 15, info);
    // Queries, too little workspace and n <= 1 are the CPU's.
    if (n <= 1 || !lw_ok) return Prep::kQuickCpu;
    bo_call c{};
    c.routine = kRoutine;
    c.op[0] = jobz, c.op[1] = range, c.op[2] = uplo;
    c.m = n, c.n = n, c.a = std::get<D::A>(x), c.lda = lda;
    c.alpha = double(*std::get<D::VL>(x)), c.beta = double(*std::get<D::VU>(x));
    c.incx = *std::get<D::IL>(x), c.incy = *std::get<D::IU>(x);
    c.b = std::get<D::W>(x), c.ldb = n;
    c.c = std::get<D::Z>(x), c.ldc = ldz;
    c.ipiv = std::get<D::ISUPPZ>(x), c.found = std::get<D::M>(x);
    c.info = out, c.int_bytes = kIntBytes<I>;
    *call = c;
    return Prep::kRun;
  }

  static bool gpu_covers(const bo_call& c) { return c.op[1] == 'A'; }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {0, c.op[2] == 'L' ? Operand::kLower : Operand::kUpper, Operand::kIn, c.n, c.n, c.lda};
    out[1] = {1, Operand::kMatrix, Operand::kOut, c.n, 1, c.n};
    out[1].real = kIsComplex<T>;
    if (c.op[0] != 'V') return 2;
    out[2] = {2, Operand::kMatrix, Operand::kOut, c.n, c.n, c.ldc};
    return 3;
  }

  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return syev_work(double(c.n), c.op[0] == 'V'); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }
  static int shape_class(const bo_call& c) { return c.op[0] == 'V' ? 0 : 1; }
  static double class_size(const bo_call& c) { return flops(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "%c%c%c n=%lld lda=%lld", c.op[0], c.op[1], c.op[2], (long long)c.n, (long long)c.lda);
  }
};

template <class T, class I = blas_int>
struct Syevr : SelectedEigen<T, BO_KIND_SYEVR> {
  template <class J>
  using WithInt = Syevr<T, J>;
  using Fortran = BO_SYEVR_RESULT(T) BO_SYEVR_PARAMS(T, I);
  using Args = typename Signature<Fortran>::Args;
  enum { JOBZ, RANGE, UPLO, N, A, LDA, VL, VU, IL, IU, ABSTOL, M, W, Z, LDZ, ISUPPZ, WORK, LWORK, IWORK, LIWORK, INFO };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = IWORK, kLiworkArg = LIWORK;
  static constexpr ShapeClassInfo kClasses[] = {{"syevr.vec", 2, false}, {"syevr.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    // LWORK >= 26 n, LIWORK >= 10 n in every version.
    const I n = *std::get<N>(x);
    return Syevr::template prepare_as<Syevr>(x, call, info,
                                             *std::get<LWORK>(x) >= 26 * n && *std::get<LIWORK>(x) >= 10 * n);
  }
};

template <class T, class I = blas_int>
struct Heevr : SelectedEigen<T, BO_KIND_HEEVR> {
  template <class J>
  using WithInt = Heevr<T, J>;
  using Fortran = BO_HEEVR_RESULT(T) BO_HEEVR_PARAMS(T, I);
  using Args = typename Signature<Fortran>::Args;
  enum {
    JOBZ,
    RANGE,
    UPLO,
    N,
    A,
    LDA,
    VL,
    VU,
    IL,
    IU,
    ABSTOL,
    M,
    W,
    Z,
    LDZ,
    ISUPPZ,
    WORK,
    LWORK,
    RWORK,
    LRWORK,
    IWORK,
    LIWORK,
    INFO
  };
  static constexpr int kWorkArg = WORK, kLworkArg = LWORK, kIworkArg = IWORK, kLiworkArg = LIWORK;
  static constexpr int kRworkArg = RWORK, kLrworkArg = LRWORK;
  static constexpr ShapeClassInfo kClasses[] = {{"heevr.vec", 2, false}, {"heevr.val", 2, false}};

  static Prep prepare(const Args& x, bo_call* call, I* info) {
    // LWORK >= 2 n, LRWORK >= 24 n, LIWORK >= 10 n (reference LAPACK 3.11).
    const I n = *std::get<N>(x);
    return Heevr::template prepare_as<Heevr>(
        x, call, info,
        *std::get<LWORK>(x) >= 2 * n && *std::get<LRWORK>(x) >= 24 * n && *std::get<LIWORK>(x) >= 10 * n);
  }
};

namespace by_name {
template <class T, class I = blas_int>
using syevr = Syevr<T, I>;
template <class T, class I = blas_int>
using heevr = Heevr<T, I>;
}  // namespace by_name

}  // namespace bo::routines
