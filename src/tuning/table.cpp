// The in-memory side of tuned-parameter tables: nearest-tile lookup, its index, bandwidth interpolation, equality.
#include "tuning/table.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>

#include "tuning/keys.h"

namespace bo::tuning {
namespace {

// Filling missing cells is brute force (missing cells x tiles); past this many steps finalize() leaves the
// index empty and nearest() scans instead, which is still correct. Real tables are orders of magnitude smaller.
constexpr double kMaxFillSteps = double{1 << 28};
constexpr std::size_t kMaxIndexCells = std::size_t{1} << 24;

bool at_less(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

// Position in g (ascending, non-empty) of the grid point nearest to d in log distance, ties to the smaller.
std::size_t snap(const std::vector<int64_t>& g, int64_t d) {
  if (d < 1) d = 1;
  auto it = std::lower_bound(g.begin(), g.end(), d);
  if (it == g.end()) return g.size() - 1;
  if (*it == d || it == g.begin()) return static_cast<std::size_t>(it - g.begin());
  int64_t lo = *(it - 1), hi = *it;
  // log(d) - log(lo) <= log(hi) - log(d)  <=>  d*d <= lo*hi; 128-bit products keep the tie exact.
  unsigned __int128 dd = static_cast<unsigned __int128>(d) * static_cast<unsigned __int128>(d);
  unsigned __int128 lh = static_cast<unsigned __int128>(lo) * static_cast<unsigned __int128>(hi);
  std::size_t pos = static_cast<std::size_t>(it - g.begin());
  return dd <= lh ? pos - 1 : pos;
}

// The grid value dims[a] snaps to; a hand-built table may lack a grid for the axis, then the value itself.
int64_t snapped_value(const KernelTable& k, std::size_t a, int64_t d) {
  if (a < k.grid.size() && !k.grid[a].empty()) return k.grid[a][snap(k.grid[a], d)];
  return d < 1 ? 1 : d;
}

double log_distance(int64_t a, int64_t b) {
  if (a < 1) a = 1;
  if (b < 1) b = 1;
  double hi = static_cast<double>(std::max(a, b)), lo = static_cast<double>(std::min(a, b));
  return std::log(hi / lo);
}

// Sums of logs taken in different orders may differ in the last bits; count those as ties so the
// lexicographic tie rule decides the same way in finalize() and in the scan.
bool clearly_less(double a, double b) { return a < b - 1e-12 * (1 + b); }

// The tile nearest to `point` (a function axis -> value) in summed log distance, ties to the smaller `at`;
// an exact hit always wins, even where rounding would call a near neighbour a tie. Tiles whose `at` does
// not have one value per axis are ignored. -1 if none.
template <typename Point>
int64_t nearest_by_scan(const KernelTable& k, Point point) {
  const std::size_t naxes = k.axes.size();
  int64_t best = -1;
  bool best_exact = false;
  double best_dist = 0;
  for (std::size_t i = 0; i < k.tiles.size(); ++i) {
    const Tile& t = k.tiles[i];
    if (t.at.size() != naxes) continue;
    bool exact = true;
    double dist = 0;
    for (std::size_t a = 0; a < naxes; ++a) {
      int64_t p = point(a);
      exact = exact && t.at[a] == p;
      dist += log_distance(t.at[a], p);
    }
    bool better;
    if (best < 0) {
      better = true;
    } else if (exact != best_exact) {
      better = exact;
    } else if (clearly_less(dist, best_dist) || clearly_less(best_dist, dist)) {
      better = dist < best_dist;
    } else {
      better = at_less(t.at, k.tiles[static_cast<std::size_t>(best)].at);
    }
    if (better) {
      best = static_cast<int64_t>(i);
      best_exact = exact;
      best_dist = dist;
    }
  }
  return best;
}

double interpolate(const std::vector<BandwidthPoint>& pts, double bytes) {
  if (pts.empty()) return 0;
  if (!(bytes > pts.front().bytes)) return pts.front().gbs;  // also catches NaN
  if (bytes >= pts.back().bytes) return pts.back().gbs;
  auto it =
      std::upper_bound(pts.begin(), pts.end(), bytes, [](double b, const BandwidthPoint& p) { return b < p.bytes; });
  const BandwidthPoint& a = *(it - 1);
  const BandwidthPoint& b = *it;
  if (!(b.bytes > a.bytes)) return a.gbs;
  // Logs need positive values; parse_table guarantees them, a hand-built table might not.
  if (a.bytes <= 0 || a.gbs <= 0 || b.gbs <= 0)
    return a.gbs + (b.gbs - a.gbs) * (bytes - a.bytes) / (b.bytes - a.bytes);
  double t = std::log(bytes / a.bytes) / std::log(b.bytes / a.bytes);
  return a.gbs * std::pow(b.gbs / a.gbs, t);
}

}  // namespace

const Tile* KernelTable::nearest(const int64_t* dims) const {
  if (tiles.empty()) return nullptr;
  const std::size_t naxes = axes.size();
  if (!index_.empty()) {
    std::size_t flat = 0;
    for (std::size_t a = 0; a < naxes; ++a) flat = flat * grid[a].size() + snap(grid[a], dims[a]);
    return &tiles[static_cast<std::size_t>(index_[flat])];
  }
  int64_t i = nearest_by_scan(*this, [&](std::size_t a) { return snapped_value(*this, a, dims[a]); });
  return i < 0 ? nullptr : &tiles[static_cast<std::size_t>(i)];
}

void KernelTable::finalize() {
  std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) { return at_less(a.at, b.at); });
  index_.clear();
  // Without a consistent grid the index cannot be built; nearest() then scans.
  if (tiles.empty() || axes.empty() || grid.size() != axes.size()) return;
  if (tiles.size() > static_cast<std::size_t>(std::numeric_limits<int32_t>::max())) return;
  std::size_t cells = 1;
  for (const auto& g : grid) {
    if (g.empty() || g.front() < 1 || std::adjacent_find(g.begin(), g.end(), std::greater_equal<>()) != g.end()) {
      return;
    }
    if (cells > kMaxIndexCells / g.size()) return;
    cells *= g.size();
  }
  std::vector<int32_t> index(cells, -1);
  std::size_t filled = 0;
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const Tile& t = tiles[i];
    if (t.at.size() != axes.size()) return;
    std::size_t flat = 0;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      auto it = std::lower_bound(grid[a].begin(), grid[a].end(), t.at[a]);
      if (it == grid[a].end() || *it != t.at[a]) return;
      flat = flat * grid[a].size() + static_cast<std::size_t>(it - grid[a].begin());
    }
    if (index[flat] < 0) {  // duplicates: the first after the stable sort, as the scan picks
      index[flat] = static_cast<int32_t>(i);
      ++filled;
    }
  }
  if (static_cast<double>(cells - filled) * static_cast<double>(tiles.size()) > kMaxFillSteps) return;
  std::vector<std::size_t> pos(axes.size());
  for (std::size_t flat = 0; flat < cells; ++flat) {
    if (index[flat] >= 0) continue;
    std::size_t rest = flat;
    for (std::size_t a = axes.size(); a-- > 0;) {
      pos[a] = rest % grid[a].size();
      rest /= grid[a].size();
    }
    index[flat] = static_cast<int32_t>(nearest_by_scan(*this, [&](std::size_t a) { return grid[a][pos[a]]; }));
  }
  index_ = std::move(index);
}

