// What the calling thread's current module call spends on one-time costs: growing its buffers, registering host
// memory, opening a vendor library or creating a handle, loading a kernel at its first launch. The policy's
// predictions leave these out, so the module reports them with each call (cuda_module_api.h last_one_time_us) and
// learning leaves them out too: otherwise the first calls of a growing program teach it a GPU many times slower
// than it is. Header-only, no CUDA: the kernels and the module both time their one-time work with it.
#pragma once

#include <time.h>

namespace bo::one_time {

namespace detail {
inline thread_local double t_us = 0;  // this thread's current call, so far
inline thread_local int t_depth = 0;  // timers open on this thread: only the outermost counts
inline double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}
}  // namespace detail

// At the start of a module call.
inline void reset() { detail::t_us = 0; }
// One-time costs of the thread's current (or last) call, in microseconds.
inline double spent_us() { return detail::t_us; }

// Adds its lifetime to the thread's one-time costs when active; a timer inside another adds nothing (counted once).
class Timer {
 public:
  explicit Timer(bool active = true) : active_(active), outer_(active && detail::t_depth++ == 0) {
    if (outer_) t0_ = detail::now_us();
  }
  ~Timer() {
    if (!active_) return;
    --detail::t_depth;
    if (outer_) detail::t_us += detail::now_us() - t0_;
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  bool active_, outer_;
  double t0_ = 0;
};

}  // namespace bo::one_time
