// The link measured at the start-up and followed on the program's uploads (see measured_link.h).
#include "policy/measured_link.h"

#include <cmath>
#include <cstdio>

namespace blasoffload::policy {

void MeasuredLink::set(const bo_cuda_rates& r, double ms) {
  rates_ = r;
  ms_ = ms;
  startup_staged_gbs_ = r.pageable_gbs;
  measured_.store(true, std::memory_order_release);
}

void MeasuredLink::apply(Calibration* c) const {
  if (!measured()) return;
  c->h2d_gbs = rates_.h2d_gbs;
  c->d2h_gbs = rates_.d2h_gbs;
  c->pageable_gbs = rates_.pageable_gbs;
}

bool MeasuredLink::follow(std::int64_t samples, double gbs, double* was) {
  if (!measured() || samples <= seen_.load(std::memory_order_relaxed)) return false;
  seen_.store(samples, std::memory_order_relaxed);
  const double current = rates_.pageable_gbs;
  if (!(gbs > 0) || !(current > 0) || std::fabs(gbs / current - 1.0) < kTolerance) return false;
  if (updates_ >= kMaxUpdates) return false;
  ++updates_;
  *was = current;
  rates_.pageable_gbs = gbs;
  return true;
}

std::string MeasuredLink::summary() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!measured()) return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "  GPU link measured at start-up (no calibration of this GPU): %.1f GB/s to it, %.1f back, %.1f "
                "staged, in %.0f ms\n",
                rates_.h2d_gbs, rates_.d2h_gbs, startup_staged_gbs_, ms_);
  std::string out = line;
  if (updates_ > 0) {
    std::snprintf(line, sizeof line,
                  "  staged copies priced at %.1f GB/s, what the program's large staged uploads reached (%lld timed, "
                  "%d changes)\n",
                  rates_.pageable_gbs, static_cast<long long>(seen_.load(std::memory_order_relaxed)), updates_);
    out += line;
  }
  return out;
}

}  // namespace blasoffload::policy
