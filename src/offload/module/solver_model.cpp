// The LAPACK time model (see solver_model.h).
#include "offload/module/solver_model.h"

#include <algorithm>

#include "routines/all.h"

namespace bom {
namespace {

// One routine's cost: fixed microseconds, microseconds per column of the factored matrix, multiply-adds per
// microsecond for its Level 3 part, and bytes per microsecond for streaming the factors in a solve with few
// right-hand sides.
struct Cost {
  double fixed_us, per_col_us, ma_per_us, bytes_per_us;
};

// cuSOLVER 12 / cuBLAS 13 on the lent H100 (fitted to the device-only times of bench/lapack's cuSOLVER reference:
// sgetrf 135 ms, dgetrf 142 ms, spotrf 41 ms, dpotrf 37 ms at n = 16384; see bench/results/lapack/).
constexpr Cost kFactor[2][2] = {
    // getrf                        potrf
    {{60, 1.5, 13e6, 0}, {40, 0.5, 22e6, 0}},    // s
    {{60, 1.5, 12.5e6, 0}, {40, 0.5, 24e6, 0}},  // d
};
constexpr Cost kSolve = {30, 0.05, 15e6, 1.0e6};

double factor_us(const Cost& k, double cols, double work) {
  return k.fixed_us + k.per_col_us * cols + work / k.ma_per_us;
}

// Two (getrs, potrs) or one (trtrs) triangular solves with nrhs right-hand sides: streaming the triangles for few,
// Level 3 for many.
double solve_us(double n, double nrhs, double triangles, int es) {
  const double stream = triangles * 0.5 * n * n * es / kSolve.bytes_per_us;
  const double flops = triangles * 0.5 * n * n * nrhs / kSolve.ma_per_us;
  return kSolve.fixed_us + kSolve.per_col_us * n * triangles + std::max(stream, flops);
}

}  // namespace

double solver_kernel_us(const bo_call& c, int cc_major, int cc_minor) {
  const int p = bo_routine_precision(c.routine) == BO_PREC_D ? 1 : 0;
  const int es = p ? 8 : 4;
  const double n = double(c.n), nrhs = double(c.k);
  double t = 0;
  switch (bo_routine_kind_of(c.routine)) {
    case BO_KIND_GETRF:
      t = factor_us(kFactor[p][0], double(std::min(c.m, c.n)), bo::routines::getrf_work(double(c.m), n));
      break;
    case BO_KIND_GESV:
      t = factor_us(kFactor[p][0], n, bo::routines::getrf_work(n, n)) + (c.k ? solve_us(n, nrhs, 2, es) : 0);
      break;
    case BO_KIND_POTRF:
      t = factor_us(kFactor[p][1], n, bo::routines::potrf_work(n));
      break;
    case BO_KIND_POSV:
      t = factor_us(kFactor[p][1], n, bo::routines::potrf_work(n)) + (c.k ? solve_us(n, nrhs, 2, es) : 0);
      break;
    case BO_KIND_GETRS:
    case BO_KIND_POTRS:
      t = solve_us(n, nrhs, 2, es);
      break;
    case BO_KIND_TRTRS:
      t = solve_us(n, nrhs, 1, es);
      break;
    default:
      return -1;
  }
  return cc_major == 9 && cc_minor == 0 ? t : 3 * t;
}

}  // namespace bom
