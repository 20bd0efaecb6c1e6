// When the model's staged rate follows the program's own large staged uploads (module API staged_gbs_seen): where the
// link's rates are the start-up's short measurement (no calibration of this GPU). On the lent H100 that measurement,
// 64 MiB beside a busy CPU BLAS, read 10.5-12.8 GB/s staged where the mix's factors of 256-512 MiB moved at about 28:
// uncalibrated dgetrs n = 8192 with one right-hand side stayed on the CPU (30 ms), its GPU side predicted at 46 ms and
// taking 18.5 staged, then 2.7 from a device copy.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>

namespace blasoffload::policy {

class StagedLink {
 public:
  // A rate within this share of the model's is left as it is: the rates are not that exact, and each change builds a
  // new model.
  static constexpr double kTolerance = 0.15;
  // The most changes a process makes (each model built is kept for the process's life: readers may still hold it).
  static constexpr int kMaxUpdates = 8;

  // Whether the module has timed uploads not yet looked at (one relaxed load: asked after every learned GPU call).
  bool news(std::int64_t samples) const { return samples > seen_.load(std::memory_order_relaxed); }

  // The module's answer (staged_gbs_seen): whether the model should now price staged copies at `gbs` instead of
  // `current_gbs`. The caller holds the lock that guards the link it changes.
  bool take(std::int64_t samples, double gbs, double current_gbs) {
    if (samples <= seen_.load(std::memory_order_relaxed)) return false;
    seen_.store(samples, std::memory_order_relaxed);
    if (!(gbs > 0) || !(current_gbs > 0) || std::fabs(gbs / current_gbs - 1.0) < kTolerance) return false;
    if (updates_ >= kMaxUpdates) return false;
    ++updates_;
    last_gbs_ = gbs;
    return true;
  }

  int updates() const { return updates_; }
  double last_gbs() const { return last_gbs_; }
  std::int64_t samples() const { return seen_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> seen_{0};
  int updates_ = 0;
  double last_gbs_ = 0;
};

}  // namespace blasoffload::policy
