// Per-thread call counters (no shared atomics on the call path) and the exit summary built from them.
#pragma once

#include <atomic>
#include <cstdint>

#include "dispatch/routine.h"

namespace blasoffload {

enum class Where { kCpu = 0, kGpu = 1 };

// One thread's counters. Only the owning thread writes; the summary reads them with relaxed loads, so a
// plain load+store (not fetch_add) is enough and costs what a plain increment costs.
struct ThreadStats {
  struct Counter {
    std::atomic<std::uint64_t> v{0};
    void add(std::uint64_t d) { v.store(v.load(std::memory_order_relaxed) + d, std::memory_order_relaxed); }
    std::uint64_t get() const { return v.load(std::memory_order_relaxed); }
    void reset() { v.store(0, std::memory_order_relaxed); }
  };
  struct PerRoutine {
    Counter calls[2];   // by Where
    Counter ns[2];      // wall time of the calls, by Where
    Counter bytes;      // operand bytes the calls referenced
    Counter errors;     // calls rejected with XERBLA
    Counter quick;      // reference quick returns (nothing to do)
    Counter fallbacks;  // GPU attempts that ended on the CPU

    // Calls f(mine, theirs) for every counter of this and another block: the one list of the fields.
    template <class F>
    void zip(const PerRoutine& o, F&& f) {
      for (int w = 0; w < 2; ++w) {
        f(calls[w], o.calls[w]);
        f(ns[w], o.ns[w]);
      }
      f(bytes, o.bytes);
      f(errors, o.errors);
      f(quick, o.quick);
      f(fallbacks, o.fallbacks);
    }
  } r[kNumRoutines];
};

// This thread's counters (registered on first use).
ThreadStats& thread_stats();

// Called by the fork() child handler: the child starts its own count.
void stats_reset_after_fork();

// Builds the summary table from all threads' counters and writes it to the log.
void print_summary();

}  // namespace blasoffload
