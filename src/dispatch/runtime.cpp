// First-call initialisation, and the exit and fork hooks it installs.
#include "dispatch/runtime.h"

#include <pthread.h>

#include <cstdlib>
#include <mutex>

#include "dispatch/cpu_blas.h"
#include "dispatch/forwarding.h"
#include "dispatch/log.h"
#include "dispatch/stats.h"
#include "offload/module_loader.h"
#include "policy/config.h"
#include "policy/policy.h"

namespace blasoffload {
// Where the trampolines are not built (not x86-64), no forwarded routine exists to have been called.
__attribute__((weak)) bool forwarded_a_call() { return false; }
}  // namespace blasoffload

namespace blasoffload {

const Settings* g_settings = nullptr;

namespace detail {

std::atomic<bool> g_initialized{false};
__attribute__((tls_model("initial-exec"))) thread_local int t_depth[int(Layer::kCount)] = {};

namespace {

std::mutex g_init_mutex;

// Registered with atexit on the first call, so it runs before any library's destructors: the CPU BLAS
// and the CUDA runtime are still loaded while we shut the GPU down and print. A GPU start-up still under way in the
// background was waited for already, before any exit handler, where the main thread exits (gpu_arm_exit_guard);
// otherwise here, up to BLASOFFLOAD_EXIT_WAIT_MS.
void at_exit() {
  if (gpu_wait_background(g_settings->exit_wait_ms)) gpu_shutdown();
  if (log_level() >= LogLevel::kSummary) print_summary();
}

// A process that has a BLAS loaded but none of whose calls reached us (OpenBLAS's own LAPACK calling its
// BLAS internally, say), or that called only forwarded routines, still gets its summary, saying so, when one was asked
// for. Processes without any BLAS (shells and tools that merely inherit LD_PRELOAD) stay silent. Runs at unload, after
// the atexit handlers, and only when no call initialised the library.
__attribute__((destructor)) void summary_if_never_called() {
  if (g_initialized.load(std::memory_order_acquire)) return;
  try {
    if (settings().log >= LogLevel::kSummary && (forwarded_a_call() || find_foreign_symbol("sgemm_"))) print_summary();
  } catch (...) {
  }
}

void at_fork_child() {
  stats_reset_after_fork();
  gpu_forked_child();
}

}  // namespace

void initialize_slow(Family first) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_initialized.load(std::memory_order_relaxed)) return;
  try {
    g_settings = &settings();
    resolve_cpu_blas(first);
    bool any_auto = false;
    for (Mode m : g_settings->routine_mode) any_auto |= m == Mode::kAuto;
    if (any_auto) policy::init(*g_settings, {g_cpu.library, g_cpu.report.identity});
  } catch (...) {
    log_fatal("initialisation failed (out of memory?); aborting");
    std::abort();
  }
  std::atexit(at_exit);
  gpu_arm_exit_guard();
  pthread_atfork(nullptr, nullptr, at_fork_child);
  g_initialized.store(true, std::memory_order_release);
}

}  // namespace detail
}  // namespace blasoffload
