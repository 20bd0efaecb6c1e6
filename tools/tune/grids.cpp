// The tuning grids: seed 000 section 5.4's log-spaced grids, extended to the sizes the issue asks for
// (vectors 1 to 1e8, matrices up to 65536 per side including skinny shapes, strsv to 32768).
#include "grids.h"

#include <algorithm>
#include <cmath>

#include "kernels/registry.h"
#include "tuning/table.h"

namespace bo::tune {

std::vector<int64_t> log_spaced(double lo, double hi, double ratio) {
  std::vector<int64_t> v;
  for (double x = lo; x <= hi * 1.000001; x *= ratio) v.push_back(int64_t(std::llround(x)));
  if (v.empty() || v.back() != int64_t(std::llround(hi))) v.push_back(int64_t(std::llround(hi)));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<GridSpec> grid_specs(bool quick) {
  std::vector<GridSpec> g;
  // Vectors: half-decades 1 .. 1e8 (17 points).
  const auto vec = quick ? std::vector<int64_t>{1000, 100000, 10000000} : log_spaced(1, 1e8, std::sqrt(10.0));
  // Matrices: powers of 4, 1 .. 65536 per side (9 x 9 tiles: 1 x 65536 and 65536 x 1 are the skinny ends).
  const auto mat = quick ? std::vector<int64_t>{64, 4096} : log_spaced(1, 65536, 4);
  // strsv: powers of 4 to 1024, then powers of 2 to 32768 (where the kernels' behaviour changes fastest).
  const auto trs = quick ? std::vector<int64_t>{1024, 8192}
                         : std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768};
  // sgemm: m, n as the matrices plus 2048 and 8192 (where the best block tile changes with the number of
  // tiles per SM); k at the LU update ranks (64, 256) and deeper products (1024, 4096).
  const auto gk = quick ? std::vector<int64_t>{256} : std::vector<int64_t>{64, 256, 1024, 4096};
  const auto gmn = quick ? std::vector<int64_t>{256, 4096}
                         : std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536};
  g.push_back({"snrm2", BO_R_SNRM2, 'N', {"n"}, {vec}, "GB/s"});
  g.push_back({"sgemv_n", BO_R_SGEMV, 'N', {"m", "n"}, {mat, mat}, "GB/s"});
  g.push_back({"sgemv_t", BO_R_SGEMV, 'T', {"m", "n"}, {mat, mat}, "GB/s"});
  g.push_back({"strsv_n", BO_R_STRSV, 'N', {"n"}, {trs}, "GB/s"});
  g.push_back({"strsv_t", BO_R_STRSV, 'T', {"n"}, {trs}, "GB/s"});
  g.push_back({"sgemm", BO_R_SGEMM, 'N', {"m", "n", "k"}, {gmn, gmn, gk}, "GFLOP/s"});
  // strsm (left, lower, no transpose; a right-side call looks up its transpose): triangle order t and right-hand
  // sides r, from the solves of sgetrs/spotrs (t >> r) to the factorizations' panels (t << r, seed 003 figs. 17-18).
  const auto st = quick ? std::vector<int64_t>{128, 4096} : std::vector<int64_t>{32, 128, 512, 2048, 4096, 8192, 16384};
  const auto sr = quick ? std::vector<int64_t>{16, 4096} : std::vector<int64_t>{1, 4, 16, 128, 1024, 4096, 8192, 16384};
  g.push_back({"strsm", BO_R_STRSM, 'L', {"t", "r"}, {st, sr}, "GFLOP/s"});
  // ssyrk (lower, no transpose, alpha = -1, beta = 1 as in spotrf): order n, rank k.
  const auto yn = quick ? std::vector<int64_t>{256, 4096} : std::vector<int64_t>{64, 256, 1024, 2048, 4096, 8192};
  const auto yk = quick ? std::vector<int64_t>{64, 4096} : std::vector<int64_t>{16, 64, 256, 1024, 4096, 8192};
  g.push_back({"ssyrk", BO_R_SSYRK, 'N', {"n", "k"}, {yn, yk}, "GFLOP/s"});
  // Double: the same keys with a d, on coarser grids (the same quick ones).
  const auto dvec = quick ? vec : log_spaced(1, 1e8, 10);
  const auto dmat = quick ? mat : log_spaced(1, 65536, 16);
  const auto dtrs = quick ? trs : std::vector<int64_t>{16, 256, 1024, 4096, 16384};
  const auto dgmn = quick ? gmn : std::vector<int64_t>{64, 256, 1024, 4096, 16384};
  const auto dst = quick ? st : std::vector<int64_t>{128, 512, 2048, 8192};
  const auto dsr = quick ? sr : std::vector<int64_t>{1, 16, 128, 1024, 8192};
  const auto dyn = quick ? yn : std::vector<int64_t>{256, 1024, 4096, 8192};
  const auto dyk = quick ? yk : std::vector<int64_t>{64, 256, 1024, 4096};
  g.push_back({"dnrm2", BO_R_DNRM2, 'N', {"n"}, {dvec}, "GB/s"});
  g.push_back({"dgemv_n", BO_R_DGEMV, 'N', {"m", "n"}, {dmat, dmat}, "GB/s"});
  g.push_back({"dgemv_t", BO_R_DGEMV, 'T', {"m", "n"}, {dmat, dmat}, "GB/s"});
  g.push_back({"dtrsv_n", BO_R_DTRSV, 'N', {"n"}, {dtrs}, "GB/s"});
  g.push_back({"dtrsv_t", BO_R_DTRSV, 'T', {"n"}, {dtrs}, "GB/s"});
  g.push_back({"dgemm", BO_R_DGEMM, 'N', {"m", "n", "k"}, {dgmn, dgmn, gk}, "GFLOP/s"});
  g.push_back({"dtrsm", BO_R_DTRSM, 'L', {"t", "r"}, {dst, dsr}, "GFLOP/s"});
  g.push_back({"dsyrk", BO_R_DSYRK, 'N', {"n", "k"}, {dyn, dyk}, "GFLOP/s"});
  return g;
}

int64_t tile_count(const GridSpec& g) {
  int64_t c = 1;
  for (const auto& p : g.points) c *= int64_t(p.size());
  return c;
}

std::vector<int64_t> tile_at(const GridSpec& g, int64_t index) {
  std::vector<int64_t> at(g.points.size());
  for (int d = int(g.points.size()) - 1; d >= 0; --d) {
    const int64_t n = int64_t(g.points[d].size());
    at[d] = g.points[d][index % n];
    index /= n;
  }
  return at;
}

Work tile_work(const GridSpec& g, const std::vector<int64_t>& at) {
  const bo::tuning::KernelWork k = bo::tuning::kernel_work(g.key, at.data());
  return Work{k.read, k.written};
}

}  // namespace bo::tune
