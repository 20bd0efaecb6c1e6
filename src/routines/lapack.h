// What the LAPACK routine descriptors (getrf.h, getrs.h, gesv.h, potrf.h, potrs.h, posv.h, trtrs.h) share: the INFO
// protocol of the reference, the operation counts and the classes of the triangular-solve family.
#pragma once

#include <cstdint>

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
  static double flops(const bo_call& c) { return 2 * work(c); }
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

}  // namespace bo::routines
