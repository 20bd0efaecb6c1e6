// The auto-mode policy's state, shared by its decisions (policy.cpp) and its reports (policy_report.cpp): one object
// per process, made by policy::init.
#pragma once

#include <atomic>
#include <string>

#include "dispatch/routine.h"
#include "policy/calibration.h"
#include "policy/cost_model.h"
#include "policy/decision_memo.h"
#include "policy/growth_credit.h"
#include "policy/learning.h"
#include "policy/measured_link.h"

namespace blasoffload::policy {

// Start-up begins once the gain (what earlier GPU-worthy calls run on the CPU took beyond their GPU prediction, plus
// this call's predicted saving with its CPU time bounded) reaches this many times its one-time cost: it runs beside a
// busy CPU BLAS (measured: a 16-thread getrf at n = 8192 took 0.13 s longer while it ran) and the GPU's side is a
// prediction.
constexpr double kStartupGainFactor = 2.0;
// What a process's first LAPACK call on the GPU costs beyond the next where the start-up did not open cuSOLVER (its
// opening, a handle, the staging ring, loading its kernels at their first launch: dgetrf n = 8192 about 510 ms, dgesv
// n = 2048 about 170 ms on the lent H100; about 110 ms for a dgetrf n = 16384 after a start-up that opened it): the
// GPU's second start-up for LAPACK, amortised like the first (module API solver());
// bench/results/firstrun/startup-probe-*.log.
constexpr double kSolverOpenUs = 300e3;

struct State {
  std::atomic<const CostModel*> model{nullptr};
  // The built-in rates' model: a second opinion on the CPU's time where a call would pay the GPU's start-up. Whatever
  // a policy file says, the call's CPU time is taken as at most the built-in rates' (a strong 16-core CPU) allowing the
  // CPU to be Learning::kMaxCpuCorrection times slower, so that a file measured too slow (a calibration disturbed by
  // other work read factorizations thousands of times slower than they run) never has a call of milliseconds wait for
  // a start-up of half a second, nor starts the GPU for gains that are not there. On a CPU slower than that, the GPU
  // starts later than it could: never slower is the first aim.
  const CostModel* builtin = nullptr;
  Calibration calibration;
  std::string message;
  bool from_file = false;
  bool gpu_measured = false;                 // the file has GPU numbers of its own (not the built-in ones)
  bool gpu_nodes = false;                    // NVIDIA device nodes exist, or the module was named explicitly
  std::atomic<bool> cuda_in_process{false};  // the program itself uses CUDA: its operands may be device memory
                                             // (program_uses_cuda; once true, stays true)
  std::atomic<bool> gpu_checked{false};      // the loaded GPU was compared with the calibration's
  bool frozen = false;                       // BLASOFFLOAD_DECISIONS=frozen: no link measured at start-up either
  // The link measured at the start-up where no calibration of this GPU exists (gpu_ready), then followed on the
  // program's uploads (follow_staged_uploads); its mutex also guards the models built from it.
  MeasuredLink link;
  // Work below which the GPU cannot win. Work: the descriptor's work(), a product of kWorkDims dimensions (m n k, m n,
  // n^2, n; trsm m n t, syrk n^2 k), so that the inline tiny-call answer (policy.h) takes no roots.
  double floor[kNumRoutines] = {};
  std::atomic<double> gain_us{0};         // measured gain of GPU-worthy calls run on the CPU before the GPU was started
  std::atomic<double> solver_gain_us{0};  // the same for LAPACK calls run on the CPU before cuSOLVER was opened
  std::atomic<bool> lapack_wanted{false};  // a LAPACK call the GPU would win came before the GPU was up
  std::atomic<double> init_started_after_us{-1};
  // Measured / predicted per class and size bucket, and the exploration (adaptive only): local, so that a CPU BLAS's
  // quirk at one size does not move the decision at another.
  Learning learning;
  GrowthCredit growth;  // staging growth amortised per class and bucket
  DecisionMemo memo;    // calls the model gave the CPU by far, taken there without it for a while
};
extern State* g;

}  // namespace blasoffload::policy
