// blasoffload-calibrate's GPU side (see gpu_side.h).
#include "gpu_side.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "config/paths.h"
#include "offload/cuda_module_api.h"

namespace blasoffload::calibrate {
namespace {

const char* host_config(const char* key) { return std::getenv(key); }
void host_log(int level, const char* message) {
  if (level <= 0) std::fprintf(stderr, "blasoffload-calibrate: %s\n", message);
}
// No CPU BLAS here: the measurements never need one (an engine failure then reports an error, which is all that
// calibration needs).
const bo_cuda_host_services kHost = {BO_CUDA_API_VERSION, host_config, host_log, nullptr, nullptr, nullptr};

std::string self_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, size_t(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace

std::string default_module_path() { return paths::find_in_lib_dirs(self_dir(), "libblasoffload_cuda.so"); }

bool measure_gpu(const std::string& module_path, policy::Calibration* c, std::string* why) {
  // Loaded and started once: a second measurement (the first was disturbed) reuses the module and the start-up time
  // the first one paid, what a program pays on its first offloaded call (the module, CUDA's context, the tuned table).
  static const bo_cuda_module* m = nullptr;
  static double init_ms = 0;
  if (!m) {
    const auto t0 = std::chrono::steady_clock::now();
    void* h = dlopen(module_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      *why = std::string("cannot load the CUDA module: ") + dlerror();
      return false;
    }
    auto entry = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY));
    const bo_cuda_module* loaded = entry ? entry() : nullptr;
    if (!loaded || loaded->version != BO_CUDA_API_VERSION) {
      *why = module_path + " is not a compatible blasoffload CUDA module";
      return false;
    }
    if (loaded->init(&kHost) != BO_CUDA_OK) {
      *why = "no usable CUDA device";
      return false;
    }
    init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    m = loaded;
  }
  bo_cuda_rates r{};
  if (int st = m->measure(&r)) {
    *why = "measuring the GPU failed (status " + std::to_string(st) + ")";
    return false;
  }
  c->gpu = r.gpu;
  c->h2d_gbs = r.h2d_gbs;
  c->d2h_gbs = r.d2h_gbs;
  c->pageable_gbs = r.pageable_gbs;
  c->call_overhead_us = r.call_overhead_us;
  c->copy_latency_us = r.copy_latency_us;
  c->init_ms = init_ms;
  return true;
}

}  // namespace blasoffload::calibrate
