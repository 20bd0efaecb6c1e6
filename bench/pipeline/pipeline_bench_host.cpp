// What blasoffload_bench_pipeline loads and lends: the CPU BLAS, the host services the module is initialised with, the
// GPUs the driver shows, and the module itself.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pipeline_bench.h"

namespace bo_bench {

// ---- The CPU BLAS (Fortran ABI: everything by reference, 32-bit sizes, hidden string lengths last) ----

CpuBlas g_cpu;
std::atomic<int64_t> g_cpu_sgemm_calls{0};

bool load_cpu_blas(const std::string& wanted) {
  const char* env = std::getenv("BO_CPU_BLAS");
  g_cpu.path = !wanted.empty() ? wanted : (env && *env ? env : "libopenblas.so.0");
  // RTLD_LOCAL: the module must not find a sgemm_ of ours by accident; it gets the CPU BLAS through cpu_call only.
  void* h = dlopen(g_cpu.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    g_cpu.error = std::string("cannot load the CPU BLAS: ") + dlerror();
    return false;
  }
  g_cpu.sgemm = reinterpret_cast<sgemm_fn>(dlsym(h, "sgemm_"));
  if (!g_cpu.sgemm) {
    g_cpu.error = g_cpu.path + " has no sgemm_";
    return false;
  }
  g_cpu.corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
  g_cpu.config = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_config"));
  g_cpu.get_threads = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
  g_cpu.set_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(g_cpu.sgemm), &info) && info.dli_fname) g_cpu.path = info.dli_fname;
  return true;
}

void cpu_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (std::max({m, n, k, lda, ldb, ldc}) > INT_MAX) {
    // An LP64 CPU BLAS cannot take it; a silent truncation would time (and check) a different product.
    std::fprintf(stderr, "blasoffload_bench_pipeline: sgemm size over 2^31 for the CPU BLAS\n");
    std::abort();
  }
  const int im = int(m), in = int(n), ik = int(k), ila = int(lda), ilb = int(ldb), ilc = int(ldc);
  g_cpu.sgemm(&ta, &tb, &im, &in, &ik, &alpha, a, &ila, b, &ilb, &beta, c, &ilc, 1, 1);
}

// ---- Host services lent to the module ----

bool g_verbose = false;

namespace {

const char* host_config(const char* key) { return std::getenv(key); }

void host_log(int level, const char* message) {
  // Level 0 is what the module says whatever BLASOFFLOAD_LOG is (a refused device, an abort).
  if (level <= BO_LOG_OFF || g_verbose) std::fprintf(stderr, "blasoffload: %s\n", message);
}

// The module's CPU share of a hybrid sgemm (and the tiles a failing GPU left) arrive as one normalised call.
void host_cpu_call(const bo_call* c) {
  if (c->routine != BO_R_SGEMM) {
    std::fprintf(stderr, "blasoffload_bench_pipeline: the module asked the CPU for %s; only sgemm is benchmarked\n",
                 bo_routine_name(c->routine));
    std::abort();
  }
  g_cpu_sgemm_calls.fetch_add(1, std::memory_order_relaxed);
  cpu_sgemm(c->op[0], c->op[1], c->m, c->n, c->k, float(c->alpha), static_cast<const float*>(c->a), c->lda,
            static_cast<const float*>(c->b), c->ldb, float(c->beta), static_cast<float*>(c->c), c->ldc);
}

const bo_cuda_host_services kHost = {BO_CUDA_API_VERSION, host_config, host_log, host_cpu_call, nullptr, nullptr};

}  // namespace

// ---- GPUs as the driver sees them (libcuda.so.1 through dlopen: no CUDA at build time) ----

Gpus probe_gpus() {
  Gpus g;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    g.error = std::string("no NVIDIA driver (") + dlerror() + ")";
    return g;
  }
  auto cu_init = reinterpret_cast<int (*)(unsigned)>(dlsym(h, "cuInit"));
  auto cu_count = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDeviceGetCount"));
  auto cu_get = reinterpret_cast<int (*)(int*, int)>(dlsym(h, "cuDeviceGet"));
  auto cu_name = reinterpret_cast<int (*)(char*, int, int)>(dlsym(h, "cuDeviceGetName"));
  auto cu_version = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDriverGetVersion"));
  auto cu_mem = reinterpret_cast<int (*)(size_t*, int)>(dlsym(h, "cuDeviceTotalMem_v2"));
  if (!cu_init || !cu_count || !cu_get || !cu_name) {
    g.error = "libcuda.so.1 lacks the driver API entry points";
    return g;
  }
  if (cu_version) cu_version(&g.driver_version);
  const int rc = cu_init(0);
  if (rc != 0) {
    g.error = rc == 100 ? "the NVIDIA driver sees no device" : "cuInit failed (CUDA error " + std::to_string(rc) + ")";
    return g;
  }
  if (cu_count(&g.count) != 0 || g.count <= 0) {
    g.count = 0;
    g.error = "the NVIDIA driver sees no device";
    return g;
  }
  for (int i = 0; i < g.count; ++i) {
    int dev = 0;
    char name[256] = "?";
    size_t bytes = 0;
    if (cu_get(&dev, i) == 0) {
      cu_name(name, sizeof name, dev);
      if (cu_mem) cu_mem(&bytes, dev);
    }
    g.names.push_back(name);
    g.memory_gib.push_back(double(bytes) / double(1ull << 30));
  }
  return g;
}

// ---- The module ----

namespace {

std::string exe_dir() {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return ".";
  self[len] = '\0';
  std::string s(self);
  return s.substr(0, s.rfind('/'));
}

}  // namespace

Module load_module(const std::string& wanted) {
  Module m;
  std::vector<std::string> candidates;
  const char* env = std::getenv("BO_CUDA_MODULE");
  if (!wanted.empty()) {
    candidates = {wanted};
  } else if (env && *env) {
    candidates = {env};
  } else {
    // The build tree (<build>/bench/pipeline/ -> <build>/), the carry (bin/ -> lib/), or beside the binary.
    const std::string d = exe_dir();
    candidates = {d + "/../../libblasoffload_cuda.so", d + "/../lib/libblasoffload_cuda.so",
                  d + "/libblasoffload_cuda.so"};
  }
  m.path = candidates.front();
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) {
      m.path = c;
      break;
    }
  void* h = dlopen(m.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    m.error = std::string("cannot load the module: ") + dlerror();
    return m;
  }
  auto entry = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY));
  if (!entry) {
    m.error = m.path + " has no " BO_CUDA_MODULE_ENTRY " (a module of another API version?)";
    return m;
  }
  const bo_cuda_module* mod = entry();
  if (!mod || mod->version != BO_CUDA_API_VERSION || !mod->call || !mod->last_gemm_stats) {
    m.error = "the module's table is not API version " + std::to_string(BO_CUDA_API_VERSION);
    return m;
  }
  m.mod = mod;
  m.init_status = mod->init(&kHost);
  if (m.init_status != BO_CUDA_OK) m.error = "module init failed with status " + std::to_string(m.init_status);
  return m;
}

const char* status_name(int s) {
  switch (s) {
    case BO_CUDA_OK:
      return "ok";
    case BO_CUDA_NO_DEVICE:
      return "no_device";
    case BO_CUDA_OUT_OF_MEMORY:
      return "out_of_memory";
    case BO_CUDA_LAUNCH_FAILED:
      return "launch_failed";
    case BO_CUDA_UNSUPPORTED:
      return "unsupported";
    case BO_CUDA_FORKED_CHILD:
      return "forked_child";
    default:
      return "unknown";
  }
}

}  // namespace bo_bench
