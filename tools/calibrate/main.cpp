// blasoffload-calibrate: measures this machine's CPU BLAS and CPU LAPACK per routine and shape class and writes the
// policy file the offload policy reads (src/policy/calibration.h). The CPU side needs no GPU.
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <type_traits>
#include <vector>

#include "common/options.h"
#include "cpu_lapack.h"
#include "gpu_side.h"
#include "measure.h"
#include "policy/calibration.h"
#include "policy/cpu_blas_probe.h"
#include "routines/all.h"

namespace {

namespace br = bo::routines;
using blasoffload::calibrate::add;
using blasoffload::calibrate::random_vector;
using blasoffload::calibrate::time_call;
using blasoffload::policy::Calibration;

// The CPU BLAS's routines in one precision (prefix "s" or "d").
template <class T>
struct Blas {
  typename br::Gemm<T>::Fortran* gemm;
  typename br::Gemv<T>::Fortran* gemv;
  typename br::Trsv<T>::Fortran* trsv;
  typename br::Nrm2<T>::Fortran* nrm2;
  typename br::Trsm<T>::Fortran* trsm;
  typename br::Syrk<T>::Fortran* syrk;
  bool complete() const { return gemm && gemv && trsv && nrm2 && trsm && syrk; }
};
template <class T>
Blas<T> lookup(void* h) {
  const std::string p = std::is_same<T, float>::value ? "s" : "d";
  auto f = [&](const char* name) { return dlsym(h, (p + name + "_").c_str()); };
  using F = Blas<T>;
  return F{reinterpret_cast<decltype(F::gemm)>(f("gemm")), reinterpret_cast<decltype(F::gemv)>(f("gemv")),
           reinterpret_cast<decltype(F::trsv)>(f("trsv")), reinterpret_cast<decltype(F::nrm2)>(f("nrm2")),
           reinterpret_cast<decltype(F::trsm)>(f("trsm")), reinterpret_cast<decltype(F::syrk)>(f("syrk"))};
}

// One precision's classes (their names: the precision letter p, then the descriptor's class suffix).
template <class T>
void measure(const Blas<T>& b, bool quick, Calibration& c) {
  const std::string p = std::is_same<T, float>::value ? "s" : "d";
  constexpr double E = sizeof(T);
  const char N = 'N', Tr = 'T', L = 'L';
  const T one = 1, zero = 0, minus = -1;
  const int inc = 1;
  const size_t fl = 1;  // hidden Fortran string lengths
  auto gemm = [&](int m, int n, int k, T beta) {
    auto A = random_vector<T>(size_t(m) * k, 1), B = random_vector<T>(size_t(k) * n, 2),
         C = random_vector<T>(size_t(m) * n, 3);
    return time_call(
        [&] { b.gemm(&N, &N, &m, &n, &k, &minus, A.data(), &m, B.data(), &k, &beta, C.data(), &m, fl, fl); });
  };
  using blasoffload::calibrate::SizeBound;
  SizeBound square, rank_k, panel;
  for (int s : quick ? std::vector<int>{64, 128} : std::vector<int>{64, 128, 256, 512, 1024, 2048, 4096})
    if (square.allow(2.0 * s * s * s, 3 * E * s * s))
      add(c, p + "gemm.square", 2.0 * s * s * s, gemm(s, s, s, zero), 1.0);
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 1024, 2048, 4096, 8192})
    if (rank_k.allow(2.0 * s * s * 64, E * s * (s + 128.0)))
      add(c, p + "gemm.rank_k", 2.0 * s * s * 64, gemm(s, s, 64, one), 1.0);
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 2048, 8192})
    if (panel.allow(2.0 * s * 64 * s, E * s * (s + 128.0)))
      add(c, p + "gemm.panel", 2.0 * s * 64 * s, gemm(s, 64, s, one), 1.0);
  for (char t : {N, Tr}) {
    SizeBound bound;
    for (int n : quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 1024, 4096, 16384}) {
      if (!bound.allow(E * n * n, E * n * n)) continue;
      auto A = random_vector<T>(size_t(n) * n, 4), x = random_vector<T>(n, 5), y = random_vector<T>(n, 6);
      const double s =
          time_call([&] { b.gemv(&t, &n, &n, &one, A.data(), &n, x.data(), &inc, &zero, y.data(), &inc, fl); });
      add(c, p + (t == N ? "gemv.n" : "gemv.t"), E * n * n, s, 1.0);
    }
  }
  for (char t : {N, Tr}) {
    SizeBound bound;
    for (int n : quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 1024, 4096, 16384}) {
      if (!bound.allow(E * n * n, 2 * E * n * n)) continue;
      std::vector<T> A(size_t(n) * n, T(0));
      auto off = random_vector<T>(size_t(n) * n, 7);
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) A[i + size_t(j) * n] = i == j ? T(2) : off[i + size_t(j) * n] / T(n);
      const auto rhs = random_vector<T>(n, 8);
      auto x = rhs;
      // The solution stays bounded (diagonally dominant), so repeated solves in place time the same work.
      const double s = time_call([&] { b.trsv(&L, &t, &N, &n, A.data(), &n, x.data(), &inc, fl, fl, fl); });
      add(c, p + (t == N ? "trsv.n" : "trsv.t"), E * n * (n + 1.0) / 2, s, 1.0);
    }
  }
  SizeBound nrm2;
  for (int n : quick ? std::vector<int>{1000, 100000} : std::vector<int>{1000, 100000, 10000000, 100000000}) {
    if (!nrm2.allow(E * n, E * n)) continue;
    auto x = random_vector<T>(n, 9);
    volatile T sink = 0;
    const double s = time_call([&] { sink = b.nrm2(&n, x.data(), &inc); });
    add(c, p + "nrm2", E * n, s, 1.0);
  }
  // Level 3 beyond gemm, square shapes (the class is by flops, and LAPACK's calls span both small triangles with many
  // right-hand sides and the reverse), every doubling of n as for gemm: between n = 128 and 512 the curve read ssyrk
  // n = 256 at 129 us on the lent H100 where it takes 60-90, and the calibrated library sent the first 5-15 calls of
  // such a point to a GPU twice as slow.
  const char U = 'U';
  SizeBound trsm, syrk;
  const std::vector<int> l3_sizes = quick ? std::vector<int>{64, 128} : std::vector<int>{128, 256, 512, 1024, 2048};
  for (int s : l3_sizes) {
    if (!trsm.allow(double(s) * s * s, 2 * E * s * s)) continue;
    // The identity in the triangle: all the arithmetic of a solve, yet B comes back unchanged, so repeated solves in
    // place time the same work without drifting toward overflow or subnormals.
    std::vector<T> A(size_t(s) * s, T(0));
    for (int i = 0; i < s; ++i) A[i + size_t(i) * s] = T(1);
    auto B = random_vector<T>(size_t(s) * s, 10);
    const double t =
        time_call([&] { b.trsm(&L, &L, &N, &N, &s, &s, &one, A.data(), &s, B.data(), &s, fl, fl, fl, fl); });
    add(c, p + "trsm", double(s) * s * s, t, 1.0);
  }
  for (int s : l3_sizes) {
    if (!syrk.allow(double(s) * s * s, 2 * E * s * s)) continue;
    auto A = random_vector<T>(size_t(s) * s, 11), C = random_vector<T>(size_t(s) * s, 12);
    // C -= A A^T, LAPACK's (spotrf's) form; C grows only linearly over the repetitions.
    const double t = time_call([&] { b.syrk(&U, &N, &s, &s, &minus, A.data(), &s, &one, C.data(), &s, fl, fl); });
    add(c, p + "syrk", double(s) * s * s, t, 1.0);
  }
}

