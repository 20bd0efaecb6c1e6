// Loads libblasoffload_cuda.so lazily and keeps the reason when it cannot be used.
#include "offload/module_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "dispatch/cpu_blas.h"
#include "dispatch/log.h"
#include "offload/gpu_diagnose.h"
#include "policy/config.h"
#include "policy/lent_core.h"
#include "policy/measured_link.h"
#include "policy/policy.h"
#include "routines/all.h"

namespace blasoffload {
namespace {

std::once_flag g_once;
std::atomic<const bo_cuda_module*> g_module{nullptr};
std::atomic<bool> g_forked{false};
std::atomic<bool> g_tried{false};
std::string* g_unavailable = nullptr;  // why not, when g_module stays null
std::atomic<unsigned> g_warned_kinds{0};
std::atomic<int> g_state{int(GpuLoad::kNotTried)};
std::atomic<bool> g_bg_started{false};
pthread_t g_bg_thread;
pid_t g_bg_owner = 0;  // the process that started the thread (a fork() child must not join it)
// The background start-up's end, for exit's bounded wait. On the heap and never freed: a thread left unfinished at
// exit may signal it after static destructors ran.
struct BackgroundEnd {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
};
BackgroundEnd& bg_end() {
  static BackgroundEnd* e = new BackgroundEnd();
  return *e;
}
std::atomic<const char*> g_bg_stage{"not started"};  // where it stands, for exit's message
std::chrono::steady_clock::time_point g_bg_began;

// A thread of the program's priority that the start-up (nice 19) hands one job: the link's measurement after the
// module is up (policy::gpu_ready). Threads inherit their creator's nice value, so the staging threads the measurement
// starts keep the priority of the thread that starts them for the process; and staging copies split with a nice-19
// thread beside a busy CPU BLAS wait for its starved share (the lent H100: 7.4 GB/s measured so, against 20 alone).
// Made by the start-up thread before it lowers its priority; the job runs there and the start-up waits for it.
class AtProgramPriority {
 public:
  AtProgramPriority() {
    if (pthread_create(&thread_, nullptr, &AtProgramPriority::main, this) == 0) started_ = true;
  }
  ~AtProgramPriority() {
    run(nullptr);  // no job, or already run: the thread ends
    if (started_) pthread_join(thread_, nullptr);
  }
  // Runs fn there and waits for it (on the calling thread when there is no such thread).
  void run(const std::function<void()>& fn) {
    if (!started_) {
      if (fn) fn();
      return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (posted_) return;
    job_ = fn;
    posted_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_; });
  }

