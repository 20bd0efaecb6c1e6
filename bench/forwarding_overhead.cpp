// Google Benchmark: the cost blasoffload adds to a call it forwards to the CPU BLAS (logging off), for
// tiny snrm2 and a 4x4 sgemv where that cost would show. Each case runs through our export and through
// the CPU library's own symbol in the same process; bench/overhead_report.py subtracts the medians.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using snrm2_t = float(const int*, const float*, const int*);
using sgemv_t = void(const char*, const int*, const int*, const float*, const float*, const int*, const float*,
                     const int*, const float*, float*, const int*, std::size_t);

void* sym(const char* lib, const char* name) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  void* p = h ? dlsym(h, name) : nullptr;
  if (!p) {
    std::fprintf(stderr, "cannot find %s in %s\n", name, lib);
    std::exit(1);
  }
  return p;
}

template <bool kOurs>
void BM_snrm2(benchmark::State& state) {
  auto* f = reinterpret_cast<snrm2_t*>(sym(kOurs ? BLASOFFLOAD_LIB_PATH : "libblas.so.3", "snrm2_"));
  const int n = static_cast<int>(state.range(0)), inc = 1;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = 0.5f + 0.01f * i;  // never time zeros
  for (auto _ : state) {
    float r = f(&n, x.data(), &inc);
    benchmark::DoNotOptimize(r);
  }
}

template <bool kOurs>
void BM_sgemv4x4(benchmark::State& state) {
  auto* f = reinterpret_cast<sgemv_t*>(sym(kOurs ? BLASOFFLOAD_LIB_PATH : "libblas.so.3", "sgemv_"));
  const int n = 4, one = 1;
  const float alpha = 1.0f, beta = 0.5f;
  std::vector<float> a(16), x(4), y(4);
  for (int i = 0; i < 16; ++i) a[i] = 0.25f + i;
  for (int i = 0; i < 4; ++i) x[i] = 1.0f - 0.1f * i;
  for (auto _ : state) {
    y[0] = 1.0f;  // keep y bounded and non-zero
    f("N", &n, &n, &alpha, a.data(), &n, x.data(), &one, &beta, y.data(), &one, 1);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

}  // namespace

BENCHMARK(BM_snrm2<false>)->Name("snrm2/direct")->DenseRange(1, 16);
BENCHMARK(BM_snrm2<true>)->Name("snrm2/blasoffload")->DenseRange(1, 16);
BENCHMARK(BM_sgemv4x4<false>)->Name("sgemv4x4/direct");
BENCHMARK(BM_sgemv4x4<true>)->Name("sgemv4x4/blasoffload");

BENCHMARK_MAIN();
