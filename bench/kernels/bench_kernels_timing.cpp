// blasoffload_bench_kernels's timed loops: each case's three variants timed by CUDA events (nrm2: by wall clock, its
// result on the host), the medians as counters, and the registration of every shape with Google Benchmark.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_kernels.h"

namespace bo_bench {
namespace {

// Cases whose three calls take longer than this run a fixed number of iterations instead of --benchmark_min_time.
constexpr double kFixedIterationsAbove = 0.010;
constexpr double kFixedIterationBudget = 1.5;  // seconds of device time per such case, within 5..50 iterations

// CUDA-event timing of each call on the stream; the three variants take turns going first.
bool TimeOnDevice(benchmark::State& state, Prepared& p, std::vector<double>* seconds) {
  const bool trsv = Kind(*p.shape) == BO_KIND_TRSV;
  const size_t rhs_bytes = p.c.bytes();
  std::string err;
  int64_t iteration = 0;
  for (auto _ : state) {
    for (int r = 0; r < kVariants && err.empty(); ++r) {
      const int v = int((iteration + r) % kVariants);
      const size_t copy = p.next++ % p.copies;
      // trsv solves in place: restore the right-hand side, outside the timed events.
      if (trsv) cudaMemcpyAsync(p.c.Slice(copy), p.saved.Slice(copy), rhs_bytes, cudaMemcpyDeviceToDevice, g.stream);
      cudaEventRecord(g.start[v], g.stream);
      if (Run(p, v, copy, nullptr, &err)) cudaEventRecord(g.stop[v], g.stream);
    }
    const cudaError_t e = cudaStreamSynchronize(g.stream);
    if (err.empty() && e != cudaSuccess) err = CudaError("timed run", e);
    float ms[kVariants] = {};
    for (int v = 0; v < kVariants && err.empty(); ++v)
      if (cudaError_t t = cudaEventElapsedTime(&ms[v], g.start[v], g.stop[v]); t != cudaSuccess)
        err = CudaError("cudaEventElapsedTime", t);
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      break;
    }
    for (int v = 0; v < kVariants; ++v) seconds[v].push_back(ms[v] * 1e-3);
    state.SetIterationTime(ms[kTuned] * 1e-3);
    ++iteration;
  }
  return err.empty();
}

// nrm2 as BLAS has it: the result is on the host when the call returns, so wall-clock time around the launch
// (ours writes the result into mapped pinned memory, as the module does) and the synchronisation; cuBLAS in host
// pointer mode copies its result back and synchronises internally.
bool TimeResultOnHost(benchmark::State& state, Prepared& p, std::vector<double>* seconds) {
  using Clock = std::chrono::steady_clock;
  std::string err;
  int64_t iteration = 0;
  for (auto _ : state) {
    double sec[kVariants] = {};
    for (int r = 0; r < kVariants && err.empty(); ++r) {
      const int v = int((iteration + r) % kVariants);
      const size_t copy = p.next++ % p.copies;
      double host = 0;  // room for either precision's result
      const auto t0 = Clock::now();
      if (!Run(p, v, copy, &host, &err)) break;
      if (v != kCublas)
        if (cudaError_t e = cudaStreamSynchronize(g.stream); e != cudaSuccess) err = CudaError("timed run", e);
      sec[v] = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      break;
    }
    for (int v = 0; v < kVariants; ++v) seconds[v].push_back(sec[v]);
    state.SetIterationTime(sec[kTuned]);
    ++iteration;
  }
  return err.empty();
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void RunCase(benchmark::State& state, const Shape* s) {
  Prepared& p = Cached(*s);
  if (!p.error.empty()) {
    state.SkipWithError(p.error.c_str());
    return;
  }
  std::vector<double> seconds[kVariants];
  const bool ok = Kind(*s) == BO_KIND_NRM2 ? TimeResultOnHost(state, p, seconds) : TimeOnDevice(state, p, seconds);
  if (!ok || seconds[kTuned].empty()) return;
  double med[kVariants];
  for (int v = 0; v < kVariants; ++v) med[v] = Median(seconds[v]);
  const double work = Work(*s);  // bytes or flops; both rates are in units of 1e9 per second
  state.counters["tuned_rate"] = work / med[kTuned] * 1e-9;
  state.counters["own_rate"] = work / med[kOwn] * 1e-9;
  state.counters["cublas_rate"] = work / med[kCublas] * 1e-9;
  state.counters["tuned_vs_cublas"] = med[kCublas] / med[kTuned];
  state.counters["own_vs_cublas"] = med[kCublas] / med[kOwn];
  state.counters["tuned_us"] = med[kTuned] * 1e6;
  state.counters["own_us"] = med[kOwn] * 1e6;
  state.counters["cublas_us"] = med[kCublas] * 1e6;
  state.counters["tuned_err"] = p.rel_err[kTuned];
  state.counters["own_err"] = p.rel_err[kOwn];
  state.counters["copies"] = double(p.copies);
  if (Kind(*s) == BO_KIND_NRM2) state.counters["result_on_host"] = 1;
  const std::string label =
      std::string("tuned=") + g.m.reg->entries[p.index[kTuned]].name + " own=" + g.m.reg->entries[p.index[kOwn]].name;
  state.SetLabel(label.c_str());
}

}  // namespace

void RegisterAll(const std::vector<Shape>& shapes) {
  for (const Shape& s : shapes) {
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(s.name.c_str(), RunCase, &s);
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    // Big gemm/trsv/gemv calls: a few iterations give a stable median; --benchmark_min_time would probe with
    // growing counts and take minutes.
    const double per_iteration = kVariants * (EstimatedSeconds(s) + 20e-6);
    if (per_iteration > kFixedIterationsAbove)
      b->Iterations(std::clamp<int64_t>(int64_t(kFixedIterationBudget / per_iteration), 5, 50));
  }
}

}  // namespace bo_bench
