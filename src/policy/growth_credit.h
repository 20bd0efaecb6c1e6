// Growing the module's staging buffers, amortised per shape class and size bucket: a GPU call that would first
// allocate more device and pinned memory (the module's growth_us: pinning costs about 0.4 ns a byte, hundreds of
// milliseconds for a large operand) runs on the CPU until the gains its class and size were predicted meanwhile cover
// that cost, the way the start-up is amortised. So a program that makes a few such calls never pays for buffers only
// many calls would repay, and one that makes many pays once, after at most that cost in gains forgone.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "offload/cuda_module_api.h"
#include "policy/learning.h"
#include "policy/policy.h"

namespace blasoffload::policy {

class GrowthCredit {
 public:
  // A GPU-worthy call of class `cls` and bucket `bucket`, predicted to gain `gain_us` on the GPU, whose GPU run would
  // first grow the buffers for `growth_us`: whether it runs on the CPU instead. The gains of deferred calls add up;
  // the first call whose sum covers the growth goes to the GPU and pays it. A bucket that paid a growth defers again
  // only for one more than twice as large: the module's estimate errs high (an operand's device copy spares its
  // share), and an estimate that does not come true must not keep a bucket off the GPU.
  bool defer(int cls, int bucket, double gain_us, double growth_us) {
    if (!(growth_us > 0) || cls < 0 || cls >= kClasses || bucket < 0 || bucket >= kBuckets) return false;
    if (growth_us <= 2.0 * double(paid_[cls][bucket].load(std::memory_order_relaxed))) return false;
    std::atomic<float>& credit = credit_[cls][bucket];
    const double have = double(credit.load(std::memory_order_relaxed)) + std::max(0.0, gain_us);
    if (have >= growth_us) {
      credit.store(0, std::memory_order_relaxed);
      paid_[cls][bucket].store(float(growth_us), std::memory_order_relaxed);
      paid_n_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    credit.store(float(have), std::memory_order_relaxed);
    deferred_n_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  // A decision for the GPU whose call would stage `staged_bytes` through the module's generic path (0 off it): turned
  // to the CPU (Reason::kGrowing) while defer() says so for what the module says growing its buffers would cost.
  void defer_call(const bo_cuda_module* m, double staged_bytes, Decision* d) {
    if (!m || d->target != Target::kGpu || d->cpu_share != 0 || !(staged_bytes > 0)) return;
    const double grow = m->growth_us(staged_bytes);
    if (grow > 0 && defer(d->cls, d->bucket, double(d->cpu_us) - double(d->gpu_us), grow)) {
      d->target = Target::kCpu;
      d->reason = Reason::kGrowing;
      d->growth_us = float(grow);
    }
  }
  // The gains a bucket has gathered toward its next growth (the decision log).
  double credit_us(int cls, int bucket) const { return double(credit_[cls][bucket].load(std::memory_order_relaxed)); }
  std::uint64_t deferred() const { return deferred_n_.load(std::memory_order_relaxed); }
  std::uint64_t paid() const { return paid_n_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kClasses = Learning::kClasses, kBuckets = Learning::kBuckets;
  std::atomic<float> credit_[kClasses][kBuckets] = {};
  std::atomic<float> paid_[kClasses][kBuckets] = {};
  std::atomic<std::uint64_t> deferred_n_{0}, paid_n_{0};
};

}  // namespace blasoffload::policy