 private:
  static void* main(void* arg) {
    pthread_setname_np(pthread_self(), "bo-gpu-link");
    auto* self = static_cast<AtProgramPriority*>(arg);
    std::unique_lock<std::mutex> lock(self->mutex_);
    self->cv_.wait(lock, [&] { return self->posted_; });
    if (self->job_) {
      lock.unlock();
      self->job_();
      lock.lock();
    }
    self->done_ = true;
    self->cv_.notify_all();
    return nullptr;
  }
  pthread_t thread_{};
  bool started_ = false, posted_ = false, done_ = false;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
};
thread_local AtProgramPriority* t_at_program_priority = nullptr;  // the start-up thread's, while it loads

// Set where the program's exit begins to wait for the background start-up (gpu_wait_background): that start-up then
// does only what the GPU needs to exist, leaving to a first call what it would have done ahead of one (opening cuBLAS
// and cuSOLVER, measuring the link), and starts no CUDA at all if it has not yet. A start-up begun by a program's last
// calls was otherwise waited for whole at exit, for a GPU no call would use: on the H200 an exit at once after that
// call took 0.48-0.51 s, now 0.27-0.41 (CUDA's context is the rest). Only the background thread cuts short: a start-up
// in a caller's thread is for that call (gpu mode, or a call that waits for it), and runs whole.
std::atomic<bool> g_exiting{false};
bool exit_cuts_short() { return t_at_program_priority && g_exiting.load(std::memory_order_acquire); }

// The link's measurement at the start-up, once per node, GPU and MPI job (policy/measured_link.h): ranks of one node
// start their GPUs at the same moment; ranks sharing one measured it side by side, each reading the other's traffic as
// a slower link, and every rank paid 110-140 ms for what one measurement tells. The others wait up to kNodeLinkWaitMs
// (the measurement alone takes 110-140 ms) for the first one's file.
constexpr int kNodeLinkWaitMs = 1500;
constexpr double kNodeLinkMaxAgeS = 3600;  // a later job's ranks measure again, at most hourly
const bo_cuda_module* g_measured_module = nullptr;
int measure_link_for_node(bo_cuda_rates* out) {
  const bo_cuda_module* m = g_measured_module;
  const std::string path = policy::node_link_path(m->name, policy::mpi_job());
  if (path.empty()) return m->measure_link(out);  // not a rank of an MPI job: alone, as before
  bool shared = false;
  const int st = policy::measure_link_once_per_node(
      path, kNodeLinkWaitMs, kNodeLinkMaxAgeS, [m](bo_cuda_rates* r) { return m->measure_link(r); }, out, &shared);
  if (shared && st == BO_CUDA_OK)
    log_info("GPU link: this node's measurement of the same GPU, from %s", path.c_str());
  else if (shared)
    log_debug("GPU link: another process of this node was measuring it (%s); the built-in numbers stay", path.c_str());
  return st;
}

const char* status_name(int st) {
  switch (st) {
    case BO_CUDA_NO_DEVICE:
      return "no usable CUDA device";
    case BO_CUDA_OUT_OF_MEMORY:
      return "out of GPU memory";
    case BO_CUDA_LAUNCH_FAILED:
      return "GPU launch or copy failure";
    case BO_CUDA_UNSUPPORTED:
      return "not supported on the GPU";
    case BO_CUDA_FORKED_CHILD:
      return "fork() child of a CUDA process";
    case BO_CUDA_CPU_ANSWERS:
      return "the CPU LAPACK answers (INFO > 0 or non-finite values)";
    default:
      return "unknown GPU failure";
  }
}

// The module sits next to libblasoffload.so unless BLASOFFLOAD_CUDA_MODULE names it.
std::string module_path() {
  const std::string& configured = settings().cuda_module;
  if (!configured.empty()) return configured;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&module_path), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    auto slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + "libblasoffload_cuda.so";
  }
  return "libblasoffload_cuda.so";
}

const char* host_config(const char* key) { return config_value(key); }
void host_log(int level, const char* message) {
  if (level <= 0)
    log_warning("%s", message);
  else if (level == BO_LOG_SUMMARY)
    log_info("%s", message);
  else if (level == BO_LOG_CALLS)
    log_call("%s", message);
  else
    log_debug("%s", message);
}
// The CPU share of hybrid calls and the tiles a failing GPU left: the CPU library's own routine, in the family (and
// integer type) the call came through. Sizes come from this library's callers, so they fit that type.
void host_cpu_call(const bo_call* c) {
  const auto f = Family(c->family);
  void* fn = __atomic_load_n(&g_cpu.fortran[int(f)][c->routine], __ATOMIC_ACQUIRE);
  if (!fn) fn = resolve_late(Routine(c->routine), f);
  if (!fn) cpu_blas_missing_routine(Routine(c->routine), f);
  if (!bo::routines::call_fortran(fn, *c))
    log_fatal("internal error: the CUDA module asked the CPU to run %s, which it never hands back",
              routine_name(Routine(c->routine)));
}
// The module's work beside the program (unpinning memory it freed) wants a core of the CPU BLAS's.
void host_want_core(int delta) { policy::want_core(delta); }
int host_exiting() { return exit_cuts_short() ? 1 : 0; }
const bo_cuda_host_services kHost = {BO_CUDA_API_VERSION, host_config,    host_log,
                                     host_cpu_call,       host_want_core, host_exiting};