std::string default_out() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string dir =
      xdg && *xdg ? std::string(xdg) + "/blasoffload" : std::string(home ? home : ".") + "/.config/blasoffload";
  return dir + "/policy.json";
}

// --auto: the hard bound on the measuring process's life (wall clock: at the lowest priority on a busy machine it may
// get little CPU; killed, it leaves the old file, if any, in place, and the library does not retry within the hour).
constexpr unsigned kAutoBoundS = 600;

// --auto: how long the measuring process waits for the program that started it to end before giving up.
constexpr unsigned kAutoWaitS = 24 * 3600;

// --auto --after-pid: waits until process `pid` has ended (the program that started the calibration). Measuring
// beside it, even at the lowest priority and in the idle scheduling class, cost a busy CPU BLAS's threaded calls a
// scheduler slice each (milliseconds on 16-thread OpenBLAS solves of n = 64, against 10-20 us alone). A look every
// 200 ms (no descriptor kept open: the measuring process holds only the lock). False when it did not end within
// kAutoWaitS.
bool wait_for_exit(long pid) {
  const auto start = std::chrono::steady_clock::now();
  while (kill(pid_t(pid), 0) == 0 || errno == EPERM) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(kAutoWaitS)) return false;
    usleep(200000);
  }
  return true;
}

