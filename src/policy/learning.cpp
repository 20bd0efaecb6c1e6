// The adaptive corrections and bounded exploration of auto mode (learning.h): lock-free, allocation-free.
#include "policy/learning.h"

#include <algorithm>
#include <cmath>

namespace blasoffload::policy {

Learning::Learning() {
  for (int c = 0; c < kClasses; ++c)
    for (int b = 0; b < kBuckets; ++b) {
      for (int s = 0; s < 2; ++s) {
        corr_[c][b][s].store(1.0f, std::memory_order_relaxed);
        samples_[c][b][s].store(0, std::memory_order_relaxed);
      }
      credit_us_[c][b].store(0.0f, std::memory_order_relaxed);
    }
  for (int c = 0; c < kClasses; ++c)
    for (int s = 0; s < 2; ++s) first_seen_[c][s].store(0, std::memory_order_relaxed);
}

int Learning::bucket(double size) {
  const auto v = static_cast<unsigned long long>(std::min(std::max(size, 0.0), 1.8e19)) | 1ull;
  return std::min(kBuckets - 1, (63 - __builtin_clzll(v)) / 2);
}

bool Learning::explore(int cls, int bucket, double chosen_us, double other_us) {
  // Neither side long enough to be learned from: nothing to measure.
  if (!(chosen_us > 0) || !(other_us > 0) || std::max(chosen_us, other_us) < kLearnMinUs) return false;
  std::atomic<float>& credit = credit_us_[cls][bucket];
  // A try is charged at least a tenth of the chosen side's time: a near tie (the other side predicted within the
  // model's margin, or faster but not by enough) is tried at most every tenth call, not at every one.
  const double extra = std::max(kMinTryShare * chosen_us, other_us - chosen_us);
  // Concurrent callers may both add and both spend: the bound holds per caller, which is what a program sees.
  double c = credit.load(std::memory_order_relaxed) + kExploreShare * chosen_us;
  bool go = false;
  if (c >= extra) {
    c -= extra;
    go = true;
    explored_.fetch_add(1, std::memory_order_relaxed);
  }
  // Credit is kept to a few explorations' worth: a long run on one side does not buy a burst on the other.
  credit.store(float(std::min(c, 2.0 * extra + kExploreShare * chosen_us)), std::memory_order_relaxed);
  return go;
}

void Learning::observe(int cls, int bucket, int side, double predicted_us, double actual_us, bool after_gpu) {
  if (actual_us < kLearnMinUs || !(predicted_us > 0) || cls < 0 || cls >= kClasses || bucket < 0 || bucket >= kBuckets)
    return;
  if (side == 0 && after_gpu && actual_us > predicted_us) {
    // Not the CPU's rate but the switch's cost (kAfterGpuUs): the bucket's exploration pays it, so that trying the GPU
    // costs the program what the exploration share allows, slow CPU calls after the try included. One call is charged
    // at most a few of its predictions (one preemption must not stop the exploration for long).
    std::atomic<float>& credit = credit_us_[cls][bucket];
    const double charge = std::min(actual_us - predicted_us, kMaxSwitchCharge * predicted_us);
    credit.store(float(credit.load(std::memory_order_relaxed) - charge), std::memory_order_relaxed);
    return;
  }
  const std::uint32_t bit = 1u << bucket;
  if (!(first_seen_[cls][side].fetch_or(bit, std::memory_order_relaxed) & bit)) return;
  std::atomic<float>& corr = corr_[cls][bucket][side];
  std::atomic<std::uint16_t>& n = samples_[cls][bucket][side];
  const unsigned k = n.load(std::memory_order_relaxed);
  if (k < 0xffff) n.store(std::uint16_t(k + 1), std::memory_order_relaxed);
  // The prediction already carried the current correction: move part of the way (in log terms) toward what the
  // measurement says it should have been. Sample k (from 0) moves 1/(k+2) of the way, a quarter from the third on.
  const double cur = corr.load(std::memory_order_relaxed);
  double target = cur * actual_us / predicted_us;
  double step = 1.0 / double(std::min(k + 2, 4u));
  // The CPU side's prediction is the calibration of the same library: a CPU call far slower than it is mostly the
  // moment, not the rate (preempted, or its caches emptied by a GPU call's staging just before: on the lent H100 a
  // dtrsv n = 2048 after one on the GPU took 8.3 ms instead of 1.0). Taken at the usual step, one such call turned a
  // near tie to a GPU measured 2-4x slower, whose next CPU call was slow again (1.4x at that point over three rounds).
  // Upward, the CPU moves a quarter of the way to at most twice its correction: 19% a call at most.
  if (side == 0 && target > cur) {
    target = std::min(target, cur * kMaxCpuRise);
    step = 0.25;
  }
  const double lo = side ? kMinGpuCorrection : kMinCpuCorrection, hi = side ? kMaxGpuCorrection : kMaxCpuCorrection;
  const double next = std::min(hi, std::max(lo, cur * std::pow(target / cur, step)));
  corr.store(float(next), std::memory_order_relaxed);
  learned_[side].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace blasoffload::policy
