// The tuning grids: seed 000 section 5.4's log-spaced grids, extended to the sizes the issue asks for
// (vectors 1 to 1e8, matrices up to 65536 per side including skinny shapes, strsv to 32768), one set per precision
// over the keys of tuning/keys.h.
#include "grids.h"

#include <algorithm>
#include <cmath>

#include "kernels/registry.h"
#include "tuning/keys.h"
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

namespace {

// One precision's grid points per axis kind.
struct PrecisionGrids {
  std::vector<int64_t> vec, mat, trs, gmn, gk, st, sr, yn, yk;
};

// The grids of each precision (s, d, c, z; tuning/keys.h orders the keys the same way).
std::vector<PrecisionGrids> precision_grids(bool quick) {
  PrecisionGrids s;
  // Vectors: half-decades 1 .. 1e8 (17 points).
  s.vec = quick ? std::vector<int64_t>{1000, 100000, 10000000} : log_spaced(1, 1e8, std::sqrt(10.0));
  // Matrices: powers of 4, 1 .. 65536 per side (9 x 9 tiles: 1 x 65536 and 65536 x 1 are the skinny ends).
  s.mat = quick ? std::vector<int64_t>{64, 4096} : log_spaced(1, 65536, 4);
  // strsv: powers of 4 to 1024, then powers of 2 to 32768 (where the kernels' behaviour changes fastest).
  s.trs = quick ? std::vector<int64_t>{1024, 8192}
                : std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768};
  // sgemm: m, n as the matrices plus 2048 and 8192 (where the best block tile changes with the number of
  // tiles per SM); k at the LU update ranks (64, 256) and deeper products (1024, 4096).
  s.gk = quick ? std::vector<int64_t>{256} : std::vector<int64_t>{64, 256, 1024, 4096};
  s.gmn = quick ? std::vector<int64_t>{256, 4096}
                : std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536};
  // strsm (left, lower, no transpose; a right-side call looks up its transpose): triangle order t and right-hand
  // sides r, from the solves of sgetrs/spotrs (t >> r) to the factorizations' panels (t << r, seed 003 figs. 17-18).
  s.st = quick ? std::vector<int64_t>{128, 4096} : std::vector<int64_t>{32, 128, 512, 2048, 4096, 8192, 16384};
  s.sr = quick ? std::vector<int64_t>{16, 4096} : std::vector<int64_t>{1, 4, 16, 128, 1024, 4096, 8192, 16384};
  // ssyrk (lower, no transpose, alpha = -1, beta = 1 as in spotrf): order n, rank k.
  s.yn = quick ? std::vector<int64_t>{256, 4096} : std::vector<int64_t>{64, 256, 1024, 2048, 4096, 8192};
  s.yk = quick ? std::vector<int64_t>{64, 4096} : std::vector<int64_t>{16, 64, 256, 1024, 4096, 8192};
  if (quick) return {s, s, s, s};  // the same few tiles in every precision
  // Double: coarser grids (FP64 speed tuning is later work).
  PrecisionGrids d = s;
  d.vec = log_spaced(1, 1e8, 10);
  d.mat = log_spaced(1, 65536, 16);
  d.trs = {16, 256, 1024, 4096, 16384};
  d.gmn = {64, 256, 1024, 4096, 16384};
  d.st = {128, 512, 2048, 8192};
  d.sr = {1, 16, 128, 1024, 8192};
  d.yn = {256, 1024, 4096, 8192};
  d.yk = {64, 256, 1024, 4096};
  // Complex: cuBLAS's routines and our norms, timed for the policy's kernel time rather than to choose among many
  // configurations: the double grids. c's elements have d's 8 bytes; z's 16 make a 65536-square gemv 64 GiB, more
  // than a GPU's pool leaves for its copies and no call a host would offload, so z's matrices stop at 32768.
  PrecisionGrids z = d;
  z.mat = log_spaced(1, 32768, 16);
  return {s, d, d, z};
}

}  // namespace

std::vector<GridSpec> grid_specs(bool quick) {
  using bo::tuning::kKeySlots;
  using bo::tuning::kKeysPerPrecision;
  const std::vector<PrecisionGrids> grids = precision_grids(quick);
  std::vector<GridSpec> g;
  for (int key = 0; key < bo::tuning::kKeyCount; ++key) {
    const char* name = bo::tuning::key_name(key);
    if (!name) continue;  // sherk, dherk
    const PrecisionGrids& p = grids[size_t(key / kKeysPerPrecision)];
    const bo::tuning::KeySlot& slot = kKeySlots[key % kKeysPerPrecision];
    const int routine = bo::tuning::key_routine(key);
    // The _t keys of complex gemv and trsv are timed with the conjugate transpose, which complex LAPACK calls (the
    // Householder updates, the Cholesky solves); 'T' costs the same.
    const char trans = slot.trans != 'T' ? 'N' : bo_is_complex(bo_routine_precision(routine)) ? 'C' : 'T';
    switch (slot.kind) {
      case BO_KIND_NRM2:
        g.push_back({name, routine, 'N', {"n"}, {p.vec}, "GB/s"});
        break;
      case BO_KIND_GEMV:
        g.push_back({name, routine, trans, {"m", "n"}, {p.mat, p.mat}, "GB/s"});
        break;
      case BO_KIND_TRSV:
        g.push_back({name, routine, trans, {"n"}, {p.trs}, "GB/s"});
        break;
      case BO_KIND_GEMM:
        g.push_back({name, routine, 'N', {"m", "n", "k"}, {p.gmn, p.gmn, p.gk}, "GFLOP/s"});
        break;
      case BO_KIND_TRSM:
        g.push_back({name, routine, 'L', {"t", "r"}, {p.st, p.sr}, "GFLOP/s"});
        break;
      case BO_KIND_SYRK:  // herk: the same update, as the complex Cholesky (cpotrf, zpotrf) makes it
      case BO_KIND_HERK:
        g.push_back({name, routine, 'N', {"n", "k"}, {p.yn, p.yk}, "GFLOP/s"});
        break;
      default:
        break;
    }
  }
  return g;
}

bool key_selected(const std::vector<std::string>& selection, const std::string& key) {
  if (selection.empty()) return true;
  const int index = bo::tuning::find_key(key);
  const int routine = bo::tuning::key_routine(index);
  for (const std::string& s : selection) {
    if (s == key) return true;
    if (routine >= 0 && s.size() == 1 && s[0] == bo_precision_letter(bo_routine_precision(routine))) return true;
  }
  return false;
}

std::string unknown_selection(const std::vector<std::string>& selection) {
  for (const std::string& s : selection) {
    const bool letter = s.size() == 1 && std::string("sdcz").find(s[0]) != std::string::npos;
    if (!letter && bo::tuning::find_key(s) < 0) return s;
  }
  return "";
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
