// blasoffload-calibrate's timing helpers (see measure.h).
#include "measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "policy/shape_classes.h"
#include "quiet.h"

namespace blasoffload::calibrate {

namespace {
double g_min_seconds = 0.2;  // timed seconds per point
// The shortest window whose other-process and steal reading means something: /proc/stat counts whole ticks (10 ms).
double g_min_window_s = 0.25;
constexpr int kTries = 3;          // measurements of a point before it is left out
constexpr int kDroppedInARow = 3;  // points left out in a row before measuring stops
constexpr double kWaitS = 10;      // for the machine to become quiet before a point is measured again
constexpr double kMaxSpread = 3;   // the timed calls' third quartile over their first: beyond it, not steady
Tally g_tally;
int g_dropped_in_a_row = 0;
bool g_busy = false;
}  // namespace

void set_quick_timing(bool quick) {
  g_min_seconds = quick ? 0.02 : 0.2;
  g_min_window_s = quick ? 0.15 : 0.25;
}

bool busy() { return g_busy; }
const Tally& tally() { return g_tally; }

// Warm-up calls (threads spun up, pages touched), then calls until 5 and 0.2 s of them (a multi-threaded CPU
// library is noisy on short calls; an underestimated CPU sends calls to the GPU that lose there), and until the window
// is long enough to read what ran beside it. A call of a second or more is steady: one warm-up and 3 timed calls keep
// the largest sizes (a factorization of order 8192 takes seconds on a few cores) from dominating the tool's run time.
Timing time_call(const std::function<void()>& f, const std::function<void()>& setup) {
  using C = std::chrono::steady_clock;
  Timing out;
  if (g_busy) {
    out.why = "not measured: measuring stopped (the machine stayed busy)";
    return out;
  }
  auto once = [&] {
    if (setup) setup();
    const auto a = C::now();
    f();
    return std::chrono::duration<double>(C::now() - a).count();
  };
  ++g_tally.points;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    if (attempt > 0) {
      ++g_tally.retried;
      Disturbance d;
      if (!wait_for_quiet(kWaitS, &d)) {
        g_busy = true;
        g_tally.last_disturbance = d.describe();
        out.why =
            "the machine did not become quiet within " + std::to_string(int(kWaitS)) + " s (" + d.describe() + ")";
        break;
      }
    }
    const MachineCounters start = read_counters();
    const bool slow = once() >= 1.0;
    if (!slow) once();
    const size_t at_least = slow ? 3 : 5;
    std::vector<double> t;
    double total = 0;
    while (t.size() < at_least || (total < g_min_seconds && t.size() < 2000) ||
           (read_counters().wall - start.wall < g_min_window_s && t.size() < 20000)) {
      t.push_back(once());
      total += t.back();
    }
    const Disturbance d = between(start, read_counters());
    std::sort(t.begin(), t.end());
    out.seconds = t[t.size() / 2];
    const double spread = t[t.size() * 3 / 4] / std::max(t[t.size() / 4], 1e-12);
    out.quiet = d.quiet() && spread <= kMaxSpread;
    if (out.quiet) break;
    g_tally.last_disturbance = d.describe();
    char buf[64];
    std::snprintf(buf, sizeof buf, ", calls spread %.1fx", spread);
    out.why = d.describe() + buf;
  }
  if (out.quiet) {
    g_dropped_in_a_row = 0;
  } else {
    ++g_tally.dropped;
    if (++g_dropped_in_a_row >= kDroppedInARow) g_busy = true;
  }
  return out;
}

void add(policy::Calibration& c, const std::string& cls, double size, const Timing& t, double work_per_unit) {
  const int i = policy::class_index(cls);
  const char* unit = i >= 0 && policy::class_by_bytes(i) ? "GB/s" : "GFLOP/s";
  if (!t.quiet) {
    static bool said_stopped = false;  // once measuring stopped, every later point is left out: said once
    if (!(busy() && said_stopped))
      std::fprintf(stderr, "  %-13s size %-12.4g left out: %s\n", cls.c_str(), size, t.why.c_str());
    said_stopped = busy();
    return;
  }
  c.cpu_rates[cls].push_back({size, size * work_per_unit / t.seconds / 1e9});
  std::fprintf(stderr, "  %-13s size %-12.4g %10.2f %s\n", cls.c_str(), size, c.cpu_rates[cls].back().rate, unit);
}

}  // namespace blasoffload::calibrate
