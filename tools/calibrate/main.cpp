// blasoffload-calibrate: measures this machine's CPU BLAS per routine and shape class and writes the policy
// file the offload policy reads (src/policy/calibration.h). The CPU side needs no GPU.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "abi/signatures.h"
#include "common/options.h"
#include "policy/calibration.h"
#include "gpu_side.h"
#include "policy/cpu_blas_probe.h"

namespace {

using blasoffload::sgemm_fortran_t;
using blasoffload::sgemv_fortran_t;
using blasoffload::snrm2_fortran_t;
using blasoffload::ssyrk_fortran_t;
using blasoffload::strsm_fortran_t;
using blasoffload::strsv_fortran_t;
using blasoffload::policy::Calibration;
using blasoffload::policy::RatePoint;

struct Blas {
  sgemm_fortran_t* sgemm;
  sgemv_fortran_t* sgemv;
  strsv_fortran_t* strsv;
  snrm2_fortran_t* snrm2;
  strsm_fortran_t* strsm;
  ssyrk_fortran_t* ssyrk;
};

// Median seconds per call of f(): two warm-up calls (threads spun up, pages touched), then calls until 5 and 0.2 s
// of them (a multi-threaded CPU BLAS is noisy on short calls; an underestimated CPU sends calls to the GPU that
// lose there).
double time_call(const std::function<void()>& f) {
  using C = std::chrono::steady_clock;
  f();
  f();
  std::vector<double> t;
  double total = 0;
  while (t.size() < 5 || (total < 0.2 && t.size() < 2000)) {
    const auto a = C::now();
    f();
    const double s = std::chrono::duration<double>(C::now() - a).count();
    t.push_back(s);
    total += s;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 r(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

void add(Calibration& c, const char* cls, double size, double seconds, double work_per_unit) {
  c.cpu_rates[cls].push_back({size, size * work_per_unit / seconds / 1e9});
  std::fprintf(stderr, "  %-13s size %-12.4g %10.2f %s\n", cls, size, c.cpu_rates[cls].back().rate,
               std::string(cls).rfind("sgemm", 0) == 0 || std::string(cls) == "strsm" || std::string(cls) == "ssyrk"
                   ? "GFLOP/s"
                   : "GB/s");
}

void measure(const Blas& b, bool quick, Calibration& c) {
  const char N = 'N', T = 'T', L = 'L';
  const float one = 1.0f, zero = 0.0f, minus = -1.0f;
  const int inc = 1;
  const size_t fl = 1;  // hidden Fortran string lengths
  auto gemm = [&](int m, int n, int k, float beta) {
    auto A = random_vector(size_t(m) * k, 1), B = random_vector(size_t(k) * n, 2), C = random_vector(size_t(m) * n, 3);
    return time_call([&] { b.sgemm(&N, &N, &m, &n, &k, &minus, A.data(), &m, B.data(), &k, &beta, C.data(), &m, fl, fl); });
  };
  for (int s : quick ? std::vector<int>{64, 128} : std::vector<int>{64, 128, 256, 512, 1024, 2048, 4096})
    add(c, "sgemm.square", 2.0 * s * s * s, gemm(s, s, s, zero), 1.0);
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 1024, 2048, 4096, 8192})
    add(c, "sgemm.rank_k", 2.0 * s * s * 64, gemm(s, s, 64, one), 1.0);
  for (int s : quick ? std::vector<int>{256} : std::vector<int>{512, 2048, 8192})
    add(c, "sgemm.panel", 2.0 * s * 64 * s, gemm(s, 64, s, one), 1.0);
  for (char t : {N, T})
    for (int n : quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 1024, 4096, 16384}) {
      auto A = random_vector(size_t(n) * n, 4), x = random_vector(n, 5), y = random_vector(n, 6);
      const double s = time_call([&] { b.sgemv(&t, &n, &n, &one, A.data(), &n, x.data(), &inc, &zero, y.data(), &inc, fl); });
      add(c, t == N ? "sgemv.n" : "sgemv.t", 4.0 * n * n, s, 1.0);
    }
  for (char t : {N, T})
    for (int n : quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 1024, 4096, 16384}) {
      std::vector<float> A(size_t(n) * n, 0.0f);
      auto off = random_vector(size_t(n) * n, 7);
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) A[i + size_t(j) * n] = i == j ? 2.0f : off[i + size_t(j) * n] / float(n);
      const auto rhs = random_vector(n, 8);
      auto x = rhs;
      // The solution stays bounded (diagonally dominant), so repeated solves in place time the same work.
      const double s = time_call([&] { b.strsv(&L, &t, &N, &n, A.data(), &n, x.data(), &inc, fl, fl, fl); });
      add(c, t == N ? "strsv.n" : "strsv.t", 2.0 * n * (n + 1.0), s, 1.0);
    }
  for (int n : quick ? std::vector<int>{1000, 100000} : std::vector<int>{1000, 100000, 10000000, 100000000}) {
    auto x = random_vector(n, 9);
    volatile float sink = 0;
    const double s = time_call([&] { sink = b.snrm2(&n, x.data(), &inc); });
    add(c, "snrm2", 4.0 * n, s, 1.0);
  }
  // Level 3 beyond sgemm, square shapes (a few sizes: the class is by flops, and LAPACK's calls span both small
  // triangles with many right-hand sides and the reverse).
  const char U = 'U';
  for (int s : quick ? std::vector<int>{64, 128} : std::vector<int>{128, 512, 2048}) {
    // The identity in the triangle: all the arithmetic of a solve, yet B comes back unchanged, so repeated solves in
    // place time the same work without drifting toward overflow or subnormals.
    std::vector<float> A(size_t(s) * s, 0.0f);
    for (int i = 0; i < s; ++i) A[i + size_t(i) * s] = 1.0f;
    auto B = random_vector(size_t(s) * s, 10);
    const double t =
        time_call([&] { b.strsm(&L, &L, &N, &N, &s, &s, &one, A.data(), &s, B.data(), &s, fl, fl, fl, fl); });
    add(c, "strsm", double(s) * s * s, t, 1.0);
  }
  for (int s : quick ? std::vector<int>{64, 128} : std::vector<int>{128, 512, 2048}) {
    auto A = random_vector(size_t(s) * s, 11), C = random_vector(size_t(s) * s, 12);
    // C -= A A^T, LAPACK's (spotrf's) form; C grows only linearly over the repetitions.
    const double t = time_call([&] { b.ssyrk(&U, &N, &s, &s, &minus, A.data(), &s, &one, C.data(), &s, fl, fl); });
    add(c, "ssyrk", double(s) * s * s, t, 1.0);
  }
}

