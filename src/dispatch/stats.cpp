// Keeps every thread's counters reachable for the summary, merging a thread's counts when it exits.
#include "dispatch/stats.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "dispatch/cpu_blas.h"
#include "dispatch/exit_note.h"
#include "dispatch/log.h"
#include "offload/module_loader.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "scalapack/takeover.h"

namespace blasoffload {
namespace {

// Never destroyed: threads may still exit (and merge) while the process tears down.
std::mutex& registry_mutex() {
  static auto* m = new std::mutex();
  return *m;
}
std::vector<ThreadStats*>& registry() {
  static auto* v = new std::vector<ThreadStats*>();
  return *v;
}
ThreadStats& retired() {
  static auto* t = new ThreadStats();
  return *t;
}

void merge_into(ThreadStats& to, const ThreadStats& from) {
  for (std::size_t i = 0; i < kNumRoutines; ++i)
    to.r[i].zip(from.r[i], [](ThreadStats::Counter& d, const ThreadStats::Counter& s) { d.add(s.get()); });
}

// Owns a thread's block: registers it on construction, merges and unregisters it at thread exit.
struct ThreadSlot {
  ThreadStats* stats = new ThreadStats();
  ThreadSlot() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry().push_back(stats);
  }
  ~ThreadSlot() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    merge_into(retired(), *stats);
    auto& reg = registry();
    for (auto it = reg.begin(); it != reg.end(); ++it)
      if (*it == stats) {
        reg.erase(it);
        break;
      }
    delete stats;
  }
};

std::string human_bytes(std::uint64_t b) {
  char buf[32];
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

}  // namespace

ThreadStats& thread_stats() {
  static thread_local ThreadSlot slot;
  return *slot.stats;
}

void stats_reset_after_fork() {
  // Only the forking thread exists in the child; the mutex may have been held by a vanished thread.
  new (&registry_mutex()) std::mutex();
  auto zero = [](ThreadStats& t) {
    for (auto& r : t.r) r.zip(r, [](ThreadStats::Counter& c, const ThreadStats::Counter&) { c.reset(); });
  };
  for (ThreadStats* t : registry()) zero(*t);
  zero(retired());
}

void print_summary() {
  ThreadStats total;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    merge_into(total, retired());
    for (ThreadStats* t : registry()) merge_into(total, *t);
  }
  const Settings& s = settings();
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "blasoffload summary (pid %d, mode %s)\n", static_cast<int>(getpid()),
                mode_name(s.mode));
  out += line;
  // Where blasoffload loaded the library itself, the line says why ("loaded by blasoffload: the program links none").
  auto why = [](const std::string& w) { return w.empty() ? w : " (" + w + ")"; };
  out += "  CPU BLAS: " + (g_cpu.library.empty() ? std::string("(not looked up: no call needed it)") : g_cpu.library) +
         why(g_cpu.library_why) + "\n";
  if (!g_cpu.library.empty())
    out += "  CPU LAPACK: " +
           (g_cpu.lapack_library.empty() ? std::string("(none in the process when first looked up)")
                                         : g_cpu.lapack_library) +
           why(g_cpu.lapack_why) + "\n";
  if (!g_cpu.report.identity.empty()) out += "  CPU BLAS reports: " + g_cpu.report.identity + "\n";
  if (!g_cpu.report.advice.empty()) out += "  note: " + g_cpu.report.advice + "\n";
  out += "  GPU: " + gpu_status_line() + "\n";
  out += policy::summary();
  std::snprintf(line, sizeof line, "  %-8s %12s %12s %12s %9s %9s %11s %12s %12s\n", "routine", "calls", "cpu", "gpu",
                "fallback", "errors", "bytes", "cpu time(s)", "gpu time(s)");
  out += line;
  // Only the routines the program called, unless BLASOFFLOAD_SUMMARY_ROUTINES=all asks for every row.
  const char* rows = config_value("BLASOFFLOAD_SUMMARY_ROUTINES");
  const bool every_row = rows && std::string(rows) == "all";
  std::uint64_t intercepted = 0;
  for (std::size_t i = 0; i < kNumRoutines; ++i) {
    const auto& r = total.r[i];
    std::uint64_t cpu = r.calls[0].get(), gpu = r.calls[1].get();
    std::uint64_t calls = cpu + gpu + r.errors.get() + r.quick.get();
    intercepted += calls;
    if (calls == 0 && !every_row) continue;
    std::snprintf(line, sizeof line,
                  "  %-8s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %9" PRIu64 " %9" PRIu64 " %11s %12.4f %12.4f\n",
                  routine_name(static_cast<Routine>(i)), calls, cpu, gpu, r.fallbacks.get(), r.errors.get(),
                  human_bytes(r.bytes.get()).c_str(), r.ns[0].get() * 1e-9, r.ns[1].get() * 1e-9);
    out += line;
  }
  std::snprintf(line, sizeof line, "  total: %" PRIu64 " calls intercepted\n", intercepted);
  out += line;
#ifndef BLASOFFLOAD_ILP64
  out += scalapack::summary();
#endif
  if (intercepted == 0) out += "  note: " + nothing_intercepted_note() + "\n";
  log_raw(out);
}

}  // namespace blasoffload
