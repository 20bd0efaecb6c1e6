// blasoffload-calibrate's timing helpers, shared by the CPU BLAS and CPU LAPACK measurements: one call's median
// time, measured only while the machine is quiet (quiet.h), random operands, and one rate point of a shape class.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "policy/calibration.h"

namespace blasoffload::calibrate {

// One point's measurement: the median seconds per call, and whether the machine was quiet throughout.
struct Timing {
  double seconds = 0;
  bool quiet = false;
  std::string why;  // when not quiet: what ran beside it, or that the measuring stopped
};

// Median seconds per call of f(). `setup` (optional) runs before every call, untimed: it restores what the call
// overwrites (a factorization's matrix), so that each timed call does the same work on the same data. A measurement
// disturbed by other processes or steal (or whose calls spread too widely) is taken again once the machine is quiet,
// at most three times; if the machine does not become quiet within kWaitS, or three points in a row stay disturbed,
// measuring stops (busy() turns true and every later call returns at once, not quiet).
Timing time_call(const std::function<void()>& f, const std::function<void()>& setup = {});
// --quick: each point's timed calls need only a tenth of the time (the numbers are for tests, not for the policy).
void set_quick_timing(bool quick);

// Whether measuring stopped because the machine stayed busy, and the tallies for the tool's last lines.
bool busy();
struct Tally {
  int points = 0, retried = 0, dropped = 0;
  std::string last_disturbance;  // describe() of the last disturbed window
};
const Tally& tally();

template <class T = float>
std::vector<T> random_vector(size_t n, unsigned seed) {
  std::mt19937 r(seed);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

// Adds the point (size, size * work_per_unit / seconds / 1e9) to class `cls` (GFLOP/s or GB/s: the unit of the
// class's size) and prints it; a disturbed measurement is printed as left out and not added.
void add(policy::Calibration& c, const std::string& cls, double size, const Timing& t, double work_per_unit);

}  // namespace blasoffload::calibrate
