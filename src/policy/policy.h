// Decides, per call, whether it runs on the GPU or the CPU BLAS: the modes, the per-routine size overrides and,
// in `auto`, the calibrated cost model with its one-time costs amortised (see docs/policy.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "dispatch/routine.h"
#include "policy/config.h"
#include "policy/cost_model.h"
#include "routines/all.h"

struct bo_cuda_module;  // offload/cuda_module_api.h

namespace blasoffload {

enum class Target : std::uint8_t { kCpu, kGpu };

// Why a call went where it went; printed by BLASOFFLOAD_LOG=calls.
enum class Reason : std::uint8_t {
  kMode,            // BLASOFFLOAD_MODE / BLASOFFLOAD_<ROUTINE> is cpu or gpu
  kMinSize,         // BLASOFFLOAD_<ROUTINE>_MIN replaced the model
  kSmall,           // below the size where the GPU could ever win (the fixed call cost alone exceeds the CPU time)
  kNoGpu,           // no usable GPU in this process
  kModel,           // the cost model's comparison
  kInitialising,    // the model prefers the GPU, which is still initialising in the background
  kAmortising,      // the model prefers the GPU, but the gain so far does not yet cover the one-time cost
  kGrowing,         // the model prefers the GPU, whose staging buffers the call would grow: the gains of its class and
                    // size so far do not yet cover that (policy/growth_credit.h)
  kDeviceOperands,  // an operand is device memory: only the GPU can run the call
  kExploring,       // the model's other side, measured now and then within a bounded share (policy/learning.h)
  kSolverOpening,   // a LAPACK call the GPU would win, but cuSOLVER is not open yet: its gains so far do not cover
                    // opening it
  kCpuVariant,      // a variant of the routine the GPU path does not cover (its descriptor's gpu_covers), in any mode
};

struct Decision {
  Target target = Target::kCpu;
  Reason reason = Reason::kMode;
  bool learn = false;            // adaptive: report the measured time back (policy::observe)
  float cpu_us = 0, gpu_us = 0;  // the model's predictions (kModel, kInitialising, kAmortising)
  float size = 0;                // the call's size in the unit of BLASOFFLOAD_<ROUTINE>_MIN (kMinSize)
  float cpu_share = 0;           // gemm on the GPU: the fraction of C the CPU BLAS computes at the same time
  float growth_us = 0;           // kGrowing: what growing the module's staging buffers would cost
  // A GPU call on host matrices the module would copy (residency candidates): stage_copies, staging them is predicted
  // faster than making the copies (route tells the module so); else copy_rest_us, what making the copies costs beyond
  // the share gpu_us carries (the rest falls to their later uses): learning expects the call to take it too.
  bool stage_copies = false;
  float copy_rest_us = 0;
  std::uint8_t cls = 0, bucket = 0;  // where observe() files the measurement (set with the predictions)
};

namespace policy {

// Builds the model from the policy file (or the built-in defaults) for the CPU BLAS in use. Called once by the
// first-call initialisation when some routine is in auto mode; cheap otherwise.
void init(const Settings& s, const CpuIdentity& cpu);

// The CUDA module is up, about to be published (called once, on the thread that started it: the background start-up
// as a rule). Without a calibration of this GPU (no policy file, one without GPU numbers or one of another GPU), and
// unless decisions are frozen, the link's rates are measured now (measure_link: about a tenth of a second) and the
// model takes them in place of the built-in ones, so that a first run decides with this machine's link.
void gpu_ready(const bo_cuda_module* m);

// Whether the start-up should open the LAPACK path's solver library too: a LAPACK call the GPU would win came before
// the GPU was up (the start-up thread opens it at the lowest priority, before the module is published).
bool wants_solver();

// The auto-mode decision for a call of work `w` (its descriptor's work()). O(1) and allocation-free.
Decision decide_auto(const Settings& s, const Call& c, double w);

// The tiny-call answer, read inline by decide() before any function call: per routine, the work below which auto
// gives a call the CPU without looking further (the model's floor). 0 where that answer may be wrong: a size override
// for the routine, or a program that uses CUDA itself (its operands may be device memory), or while a thread of the
// CPU BLAS is wanted or lent (lent_core.h). Set by init(), lowered to 0 when the program turns out to use CUDA.
extern std::atomic<double> g_cpu_below[kNumRoutines];
// Any thread: every auto call takes the full path until the floors are published again (decide_auto does that).
void floors_off();
// Counts a thread's auto-mode calls: every 4096th goes the full way, which looks for a program starting CUDA late.
// initial-exec: one fs-relative access on the tiny-call path instead of a __tls_get_addr call.
extern __attribute__((tls_model("initial-exec"))) thread_local unsigned t_calls;
constexpr unsigned kRecheckEvery = 4096;

// Adaptive mode: the measured time of a call the model decided, to correct later predictions of its class and size;
// start_ns and end_ns: when it began and ended (CLOCK_MONOTONIC), which tell a CPU call right after a GPU one.
void observe(const Decision& d, bool ran_on_gpu, double actual_us, std::uint64_t start_ns, std::uint64_t end_ns);

// Formats a decision's reason for BLASOFFLOAD_LOG=calls.
void describe(const Settings& s, const Call& c, const Decision& d, char* buf, std::size_t size);

// Summary lines: which calibration was used and what the policy did.
std::string summary();

}  // namespace policy

// The decision for a call of routine descriptor D: the mode, and in auto the tiny-call answer inline (a few
// nanoseconds against the tens a function call, the work's computation through the routine table and the checks
// before the floor cost: a 60 ns sgemm felt them).
template <class D>
inline Decision decide(const Settings& s, const policy::Call& c) {
  if constexpr (bo::routines::HasGpuCovers<D>::value) {
    if (!D::gpu_covers(c.call)) {
      Decision cpu;
      cpu.reason = Reason::kCpuVariant;
      return cpu;
    }
  }
  const Mode m = s.routine_mode[D::kRoutine];
  if (m == Mode::kAuto) {
    const double w = D::work(c.call);
    const unsigned n = ++policy::t_calls;
    if (w < policy::g_cpu_below[D::kRoutine].load(std::memory_order_relaxed) && n % policy::kRecheckEvery != 0) {
      Decision small;
      small.reason = Reason::kSmall;
      return small;
    }
    return policy::decide_auto(s, c, w);
  }
  Decision d;
  d.target = m == Mode::kGpu ? Target::kGpu : Target::kCpu;
  if (d.target == Target::kGpu && bo_routine_kind_of(c.call.routine) == BO_KIND_GEMM && s.hybrid_share > 0)
    d.cpu_share = s.hybrid_share;
  return d;
}

}  // namespace blasoffload
