// Google Benchmark: the cost blasoffload adds to a call it forwards to the CPU BLAS (logging off), for
// tiny snrm2/dnrm2 and a 4x4 sgemv/dgemv where that cost would show. Each case runs through our export and through
// the CPU library's own symbol in the same process; bench/overhead_report.py subtracts the medians.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

template <typename T>
using nrm2_t = T(const int*, const T*, const int*);
template <typename T>
using gemv_t = void(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*, const T*,
                    T*, const int*, std::size_t);

void* sym(const char* lib, const char* name) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  void* p = h ? dlsym(h, name) : nullptr;
  if (!p) {
    std::fprintf(stderr, "cannot find %s in %s\n", name, lib);
    std::exit(1);
  }
  return p;
}

// T: float or double (the s and d routines through the same generic path); kOurs: our export or the CPU BLAS's.
template <typename T, bool kOurs>
void BM_nrm2(benchmark::State& state) {
  const char* name = sizeof(T) == 8 ? "dnrm2_" : "snrm2_";
  auto* f = reinterpret_cast<nrm2_t<T>*>(sym(kOurs ? BLASOFFLOAD_LIB_PATH : "libblas.so.3", name));
  const int n = static_cast<int>(state.range(0)), inc = 1;
  std::vector<T> x(n);
  for (int i = 0; i < n; ++i) x[i] = T(0.5) + T(0.01) * i;  // never time zeros
  for (auto _ : state) {
    T r = f(&n, x.data(), &inc);
    benchmark::DoNotOptimize(r);
  }
}

template <typename T, bool kOurs>
void BM_gemv4x4(benchmark::State& state) {
  const char* name = sizeof(T) == 8 ? "dgemv_" : "sgemv_";
  auto* f = reinterpret_cast<gemv_t<T>*>(sym(kOurs ? BLASOFFLOAD_LIB_PATH : "libblas.so.3", name));
  const int n = 4, one = 1;
  const T alpha = 1, beta = 0.5;
  std::vector<T> a(16), x(4), y(4);
  for (int i = 0; i < 16; ++i) a[i] = T(0.25) + i;
  for (int i = 0; i < 4; ++i) x[i] = T(1) - T(0.1) * i;
  for (auto _ : state) {
    y[0] = 1;  // keep y bounded and non-zero
    f("N", &n, &n, &alpha, a.data(), &n, x.data(), &one, &beta, y.data(), &one, 1);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

}  // namespace

BENCHMARK(BM_nrm2<float, false>)->Name("snrm2/direct")->DenseRange(1, 16);
BENCHMARK(BM_nrm2<float, true>)->Name("snrm2/blasoffload")->DenseRange(1, 16);
BENCHMARK(BM_gemv4x4<float, false>)->Name("sgemv4x4/direct");
BENCHMARK(BM_gemv4x4<float, true>)->Name("sgemv4x4/blasoffload");
BENCHMARK(BM_nrm2<double, false>)->Name("dnrm2/direct")->Arg(1)->Arg(4)->Arg(16);
BENCHMARK(BM_nrm2<double, true>)->Name("dnrm2/blasoffload")->Arg(1)->Arg(4)->Arg(16);
BENCHMARK(BM_gemv4x4<double, false>)->Name("dgemv4x4/direct");
BENCHMARK(BM_gemv4x4<double, true>)->Name("dgemv4x4/blasoffload");

BENCHMARK_MAIN();
