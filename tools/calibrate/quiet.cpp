// blasoffload-calibrate's view of what else runs on the machine (see quiet.h).
#include "quiet.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace blasoffload::calibrate {
namespace {

double seconds(const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); }

long cpus() {
  static const long n = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  return n;
}

double tick_s() {
  static const double t = 1.0 / double(std::max(1L, sysconf(_SC_CLK_TCK)));
  return t;
}

}  // namespace

MachineCounters read_counters() {
  MachineCounters c;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  c.wall = double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  c.own = seconds(ru.ru_utime) + seconds(ru.ru_stime);
  // The first line: cpu user nice system idle iowait irq softirq steal ... (ticks; guest time is inside user).
  if (std::FILE* f = std::fopen("/proc/stat", "r")) {
    unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
                    &softirq, &steal) == 8) {
      c.busy = double(user + nice + sys + irq + softirq) * tick_s();
      c.steal = double(steal) * tick_s();
    }
    std::fclose(f);
  }
  return c;
}

Disturbance between(const MachineCounters& a, const MachineCounters& b) {
  Disturbance d;
  d.seconds = std::max(1e-6, b.wall - a.wall);
  // Tick sampling attributes whole ticks; this process's own time is exact, so others' may read slightly negative.
  d.others = std::max(0.0, (b.busy - a.busy) - (b.own - a.own)) / d.seconds;
  d.steal = std::max(0.0, b.steal - a.steal) / d.seconds;
  return d;
}

bool Disturbance::quiet() const {
  // The machine's background (daemons, the kernel's threads) stays well under this; one other busy thread does not.
  const double allowed = std::max(0.25, 0.03 * double(cpus()));
  // Each CPU's counters advance by whole ticks: over a short window their rounding reads as load that is not there.
  const double rounding = 0.5 * std::sqrt(double(cpus())) * tick_s() / seconds;
  return others + steal <= allowed + rounding;
}

std::string Disturbance::describe() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "other processes %.2f cores, steal %.2f, over %.2f s", others, steal, seconds);
  return buf;
}

bool wait_for_quiet(double max_s, Disturbance* last) {
  const MachineCounters start = read_counters();
  for (;;) {
    const MachineCounters a = read_counters();
    usleep(500000);
    const MachineCounters b = read_counters();
    *last = between(a, b);
    if (last->quiet()) return true;
    if (b.wall - start.wall >= max_s) return false;
  }
}

}  // namespace blasoffload::calibrate
