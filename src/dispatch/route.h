// Runs one checked BLAS call where the policy says, falls back to the CPU on GPU failure, and counts it.
#pragma once

#include <time.h>

#include <cstdint>

#include "dispatch/log.h"
#include "dispatch/stats.h"
#include "offload/cuda_module_api.h"
#include "offload/module_loader.h"
#include "policy/policy.h"

namespace blasoffload {

extern const Settings* g_settings;  // set by initialisation; read-only afterwards

inline std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// `cpu()` runs the call on the CPU BLAS. `gpu(module, decision)` returns a bo_cuda_status and, unless it returns
// BO_CUDA_OK, has written nothing. `describe(buf, size)` formats the arguments for BLASOFFLOAD_LOG=calls.
template <class Cpu, class Gpu, class Describe>
inline void route(const policy::Call& call, std::uint64_t bytes, Cpu&& cpu, Gpu&& gpu, Describe&& describe) {
  const Settings& s = *g_settings;
  const Routine r = call.routine;
  const Decision d = decide(s, call);
  const bool counting = s.log >= LogLevel::kSummary;
  const bool timing = counting || d.learn;
  const std::uint64_t t0 = timing ? now_ns() : 0;
  Where where = Where::kCpu;
  bool fell_back = false;
  if (d.target == Target::kGpu) {
    const bo_cuda_module* m = gpu_module();
    const int st = m ? gpu(m, d) : int(BO_CUDA_NO_DEVICE);
    if (st == BO_CUDA_OK) {
      where = Where::kGpu;
    } else {
      if (m) note_gpu_failure(routine_name(r), st);  // no module: already said once by gpu_module()
      fell_back = true;
    }
  }
  if (where == Where::kCpu) cpu();
  if (!timing) return;
  const std::uint64_t dt = now_ns() - t0;
  if (d.learn && !fell_back) policy::observe(d, where == Where::kGpu, double(dt) * 1e-3);
  if (!counting) return;
  auto& c = thread_stats().r[index(r)];
  c.calls[static_cast<int>(where)].add(1);
  c.ns[static_cast<int>(where)].add(dt);
  c.bytes.add(bytes);
  if (fell_back) c.fallbacks.add(1);
  if (s.log >= LogLevel::kCalls) {
    char args[160], why[160];
    describe(args, sizeof args);
    policy::describe(s, call, d, why, sizeof why);
    log_call("%s(%s) -> %s [%s]%s, took %.3f ms", routine_name(r), args, where == Where::kGpu ? "gpu" : "cpu", why,
             fell_back ? ", GPU failed: fell back" : "", dt * 1e-6);
  }
}

// Counts a call that ended in XERBLA or a reference quick return.
inline void count_error(Routine r) {
  if (g_settings->log >= LogLevel::kSummary) thread_stats().r[index(r)].errors.add(1);
}
inline void count_quick_return(Routine r) {
  if (g_settings->log >= LogLevel::kSummary) thread_stats().r[index(r)].quick.add(1);
}

}  // namespace blasoffload