double Table::read_gbs(double bytes) const { return interpolate(read, bytes); }
double Table::write_gbs(double bytes) const { return interpolate(write, bytes); }

KernelWork kernel_work(int key, const int64_t* dims) {
  KernelWork w;
  const int routine = key_routine(key);
  if (routine < 0) return w;
  // The precision sets the bytes per element (4, 8; complex 8, 16) and the real flops per multiply-add (a complex one
  // is four real multiplies and four adds: four times a real one's two flops, src/routines/descriptor.h kFlopScale).
  const bo_precision p = bo_routine_precision(routine);
  const double es = bo_element_size(p), scale = bo_is_complex(p) ? 4.0 : 1.0;
  const KeySlot& slot = kKeySlots[key % kKeysPerPrecision];
  const double d0 = double(dims[0]);
  switch (slot.kind) {
    case BO_KIND_NRM2:  // the result is real: scnrm2's is 4 bytes, dznrm2's 8
      w.read = es * d0;
      w.written = bo_real_size(p);
      break;
    case BO_KIND_GEMV: {  // (m, n); beta = 0: y is written, not read
      const double n = double(dims[1]);
      const bool t = slot.trans == 'T';
      w.read = es * (d0 * n + (t ? d0 : n));
      w.written = es * (t ? n : d0);
      break;
    }
    case BO_KIND_TRSV:  // the triangle and b read, x written
      w.read = es * (d0 * (d0 + 1) / 2 + d0);
      w.written = es * d0;
      break;
    case BO_KIND_GEMM:  // (m, n, k): 2 m n k
      w.read = scale * 2.0 * d0 * double(dims[1]) * double(dims[2]);
      break;
    case BO_KIND_TRSM:  // triangle order t, right-hand sides r: t^2 r
      w.read = scale * d0 * d0 * double(dims[1]);
      break;
    case BO_KIND_SYRK:  // (n, k): n^2 k (the triangle's n(n+1)/2 dot products of length k, twice)
    case BO_KIND_HERK:
      w.read = scale * d0 * d0 * double(dims[1]);
      break;
    default:
      break;
  }
  return w;
}

KernelWork kernel_work(const std::string& key, const int64_t* dims) { return kernel_work(find_key(key), dims); }

bool operator==(const DeviceInfo& a, const DeviceInfo& b) {
  return a.name == b.name && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor && a.sm_count == b.sm_count &&
         a.memory_gib == b.memory_gib;
}

bool operator==(const BandwidthPoint& a, const BandwidthPoint& b) { return a.bytes == b.bytes && a.gbs == b.gbs; }

bool operator==(const Tile& a, const Tile& b) {
  return a.at == b.at && a.config == b.config && a.rate == b.rate && a.time_us == b.time_us &&
         a.own_config == b.own_config && a.own_rate == b.own_rate && a.cublas_rate == b.cublas_rate &&
         a.model_rate == b.model_rate && a.candidates == b.candidates;
}

bool operator==(const KernelTable& a, const KernelTable& b) {
  return a.unit == b.unit && a.axes == b.axes && a.grid == b.grid && a.tiles == b.tiles;
}

bool operator==(const Table& a, const Table& b) {
  return a.device == b.device && a.toolkit == b.toolkit && a.driver == b.driver && a.cublas == b.cublas &&
         a.created == b.created && a.tuner == b.tuner && a.read == b.read && a.write == b.write &&
         a.kernels == b.kernels;
}

}  // namespace bo::tuning
