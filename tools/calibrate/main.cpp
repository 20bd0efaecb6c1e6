// blasoffload-calibrate: measures this machine's CPU BLAS and CPU LAPACK per routine and shape class and writes the
// policy file the offload policy reads (src/policy/calibration.h). The CPU side needs no GPU.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
#include "policy/calibration_checks.h"
#include "policy/cpu_blas_probe.h"
#include "quiet.h"
#include "routines/all.h"

namespace {

namespace br = bo::routines;
using blasoffload::calibrate::add;
using blasoffload::calibrate::busy;
using blasoffload::calibrate::random_vector;
using blasoffload::calibrate::time_call;
using blasoffload::calibrate::Timing;
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
    if (busy()) return Timing{};  // measuring stopped: no operands made
    auto A = random_vector<T>(size_t(m) * k, 1), B = random_vector<T>(size_t(k) * n, 2),
         C = random_vector<T>(size_t(m) * n, 3);
    return time_call(
        [&] { b.gemm(&N, &N, &m, &n, &k, &minus, A.data(), &m, B.data(), &k, &beta, C.data(), &m, fl, fl); });
  };
  for (int s : quick ? std::vector<int>{64, 128} : std::vector<int>{64, 128, 256, 512, 1024, 2048, 4096})
    add(c, p + "gemm.square", 2.0 * s * s * s, gemm(s, s, s, zero), 1.0);
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 1024, 2048, 4096, 8192})
    add(c, p + "gemm.rank_k", 2.0 * s * s * 64, gemm(s, s, 64, one), 1.0);
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 2048, 8192})
    add(c, p + "gemm.panel", 2.0 * s * 64 * s, gemm(s, 64, s, one), 1.0);
  for (char t : {N, Tr}) {
    for (int n : quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 1024, 4096, 16384}) {
      if (busy()) break;
      auto A = random_vector<T>(size_t(n) * n, 4), x = random_vector<T>(n, 5), y = random_vector<T>(n, 6);
      const Timing s =
          time_call([&] { b.gemv(&t, &n, &n, &one, A.data(), &n, x.data(), &inc, &zero, y.data(), &inc, fl); });
      add(c, p + (t == N ? "gemv.n" : "gemv.t"), E * n * n, s, 1.0);
    }
  }
  for (char t : {N, Tr}) {
    for (int n : quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 1024, 4096, 16384}) {
      if (busy()) break;
      std::vector<T> A(size_t(n) * n, T(0));
      auto off = random_vector<T>(size_t(n) * n, 7);
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) A[i + size_t(j) * n] = i == j ? T(2) : off[i + size_t(j) * n] / T(n);
      const auto rhs = random_vector<T>(n, 8);
      auto x = rhs;
      // The right-hand side restored before each solve (untimed): solved again in place, x shrinks towards zero, and
      // the reference BLAS skips a column's update for a zero entry (strsv n = 1024 read 1745 GB/s).
      const Timing s = time_call([&] { b.trsv(&L, &t, &N, &n, A.data(), &n, x.data(), &inc, fl, fl, fl); },
                                 [&] { std::copy(rhs.begin(), rhs.end(), x.begin()); });
      add(c, p + (t == N ? "trsv.n" : "trsv.t"), E * n * (n + 1.0) / 2, s, 1.0);
    }
  }
  for (int n : quick ? std::vector<int>{1000, 100000} : std::vector<int>{1000, 100000, 10000000, 100000000}) {
    if (busy()) break;
    auto x = random_vector<T>(n, 9);
    volatile T sink = 0;
    const Timing s = time_call([&] { sink = b.nrm2(&n, x.data(), &inc); });
    add(c, p + "nrm2", E * n, s, 1.0);
  }
  // Level 3 beyond gemm, square shapes (the class is by flops, and LAPACK's calls span both small triangles with many
  // right-hand sides and the reverse), every doubling of n as for gemm: between n = 128 and 512 the curve read ssyrk
  // n = 256 at 129 us on the lent H100 where it takes 60-90, and the calibrated library sent the first 5-15 calls of
  // such a point to a GPU twice as slow.
  const char U = 'U';
  const std::vector<int> l3_sizes = quick ? std::vector<int>{64, 128} : std::vector<int>{128, 256, 512, 1024, 2048};
  // A solve of order s with `rhs` right-hand sides: the identity in the triangle, all the arithmetic of a solve, yet B
  // comes back unchanged, so repeated solves in place time the same work without drifting toward overflow or
  // subnormals.
  auto trsm = [&](int s, int rhs, const std::string& cls) {
    if (busy()) return;
    std::vector<T> A(size_t(s) * s, T(0));
    for (int i = 0; i < s; ++i) A[i + size_t(i) * s] = T(1);
    auto B = random_vector<T>(size_t(s) * rhs, 10);
    const Timing t =
        time_call([&] { b.trsm(&L, &L, &N, &N, &s, &rhs, &one, A.data(), &s, B.data(), &s, fl, fl, fl, fl); });
    add(c, p + cls, double(s) * rhs * s, t, 1.0);
  };
  for (int s : l3_sizes) trsm(s, s, "trsm");
  // A narrow block of 64 right-hand sides (trsm.narrow: LAPACK's solves), triangles of order 512 to 8192.
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 2048, 8192}) trsm(s, 64, "trsm.narrow");
  for (int s : l3_sizes) {
    if (busy()) break;
    auto A = random_vector<T>(size_t(s) * s, 11), C = random_vector<T>(size_t(s) * s, 12);
    // C -= A A^T, LAPACK's (spotrf's) form; C grows only linearly over the repetitions.
    const Timing t = time_call([&] { b.syrk(&U, &N, &s, &s, &minus, A.data(), &s, &one, C.data(), &s, fl, fl); });
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

void make_parent(const std::string& path) {
  for (size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
    mkdir(path.substr(0, p).c_str(), 0755);
}

// The GPU side, in a window of its own: its staging copies and tiny calls slow down beside other processes' CPU work
// just as the CPU BLAS does. Measured again once when disturbed; left out (the library then uses the built-in GPU
// numbers and measures the link when it starts the GPU) when still disturbed.
void measure_gpu_side(std::string module, Calibration* c) {
  namespace cal = blasoffload::calibrate;
  if (module.empty()) module = cal::default_module_path();
  for (int attempt = 0; attempt < 2; ++attempt) {
    cal::Disturbance d;
    if (attempt > 0 && !cal::wait_for_quiet(10, &d)) break;
    const cal::MachineCounters a = cal::read_counters();
    std::string why;
    Calibration m = *c;
    if (!cal::measure_gpu(module, &m, &why)) {
      std::fprintf(stderr, "blasoffload-calibrate: GPU side not measured: %s\n", why.c_str());
      return;
    }
    d = cal::between(a, cal::read_counters());
    if (!d.quiet()) {
      std::fprintf(stderr, "blasoffload-calibrate: GPU side disturbed (%s)%s\n", d.describe().c_str(),
                   attempt == 0 ? "; measuring it again once the machine is quiet" : "");
      continue;
    }
    *c = m;
    std::fprintf(stderr,
                 "blasoffload-calibrate: GPU %s: host->device %.1f GB/s, device->host %.1f GB/s (pinned), staging "
                 "%.1f GB/s, call %.1f us + %.1f us per further copy, start-up %.0f ms\n",
                 c->gpu.c_str(), c->h2d_gbs, c->d2h_gbs, c->pageable_gbs, c->call_overhead_us, c->copy_latency_us,
                 c->init_ms);
    return;
  }
  std::fprintf(stderr,
               "blasoffload-calibrate: GPU side left out (the machine was busy): the library will use its "
               "built-in GPU numbers and measure the link when it starts the GPU\n");
}

// Whether what was measured may be written: nothing if measuring stopped or more than a tenth of the points stayed
// disturbed (a file of a few points would be interpolated over the rest: better the built-in rates); otherwise the
// points that passed, less any the library's own consistency checks would reject.
bool fit_to_write(Calibration* c) {
  namespace cal = blasoffload::calibrate;
  const cal::Tally& t = cal::tally();
  if (t.retried)
    std::fprintf(stderr, "blasoffload-calibrate: %d measurements of %d points taken again (disturbed)\n", t.retried,
                 t.points);
  if (cal::busy() || 10 * t.dropped > t.points) {
    std::fprintf(stderr,
                 "blasoffload-calibrate: the machine was busy (%s): %s; nothing written. Run it again when no other "
                 "program is running.\n",
                 t.last_disturbance.c_str(),
                 cal::busy() ? "measuring stopped"
                             : (std::to_string(t.dropped) + " of " + std::to_string(t.points) +
                                " points stayed "
                                "disturbed")
                                   .c_str());
    return false;
  }
  if (t.dropped) std::fprintf(stderr, "blasoffload-calibrate: %d points left out (disturbed)\n", t.dropped);
  for (const auto& r : blasoffload::policy::reject_inconsistent(c))
    std::fprintf(stderr, "blasoffload-calibrate: left out as inconsistent: %s\n",
                 blasoffload::policy::describe(r).c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib = "libblas.so.3", lapack, out, module;
  bool no_gpu = false;
  bool quick = false;
  blasoffload::tools::OptionParser opts("blasoffload-calibrate",
                                        "Measures this machine's CPU BLAS and CPU LAPACK (and GPU side) and writes "
                                        "the policy file the offload policy reads. Run it on an idle machine: a "
                                        "measurement disturbed by other processes or steal is taken again, and if the "
                                        "machine stays busy nothing is written (exit status 3).",
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
  if (const int rc = opts.parse(argc, argv); rc >= 0) return rc;
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
  if (!blasoffload::calibrate::busy())
    std::fprintf(stderr, "blasoffload-calibrate: CPU side measured in %.1f s (BLAS %.1f s, LAPACK %.1f s)\n",
                 std::chrono::duration<double>(Clock::now() - start).count(),
                 std::chrono::duration<double>(blas_done - start).count(),
                 std::chrono::duration<double>(Clock::now() - blas_done).count());
  if (blasoffload::calibrate::busy()) {
    // Measuring stopped: the GPU side is not measured either.
  } else if (no_gpu) {
    std::fprintf(stderr, "blasoffload-calibrate: GPU side not measured (--no-gpu)\n");
  } else if (module.empty() && access("/dev/nvidiactl", F_OK) != 0) {
    std::fprintf(stderr, "blasoffload-calibrate: no NVIDIA GPU on this machine: CPU side only\n");
  } else {
    measure_gpu_side(module, &c);
  }
  if (!fit_to_write(&c)) return 3;
  make_parent(out);
  std::string err;
  if (!blasoffload::policy::save_calibration(out, c, &err)) {
    std::fprintf(stderr, "blasoffload-calibrate: %s\n", err.c_str());
    return 1;
  }
  std::fprintf(stderr, "blasoffload-calibrate: wrote %s\n", out.c_str());
  return 0;
}
