// Remembers, per routine, size and option letters, that the cost model chose the CPU by far, so that the next calls
// alike take the CPU after one table lookup instead of the model's evaluation (see docs/policy.md). The
// policy leaves out calls with an operand a device copy could serve (their uses must reach the module's counts).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "offload/cuda_module_api.h"

namespace blasoffload::policy {

// Why: the evaluation (the GPU kernel's estimate, residency queries, rates interpolated in log terms, two clock reads
// and a learning step) costs hundreds of nanoseconds, and a LAPACK driver running on the CPU makes hundreds of BLAS
// calls per call just above the policy's floors (reference geqrf at n = 256: about 500 per call, 1.4 ms in all on a
// 16-core OpenBLAS): a calibrated model, whose floors are lower, made such drivers 10-25% slower than the CPU alone.
class DecisionMemo {
 public:
  static constexpr int kRecheck = 32;        // every 32nd call alike is decided in full again (learning, exploration)
  static constexpr double kClearFactor = 2;  // "by far": the GPU predicted at least twice the CPU's time

  // The key of a call: its routine, its first option letter, its work and its smallest dimension, each in factors of 2
  // (calls alike have predictions alike: a key's calls are within a factor 2 in work).
  static std::uint32_t key(const bo_call& c, double work) {
    std::int64_t small = 0;
    for (std::int64_t d : {c.m, c.n, c.k})
      if (d > 0 && (small == 0 || d < small)) small = d;
    const std::uint32_t w = std::uint32_t(std::min(63.0, std::max(0.0, std::log2(std::max(work, 1.0)))));
    const std::uint32_t s = std::uint32_t(63 - __builtin_clzll(std::uint64_t(small) | 1u));
    const std::uint32_t op = static_cast<unsigned char>(c.op[0]);
    return ((((std::uint32_t(c.routine) & 0xff) << 8 | op) << 6 | w) << 6 | s) + 1;  // 0: an empty slot
  }

  // Whether this call takes the CPU without the model (then `cpu_us`/`gpu_us` are the numbers it was remembered with).
  bool cpu_without_model(std::uint32_t key, float* cpu_us, float* gpu_us) {
    Entry& e = slots_[index(key)];
    const unsigned left = e.left.load(std::memory_order_relaxed);
    if (left == 0 || e.key.load(std::memory_order_relaxed) != key) return false;
    e.left.store(std::uint8_t(left - 1), std::memory_order_relaxed);  // a race loses a count: the check comes sooner
    *cpu_us = e.cpu_us.load(std::memory_order_relaxed);
    *gpu_us = e.gpu_us.load(std::memory_order_relaxed);
    return true;
  }

  // Counts a call taken without the model, for the summary (only when one is printed: a shared counter on the
  // per-call path costs multithreaded programs cache-line traffic for nothing otherwise).
  void count_remembered() { remembered_.fetch_add(1, std::memory_order_relaxed); }

  // After a full decision: remember it if it was the CPU by far, else forget the key. Two keys sharing a slot take
  // turns (threads racing on one slot can at worst send one call to the CPU on another key's numbers: a right
  // result, decided less well).
  void decided(std::uint32_t key, bool cpu, float cpu_us, float gpu_us) {
    Entry& e = slots_[index(key)];
    if (cpu && cpu_us > 0 && gpu_us >= kClearFactor * cpu_us) {
      e.left.store(0, std::memory_order_relaxed);
      e.key.store(key, std::memory_order_relaxed);
      e.cpu_us.store(cpu_us, std::memory_order_relaxed);
      e.gpu_us.store(gpu_us, std::memory_order_relaxed);
      e.left.store(kRecheck - 1, std::memory_order_relaxed);
    } else if (e.key.load(std::memory_order_relaxed) == key) {
      e.left.store(0, std::memory_order_relaxed);
    }
  }

  std::uint64_t remembered() const { return remembered_.load(std::memory_order_relaxed); }

 private:
  static constexpr unsigned kSlots = 4096;
  static unsigned index(std::uint32_t key) { return (key * 2654435761u) >> 20; }  // Fibonacci hashing: 12 bits
  struct Entry {
    std::atomic<std::uint32_t> key{0};
    std::atomic<std::uint8_t> left{0};
    std::atomic<float> cpu_us{0}, gpu_us{0};
  };
  Entry slots_[kSlots];
  std::atomic<std::uint64_t> remembered_{0};
};

}  // namespace blasoffload::policy
