// Whether blasoffload-calibrate measured on a quiet machine: the CPU time other processes and the host (steal) took
// while a measurement ran, from /proc/stat against this process's own CPU time, and a wait for the machine to be quiet.
//
// Why: a threaded CPU BLAS waits for its slowest thread, and any other runnable process takes slices from one; a
// calibration measured beside another program's OpenBLAS read rates 300-3800x too low (0.0003 of an idle run's at
// worst) and every later program trusted them. What disturbs a measurement is visible as other processes' CPU time or
// steal during it, so a measurement is kept only when those stayed below a small share of the machine.
#pragma once

#include <string>

namespace blasoffload::calibrate {

// The machine's counters at one moment (cumulative seconds).
struct MachineCounters {
  double wall = 0;   // monotonic clock
  double busy = 0;   // every CPU's non-idle time (user, nice, system, irq, softirq), all processes
  double steal = 0;  // time the host ran something else on this virtual machine's CPUs
  double own = 0;    // this process's CPU time, all its threads (the CPU BLAS's included)
};
MachineCounters read_counters();

// What ran beside this process between two readings, in cores (CPU-seconds per second).
struct Disturbance {
  double others = 0, steal = 0, seconds = 0;
  // Within the allowance: other processes and steal together under max(0.25, 3% of the CPUs) of a core, plus the
  // counters' tick rounding over a window this long.
  bool quiet() const;
  std::string describe() const;  // "other processes 1.93 cores, steal 0.00 over 0.41 s"
};
Disturbance between(const MachineCounters& a, const MachineCounters& b);

// Sleeps in windows of half a second until one is quiet; false if none was within `max_s`. `last` gets the last
// window's reading.
bool wait_for_quiet(double max_s, Disturbance* last);

}  // namespace blasoffload::calibrate
