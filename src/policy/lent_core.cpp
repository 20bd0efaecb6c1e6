// Lends one of the CPU BLAS's threads to our background work (see lent_core.h for why and how).
#include "policy/lent_core.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <new>

#include "dispatch/cpu_blas.h"
#include "dispatch/log.h"
#include "policy/cpu_blas_probe.h"
#include "policy/policy.h"

namespace blasoffload::policy {

std::atomic<int> g_core_sync{0};

namespace {

using GetInt = int (*)();
using SetInt = void (*)(int);

struct OpenBlasThreads {
  GetInt get = nullptr, parallel = nullptr;
  SetInt set = nullptr;
};

// OpenBLAS's thread controls, in the library the sgemm calls go to.
OpenBlasThreads openblas_threads() {
  const void* sgemm = g_cpu.fortran[int(Family::std)][index(Routine::sgemm)];
  OpenBlasThreads t;
  t.get = reinterpret_cast<GetInt>(cpu_blas_function(sgemm, "openblas_get_num_threads"));
  t.parallel = reinterpret_cast<GetInt>(cpu_blas_function(sgemm, "openblas_get_parallel"));
  t.set = reinterpret_cast<SetInt>(cpu_blas_function(sgemm, "openblas_set_num_threads"));
  return t;
}

int cpus_of_process() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return int(sysconf(_SC_NPROCESSORS_ONLN));
  return CPU_COUNT(&set);
}

using Clock = std::chrono::steady_clock;

bool g_can = false;  // set once by lent_core_init, before any want
OpenBlasThreads g_threads;
int g_saved = 0;  // OpenBLAS's thread count when judged; lent only while the program keeps it
std::atomic<int> g_wanted{0};
std::mutex g_mu;  // the rest: program threads in sync_core, the summary
bool g_lent = false;
Clock::time_point g_lent_at;
int g_times = 0;
double g_lent_s = 0;

}  // namespace

void lent_core_init(const Settings& s) {
  // Frozen decisions promise the same bits every run: OpenBLAS's threaded reductions (dot products, norms) add in
  // another order with another thread count, and the windows depend on timing.
  if (s.lend_core == 0 || s.frozen) return;
  g_threads = openblas_threads();
  // Only the pthreads build: in an OpenMP build the count is the program's own OpenMP setting (omp_set_num_threads).
  if (!g_threads.get || !g_threads.set || !g_threads.parallel || g_threads.parallel() != 1) return;
  const int p = g_threads.get();
  // Fewer threads than CPUs leave our work a core already; more than CPUs share cores anyway.
  if (p < (s.lend_core == 2 ? 2 : kAutoMinThreads) || p != cpus_of_process()) return;
  g_saved = p;
  g_can = true;
}

void want_core(int delta) {
  if (!g_can) return;
  if (g_wanted.fetch_add(delta) == 0 && delta > 0) {
    g_core_sync.store(1);
    floors_off();
  }
}

// Our threads did not follow the fork: sync_core gives the thread back. The mutex may have been held by a thread that
// did not follow either (the child has only the forking thread): made anew, unlocked.
void want_core_forked_child() {
  g_wanted.store(0);
  new (&g_mu) std::mutex();
}

bool sync_core() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_wanted.load() > 0) {
    if (!g_lent && g_threads.get() == g_saved) {
      g_threads.set(g_saved - 1);
      g_lent = true;
      g_lent_at = Clock::now();
      ++g_times;
      log_debug("the CPU BLAS (OpenBLAS) runs %d of its %d threads while work of ours runs beside it (it reports %d)",
                g_saved - 1, g_saved, g_threads.get());
    }
    return false;
  }
  if (g_lent) {
    g_lent = false;
    const double s = std::chrono::duration<double>(Clock::now() - g_lent_at).count();
    g_lent_s += s;
    if (g_threads.get() == g_saved - 1) {
      g_threads.set(g_saved);
      log_debug("the CPU BLAS runs its %d threads again after %.0f ms with %d (it reports %d)", g_saved, s * 1e3,
                g_saved - 1, g_threads.get());
    } else {
      log_debug("the program set the CPU BLAS to %d threads meanwhile: left so", g_threads.get());
    }
  }
  g_core_sync.store(0);
  if (g_wanted.load() > 0) {  // wanted again meanwhile: the next call lends
    g_core_sync.store(1);
    return false;
  }
  return true;
}

std::string lent_core_note() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_times == 0) return "";
  double s = g_lent_s;
  if (g_lent) s += std::chrono::duration<double>(Clock::now() - g_lent_at).count();
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "  OpenBLAS ran %d of its %d threads %d time%s while work of ours ran beside it, %.0f ms "
                "in all%s\n",
                g_saved - 1, g_saved, g_times, g_times == 1 ? "" : "s", s * 1e3, g_lent ? " (still, at exit)" : "");
  return buf;
}

}  // namespace blasoffload::policy
