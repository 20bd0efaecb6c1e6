// blasoffload-calibrate's timing helpers (see measure.h).
#include "measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "policy/shape_classes.h"

namespace blasoffload::calibrate {

namespace {
double g_min_seconds = 0.2;  // timed seconds per point
bool g_auto = false;
// --auto: a size whose measuring is predicted to take longer than this is not measured, nor any larger one; nor
// operands larger than kAutoMaxBytes.
constexpr double kAutoMaxPointS = 3.0;
constexpr double kAutoMaxBytes = 512.0 * 1024 * 1024;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

void set_quick_timing(bool quick) { g_min_seconds = quick ? 0.02 : g_auto ? 0.1 : 0.2; }

void set_auto_bounds(bool on) {
  g_auto = on;
  if (on && g_min_seconds > 0.1) g_min_seconds = 0.1;
}

bool SizeBound::allow(double work, double bytes) {
  if (!g_auto) return true;
  if (stopped_) return false;
  const double t = now_s();
  const bool ok = bytes <= kAutoMaxBytes &&
                  (last_start_ < 0 || last_work_ <= 0 || (t - last_start_) * (work / last_work_) <= kAutoMaxPointS);
  if (!ok) {
    stopped_ = true;  // and every larger size of the class
    return false;
  }
  last_work_ = work;
  last_start_ = t;
  return true;
}

// Warm-up calls (threads spun up, pages touched), then calls until 5 and 0.2 s of them (a multi-threaded CPU
// library is noisy on short calls; an underestimated CPU sends calls to the GPU that lose there). A call of a second
// or more is steady: one warm-up and 3 timed calls keep the largest sizes (a factorization of order 8192 takes
// seconds on a few cores) from dominating the tool's run time.
double time_call(const std::function<void()>& f, const std::function<void()>& setup) {
  using C = std::chrono::steady_clock;
  auto once = [&] {
    if (setup) setup();
    const auto a = C::now();
    f();
    return std::chrono::duration<double>(C::now() - a).count();
  };
  const bool slow = once() >= 1.0;
  if (!slow) once();
  const size_t at_least = slow ? 3 : 5;
  std::vector<double> t;
  double total = 0;
  while (t.size() < at_least || (total < g_min_seconds && t.size() < 2000)) {
    t.push_back(once());
    total += t.back();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void add(policy::Calibration& c, const std::string& cls, double size, double seconds, double work_per_unit) {
  c.cpu_rates[cls].push_back({size, size * work_per_unit / seconds / 1e9});
  const int i = policy::class_index(cls);
  std::fprintf(stderr, "  %-13s size %-12.4g %10.2f %s\n", cls.c_str(), size, c.cpu_rates[cls].back().rate,
               i >= 0 && policy::class_by_bytes(i) ? "GB/s" : "GFLOP/s");
}

}  // namespace blasoffload::calibrate
