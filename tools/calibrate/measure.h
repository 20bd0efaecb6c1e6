// blasoffload-calibrate's timing helpers, shared by the CPU BLAS and CPU LAPACK measurements: one call's median
// time, random operands, and one rate point of a shape class.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "policy/calibration.h"

namespace blasoffload::calibrate {

// Median seconds per call of f(). `setup` (optional) runs before every call, untimed: it restores what the call
// overwrites (a factorization's matrix), so that each timed call does the same work on the same data.
double time_call(const std::function<void()>& f, const std::function<void()>& setup = {});
// --quick: each point's timed calls need only a tenth of the time (the numbers are for tests, not for the policy).
void set_quick_timing(bool quick);
// --auto (started by the library in the background): each point's timed calls need half the time, and SizeBound
// stops a class's sizes where the next would take too long or too much memory.
void set_auto_bounds(bool on);

// One class's ascending sizes under --auto: allow(work, bytes) says whether to measure the next size, predicting its
// time from the previous size's (measured from one allow() to the next) scaled by the growth of the work, and
// refusing operands over a bound (a background process must not take a large share of memory). The curve of a
// class stopped early is clamped at its largest measured size (Calibration::rate). Always true without --auto.
class SizeBound {
 public:
  bool allow(double work, double bytes);

 private:
  double last_work_ = 0, last_start_ = -1;
  bool stopped_ = false;
};

template <class T = float>
std::vector<T> random_vector(size_t n, unsigned seed) {
  std::mt19937 r(seed);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

// Adds the point (size, size * work_per_unit / seconds / 1e9) to class `cls` (GFLOP/s or GB/s: the unit of the
// class's size) and prints it.
void add(policy::Calibration& c, const std::string& cls, double size, double seconds, double work_per_unit);

}  // namespace blasoffload::calibrate
