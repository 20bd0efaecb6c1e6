// See host_gemm.h. The library is dlopen'ed like any BLAS (RTLD_LOCAL): its gemm decides and offloads as it would in
// an application (BLASOFFLOAD_MODE=gpu forces the GPU); the CPU BLAS is dlopen'ed the same way, so both candidates run
// through the same Fortran ABI on the same operands.
#include "host_gemm.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "json.h"

namespace bo_bench {
namespace {

// sgemm_/dgemm_ with gfortran's hidden string lengths; scalars and arrays by address in the routine's precision.
using FortranGemm = void (*)(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
                             const int*, const void*, const int*, const void*, void*, const int*, size_t, size_t);

struct Candidate {
  const char* kind;  // "library" or "cpu"
  std::string path, error;
  FortranGemm gemm[BO_PREC_COUNT] = {};
};

Candidate Open(const char* kind, const std::string& path) {
  Candidate c{kind, path, "", {}};
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    c.error = bo_gpu::format("cannot load %s: %s", path.c_str(), dlerror());
    return c;
  }
  c.gemm[BO_PREC_S] = reinterpret_cast<FortranGemm>(dlsym(h, "sgemm_"));
  c.gemm[BO_PREC_D] = reinterpret_cast<FortranGemm>(dlsym(h, "dgemm_"));
  return c;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <typename T>
bool RunOne(bo_precision p, int64_t n, std::vector<Candidate>& cands, const HostGemmOptions& o) {
  const size_t count = size_t(n) * size_t(n);
  std::vector<T> a(count), b(count), c(count), ref;
  std::mt19937_64 rng(uint64_t(n) * 7 + uint64_t(p));
  std::uniform_real_distribution<T> uni(-1, 1);
  for (size_t i = 0; i < count; ++i) {
    a[i] = uni(rng);
    b[i] = uni(rng);
  }
  const int ni = int(n);
  const T alpha = 1, beta = 0;
  const double flops = 2.0 * double(n) * double(n) * double(n);
  // Normwise agreement of two results: both within k u of the exact product, relative to max |C| (sums of n products
  // of values in (-1, 1)).
  const double u = p == BO_PREC_D ? 0x1p-53 : 0x1p-24, tolerance = 4.0 * double(n) * u;
  bool ok = true;
  for (Candidate& cd : cands) {
    const std::string shape = bo_gpu::format("n=%lld", (long long)n);
    std::string error = cd.error, check = "not checked";
    double diff = NAN;
    std::vector<double> us;
    if (error.empty() && !cd.gemm[p]) error = bo_gpu::format("%s has no %cgemm_", cd.path.c_str(), "sd"[p]);
    for (int r = 0; error.empty() && r <= o.reps; ++r) {
      std::fill(c.begin(), c.end(), T(NAN));  // beta = 0: C is not read, every element written
      const auto t0 = std::chrono::steady_clock::now();
      cd.gemm[p]("N", "N", &ni, &ni, &ni, &alpha, a.data(), &ni, b.data(), &ni, &beta, c.data(), &ni, 1, 1);
      const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) us.push_back(t);  // the first call pays one-time costs (GPU start, buffers, thread pools)
    }
    if (error.empty()) {
      if (ref.empty()) {
        ref = c;
        check = "reference";
      } else {
        double d = 0, scale = 0;
        for (size_t i = 0; i < count; ++i) {
          d = std::max(d, std::fabs(double(c[i]) - double(ref[i])));
          scale = std::max(scale, std::fabs(double(ref[i])));
          if (!(d == d)) break;
        }
        diff = scale > 0 ? d / scale : d;
        check = diff <= tolerance ? "ok" : "differs from the reference";
      }
    }
    if (!error.empty() || check == "differs from the reference") ok = false;
    const double med = Median(us);
    const double mn = us.empty() ? NAN : *std::min_element(us.begin(), us.end());
    const double mx = us.empty() ? NAN : *std::max_element(us.begin(), us.end());
    std::printf(
        "{\"routine\": \"%cgemm_host\", \"precision\": \"%c\", \"shape\": %s, \"n\": %lld, \"candidate\": \"%s\", "
        "\"entry\": %s, \"time_us\": %s, \"min_us\": %s, \"max_us\": %s, \"reps\": %zu, \"flops\": %.6g, "
        "\"tflops\": %s, \"check\": %s, \"check_rel_diff\": %s, \"check_tolerance\": %s, \"error\": %s, "
        "\"date\": %s, \"commit\": %s}\n",
        "sd"[p], "sd"[p], Json(shape).c_str(), (long long)n, cd.kind, Json(cd.path).c_str(), Num(med).c_str(),
        Num(mn).c_str(), Num(mx).c_str(), us.size(), flops, Num(flops / (med * 1e-6) / 1e12).c_str(),
        Json(check).c_str(), Num(diff).c_str(), Num(tolerance).c_str(), Json(error).c_str(), Json(o.date).c_str(),
        Json(o.commit).c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "%cgemm host n=%lld %-8s %12.0f us  %s%s\n", "sd"[p], (long long)n, cd.kind, med,
                 check.c_str(), error.empty() ? "" : (" ERROR " + error).c_str());
  }
  return ok;
}

}  // namespace

bool RunHostGemm(const HostGemmOptions& o) {
  std::vector<Candidate> cands;
  // The CPU BLAS first: its result is the reference the library's is held to.
  if (!o.cpu_blas.empty()) cands.push_back(Open("cpu", o.cpu_blas));
  cands.push_back(Open("library", o.library));
  const char* mode = bo_gpu::env_config("BLASOFFLOAD_MODE");
  const char* cpu = bo_gpu::env_config("BLASOFFLOAD_CPU_BLAS");
  std::printf(
      "{\"context\": {\"host_gemm\": true, \"library\": %s, \"cpu_blas\": %s, \"blasoffload_mode\": %s, "
      "\"blasoffload_cpu_blas\": %s, \"reps\": %d, \"date\": %s, \"commit\": %s}}\n",
      Json(o.library).c_str(), Json(o.cpu_blas.empty() ? "(not timed)" : o.cpu_blas).c_str(),
      Json(mode ? mode : "(unset)").c_str(), Json(cpu ? cpu : "(unset)").c_str(), o.reps, Json(o.date).c_str(),
      Json(o.commit).c_str());
  bool ok = true;
  for (bo_precision p : o.precisions)
    for (int64_t n : o.sizes) ok &= p == BO_PREC_D ? RunOne<double>(p, n, cands, o) : RunOne<float>(p, n, cands, o);
  return ok;
}

}  // namespace bo_bench
