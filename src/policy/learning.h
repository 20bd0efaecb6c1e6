// What auto mode learns as a program runs: per shape class and size bucket, each side's measured/predicted correction,
// and the bounded exploration that keeps the side not chosen measured (see docs/policy.md).
#pragma once

#include <atomic>
#include <cstdint>

namespace blasoffload::policy {

class Learning {
 public:
  static constexpr int kClasses = 192;  // at least class_count(): checked by the policy's init
  static constexpr int kBuckets = 32;   // a factor of 4 in the class's size each
  static_assert(kBuckets <= 32, "first_seen_ keeps a bit per bucket");
  // Corrections stay within these factors of the calibration. Each side may turn out far slower or the CPU far faster
  // than predicted (a transfer or registration the model did not see, a CPU BLAS on many more cores than the built-in
  // defaults assume), and the decision must then follow; the step schedule in observe() keeps one outlier from going
  // far, and the exploration measures the other side again. Two bounds are tighter: the CPU is never taken as more
  // than 4x slower than calibrated (the policy's floors assume that much and no more), and the GPU never as more than
  // 4x faster (an optimistic GPU costs more than a pessimistic one).
  static constexpr double kMaxCpuCorrection = 4.0;
  static constexpr double kMinCpuCorrection = 1e-3;
  static constexpr double kMaxGpuCorrection = 1e3;
  static constexpr double kMinGpuCorrection = 0.25;
  // A CPU call slower than its prediction moves the CPU's correction a quarter of the way toward at most this factor
  // of it (observe(): the CPU's slow calls are mostly interference, not its rate).
  static constexpr double kMaxCpuRise = 2.0;
  // A CPU call right after a GPU call of the same thread measures the switch, not the CPU: on the lent H100, strtrs
  // n = 1024 with 64 right-hand sides took 1.2-4.6 ms on the CPU in the 10 ms after GPU calls of it, against 0.52-0.62
  // alone (its thread preempted 39-356 times, against 1-3, while the module's staging threads and OpenBLAS's shared the
  // cores), and spotrs 2.9-11.6 ms against 1.2. Learned at kMaxCpuRise, eight such calls raised the CPU's estimate
  // 2.5x and sent the rest of the point to a GPU that took 0.8-1.3 ms. Such a call is learned from only when faster
  // than predicted (interference only slows); a CPU truly slower shows in its calls outside this window. What such a
  // call took beyond its prediction is charged to the bucket's exploration credit: the switch is the try's cost.
  static constexpr double kAfterGpuUs = 20000;
  static constexpr double kMaxSwitchCharge = 4.0;  // the most such a call charges the exploration, in its predictions
  // Calls shorter than this are too noisy to learn from.
  static constexpr double kLearnMinUs = 20.0;
  // Exploration: the side not chosen is tried once its predicted extra time is covered by this share of the chosen
  // side's predicted time, summed over the bucket's calls. A bucket thus spends at most this share more than
  // its better side on trying the other (in expectation of the predictions), and a side whose corrections made it
  // lose is measured again now and then instead of never.
  static constexpr double kExploreShare = 0.01;
  static constexpr double kMinTryShare = 0.1;  // the least a try is charged, as a share of the chosen side's time

  Learning();

  // The bucket of a class's size measure (the cost model's prediction size).
  static int bucket(double size);

  // The current correction of one side (0 CPU, 1 GPU) of a class and bucket: predictions are multiplied by it.
  double correction(int cls, int bucket, int side) const {
    return corr_[cls][bucket][side].load(std::memory_order_relaxed);
  }

  // After a decision with both sides' corrected predictions (the chosen side's and the other's): whether this call
  // runs on the other side instead, to measure it. Adds the call's share to the bucket's exploration credit.
  bool explore(int cls, int bucket, double chosen_us, double other_us);

  // A measured call: `predicted_us` is the prediction it was decided with (its correction included). The first
  // call of a class and size bucket on a side is not learned from: its one-time costs (a library's first use, a handle,
  // thread start-up, and code loaded at a size's first call: cuBLAS's ssyrk n = 1024 took 10.7 ms at its first call on
  // the lent H100, 1.0-1.3 ms after, where n = 256 had run before); then a running mean in log terms over the first
  // samples, and a quarter of the way after, so that a mispredicted bucket corrects itself within a call or two, yet
  // one outlier among many moves it little. A CPU slower than predicted moves more slowly (kMaxCpuRise). after_gpu: a
  // CPU call that started within kAfterGpuUs of the end of the calling thread's last GPU call; if slower than
  // predicted, it is not learned from (see kAfterGpuUs).
  void observe(int cls, int bucket, int side, double predicted_us, double actual_us, bool after_gpu = false);

  // Calls learned from, per side (the summary).
  std::uint64_t learned(int side) const { return learned_[side].load(std::memory_order_relaxed); }
  std::uint64_t explored() const { return explored_.load(std::memory_order_relaxed); }

 private:
  std::atomic<float> corr_[kClasses][kBuckets][2];
  std::atomic<std::uint16_t> samples_[kClasses][kBuckets][2];
  std::atomic<float> credit_us_[kClasses][kBuckets];
  std::atomic<std::uint32_t> first_seen_[kClasses][2];  // per class and side, a bit per bucket
  std::atomic<std::uint64_t> learned_[2] = {};
  std::atomic<std::uint64_t> explored_{0};
};

}  // namespace blasoffload::policy
