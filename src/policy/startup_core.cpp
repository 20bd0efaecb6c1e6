// Lends one of the CPU BLAS's threads to the background GPU start-up (see startup_core.h for why).
#include "policy/startup_core.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "dispatch/cpu_blas.h"
#include "dispatch/log.h"
#include "offload/module_loader.h"
#include "policy/config.h"

namespace blasoffload::policy {

std::atomic<bool> g_core_lent{false};

namespace {

using GetInt = int (*)();
using SetInt = void (*)(int);

struct OpenBlasThreads {
  GetInt get = nullptr, parallel = nullptr;
  SetInt set = nullptr;
};

// OpenBLAS's thread controls, looked up in the library the sgemm calls go to and its dependencies (Debian's
// openblas-pthread/libblas.so.3 defines the BLAS and takes the rest from libopenblas.so.0).
OpenBlasThreads openblas_threads() {
  OpenBlasThreads t;
  Dl_info info{};
  const void* sgemm = g_cpu.fortran[index(Routine::sgemm)];
  if (!sgemm || !dladdr(sgemm, &info) || !info.dli_fname) return t;
  void* h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);  // mapped already: nothing loads
  if (!h) return t;
  t.get = reinterpret_cast<GetInt>(dlsym(h, "openblas_get_num_threads"));
  t.parallel = reinterpret_cast<GetInt>(dlsym(h, "openblas_get_parallel"));
  t.set = reinterpret_cast<SetInt>(dlsym(h, "openblas_set_num_threads"));
  dlclose(h);  // the library stays mapped: the program links it
  return t;
}

int cpus_of_process() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return int(sysconf(_SC_NPROCESSORS_ONLN));
  return CPU_COUNT(&set);
}

OpenBlasThreads g_threads;
int g_saved = 0, g_lent_to = 0;
pid_t g_lender = 0;
std::chrono::steady_clock::time_point g_lent_at;
double g_lent_ms = -1;  // how long the thread was lent, once given back

}  // namespace

bool lend_core_to_startup(const Settings& s) {
  if (s.startup_core == 0) return false;
  g_threads = openblas_threads();
  // Only the pthreads build: in an OpenMP build the count is the program's own OpenMP setting (omp_set_num_threads).
  if (!g_threads.get || !g_threads.set || !g_threads.parallel || g_threads.parallel() != 1) return false;
  const int p = g_threads.get(), cpus = cpus_of_process();
  // Fewer threads than CPUs leave the start-up a core already; more than CPUs share cores anyway.
  if (p < (s.startup_core == 2 ? 2 : kAutoMinThreads) || p != cpus) return false;
  g_saved = p;
  g_lent_to = p - 1;
  g_lender = getpid();
  g_lent_at = std::chrono::steady_clock::now();
  g_threads.set(g_lent_to);
  g_core_lent.store(true, std::memory_order_release);
  log_debug(
      "GPU start-up: the CPU BLAS (OpenBLAS) runs %d of its %d threads until it ends, leaving it a core "
      "(OpenBLAS reports %d)",
      g_lent_to, p, g_threads.get());
  return true;
}

void give_core_back() {
  // In a fork() child nothing is starting: give it back at once (the state was copied from the parent).
  if (gpu_load_state() == GpuLoad::kLoading && getpid() == g_lender) return;
  if (!g_core_lent.exchange(false)) return;  // another thread gave it back
  g_lent_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_lent_at).count();
  const int now = g_threads.get();
  if (now == g_lent_to) {
    g_threads.set(g_saved);
    log_debug("GPU start-up over: the CPU BLAS runs its %d threads again after %.0f ms with %d (OpenBLAS reports %d)",
              g_saved, g_lent_ms, g_lent_to, g_threads.get());
  } else {
    log_debug("GPU start-up over: the program set the CPU BLAS to %d threads meanwhile; left so", now);
  }
}

std::string lent_core_note() {
  if (g_saved == 0) return "";
  char buf[128];
  if (g_lent_ms >= 0)
    std::snprintf(buf, sizeof buf, "; the CPU BLAS ran %d of its %d threads for %.0f ms meanwhile", g_lent_to, g_saved,
                  g_lent_ms);
  else
    std::snprintf(buf, sizeof buf, "; the CPU BLAS ran %d of its %d threads from then on (no call after it ended)",
                  g_lent_to, g_saved);
  return buf;
}

}  // namespace blasoffload::policy