std::string default_out() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string dir = xdg && *xdg ? std::string(xdg) + "/blasoffload" : std::string(home ? home : ".") + "/.config/blasoffload";
  return dir + "/policy.json";
}

void make_parent(const std::string& path) {
  for (size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
    mkdir(path.substr(0, p).c_str(), 0755);
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib = "libblas.so.3", out, module;
  bool no_gpu = false;
  bool quick = false;
  blasoffload::tools::OptionParser opts("blasoffload-calibrate",
                                        "Measures this machine's CPU BLAS (and GPU side) and writes the policy file "
                                        "the offload policy reads.",
                                        BLASOFFLOAD_VERSION);
  opts.text("cpu-blas", &lib, "PATH",
            "the CPU BLAS to measure (default: libblas.so.3 as the dynamic linker finds it; use the same library, "
            "and the same OPENBLAS_* / OMP_* settings, as the programs to run)");
  opts.text("out", &out, "PATH",
            "the policy file (default: $XDG_CONFIG_HOME/blasoffload/policy.json, where the library looks; "
            "~/.config if XDG_CONFIG_HOME is unset)");
  opts.flag("quick", &quick, "small sizes only (a few seconds; for tests)");
  opts.flag("no-gpu", &no_gpu, "CPU side only (the library then uses built-in GPU numbers)");
  opts.text("module", &module, "PATH",
            "the CUDA module whose GPU side to measure (default: next to this tool, or in the library directory)");
  if (const int rc = opts.parse(argc, argv); rc >= 0) return rc;
  if (out.empty()) out = default_out();
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "blasoffload-calibrate: cannot load the CPU BLAS %s: %s\n", lib.c_str(), dlerror());
    return 1;
  }
  Blas b{
      reinterpret_cast<sgemm_fortran_t*>(dlsym(h, "sgemm_")), reinterpret_cast<sgemv_fortran_t*>(dlsym(h, "sgemv_")),
      reinterpret_cast<strsv_fortran_t*>(dlsym(h, "strsv_")), reinterpret_cast<snrm2_fortran_t*>(dlsym(h, "snrm2_")),
      reinterpret_cast<strsm_fortran_t*>(dlsym(h, "strsm_")), reinterpret_cast<ssyrk_fortran_t*>(dlsym(h, "ssyrk_"))};
  if (!b.sgemm || !b.sgemv || !b.strsv || !b.snrm2 || !b.strsm || !b.ssyrk) {
    std::fprintf(stderr, "blasoffload-calibrate: %s lacks sgemm_/sgemv_/strsv_/snrm2_/strsm_/ssyrk_\n", lib.c_str());
    return 1;
  }
  Calibration c;
  Dl_info info{};
  // The key the library compares: the object path as the dynamic linker reports it, and its self-report.
  c.cpu.library = dladdr(reinterpret_cast<void*>(b.sgemm), &info) && info.dli_fname ? info.dli_fname : lib;
  const auto report = blasoffload::probe_cpu_blas(reinterpret_cast<void*>(b.sgemm));
  c.cpu.report = report.identity;
  c.tool = "blasoffload-calibrate " BLASOFFLOAD_VERSION;
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c.created = when;
  std::fprintf(stderr, "blasoffload-calibrate: %s%s%s\n", c.cpu.library.c_str(), c.cpu.report.empty() ? "" : " : ",
               c.cpu.report.c_str());
  if (!report.advice.empty()) std::fprintf(stderr, "blasoffload-calibrate: note: %s\n", report.advice.c_str());
  measure(b, quick, c);
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
