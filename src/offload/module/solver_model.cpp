// The LAPACK time model (see solver_model.h).
#include "offload/module/solver_model.h"

#include <algorithm>

#include "offload/module/lapack_svd_polar.h"
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
// Complex c and z, in real multiply-adds per microsecond (four per complex one): cuSOLVER 12 on the lent H200 (sm_90,
// an H100's compute), device only at n = 16384: cgetrf 289 ms, zgetrf 329, cpotrf 127, zpotrf 138
// (bench/results/lapack/lapack_complex-*). The complex kernels run closer to peak than the real ones.
constexpr Cost kComplexFactor[2][2] = {
    // getrf                        potrf
    {{60, 1.5, 40e6, 0}, {40, 0.5, 46e6, 0}},  // c
    {{60, 1.5, 35e6, 0}, {40, 0.5, 42e6, 0}},  // z
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

// Part 2 (cuSOLVER 12 on the lent H100, device only: dgeqrf n = 4096 / 8192 25 / 75 ms, sgeqrf n = 16384 321 ms;
// dsyevd with vectors n = 4096 / 8192 127 / 630 ms, ssyevd 94 / 514 ms; dgesvd with vectors n = 2048 / 4096 about
// 440 / 1830 ms, sgesvd 340 / 1310 ms; fitted per precision, in the descriptors' work units).
constexpr Cost kQr[2] = {{80, 4, 13e6, 0}, {80, 5, 11e6, 0}};
constexpr Cost kApplyQ[2] = {{50, 2, 20e6, 0}, {50, 2, 15e6, 0}};
constexpr Cost kEigVec[2] = {{200, 9.7, 5.7e6, 0}, {200, 15.7, 4.9e6, 0}};
constexpr Cost kEigVal[2] = {{150, 6, 3.5e6, 0}, {150, 8, 2.7e6, 0}};
constexpr Cost kSvdVec[2] = {{300, 115, 8e5, 0}, {300, 59, 5.3e5, 0}};
// The polar route (Xgesvdp, in double for both precisions): n = 2048 / 4096 75 / 300 ms device only.
constexpr Cost kSvdPolar = {300, 24.4, 3.37e6, 0};
constexpr Cost kPotri[2] = {{60, 3, 6e6, 0}, {60, 3, 5e6, 0}};

// cx: a complex call (the complex routines run as their real counterparts; their SVD never takes the polar route).
double part2_us(const bo_call& c, int p, int es, bool cx) {
  namespace r = bo::routines;
  const double m = double(c.m), n = double(c.n), k = double(c.k), mn = double(std::min(c.m, c.n));
  switch (r::real_counterpart(bo_routine_kind_of(c.routine))) {
    case BO_KIND_GEQRF:
      return factor_us(kQr[p], mn, r::geqrf_work(m, n));
    case BO_KIND_ORGQR:
      return factor_us(kQr[p], k, r::orgqr_work(m, n, k));
    case BO_KIND_ORMQR:
      return factor_us(kApplyQ[p], k, r::ormqr_work(m, n, k, c.op[0] == 'L'));
    case BO_KIND_GELS:
      return factor_us(kQr[p], n, r::geqrf_work(m, n)) + factor_us(kApplyQ[p], n, r::ormqr_work(m, k, n, true)) +
             solve_us(n, k, 1, es);
    case BO_KIND_SYEVD:
    case BO_KIND_SYEV:
    case BO_KIND_SYEVR: {
      const bool v = c.op[0] == 'V';
      return factor_us(v ? kEigVec[p] : kEigVal[p], n, r::syev_work(n, v));
    }
    case BO_KIND_GESVD:
    case BO_KIND_GESDD: {
      const double vec = !cx && polar_jobs(c) ? factor_us(kSvdPolar, mn, r::svd_work(m, n, true)) * (p ? 1.0 : 1.1)
                                              : factor_us(kSvdVec[p], mn, r::svd_work(m, n, true));
      return c.op[0] == 'N' && c.op[1] == 'N' ? 0.35 * vec : vec;
    }
    case BO_KIND_GETRI:
      return solve_us(n, n, 2, es);
    case BO_KIND_POTRI:
      return factor_us(kPotri[p], n, r::potri_work(n));
    default:
      return -1;
  }
}

}  // namespace

double solver_kernel_us(const bo_call& c, int cc_major, int cc_minor) {
  // Complex c and z: their factorizations at the rates fitted above, per real multiply-add (the descriptors' work
  // counts element multiply-adds, hence the factor 4); their solves at s's and d's rates, streaming their own bytes
  // (bo_element_size: 8 and 16): derived, not measured.
  const bo_precision prec = bo_routine_precision(c.routine);
  const bool complex_elements = bo_is_complex(prec);
  const int p = prec == BO_PREC_D || prec == BO_PREC_Z ? 1 : 0;
  const int es = bo_element_size(prec);
  const double scale = complex_elements ? 4.0 : 1.0;
  const Cost(&factor)[2] = complex_elements ? kComplexFactor[p] : kFactor[p];
  const double n = double(c.n), nrhs = double(c.k);
  double t = 0;
  switch (bo_routine_kind_of(c.routine)) {
    case BO_KIND_GETRF:
      t = factor_us(factor[0], double(std::min(c.m, c.n)), scale * bo::routines::getrf_work(double(c.m), n));
      break;
    case BO_KIND_GESV:
      t = factor_us(factor[0], n, scale * bo::routines::getrf_work(n, n)) +
          (c.k ? solve_us(n, scale * nrhs, 2, es) : 0);
      break;
    case BO_KIND_POTRF:
      t = factor_us(factor[1], n, scale * bo::routines::potrf_work(n));
      break;
    case BO_KIND_POSV:
      t = factor_us(factor[1], n, scale * bo::routines::potrf_work(n)) + (c.k ? solve_us(n, scale * nrhs, 2, es) : 0);
      break;
    case BO_KIND_GETRS:
    case BO_KIND_POTRS:
      t = solve_us(n, scale * nrhs, 2, es);
      break;
    case BO_KIND_TRTRS:
      t = solve_us(n, scale * nrhs, 1, es);
      break;
    default:
      t = part2_us(c, p, es, complex_elements);
      if (t < 0) return -1;
      // Complex part 2: the real routine's time at the same sizes, scaled as the complex LU is against the real one
      // (four real multiply-adds per complex one, at kComplexFactor's rate against kFactor's): derived, not measured.
      if (complex_elements) t *= 4.0 * kFactor[p][0].ma_per_us / kComplexFactor[p][0].ma_per_us;
  }
  return cc_major == 9 && cc_minor == 0 ? t : 3 * t;
}

}  // namespace bom
