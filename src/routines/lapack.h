// What the LAPACK routine descriptors (getrf.h ... trtrs.h, and part 2: geqrf.h ... potri.h) share: the INFO protocol
// of the reference, the operation counts, the classes of the triangular-solve family and the workspace answers.
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>

#include "routines/descriptor.h"

namespace bo::routines {

// Multiply-add counts (flops classes count twice these, as gemm's class counts 2 m n k).
// LU with partial pivoting of an m x n matrix.
inline double getrf_work(double m, double n) {
  const double k = m < n ? m : n, l = m < n ? n : m;
  return 0.5 * l * k * k - k * k * k / 6.0;
}
// Cholesky of an n x n matrix.
inline double potrf_work(double n) { return n * n * n / 6.0; }
// Two triangular solves with nrhs right-hand sides.
inline double solve_work(double n, double nrhs) { return n * n * nrhs; }

// The solves (getrs, potrs, trtrs): with few right-hand sides they stream the factors from memory (Level 2: a bytes
// class, the bytes of the triangles read), with more they are Level 3 (flops classes). A CPU LAPACK's rate for these
// depends on the width of the block of right-hand sides more than on the flops (its threads share out the columns):
// on the lent machine's OpenBLAS, 64 of them ran at 59-125 GFLOP/s from n = 512 to 8192, 256 at 99-289 at n = 512 and
// 160-402 from n = 2048 (bench/results/mix/calibrate-*-7f22406-*.log). So a narrow block (32 to 127) is a class of
// its own, measured at 64, beside the wide one (128 and more, measured at 256). Class numbers in the descriptors'
// order: vec, narrow, mat.
constexpr int64_t kSolveFewRhs = 32;
constexpr int64_t kSolveWideRhs = 128;
inline int solve_class(const bo_call& c) { return c.k < kSolveFewRhs ? 0 : c.k < kSolveWideRhs ? 1 : 2; }

// What the three solves share: their work (Triangles: how many triangles of the factors a solve reads, 2 for getrs
// and potrs, 1 for trtrs), their classes by the number of right-hand sides (the descriptor names them), and the
// policy's credit for a device copy of the factors (a program solves with the same factors again and again).
template <class T, int Triangles>
struct SolveFamily {
  static constexpr bool kResidencyInPolicy = true;
  static constexpr int kWorkDims = 3;
  static double work(const bo_call& c) { return 0.5 * Triangles * solve_work(double(c.n), double(c.k)); }
  static double flops(const bo_call& c) { return 2 * kFlopScale<T> * work(c); }
  static int shape_class(const bo_call& c) { return solve_class(c); }
  // Few right-hand sides: the bytes of the triangles read (at least work / kSolveFewRhs elements); more: flops.
  static double class_size(const bo_call& c) {
    return solve_class(c) == 0 ? sizeof(T) * 0.5 * Triangles * double(c.n) * double(c.n) : flops(c);
  }
};

// The argument checks of ?potrs and ?posv (the same parameter list), in the reference's order: the argument number
// INFO reports, or 0.
template <class I>
I cholesky_solve_invalid(char uplo, I n, I nrhs, I lda, I ldb) {
  return !is_uplo(uplo) ? 1 : n < 0 ? 2 : nrhs < 0 ? 3 : lda < max1(n) ? 5 : ldb < max1(n) ? 7 : 0;
}

// The INFO a LAPACK routine writes: 0 on entry, -i for argument i (prepare() reports i to XERBLA as well).
template <class I>
Prep lapack_invalid(I* out, int i, I* info) {
  *out = -I(i);
  *info = I(i);
  return Prep::kInvalid;
}

// ---- LAPACK part 2 (geqrf.h ... potri.h) -------------------------------------------------------------------------

// Multiply-add counts, as LAPACK's operation counts (dopla) give them, halved.
// QR of an m x n matrix (m >= n; the LQ count for m < n).
inline double geqrf_work(double m, double n) {
  const double k = m < n ? m : n, l = m < n ? n : m;
  return l * k * k - k * k * k / 3.0;
}
// Q's first n columns from k reflectors of length m.
inline double orgqr_work(double m, double n, double k) { return 2 * m * n * k - (m + n) * k * k + 2 * k * k * k / 3.0; }
// k reflectors applied to an m x n matrix from the left (nq = m) or the right (nq = n).
inline double ormqr_work(double m, double n, double k, bool left) {
  return left ? 2 * n * m * k - n * k * k : 2 * m * n * k - m * k * k;
}
// The symmetric eigenproblem: the tridiagonal reduction (2/3 n^3) and, with vectors, the divide and conquer and the
// back-transformation (about 4 n^3 more): effective counts, the same for the CPU's curves and the GPU's model.
inline double syev_work(double n, bool vectors) { return (vectors ? 4.5 : 0.67) * n * n * n; }
// The SVD: the bidiagonal reduction (4 m n^2 - 4 n^3 / 3 flops, m >= n) and, with vectors, about 17 n^3 flops more.
inline double svd_work(double m, double n, bool vectors) {
  const double k = m < n ? m : n, l = m < n ? n : m;
  return 2 * l * k * k - 2 * k * k * k / 3.0 + (vectors ? 8.5 * k * k * k : 0.0);
}
// The inverse from the LU factors (getri: 4/3 n^3 flops) or from the Cholesky factor (potri: 2/3 n^3).
inline double getri_work(double n) { return 2.0 * n * n * n / 3.0; }
inline double potri_work(double n) { return n * n * n / 3.0; }

// What the part-2 descriptors answer about workspace. A workspace query (LWORK = -1, LIWORK = -1) and a workspace below
// the minimum go to the CPU LAPACK (Prep::kQuickCpu), whose answer and XERBLA are the reference's own: the minimums
// changed between LAPACK versions, and the program's CPU LAPACK is the one whose answers it must see. The GPU path
// never uses the caller's workspace (device workspace is the module's), so any legal LWORK is enough there; after it,
// WORK(1) (and IWORK(1)) hold what the CPU LAPACK's query answers, as they would after the CPU's own call.
//
// A descriptor names its workspace arguments: kWorkArg, kLworkArg, and kIworkArg, kLiworkArg (-1: none); a complex
// routine whose real workspace has a query of its own (?heevd, ?heevr: LRWORK) also kRworkArg, kLrworkArg.
template <class D, class = void>
struct RworkArgs {
  static constexpr int kRwork = -1, kLrwork = -1;
};
template <class D>
struct RworkArgs<D, std::void_t<decltype(D::kLrworkArg)>> {
  static constexpr int kRwork = D::kRworkArg, kLrwork = D::kLrworkArg;
};
template <class D, class Q>
void answer_workspace(const typename D::Args& x, Q&& cpu) {
  using Args = typename D::Args;
  using T = std::remove_pointer_t<std::tuple_element_t<D::kWorkArg, Args>>;
  using I = std::remove_const_t<std::remove_pointer_t<std::tuple_element_t<D::kLworkArg, Args>>>;
  constexpr int kRw = RworkArgs<D>::kRwork, kLrw = RworkArgs<D>::kLrwork;
  Args q = x;
  T work = 0;
  RealOf<T> rwork = 0;
  I minus1 = -1, iwork = 0, info = 0;
  std::get<D::kWorkArg>(q) = &work;
  std::get<D::kLworkArg>(q) = &minus1;
  if constexpr (D::kIworkArg >= 0) {
    std::get<D::kIworkArg>(q) = &iwork;
    if constexpr (D::kLiworkArg >= 0) std::get<D::kLiworkArg>(q) = &minus1;
  }
  if constexpr (kLrw >= 0) std::get<kRw>(q) = &rwork, std::get<kLrw>(q) = &minus1;
  std::get<D::INFO>(q) = &info;
  cpu(q);
  if (info != 0) return;
  *std::get<D::kWorkArg>(x) = work;
  if constexpr (D::kIworkArg >= 0 && D::kLiworkArg >= 0) *std::get<D::kIworkArg>(x) = iwork;
  if constexpr (kLrw >= 0) *std::get<kRw>(x) = rwork;
}

// The real routine whose GPU steps, time model and value order a complex one of part 2 shares (cungqr: orgqr, cheevd:
// syevd ...); every other kind is its own.
constexpr bo_routine_kind real_counterpart(bo_routine_kind k) {
  switch (k) {
    case BO_KIND_UNGQR:
      return BO_KIND_ORGQR;
    case BO_KIND_UNMQR:
      return BO_KIND_ORMQR;
    case BO_KIND_HEEVD:
      return BO_KIND_SYEVD;
    case BO_KIND_HEEV:
      return BO_KIND_SYEV;
    case BO_KIND_HEEVR:
      return BO_KIND_SYEVR;
    default:
      return k;
  }
}

// A descriptor with answer_workspace's arguments (the part-2 routines).
template <class D, class = void>
struct HasWorkspace : std::false_type {};
template <class D>
struct HasWorkspace<D, std::void_t<decltype(D::kWorkArg)>> : std::true_type {};

}  // namespace bo::routines
