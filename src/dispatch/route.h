// Runs one checked call where the policy says, falls back to the CPU on GPU failure, and counts it.
#pragma once

#include <time.h>

#include <cstdint>
#include <cstdio>

#include "dispatch/log.h"
#include "dispatch/stats.h"
#include "offload/cuda_module_api.h"
#include "offload/module_loader.h"
#include "policy/policy.h"
#include "routines/all.h"

namespace blasoffload {

extern const Settings* g_settings;  // set by initialisation; read-only afterwards

inline std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Operand bytes a call references (the summary's "bytes"), from its descriptor's operand extents.
inline std::uint64_t operand_bytes(const bo_call& c) {
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = bo::routines::operands(c, ops);
  double b = 0;
  for (int i = 0; i < n; ++i) b += ops[i].elements();
  return static_cast<std::uint64_t>(b * bo::routines::element_size(c.routine));
}

// Counts one call that ran where `where` says, in `ns`, in the calling thread's summary table; the routine's row.
inline auto& count_call(const bo_call& call, Where where, std::uint64_t ns) {
  auto& c = thread_stats().r[index(Routine(call.routine))];
  c.calls[static_cast<int>(where)].add(1);
  c.ns[static_cast<int>(where)].add(ns);
  c.bytes.add(operand_bytes(call));
  return c;
}

// Runs a checked call where the policy says: the GPU through the module's one entry (which, unless it returns
// BO_CUDA_OK, has written nothing), else `cpu()`, the CPU BLAS. Counts and logs it when logging is on. D: the
// routine's descriptor. True when the GPU ran it.
template <class D, class Cpu>
__attribute__((always_inline)) inline bool route(const policy::Call& call, Cpu&& cpu) {
  const Settings& s = *g_settings;
  const Routine r = Routine(call.call.routine);
  // The decision's own time shows in the calls log (the residency's questions may read /proc or protect pages).
  const std::uint64_t td = s.log >= LogLevel::kCalls ? now_ns() : 0;
  const Decision d = decide<D>(s, call);
  const bool counting = s.log >= LogLevel::kSummary;
  const bool timing = counting || d.learn;
  const std::uint64_t t0 = timing ? now_ns() : 0;
  Where where = Where::kCpu;
  bool fell_back = false;
  double one_time_us = 0;  // of a GPU call: what the module spent on one-time costs (growing buffers, first launches)
  if (d.target == Target::kGpu) {
    const bo_cuda_module* m = gpu_module();
    if (m && d.stage_copies) m->stage_candidates();
    const int st = m ? m->call(&call.call, d.cpu_share) : int(BO_CUDA_NO_DEVICE);
    if (st == BO_CUDA_OK) {
      where = Where::kGpu;
      if (timing) one_time_us = m->last_one_time_us();
    } else {
      // No module: already said once by gpu_module(). The CPU answering a LAPACK call is no failure.
      if (m && st != BO_CUDA_CPU_ANSWERS) note_gpu_failure(routine_name(r), st);
      fell_back = true;
    }
  }
  if (where == Where::kCpu) cpu();
  const bool on_gpu = where == Where::kGpu;
  if (!timing) return on_gpu;
  const std::uint64_t t1 = now_ns(), dt = t1 - t0;
  // The predictions leave one-time costs out; learning must too, or a program's first calls at each new size teach it
  // a GPU many times slower than it is.
  if (d.learn && !fell_back) policy::observe(d, where == Where::kGpu, double(dt) * 1e-3 - one_time_us, t0, t1);
  if (!counting) return on_gpu;
  auto& row = count_call(call.call, where, dt);
  if (fell_back) row.fallbacks.add(1);
  if (s.log >= LogLevel::kCalls) {
    char args[160], why[160];
    bo::routines::describe(call.call, args, sizeof args);
    policy::describe(s, call, d, why, sizeof why);
    char once[64] = "", deciding[48] = "";
    if (one_time_us > 0) std::snprintf(once, sizeof once, " (%.3f ms of it one-time)", one_time_us * 1e-3);
    if (t0 - td >= 50000) std::snprintf(deciding, sizeof deciding, "; deciding took %.3f ms", double(t0 - td) * 1e-6);
    log_call("%s(%s) -> %s [%s]%s, took %.3f ms%s%s", routine_name(r), args, where == Where::kGpu ? "gpu" : "cpu", why,
             fell_back ? ", GPU failed: fell back" : "", dt * 1e-6, once, deciding);
  }
  return on_gpu;
}

// Counts a call the CPU library ran without a decision (the CBLAS calls no column-major call expresses), with its
// time, for the scope's lifetime.
class CpuCallCount {
 public:
  explicit CpuCallCount(Routine r) : r_(r), t0_(g_settings->log >= LogLevel::kSummary ? now_ns() : 0) {}
  ~CpuCallCount() {
    if (!t0_) return;
    auto& c = thread_stats().r[index(r_)];
    c.calls[static_cast<int>(Where::kCpu)].add(1);
    c.ns[static_cast<int>(Where::kCpu)].add(now_ns() - t0_);
  }
  CpuCallCount(const CpuCallCount&) = delete;
  CpuCallCount& operator=(const CpuCallCount&) = delete;

 private:
  Routine r_;
  std::uint64_t t0_;
};

// Counts a call the module ran outside route(): the ScaLAPACK takeover's factorization on the GPU's copy, in place.
inline void count_gpu_call(const bo_call& call, std::uint64_t ns) {
  if (g_settings->log >= LogLevel::kSummary) count_call(call, Where::kGpu, ns);
}

// Counts a call that ended in XERBLA or a reference quick return.
inline void count_error(Routine r) {
  if (g_settings->log >= LogLevel::kSummary) thread_stats().r[index(r)].errors.add(1);
}
inline void count_quick_return(Routine r) {
  if (g_settings->log >= LogLevel::kSummary) thread_stats().r[index(r)].quick.add(1);
}

}  // namespace blasoffload