void load() {
  g_tried.store(true);
  g_state.store(int(GpuLoad::kLoading));
  g_unavailable = new std::string();
  std::string path = module_path();
  g_bg_stage.store("loading the CUDA module and its libraries");
  log_debug("GPU start-up: loading %s", path.c_str());
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto t0 = Clock::now();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *g_unavailable = std::string("CUDA module not loadable (") + dlerror() + ")";
    return;
  }
  auto entry = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY));
  const bo_cuda_module* m = entry ? entry() : nullptr;
  if (!m || m->version != BO_CUDA_API_VERSION) {
    *g_unavailable = path + " is not a compatible blasoffload CUDA module";
    return;
  }
  const double load_ms = ms_since(t0);
  if (exit_cuts_short()) {
    *g_unavailable = "not started: the program began to exit during the GPU start-up";
    log_debug("GPU start-up: module loaded in %.0f ms; the program is exiting: CUDA not started", load_ms);
    return;
  }
  g_bg_stage.store("initialising CUDA and the device");
  log_debug("GPU start-up: module loaded; initialising the device");
  const auto t1 = Clock::now();
  int st = m->init(&kHost);
  const double init_ms = ms_since(t1);
  if (st != BO_CUDA_OK) {
    *g_unavailable = std::string(m->name) + ": " + status_name(st);
    if (st == BO_CUDA_NO_DEVICE) {
      const GpuDiagnosis d = diagnose_gpu();
      if (!d.usable) *g_unavailable += " (" + d.reason + ")";
    }
    return;
  }
  // The program's first LAPACK call on the GPU would pay opening cuSOLVER: open it here, at the start-up's priority,
  // when such a call came before the GPU was up (module API solver()). Running small factorizations here as well, to
  // load cuSOLVER's kernels ahead, took 290-850 ms of start-up on the lent H100 for about 100 ms less on a first
  // dgetrf n = 16384, and every program's exit waits for the start-up: not done.
  if (exit_cuts_short()) {
    log_debug("GPU start-up: the program is exiting: cuSOLVER and the link's measurement left out");
  } else {
    double solver_ms = 0;
    if (policy::wants_solver()) {
      g_bg_stage.store("opening cuSOLVER");
      const auto ts = Clock::now();
      m->solver(1);
      solver_ms = ms_since(ts);
    }
    g_bg_stage.store("measuring the link (no calibration of this GPU)");
    const auto t2 = Clock::now();
    g_measured_module = m;
    static bo_cuda_module node_module;  // the module as the policy's start-up sees it (measure_link_for_node)
    node_module = *m;
    if (m->measure_link) node_module.measure_link = &measure_link_for_node;
    if (t_at_program_priority)
      t_at_program_priority->run([] { policy::gpu_ready(&node_module); });
    else
      policy::gpu_ready(&node_module);
    log_info(
        "GPU path ready: %s; start-up %.0f ms (loading the module %.0f, initialising %.0f, opening cuSOLVER %.0f, the "
        "policy's link %.0f)",
        m->name, ms_since(t0), load_ms, init_ms, solver_ms, ms_since(t2));
  }
  g_bg_stage.store("done");
  g_module.store(m, std::memory_order_release);
}

void* background_main(void*) {
  {
    AtProgramPriority at_program_priority;  // before the priority is lowered (see the class); ended before the end
    t_at_program_priority = &at_program_priority;
    // Lowest priority: the start-up runs beside a CPU BLAS that has every core busy, and must take from it only what
    // it leaves idle (nice applies per thread on Linux).
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    // Named from inside: the thread may end and be joined before its creator could name it. top and the mix benchmark
    // tell it from the CPU BLAS's threads by the name.
    pthread_setname_np(pthread_self(), "bo-gpu-start");
    gpu_module();
    t_at_program_priority = nullptr;
  }
  policy::want_core(-1);  // gpu_load_in_background's want: OpenBLAS gets its thread back at the next call
  BackgroundEnd& e = bg_end();
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    e.done = true;
  }
  e.cv.notify_all();
  return nullptr;
}

}  // namespace

const bo_cuda_module* gpu_module() {
  if (g_forked.load(std::memory_order_relaxed)) return nullptr;
  if (const bo_cuda_module* m = g_module.load(std::memory_order_acquire)) return m;
  std::call_once(g_once, [] {
    load();
    // An explicit request for the GPU that cannot be met is worth one line; auto mode stays silent.
    if (!g_module.load() && settings().mode == Mode::kGpu)
      log_warning("BLASOFFLOAD_MODE=gpu but %s; running on the CPU BLAS", g_unavailable->c_str());
    else if (!g_module.load())
      log_debug("GPU unavailable: %s", g_unavailable->c_str());
    g_state.store(int(g_module.load() ? GpuLoad::kReady : GpuLoad::kUnavailable), std::memory_order_release);
  });
  return g_module.load(std::memory_order_acquire);
}

