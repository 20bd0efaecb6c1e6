// The consistency checks of a policy file's rates (see calibration_checks.h).
#include "policy/calibration_checks.h"

#include <cmath>
#include <cstdio>

#include "policy/shape_classes.h"

namespace blasoffload::policy {
namespace {

// No CPU computes or streams this fast: a hand-edited or corrupted value.
constexpr double kMaxGflops = 1e5, kMaxGbs = 2e4;
// Within a class a rate may fall as the size grows (caches, memory bandwidth: gemv 150 -> 110 GB/s, getrs with 256
// right-hand sides 303 -> 209 GFLOP/s on a 16-core OpenBLAS), never by this factor from one measured size to the next.
constexpr double kMaxFall = 8;
// Against the same precision's reference class at the same size, undisturbed calibrations of OpenBLAS (16 threads,
// its own LAPACK) and of the reference BLAS read at most about 18x slower (dgetrf at n = 128, its threads' start-up
// against gemm's) and, from about 1e9 flops (n around 1000) where every routine is mostly gemm or streaming, at most
// about 9x (getrs with 64 right-hand sides). Disturbed ones read 300-3800x.
constexpr double kMaxBelowSmall = 100, kMaxBelowLarge = 20, kLargeFlops = 1e9;
// The reference class itself is suspect when most other classes of its precision read this much faster than it at
// their own sizes: no routine outruns gemm (or a byte class gemv) by that much on one CPU.
constexpr double kMaxAboveReference = 8;
// No point outruns its reference class at its size by this much: a rate read this high is a timing artefact (an old
// tool's strsv n = 1024 at 3120 GB/s, where gemv reads 50).
constexpr double kMaxAbovePoint = 20;

template <class... A>
std::string fmt(const char* f, A... a) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

std::string point_text(const std::string& cls, const RatePoint& p, bool bytes) {
  return cls + fmt(bytes ? " at %.3g bytes: %.3g GB/s" : " at %.3g flops: %.3g GFLOP/s", p.size, p.rate);
}

// The class's unit: 1 bytes, 0 flops, -1 a class this version does not know (a newer tool's: not checked, not used).
int by_bytes(const std::string& cls) {
  const int i = class_index(cls);
  return i < 0 ? -1 : class_by_bytes(i) ? 1 : 0;
}

bool reference(const std::string& cls) { return cls.substr(1) == "gemm.square" || cls.substr(1) == "gemv.n"; }

// Points of the reference classes (`refs`) or of the others: absurd values, and falls within the class (the later,
// lower point goes: a rate read too high is the other classes' business, against their reference).
void within_classes(Calibration* c, bool refs, std::vector<Rejection>* out) {
  for (auto& [cls, pts] : c->cpu_rates) {
    if (by_bytes(cls) < 0 || reference(cls) != refs) continue;
    const bool bytes = by_bytes(cls) == 1;
    std::vector<RatePoint> kept;
    for (const RatePoint& p : pts) {
      if (p.rate > (bytes ? kMaxGbs : kMaxGflops)) {
        out->push_back({point_text(cls, p, bytes), "faster than any CPU"});
      } else if (!kept.empty() && p.rate * kMaxFall < kept.back().rate) {
        out->push_back({point_text(cls, p, bytes),
                        fmt("%.0fx below the same class at the next smaller size (%.3g); at most %.0fx is consistent",
                            kept.back().rate / p.rate, kept.back().rate, kMaxFall)});
      } else {
        kept.push_back(p);
      }
    }
    pts = std::move(kept);
  }
}

// Each precision's reference class against the others of its kind, then the others against it.
void against_reference(Calibration* c, char prec, bool bytes, std::vector<Rejection>* out) {
  const std::string ref = std::string(1, prec) + (bytes ? "gemv.n" : "gemm.square");
  auto rit = c->cpu_rates.find(ref);
  if (rit == c->cpu_rates.end() || rit->second.empty()) return;
  auto others = [&](auto&& f) {
    for (auto& [cls, pts] : c->cpu_rates)
      if (cls != ref && cls[0] == prec && by_bytes(cls) == int(bytes)) f(cls, pts);
  };
  int points = 0, above = 0;
  others([&](const std::string&, const std::vector<RatePoint>& pts) {
    for (const RatePoint& p : pts) {
      ++points;
      above += p.rate > kMaxAboveReference * c->rate(ref, p.size);
    }
  });
  if (points >= 4 && 2 * above > points) {
    out->push_back({ref + " (every size)", fmt("%d of %d points of the other classes read over %.0fx faster than it at "
                                               "their sizes: it was measured too slow",
                                               above, points, kMaxAboveReference)});
    rit->second.clear();
    return;
  }
  others([&](const std::string& cls, std::vector<RatePoint>& pts) {
    std::vector<RatePoint> kept;
    for (const RatePoint& p : pts) {
      const double limit = !bytes && p.size >= kLargeFlops ? kMaxBelowLarge : kMaxBelowSmall;
      const double below = c->rate(ref, p.size) / p.rate;
      if (below * kMaxAbovePoint < 1)
        out->push_back({point_text(cls, p, bytes), fmt("%.0fx above %s at that size; at most %.0fx is consistent",
                                                       1 / below, ref.c_str(), kMaxAbovePoint)});
      else if (below > limit)
        out->push_back(
            {point_text(cls, p, bytes),
             fmt("%.0fx below %s at that size; an undisturbed CPU reads at most %.0fx", below, ref.c_str(), limit)});
      else
        kept.push_back(p);
    }
    pts = std::move(kept);
  });
}

}  // namespace

bool plausible_gpu(double h2d_gbs, double d2h_gbs, double pageable_gbs, std::string* why) {
  // From a PCIe 3 x4 link (about 3 GB/s) to NVLink-C2C (about 450 GB/s each way), with room; staging copies through
  // pinned buffers cannot beat the DMA they feed by much.
  auto in = [&](const char* name, double v, double lo, double hi) {
    if (v >= lo && v <= hi) return true;
    *why = fmt("%s %.3g GB/s outside [%.3g, %.3g]", name, v, lo, hi);
    return false;
  };
  return in("h2d_gbs", h2d_gbs, 0.5, 2000) && in("d2h_gbs", d2h_gbs, 0.5, 2000) &&
         in("pageable_gbs", pageable_gbs, 0.1, 2 * std::fmax(h2d_gbs, d2h_gbs));
}

namespace {
// The first GPU value out of range, or "". A tiny call costs at least a launch and a synchronisation (microseconds),
// a start-up at least a context.
std::string gpu_side_problem(const Calibration& c) {
  std::string why;
  if (!plausible_gpu(c.h2d_gbs, c.d2h_gbs, c.pageable_gbs, &why)) return why;
  if (!(c.call_overhead_us >= 1 && c.call_overhead_us <= 1e6))
    return fmt("call_overhead_us %.3g outside [1, 1e6]", c.call_overhead_us);
  if (!(c.copy_latency_us <= 2e4)) return fmt("copy_latency_us %.3g over 2e4", c.copy_latency_us);
  if (!(c.init_ms >= 1 && c.init_ms <= 1.2e5)) return fmt("init_ms %.3g outside [1, 1.2e5]", c.init_ms);
  return "";
}
}  // namespace

std::vector<Rejection> reject_inconsistent(Calibration* c) {
  std::vector<Rejection> out;
  within_classes(c, true, &out);
  for (char prec : {'s', 'd'})
    for (bool bytes : {false, true}) against_reference(c, prec, bytes, &out);
  within_classes(c, false, &out);
  for (auto it = c->cpu_rates.begin(); it != c->cpu_rates.end();)
    it = it->second.empty() ? c->cpu_rates.erase(it) : std::next(it);
  if (!c->gpu.empty())
    if (const std::string why = gpu_side_problem(*c); !why.empty()) {
      out.push_back({"the GPU side (" + c->gpu + ")", why + ": the built-in GPU numbers are used"});
      c->gpu.clear();
    }
  return out;
}

std::string describe(const Rejection& r) { return r.what + " (" + r.why + ")"; }

}  // namespace blasoffload::policy