// --auto: started by the library (src/policy/auto_calibrate.cpp) in a session of its own, stdin and stdout on
// /dev/null, stderr on a log next to the policy file, the lock file's descriptor at `lock_fd`. Forks once more, so
// that the process the library waits for ends at once and the measuring one is nobody's child (the program's
// waitpid never sees it); the measuring one's pid goes into the lock file for the library's policy line. Returns in
// the measuring process, at the lowest priority, after the program `after_pid` (when > 0) ended, with its time bound
// set; false if it cannot fork (it exits when the program did not end in time).
bool detach(int lock_fd, long after_pid) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid > 0) {
    if (lock_fd >= 0) dprintf(lock_fd, "pid %d\n", int(pid));
    _exit(0);
  }
  if (setpriority(PRIO_PROCESS, 0, 19) != 0) std::perror("blasoffload-calibrate: setpriority");
#ifdef SCHED_IDLE
  sched_param sp{};
  if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0) std::perror("blasoffload-calibrate: SCHED_IDLE");
#endif
  if (after_pid > 0) {
    std::fprintf(stderr, "blasoffload-calibrate: waiting for the program (pid %ld) to end\n", after_pid);
    if (!wait_for_exit(after_pid)) {
      std::fprintf(stderr, "blasoffload-calibrate: the program did not end within %u h; not measuring\n",
                   kAutoWaitS / 3600);
      std::exit(1);
    }
  }
  alarm(kAutoBoundS);
  return true;
}