GpuLoad gpu_load_state() { return GpuLoad(g_state.load(std::memory_order_acquire)); }

const bo_cuda_module* gpu_module_if_ready() {
  if (g_forked.load(std::memory_order_relaxed)) return nullptr;
  return g_module.load(std::memory_order_acquire);
}

void gpu_load_in_background() {
  if (g_forked.load() || g_bg_started.exchange(true)) return;
  g_state.store(int(GpuLoad::kLoading));
  // The program's signal handlers must not run on our thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_bg_owner = getpid();
  gpu_arm_exit_guard();
  g_bg_began = std::chrono::steady_clock::now();
  bg_end();  // made here, not first by the thread
  // The start-up's CPU work must not take slices from a CPU BLAS whose threads fill the cores (policy/lent_core.h).
  policy::want_core(+1);
  const int rc = pthread_create(&g_bg_thread, nullptr, background_main, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    g_bg_owner = 0;
    gpu_module();  // no thread to be had: load here
    policy::want_core(-1);
  }
}

bool gpu_wait_background(int max_ms) {
  g_exiting.store(true, std::memory_order_release);  // only the exit waits (module_loader.h): cut the start-up short
  if (!g_bg_started.load() || g_bg_owner != getpid()) return true;
  static std::atomic<bool> waited{false}, joined{false};
  if (waited.exchange(true)) max_ms = 0;  // exit waits once in all (the main thread's guard, then at_exit)
  BackgroundEnd& e = bg_end();
  bool done;
  {
    std::unique_lock<std::mutex> lock(e.mutex);
    done = e.cv.wait_for(lock, std::chrono::milliseconds(max_ms), [&] { return e.done; });
  }
  if (done) {
    if (!joined.exchange(true)) pthread_join(g_bg_thread, nullptr);
    return true;
  }
  if (max_ms > 0) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_bg_began).count();
    log_warning("exit: the background GPU start-up (%s, %.0f ms so far) did not finish within %d ms; ending without it",
                g_bg_stage.load(), ms, max_ms);
  }
  return false;
}

namespace {
// glibc's exit() runs the exiting thread's thread_local destructors before any atexit handler. The CUDA runtime, and
// the module's libraries as they load, register exit handlers of their own while the start-up runs, after ours, so
// they run before ours: a start-up still under way would have the runtime torn down beneath it (measured on the GPU:
// the process crashed at exit, or never ended). This guard, armed on the main thread, waits for the start-up first.
struct ExitGuard {
  bool armed = false;
  ~ExitGuard() {
    if (armed) gpu_wait_background(settings().exit_wait_ms);
  }
};
thread_local ExitGuard t_exit_guard;
}  // namespace

void gpu_arm_exit_guard() {
  thread_local int is_main = -1;  // the main thread's id is the process id (a system call: asked once per thread)
  if (is_main < 0) is_main = syscall(SYS_gettid) == getpid();
  if (is_main) t_exit_guard.armed = true;
}

void note_gpu_failure(const char* routine, int status) {
  unsigned bit = 1u << (status & 31);
  if (g_warned_kinds.fetch_or(bit) & bit) {
    log_call("%s: GPU failed (%s); ran on the CPU", routine, status_name(status));
    return;
  }
  if (status != BO_CUDA_UNSUPPORTED)
    log_warning("%s: %s; this and later such calls run on the CPU BLAS", routine, status_name(status));
}

void gpu_forked_child() {
  g_forked.store(true);
  g_state.store(int(GpuLoad::kUnavailable));
  policy::want_core_forked_child();  // the start-up's and the unpinning threads did not follow
  if (const bo_cuda_module* m = g_module.load()) m->forked_child();
}

void gpu_shutdown() {
  if (g_forked.load()) return;
  if (const bo_cuda_module* m = g_module.load()) m->shutdown();
}

std::string gpu_status_line() {
  if (g_forked.load()) return "not used (fork() child)";
  if (const bo_cuda_module* m = g_module.load()) return m->name;
  if (!g_tried.load()) return "not used (no call was routed to the GPU)";
  if (gpu_load_state() == GpuLoad::kLoading) return "still starting (in the background)";
  return g_unavailable ? "unavailable: " + *g_unavailable : "initialising";
}

}  // namespace blasoffload
