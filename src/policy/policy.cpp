// The auto-mode policy: the cost model built from the calibration, the fast exit for calls too small for the GPU,
// the amortisation of the GPU's one-time start-up, device operands, and the adaptive corrections.
#include "policy/policy.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "dispatch/cpu_blas.h"
#include "dispatch/log.h"
#include "offload/module_loader.h"
#include "policy/calibration_checks.h"
#include "policy/cuda_in_process.h"
#include "policy/decision_memo.h"
#include "policy/growth_credit.h"
#include "policy/learning.h"
#include "policy/lent_core.h"
#include "policy/measured_link.h"
#include "policy/policy_state.h"
#include "policy/resident_questions.h"
#include "routines/all.h"

namespace blasoffload::policy {

std::atomic<double> g_cpu_below[kNumRoutines] = {};

void floors_off() {
  for (auto& floor : g_cpu_below) floor.store(0.0, std::memory_order_relaxed);
}
__attribute__((tls_model("initial-exec"))) thread_local unsigned t_calls = 0;

State* g = nullptr;

namespace {

// A hybrid split must be predicted this much faster than the better side alone (it adds a second party to wait for).
constexpr double kHybridMargin = 0.1;
// Large host-operand sgemm: the GPU (or the split) must be predicted this much faster (see decide_auto).
constexpr double kPipelineMargin = 0.3;
// A call the GPU would win that arrives before the GPU is up waits for the start-up when the whole start-up plus the
// GPU's time is at most this fraction of the CPU's time (a long LAPACK factorization: running it on the CPU beside the
// start-up would be slower still). The whole start-up, not what seems left of it: a start-up that runs late (a busy
// machine) must not hold a call that expected it to be nearly done.
constexpr double kWaitForStartFraction = 0.5;

// BLASOFFLOAD_<ROUTINE>_MIN's size, from work(): the geometric mean of its dimensions.
double override_size(int routine, double w) {
  const int d = bo::routines::work_dims(routine);
  return d == 3 ? std::cbrt(w) : d == 2 ? std::sqrt(w) : w;
}

double min_work(int routine, std::int64_t n) { return std::pow(double(n), bo::routines::work_dims(routine)); }

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The smallest work at which the GPU could win for some shape class of `r`: a GPU call costs at least the fixed
// per-call overhead, so while the CPU needs less than that (with room for the CPU being Learning::kMaxCpuCorrection
// slower than calibrated, its largest correction), the answer is the CPU without evaluating the model. Halved once more
// for safety.
double floor_for(const CostModel& m, int r) {
  const double need_us = m.call_overhead_us();
  if (need_us <= 0) return 0;
  const RoutineClasses rc = classes_of(r);
  for (double w = 1; w < 1e15; w *= 1.25) {
    bool may_win = false;
    for (int i = 0; i < rc.count; ++i)
      may_win |= Learning::kMaxCpuCorrection * m.cpu_us(rc.first + i, class_size_per_work(r, i) * w) > need_us;
    if (may_win) return w / 2;
  }
  return 1e15;
}

void build_floors(const CostModel& m) {
  for (int r = 0; r < int(kNumRoutines); ++r) g->floor[r] = floor_for(m, r);
}

// The inline tiny-call answer (policy.h) follows the floors, except where it could be wrong.
void publish_floors(const Settings& s) {
  // While a thread of OpenBLAS's is wanted or lent, every call takes the full path (lent_core.h).
  const bool full_path = g->cuda_in_process.load() || g_core_sync.load() != 0;
  for (int r = 0; r < int(kNumRoutines); ++r)
    g_cpu_below[r].store(full_path || s.min_size[r] >= 0 ? 0.0 : g->floor[r], std::memory_order_relaxed);
}

// Keeps a calibration's CPU side and takes the built-in GPU numbers, with the measured link once there is one.
void use_default_gpu(Calibration* c) {
  const Calibration& d = built_in_defaults();
  c->gpu = d.gpu;
  c->h2d_gbs = d.h2d_gbs;
  c->d2h_gbs = d.d2h_gbs;
  c->pageable_gbs = d.pageable_gbs;
  c->call_overhead_us = d.call_overhead_us;
  c->copy_latency_us = d.copy_latency_us;
  c->init_ms = d.init_ms;
  if (g) g->link.apply(c);
}

// The calibration's GPU numbers were measured on another GPU than the one loaded.
bool foreign_gpu(const bo_cuda_module* m) {
  const std::string& gpu = g->calibration.gpu;
  return g->from_file && g->gpu_measured && !gpu.empty() && !std::strstr(m->name, gpu.c_str());
}

// Under the link's mutex: the model built anew from the calibration with the link as it stands now, on the built-in
// GPU numbers where the calibration is of another GPU. Readers may still hold the old model: it is never freed (one
// small object per rebuild, a few per process).
void rebuild_model(bool foreign) {
  Calibration c = g->calibration;
  if (foreign)
    use_default_gpu(&c);
  else
    g->link.apply(&c);
  g->model.store(new CostModel(c), std::memory_order_release);
}

// The first time the module is seen ready: a calibration measured on another GPU keeps its CPU side only.
void check_gpu_once(const bo_cuda_module* m) {
  if (g->gpu_checked.load(std::memory_order_acquire)) return;
  bool expected = false;
  if (!g->gpu_checked.compare_exchange_strong(expected, true)) return;
  if (!foreign_gpu(m)) return;
  std::lock_guard<std::mutex> lock(g->link.mutex());
  const std::string& gpu = g->calibration.gpu;
  log_warning(
      "warning: policy: the policy file's GPU numbers were measured on %s, not on this GPU (%s); using "
      "the built-in GPU numbers%s; run blasoffload-calibrate again",
      gpu.c_str(), m->name, g->link.measured() ? " with the link as measured at start-up" : "");
  rebuild_model(true);
}

// Some operand is device memory (only possible when the program uses CUDA itself).
bool has_device_operand(const Call& c) {
  const bo_cuda_module* m = gpu_module();  // CUDA is already up in this process: loading costs little
  if (!m) return false;
  for (const void* p : {c.call.a, c.call.b, static_cast<const void*>(c.call.c)})
    if (p && m->is_device_pointer(p)) return true;
  return false;
}

void add_gain(std::atomic<double>* sum, double us) {
  double cur = sum->load(std::memory_order_relaxed);
  while (!sum->compare_exchange_weak(cur, cur + us, std::memory_order_relaxed)) {
  }
}

// A call's CPU time where it would pay a one-time cost (the start-up, opening cuSOLVER): the model's, at most what the
// built-in rates predict for a CPU as much slower as learning allows (State::builtin).
double bounded_cpu_us(const Settings& s, const Decision& d, double class_size) {
  const double learned = s.frozen ? 1.0 : g->learning.correction(d.cls, d.bucket, 0);
  return std::min(double(d.cpu_us), g->builtin->cpu_us(d.cls, class_size) * Learning::kMaxCpuCorrection * learned);
}

// Where the link is the start-up's measurement, its staged rate follows the program's own large staged uploads
// (measured_link.h). Corrections already learned stay: they were learned on calls that went to the GPU at the old
// price.
void follow_staged_uploads(const bo_cuda_module* m) {
  if (!g->link.measured() || !m->staged_gbs_seen) return;
  std::int64_t n = 0;
  const double gbs = m->staged_gbs_seen(&n);
  if (!g->link.news(n)) return;
  double was = 0;
  {
    std::lock_guard<std::mutex> lock(g->link.mutex());
    if (!g->link.follow(n, gbs, &was)) return;
    rebuild_model(foreign_gpu(m));
  }
  log_info("policy: the program's large staged uploads reached %.1f GB/s; staged copies are priced at it (was %.1f)",
           gbs, was);
}

}  // namespace

void gpu_ready(const bo_cuda_module* m) {
  if (!g || g->frozen || !m->measure_link) return;
  const bool foreign = foreign_gpu(m);
  if (g->from_file && g->gpu_measured && !foreign) return;  // calibrated on this GPU
  const double t0 = now_s();
  bo_cuda_rates r{};
  const int st = m->measure_link(&r);
  const double ms = (now_s() - t0) * 1e3;
  if (st != BO_CUDA_OK) {
    log_debug("policy: measuring the GPU's link at start-up failed (status %d); the built-in link numbers stay", st);
    return;
  }
  if (std::string why; !plausible_gpu(r.h2d_gbs, r.d2h_gbs, r.pageable_gbs, &why)) {
    log_warning(
        "warning: policy: the GPU's link as measured at start-up is implausible (%s); the built-in link "
        "numbers stay",
        why.c_str());
    return;
  }
  std::lock_guard<std::mutex> lock(g->link.mutex());
  g->link.set(r, ms);
  log_info(
      "policy: no calibration of this GPU yet: its link measured at start-up in %.0f ms (%.1f GB/s to it and %.1f "
      "back from pinned memory, %.1f staged)",
      ms, r.h2d_gbs, r.d2h_gbs, r.pageable_gbs);
  if (foreign) return;  // check_gpu_once takes them, with the warning
  rebuild_model(false);
}

void init(const Settings& s, const CpuIdentity& cpu) {
  g = new State();
  g->frozen = s.frozen;
  if (class_count() > Learning::kClasses) {
    log_fatal("internal error: %d shape classes, room for %d", class_count(), Learning::kClasses);
    std::abort();
  }
  CalibrationChoice choice = choose_calibration(s.policy_file, s.policy_file_explicit, cpu);
  for (const std::string& w : choice.warnings) log_warning("warning: %s", w.c_str());
  g->from_file = choice.from_file;
  g->gpu_measured = !choice.calibration.gpu.empty();
  g->calibration = std::move(choice.calibration);
  g->message = choice.message;
  if (g->calibration.gpu.empty()) {  // calibrated without a GPU: its CPU side with the default GPU numbers
    use_default_gpu(&g->calibration);
    g->message += " with the built-in GPU numbers";
  }
  const CostModel* m = new CostModel(g->calibration);
  g->model.store(m);
  g->builtin = g->from_file ? new CostModel(built_in_defaults()) : m;
  build_floors(*m);
  g->cuda_in_process.store(program_uses_cuda(s));
  lent_core_init(s);
  publish_floors(s);
  g->gpu_nodes = !s.cuda_module.empty() || access("/dev/nvidiactl", F_OK) == 0;
  log_info("%s%s", g->message.c_str(), s.frozen ? "; decisions frozen" : "");
  if (!g->gpu_nodes && !g->cuda_in_process.load())
    log_debug("policy: no NVIDIA device nodes and no CUDA in the process: auto stays on the CPU");
}

bool wants_solver() { return g && g->lapack_wanted.load(std::memory_order_relaxed); }

namespace {
// A LAPACK call the GPU would win while cuSOLVER is not open (the GPU was started by BLAS calls): opening it costs the
// call that does hundreds of milliseconds, so the call runs on the CPU until the measured gains of such calls cover
// twice that, or it is long enough to win even paying it.
void defer_solver(const Settings& s, const bo_cuda_module* m, double class_size, Decision* d) {
  if (m->solver(0) != 0) return;  // open, or unavailable (the module then declines and the CPU runs it)
  const double cpu_us = bounded_cpu_us(s, *d, class_size);
  const double gain_us = g->solver_gain_us.load(std::memory_order_relaxed) + std::max(0.0, cpu_us - double(d->gpu_us));
  if (kWaitForStartFraction * cpu_us >= kSolverOpenUs + double(d->gpu_us) ||
      gain_us >= kStartupGainFactor * kSolverOpenUs)
    return;
  d->target = Target::kCpu;
  d->reason = Reason::kSolverOpening;
  d->learn = true;  // observe() adds its measured gain
}
}  // namespace

Decision decide_auto(const Settings& s, const Call& c, double w) {
  if (g_core_sync.load(std::memory_order_relaxed) && sync_core()) publish_floors(s);
  Decision d;
  const int r = c.call.routine;
  // Device operands are a matter of correctness, not cost. A program that starts CUDA after its first BLAS call is
  // noticed within 100 ms on large calls, or within 4096 small ones (dlopen takes the loader's lock: microseconds).
  if (!g->cuda_in_process.load(std::memory_order_relaxed) &&
      (t_calls % kRecheckEvery == 0 || (w >= g->floor[r] && recheck_due())) && program_uses_cuda(s)) {
    g->cuda_in_process.store(true);
    publish_floors(s);
  }
  if (g->cuda_in_process.load(std::memory_order_relaxed) && has_device_operand(c)) {
    d.target = Target::kGpu;
    d.reason = Reason::kDeviceOperands;
    return d;
  }
  if (s.min_size[r] >= 0) {
    d.reason = Reason::kMinSize;
    d.size = float(override_size(r, w));
    d.target = w >= min_work(r, s.min_size[r]) ? Target::kGpu : Target::kCpu;
    return d;
  }
  if (w < g->floor[r]) {
    d.reason = Reason::kSmall;
    return d;
  }
  const bool gpu_possible = g->gpu_nodes || g->cuda_in_process.load(std::memory_order_relaxed);
  if (!gpu_possible || gpu_load_state() == GpuLoad::kUnavailable) {
    d.reason = Reason::kNoGpu;
    return d;
  }
  // A call alike (routine, option, size) that the model recently gave the CPU by far: the CPU, without the model
  // (not where a device copy of an operand may come to pay).
  const bool memo_ok = !may_become_resident(c);
  const std::uint32_t memo_key = memo_ok ? DecisionMemo::key(c.call, w) : 0;
  if (memo_ok && g->memo.cpu_without_model(memo_key, &d.cpu_us, &d.gpu_us)) {
    if (s.log >= LogLevel::kSummary) g->memo.count_remembered();
    d.reason = Reason::kModel;
    return d;
  }
  const bo_cuda_module* m = gpu_module_if_ready();
  if (m) check_gpu_once(m);
  const CostModel* model = g->model.load(std::memory_order_acquire);
  double staged_bytes = 0, class_size = 0;
  auto predict = [&](const bo_cuda_module* mod) {
    const double kernel = std::max(mod ? mod->kernel_us(&c.call) : 0.0, 0.0);
    // Host memory the module registered (or registers on this call: its staging has paid for it) moves at the DMA rate,
    // without staging copies; the registration itself (~58 ms per GiB, once per mapping) is left out. The spans
    // asked about are the operands' element counts (a lower bound of their extent): a guess for the model only.
    // Before the module is up nothing can be asked: the estimate that decides whether starting it is worth its
    // one-time cost assumes registrable memory (malloc'd arrays are); decisions once it is up ask.
    // Asked only where the answer counts (the pipelined prediction): it takes a lock and a system call.
    int pinned = -1;  // the answer, once asked: the same operands for every view of the call predicted below
    auto model_of = [&](Call& x) {
      if (CostModel::pipelined(x)) {
        if (pinned < 0) {
          bo::routines::Operand ops[bo::routines::kMaxOperands];
          const int n = bo::routines::operands(c.call, ops);
          const int e = bo::routines::element_size(r);
          bool all = true;
          for (int q = 0; q < n && all && mod; ++q) {
            const void* p = operand_pointer(c.call, ops[q].slot);
            all = p && mod->host_pinned(p, int64_t(e) * int64_t(ops[q].elements())) >= 1;
          }
          pinned = all ? 1 : 0;
        }
        x.host_pinned = pinned == 1;
      }
      return model->predict(x, kernel);
    };
    Call cp = c, staged = c;
    double making_us = 0;
    if (!c.operands_on_device) {
      if (mod) {
        Call best = c;
        best.resident_in = resident_at_most(c);
        bool worth_asking = best.resident_in > 0;
        if (worth_asking) {
          const Prediction b = model_of(best);
          const int bk = Learning::bucket(b.size);
          const double bc = s.frozen ? 1.0 : g->learning.correction(b.cls, bk, 0);
          const double bg = s.frozen ? 1.0 : g->learning.correction(b.cls, bk, 1);
          worth_asking = model->prefers_gpu(b.cpu_us * bc, b.gpu_us * bg + kAskUs);
        }
        if (worth_asking) ask_resident(mod, c, &cp, &staged, &making_us);
      } else {
        guess_resident(c, &cp);
      }
    }
    Prediction p = model_of(cp);
    d.stage_copies = false;
    d.copy_rest_us = 0;
    if (cp.candidate_in > 0) {  // the call would make copies: or stage them, whichever is predicted faster
      const Prediction q = model_of(staged);
      if (q.gpu_us <= p.gpu_us) {
        p = q;
        cp = staged;
        d.stage_copies = true;
      } else {
        d.copy_rest_us = float(std::max(0.0, making_us - (cp.check_us - staged.check_us)));
      }
    }
    // The generic path stages what the model moves and candidates it may not copy (the tiled pipeline and LAPACK's
    // rings are bounded).
    staged_bytes = p.pipelined || bo::routines::is_lapack(r) || c.operands_on_device
                       ? 0.0
                       : p.bytes_in + p.bytes_out + cp.candidate_in;
    d.cls = std::uint8_t(p.cls);
    d.bucket = std::uint8_t(Learning::bucket(p.size));
    class_size = p.size;
    const double cc = s.frozen ? 1.0 : g->learning.correction(d.cls, d.bucket, 0);
    const double gc = s.frozen || !mod ? 1.0 : g->learning.correction(d.cls, d.bucket, 1);
    d.cpu_us = float(p.cpu_us * cc);
    d.gpu_us = float(p.gpu_us * gc);
    d.cpu_share = 0;
    // Complex elements are not shared: their CPU curves are derived from the real ones, not measured, and a split
    // needs the CPU's real rate.
    if (bo_routine_kind_of(r) == BO_KIND_GEMM && s.hybrid_share != 0 && p.bytes_in + p.bytes_out > 0 &&
        !bo_is_complex(bo_routine_precision(r))) {
      // Sharing the call: the model's split, or the user's fixed one.
      double share = 0;
      double t = model->hybrid_us(d.cpu_us, d.gpu_us, &share);
      if (s.hybrid_share > 0) {
        share = s.hybrid_share;
        t = std::max(share * d.cpu_us / CostModel::kHybridCpuEfficiency, (1 - share) * double(d.gpu_us));
      }
      if (share > 0 && share < 1 && t < std::min(d.cpu_us, d.gpu_us) * (1.0 - kHybridMargin)) {
        d.cpu_share = float(share);
        d.gpu_us = float(t);
      }
    }
    // Large host-operand sgemm (the tiled pipeline): its estimate leaves out registering memory, per-call set-up and
    // the host's memory traffic slowing the rest of the program, so it must win by more.
    if (p.pipelined) return d.gpu_us < d.cpu_us * (1.0 - kPipelineMargin);
    return model->prefers_gpu(d.cpu_us, d.gpu_us);
  };
  bool wants_gpu = predict(m);
  d.reason = Reason::kModel;
  d.learn = !s.frozen && (m || !wants_gpu);  // GPU estimates made before the module is up are optimistic bounds
  // A shared call's time is filed with the GPU side: it corrects the GPU estimate the split is computed from.
  if (m || !wants_gpu) {
    d.target = wants_gpu ? Target::kGpu : Target::kCpu;
    if (memo_ok) g->memo.decided(memo_key, !wants_gpu, d.cpu_us, d.gpu_us);
    // Bounded exploration of the other side, once the GPU is up (before, its side is an optimistic bound).
    if (m && d.learn &&
        g->learning.explore(d.cls, d.bucket, wants_gpu ? d.gpu_us : d.cpu_us, wants_gpu ? d.cpu_us : d.gpu_us)) {
      d.target = wants_gpu ? Target::kCpu : Target::kGpu;
      d.reason = Reason::kExploring;
      if (wants_gpu) d.cpu_share = 0;
    }
    g->growth.defer_call(m, staged_bytes, &d);
    if (d.target == Target::kGpu && bo::routines::is_lapack(r) && !s.frozen) defer_solver(s, m, class_size, &d);
    return d;
  }
  // The GPU would win this call (kernel time taken as zero so far) but is not up yet.
  if (s.frozen) {  // reproducible: start it now, in the caller's thread, and decide with the real kernel time
    m = gpu_module();
    if (!m) {
      d.reason = Reason::kNoGpu;
      return d;
    }
    check_gpu_once(m);
    model = g->model.load(std::memory_order_acquire);
    d.target = predict(m) ? Target::kGpu : Target::kCpu;
    g->growth.defer_call(m, staged_bytes, &d);
    return d;
  }
  d.learn = true;  // the call runs on the CPU: its CPU prediction can be checked
  if (bo::routines::is_lapack(r)) g->lapack_wanted.store(true, std::memory_order_relaxed);
  const double cpu_us = bounded_cpu_us(s, d, class_size);
  // A long call waits for the start-up when that wins clearly even with all of it ahead, then is decided with the
  // module's estimate. A call shorter than twice the start-up never waits.
  auto wait_for_start = [&]() -> bool {
    if (model->init_ms() * 1e3 + double(d.gpu_us) > kWaitForStartFraction * cpu_us) return false;
    const bo_cuda_module* up = gpu_module();  // blocks until the background load is done
    if (!up) return false;
    check_gpu_once(up);
    model = g->model.load(std::memory_order_acquire);
    d.target = predict(up) ? Target::kGpu : Target::kCpu;
    d.reason = Reason::kModel;
    d.learn = !s.frozen;
    g->growth.defer_call(up, staged_bytes, &d);
    return true;
  };
  if (gpu_load_state() == GpuLoad::kLoading) {
    gpu_arm_exit_guard();  // a main thread whose first call came after another thread's
    if (wait_for_start()) return d;
    d.reason = Reason::kInitialising;
    return d;
  }
  // The gains that pay for the start-up: those measured on earlier calls (observe adds them), and this call's
  // predicted one with its CPU time bounded as above, so that a file whose rates are too slow does not start the GPU
  // for savings that are not there, while a first call long enough to pay for the start-up alone (a factorization of
  // seconds) still starts it and waits.
  const double gain_us = g->gain_us.load(std::memory_order_relaxed) + std::max(0.0, cpu_us - double(d.gpu_us));
  if (s.eager_start || gain_us >= kStartupGainFactor * model->init_ms() * 1e3) {
    double expected = -1;
    if (g->init_started_after_us.compare_exchange_strong(expected, gain_us)) {
      gpu_load_in_background();  // it wants a core of OpenBLAS's until it ends: this call lends it already
      sync_core();
    }
    if (wait_for_start()) return d;
    d.reason = Reason::kInitialising;
  } else {
    d.reason = Reason::kAmortising;
  }
  return d;
}

void observe(const Decision& d, bool ran_on_gpu, double actual_us, std::uint64_t start_ns, std::uint64_t end_ns) {
  if (!d.learn) return;
  // A GPU-worthy call run on the CPU while the start-up was not yet worth it: what the GPU would have saved, by the
  // CPU's measured time.
  if (!ran_on_gpu && (d.reason == Reason::kAmortising || d.reason == Reason::kSolverOpening))
    add_gain(d.reason == Reason::kAmortising ? &g->gain_us : &g->solver_gain_us,
             std::max(0.0, actual_us - double(d.gpu_us)));
  if (ran_on_gpu)
    if (const bo_cuda_module* m = gpu_module_if_ready()) follow_staged_uploads(m);
  // When this thread's last GPU call ended (Learning::kAfterGpuUs: a CPU call starting soon after it is disturbed).
  thread_local std::uint64_t gpu_ended_ns = 0;
  if (ran_on_gpu) gpu_ended_ns = end_ns;
  const bool after_gpu =
      !ran_on_gpu && gpu_ended_ns != 0 && double(start_ns - gpu_ended_ns) * 1e-3 < Learning::kAfterGpuUs;
  // A call that made device copies took their whole making; its prediction carried only a share.
  const double predicted = ran_on_gpu ? double(d.gpu_us) + double(d.copy_rest_us) : double(d.cpu_us);
  g->learning.observe(d.cls, d.bucket, ran_on_gpu ? 1 : 0, predicted, actual_us, after_gpu);
}

}  // namespace blasoffload::policy