void make_parent(const std::string& path) {
  for (size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
    mkdir(path.substr(0, p).c_str(), 0755);
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib = "libblas.so.3", lapack, out, module;
  bool no_gpu = false;
  bool quick = false;
  bool auto_mode = false;
  std::string lock_fd_text, after_pid_text;
  blasoffload::tools::OptionParser opts("blasoffload-calibrate",
                                        "Measures this machine's CPU BLAS and CPU LAPACK (and GPU side) and writes "
                                        "the policy file the offload policy reads.",
                                        BLASOFFLOAD_VERSION);
  opts.text("cpu-blas", &lib, "PATH",
            "the CPU BLAS to measure (default: libblas.so.3 as the dynamic linker finds it; use the same library, "
            "and the same OPENBLAS_* / OMP_* settings, as the programs to run)");
  opts.text("lapack", &lapack, "PATH",
            "the CPU LAPACK to measure (default: the CPU BLAS when it defines LAPACK, as libopenblas does, else "
            "liblapack.so.3 as the dynamic linker finds it; none found: its classes are derived from the BLAS rates)");
  opts.text("out", &out, "PATH",
            "the policy file (default: $XDG_CONFIG_HOME/blasoffload/policy.json, where the library looks; "
            "~/.config if XDG_CONFIG_HOME is unset)");
  opts.flag("quick", &quick, "small sizes only (a few seconds; for tests)");
  opts.flag("no-gpu", &no_gpu, "CPU side only (the library then uses built-in GPU numbers)");
  opts.text("module", &module, "PATH",
            "the CUDA module whose GPU side to measure (default: next to this tool, or in the library directory)");
  opts.flag("auto", &auto_mode,
            "the library's background calibration: detach, lowest priority, sizes bounded to a few seconds per "
            "point and 512 MiB of operands, at most 10 minutes in all (requires --out)");
  opts.text("lock-fd", &lock_fd_text, "N", "--auto: the descriptor of the lock file, held while measuring");
  opts.text("after-pid", &after_pid_text, "PID",
            "--auto: measure once process PID (the program that started the calibration) has ended, so that the "
            "measurement never shares the cores with its CPU BLAS");
  if (const int rc = opts.parse(argc, argv); rc >= 0) return rc;
  if (auto_mode) {
    if (out.empty()) {
      std::fprintf(stderr, "blasoffload-calibrate: --auto requires --out\n");
      return 2;
    }
    if (!detach(lock_fd_text.empty() ? -1 : std::atoi(lock_fd_text.c_str()),
                after_pid_text.empty() ? 0 : std::atol(after_pid_text.c_str()))) {
      std::perror("blasoffload-calibrate: fork");
      return 1;
    }
    blasoffload::calibrate::set_auto_bounds(true);
  }
  if (out.empty()) out = default_out();
  blasoffload::calibrate::set_quick_timing(quick);
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "blasoffload-calibrate: cannot load the CPU BLAS %s: %s\n", lib.c_str(), dlerror());
    return 1;
  }
  const Blas<float> bs = lookup<float>(h);
  const Blas<double> bd = lookup<double>(h);
  if (!bs.complete() || !bd.complete()) {
    std::fprintf(stderr, "blasoffload-calibrate: %s lacks some of ?gemm_ ?gemv_ ?trsv_ ?nrm2_ ?trsm_ ?syrk_ (s, d)\n",
                 lib.c_str());
    return 1;
  }
  Calibration c;
  Dl_info info{};
  // The key the library compares: the object path as the dynamic linker reports it, and its self-report.
  c.cpu.library = dladdr(reinterpret_cast<void*>(bs.gemm), &info) && info.dli_fname ? info.dli_fname : lib;
  const auto report = blasoffload::probe_cpu_blas(reinterpret_cast<void*>(bs.gemm));
  c.cpu.report = report.identity;
  c.tool = "blasoffload-calibrate " BLASOFFLOAD_VERSION;
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c.created = when;
  std::fprintf(stderr, "blasoffload-calibrate: %s%s%s\n", c.cpu.library.c_str(), c.cpu.report.empty() ? "" : " : ",
               c.cpu.report.c_str());
  if (!report.advice.empty()) std::fprintf(stderr, "blasoffload-calibrate: note: %s\n", report.advice.c_str());
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  measure(bs, quick, c);
  measure(bd, quick, c);
  const auto blas_done = Clock::now();
  if (std::string why; !blasoffload::calibrate::measure_cpu_lapack(lapack, h, quick, &c, &why)) {
    std::fprintf(stderr, "blasoffload-calibrate: %s\n", why.c_str());
    return 1;
  }
  std::fprintf(stderr, "blasoffload-calibrate: CPU side measured in %.1f s (BLAS %.1f s, LAPACK %.1f s)\n",
               std::chrono::duration<double>(Clock::now() - start).count(),
               std::chrono::duration<double>(blas_done - start).count(),
               std::chrono::duration<double>(Clock::now() - blas_done).count());
  if (no_gpu) {
    std::fprintf(stderr, "blasoffload-calibrate: GPU side not measured (--no-gpu)\n");
  } else if (module.empty() && access("/dev/nvidiactl", F_OK) != 0) {
    std::fprintf(stderr, "blasoffload-calibrate: no NVIDIA GPU on this machine: CPU side only\n");
  } else {
    std::string why;
    if (module.empty()) module = blasoffload::calibrate::default_module_path();
    if (blasoffload::calibrate::measure_gpu(module, &c, &why))
      std::fprintf(stderr,
                   "blasoffload-calibrate: GPU %s: host->device %.1f GB/s, device->host %.1f GB/s (pinned), staging "
                   "%.1f GB/s, call %.1f us + %.1f us per further copy, start-up %.0f ms\n",
                   c.gpu.c_str(), c.h2d_gbs, c.d2h_gbs, c.pageable_gbs, c.call_overhead_us, c.copy_latency_us,
                   c.init_ms);
    else
      std::fprintf(stderr, "blasoffload-calibrate: GPU side not measured: %s\n", why.c_str());
  }
  make_parent(out);
  std::string err;
  if (!blasoffload::policy::save_calibration(out, c, &err)) {
    std::fprintf(stderr, "blasoffload-calibrate: %s\n", err.c_str());
    return 1;
  }
  std::fprintf(stderr, "blasoffload-calibrate: wrote %s\n", out.c_str());
  return 0;
}
