// A program that uses CUDA itself and hands device memory to sgemm_/dgemm_ through the preloaded library in auto mode:
// small calls (which the model gives the CPU) must run on the GPU, since the CPU BLAS cannot read device memory.
//   device_operands first   CUDA starts before the first BLAS call (the driver is the program's)
//   device_operands late    host calls start the library's GPU first, then the program starts CUDA (its runtime is
//                           linked statically: run with BLASOFFLOAD_DEVICE_OPERANDS=check)
// Exits 0 when every result matches the host reference, 1 otherwise, 77 without a CUDA device.
#include <cuda_runtime.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*, size_t, size_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
}

namespace {

template <class T>
void gemm(const int n, const T* a, const T* b, T* c) {
  const T one = 1, zero = 0;
  if constexpr (sizeof(T) == 4)
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  else
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
}

// One product on device operands against a host reference in double; returns the largest relative error.
template <class T>
double device_product(int n) {
  std::vector<T> a(size_t(n) * n), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = T(std::sin(double(i) * 0.37));
    b[i] = T(std::cos(double(i) * 0.11));
  }
  T *da = nullptr, *db = nullptr, *dc = nullptr;
  const size_t bytes = a.size() * sizeof(T);
  if (cudaMalloc(&da, bytes) || cudaMalloc(&db, bytes) || cudaMalloc(&dc, bytes)) return 1e30;
  cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemset(dc, 0xff, bytes);  // NaNs: a product never written shows
  gemm<T>(n, da, db, dc);
  cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0, mag = 0;
      for (int l = 0; l < n; ++l) {
        s += double(a[i + size_t(l) * n]) * double(b[l + size_t(j) * n]);
        mag += std::fabs(double(a[i + size_t(l) * n]) * double(b[l + size_t(j) * n]));
      }
      const double e = std::fabs(double(c[i + size_t(j) * n]) - s) / (mag + 1e-30);
      worst = std::isnan(e) ? 1e30 : std::max(worst, e);
    }
  return worst;
}

// A crash prints its stack (objects and offsets) before the process ends with the signal: the GPU machine has no
// debugger, and `late` has crashed there now and then (tests/gpu/results/h200-device-operands-late-2026-11-29.md).
void on_crash(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char msg[] = "device_operands: crashed; stack:\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) signal(sig, on_crash);
  const bool late = argc > 1 && std::strcmp(argv[1], "late") == 0;
  if (late) {
    // Host calls long enough for the library to start its GPU (BLASOFFLOAD_STARTUP=eager), for about a second.
    const int n = 1024;
    std::vector<float> a(size_t(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1000))
      gemm<float>(n, a.data(), b.data(), c.data());
    if (std::fabs(c[0] - 0.125f * n) > 1e-3f * n) {
      std::printf("device_operands: host sgemm wrong (%g)\n", double(c[0]));
      return 1;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("device_operands: no CUDA device: skipped\n");
    return 77;
  }
  int failed = 0;
  for (int n : {8, 64, 300}) {
    const double es = device_product<float>(n), ed = device_product<double>(n);
    const bool ok = es < 1e-5 && ed < 1e-13;
    failed += !ok;
    std::printf("device_operands %s n=%d: sgemm error %.2e, dgemm error %.2e: %s\n", late ? "late" : "first", n, es, ed,
                ok ? "ok" : "FAIL");
  }
  std::printf("device_operands: %s\n", failed ? "FAIL" : "PASS");
  return failed ? 1 : 0;
}
