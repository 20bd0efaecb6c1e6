// blasoffload_bench_kernels: Google Benchmark suite timing our kernels as the tuned table selects them (and the
// table's best own kernel) against cuBLAS on device-resident data that rotates past L2, for every routine, precision
// and shape of shapes.cpp; see README.md here.
#include "bench_kernels.h"

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpu_module.h"
#include "shapes.h"

namespace bo_bench {

Gpu g;

namespace {

// ---- Set-up: module (tests/gpu/gpu_module.h), device, stream, cuBLAS, benchmark context. ----

void HostLog(int /*level*/, const char* message) { std::fprintf(stderr, "blasoffload: %s\n", message); }

bool SetUp(const std::string& module_flag, std::string* err) {
  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    *err = format("no usable CUDA device (%s): nothing to benchmark",
                  ce != cudaSuccess ? cudaGetErrorString(ce) : "cudaGetDeviceCount found none");
    return false;
  }
  const int init = bo_gpu::load_and_init(module_flag, &HostLog, &g.m);
  if (init != BO_CUDA_OK) {
    *err = g.m.error + (init >= 0 ? ": nothing to benchmark" : "");
    return false;
  }
  // The module picks its device the same way (BLASOFFLOAD_DEVICE, default 0): our stream must live there too.
  g.device = bo_gpu::module_device();
  cudaError_t e = cudaSetDevice(g.device);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&g.prop, g.device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
  for (int v = 0; v < kVariants && e == cudaSuccess; ++v) {
    e = cudaEventCreate(&g.start[v]);
    if (e == cudaSuccess) e = cudaEventCreate(&g.stop[v]);
  }
  if (e == cudaSuccess) e = cudaHostAlloc(&g.pinned_result, sizeof(double), cudaHostAllocMapped);
  if (e != cudaSuccess) {
    *err = CudaError("setting up the device", e);
    return false;
  }
  cublasStatus_t st = cublasCreate(&g.cublas);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(g.cublas, g.stream);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(g.cublas, CUBLAS_POINTER_MODE_HOST);
  // The default math mode computes FP32 in FP32 (no TF32 tensor cores), as BLAS promises, and FP64 in FP64 (on the
  // FP64 tensor cores, which round as FP64 FMAs do); said explicitly in case a library default ever changes.
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(g.cublas, CUBLAS_DEFAULT_MATH);
  if (st != CUBLAS_STATUS_SUCCESS) {
    *err = format("cuBLAS set-up failed: %s", cublasGetStatusString(st));
    return false;
  }
  return true;
}

void TearDown() {
  g_cache.reset();
  if (g.cublas) cublasDestroy(g.cublas);
  for (int v = 0; v < kVariants; ++v) {
    if (g.start[v]) cudaEventDestroy(g.start[v]);
    if (g.stop[v]) cudaEventDestroy(g.stop[v]);
  }
  if (g.workspace) cudaFree(g.workspace);
  if (g.pinned_result) cudaFreeHost(g.pinned_result);
  if (g.stream) cudaStreamDestroy(g.stream);
  if (g.m.mod && g.m.mod->shutdown) g.m.mod->shutdown();
}

std::string Version(int v) { return format("%d.%d", v / 1000, (v % 1000) / 10); }

std::string Trimmed(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void AddContext() {
  benchmark::AddCustomContext("gpu", g.prop.name);
  benchmark::AddCustomContext("gpu_sms", std::to_string(g.prop.multiProcessorCount));
  benchmark::AddCustomContext("gpu_memory_gib", format("%.1f", g.prop.totalGlobalMem / 1073741824.0));
  benchmark::AddCustomContext("gpu_l2_mib", format("%.1f", g.prop.l2CacheSize / 1048576.0));
  int rt = 0, drv = 0, cublas = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cublasGetVersion(g.cublas, &cublas);
  benchmark::AddCustomContext("cuda_runtime", Version(rt));
  benchmark::AddCustomContext("cuda_driver", Version(drv));
  benchmark::AddCustomContext("cublas", format("%d.%d.%d", cublas / 10000, (cublas / 100) % 100, cublas % 100));
  benchmark::AddCustomContext("module", g.m.mod->name ? g.m.mod->name : "");
  benchmark::AddCustomContext("module_path", g.m.path);
  const char* info = g.m.reg->tuned_params_info();
  benchmark::AddCustomContext("tuned_params", info ? info : "(none)");
  const char* vendor = g.m.reg->vendor_info ? g.m.reg->vendor_info() : nullptr;
  benchmark::AddCustomContext("vendor", vendor ? vendor : "(none)");
  // Google Benchmark already writes a local "date"; this one is unambiguous.
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  benchmark::AddCustomContext("date_utc", date);
  std::ifstream commit(bo_gpu::exe_dir() + "/COMMIT");
  if (commit) {
    std::string text((std::istreambuf_iterator<char>(commit)), std::istreambuf_iterator<char>());
    benchmark::AddCustomContext("commit", Trimmed(text));
  }
  if (const char* r = bo_gpu::env_config("BO_READ_GBS"); r && *r) benchmark::AddCustomContext("read_gbs", r);
  benchmark::AddCustomContext("rotating_copies_span_mib", std::to_string(kRotateBytes >> 20));
}

void PrintHelp() {
  benchmark::PrintDefaultHelp();
  std::fprintf(stdout,
               "\nblasoffload_bench_kernels options:\n"
               "  --module=PATH   the CUDA module (else $BO_CUDA_MODULE, else <exe dir>/../../libblasoffload_cuda.so,\n"
               "                  else <exe dir>/../lib/, else <exe dir>/libblasoffload_cuda.so)\n"
               "Environment: BLASOFFLOAD_DEVICE (GPU index), BO_READ_GBS (read bandwidth for the report), and the\n"
               "module's own settings (the tuned table it loads).\n");
}

bool WantsListOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--benchmark_list_tests") return true;
    if (a.rfind("--benchmark_list_tests=", 0) == 0) {
      const std::string v = a.substr(a.find('=') + 1);
      return !(v == "false" || v == "0" || v == "no" || v == "f" || v == "n");
    }
  }
  return false;
}

}  // namespace
}  // namespace bo_bench

int main(int argc, char** argv) {
  using namespace bo_bench;
  std::string module_flag;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--module=", 9) == 0)
      module_flag = argv[i] + 9;
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  const bool list_only = WantsListOnly(argc, argv);  // before Initialize, which consumes the flag
  benchmark::Initialize(&argc, argv, PrintHelp);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const std::vector<Shape> shapes = AllShapes();
  RegisterAll(shapes);
  if (list_only) {  // listing needs no GPU
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  std::string err;
  if (!SetUp(module_flag, &err)) {
    std::fprintf(stderr, "blasoffload_bench_kernels: %s\n", err.c_str());
    return 2;
  }
  AddContext();
  benchmark::RunSpecifiedBenchmarks();
  TearDown();
  benchmark::Shutdown();
  return 0;
}
