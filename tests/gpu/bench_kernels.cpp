// Timings of each routine's default kernel configuration (as the module selects it) next to cuBLAS,
// on device-resident data: median of 20 timed runs after 3 warm-ups, CUDA events, inputs random.
// Prints one table; Level 1/2 in GB/s (bytes that must move: inputs read once, outputs written once),
// sgemm in TFLOP/s.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "offload/cuda_module_api.h"

#define CK(x)                                                                           \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

static const bo_kernel_registry* g_reg;

static float* dev_random(size_t n, float scale = 1.0f) {
  std::vector<float> h(n);
  std::mt19937 r(7);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (auto& v : h) v = u(r);
  float* d;
  CK(cudaMalloc(&d, 4 * n));
  CK(cudaMemcpy(d, h.data(), 4 * n, cudaMemcpyHostToDevice));
  return d;
}

static double median_ms(const std::function<void()>& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Times every configuration of the routine that can run these arguments; the default one first.
static std::vector<std::pair<std::string, double>> ours_all(int routine, bo_kernel_args a, void* ws) {
  std::vector<std::pair<std::string, double>> r;
  const int def = g_reg->select(routine, &a);
  std::vector<int> order{def};
  for (int i = 0; i < int(g_reg->count); ++i)
    if (i != def && g_reg->entries[i].routine == routine && g_reg->entries[i].can_implement(&a)) order.push_back(i);
  for (int idx : order) {
    if (idx < 0) continue;
    const bo_kernel_entry& e = g_reg->entries[idx];
    double t = median_ms([&] {
      if (e.launch(&a, ws, nullptr) != 0) {
        std::fprintf(stderr, "launch failed\n");
        std::exit(1);
      }
    });
    r.push_back({std::string(e.name) + (idx == def ? "*" : ""), t});
  }
  return r;
}

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "";
  if (path.empty()) {
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = '\0';
    path = std::string(self).substr(0, std::string(self).rfind('/')) + "/../../libblasoffload_cuda.so";
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "dlopen %s: %s\n", path.c_str(), dlerror());
    return 1;
  }
  g_reg = reinterpret_cast<bo_kernel_registry_fn>(dlsym(h, BO_KERNEL_REGISTRY_ENTRY))();
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
  cublasHandle_t hb;
  cublasCreate(&hb);
  void* ws;
  CK(cudaMalloc(&ws, size_t(256) << 20));
  std::printf("%-8s %-16s %-30s %14s %14s %8s   (* = default config)\n", "routine", "size", "our config", "ours",
              "cuBLAS", "ratio");
  // work: bytes (GB/s) or flops (TF/s); times in ms.
  auto rows = [&](const char* r, const std::string& size, const std::vector<std::pair<std::string, double>>& v,
                  double t_cublas, double work, bool tflops) {
    const double scale = tflops ? 1e9 : 1e6;
    const char* unit = tflops ? "TF/s" : "GB/s";
    for (auto& [name, t] : v)
      std::printf("%-8s %-16s %-30s %9.1f %s %9.1f %s %7.2fx\n", r, size.c_str(), name.c_str(), work / t / scale, unit,
                  work / t_cublas / scale, unit, t_cublas / t);
  };
  // snrm2
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24, int64_t(1) << 28}) {
    float* x = dev_random(n);
    float* r;
    CK(cudaMalloc(&r, 4));
    bo_kernel_args a{};
    a.n = n;
    a.b = x;
    a.incx = 1;
    a.c = r;
    auto t1 = ours_all(BO_K_SNRM2, a, ws);
    cublasSetPointerMode(hb, CUBLAS_POINTER_MODE_DEVICE);
    double t2 = median_ms([&] { cublasSnrm2(hb, int(n), x, 1, r); });
    cublasSetPointerMode(hb, CUBLAS_POINTER_MODE_HOST);
    rows("snrm2", "n=" + std::to_string(n), t1, t2, 4.0 * n, false);
    cudaFree(x);
    cudaFree(r);
  }
  // sgemv
  for (char t : {'N', 'T'})
    for (int64_t n : {1024, 4096, 16384}) {
      float *A = dev_random(n * n), *x = dev_random(n), *y = dev_random(n);
      float alpha = 1, beta = 0;
      bo_kernel_args a{t, 0, 0, n, n, 0, alpha, beta, A, n, x, 0, y, 0, 1, 1};
      auto t1 = ours_all(BO_K_SGEMV, a, ws);
      double t2 = median_ms([&] {
        cublasSgemv(hb, t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, int(n), int(n), &alpha, A, int(n), x, 1, &beta, y, 1);
      });
      double bytes = 4.0 * (n * n + 2 * n);
      rows(t == 'N' ? "sgemv_n" : "sgemv_t", std::to_string(n) + "x" + std::to_string(n), t1, t2, bytes, false);
      cudaFree(A);
      cudaFree(x);
      cudaFree(y);
    }
  // strsv (lower, no transpose, non-unit; diagonally dominant)
  for (int64_t n : {1024, 4096, 16384}) {
    std::vector<float> hA(size_t(n) * n);
    std::mt19937 rr(3);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) hA[i + j * n] = i == j ? 2.0f : u(rr) / float(n);
    float *A, *x = dev_random(n), *x0 = dev_random(n);
    CK(cudaMalloc(&A, 4 * hA.size()));
    CK(cudaMemcpy(A, hA.data(), 4 * hA.size(), cudaMemcpyHostToDevice));
    bo_kernel_args a{'L', 'N', 'N', 0, n, 0, 0, 0, A, n, nullptr, 0, x, 0, 1, 0};
    auto t1 = ours_all(BO_K_STRSV, a, ws);
    double t2 = median_ms([&] {
      cublasStrsv(hb, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, int(n), A, int(n), x, 1);
    });
    double bytes = 4.0 * (double(n) * (n + 1) / 2 + 2 * n);
    rows("strsv", "LNN n=" + std::to_string(n), t1, t2, bytes, false);
    cudaFree(A);
    cudaFree(x);
    cudaFree(x0);
  }
  // sgemm
  for (int64_t n : {1024, 4096, 8192}) {
    float *A = dev_random(n * n), *B = dev_random(n * n), *C = dev_random(n * n);
    float alpha = 1, beta = 0;
    bo_kernel_args a{'N', 'N', 0, n, n, n, alpha, beta, A, n, B, n, C, n, 0, 0};
    auto t1 = ours_all(BO_K_SGEMM, a, ws);
    double t2 = median_ms([&] {
      cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &alpha, A, int(n), B, int(n), &beta, C, int(n));
    });
    double fl = 2.0 * n * n * n;
    rows("sgemm", "NN " + std::to_string(n) + "^3", t1, t2, fl, true);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
  }
  return 0;
}
