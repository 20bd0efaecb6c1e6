// Loading the shipped CUDA module (libblasoffload_cuda.so) the way the core does, for the GPU tests and the kernel
// benchmarks alike: where it is, dlopen, its two versioned entry points (the module API and the kernel registry,
// versions as compiled), and the host services a harness lends it in place of the core. No GoogleTest here, so that
// bench/ can compile it too.
#pragma once
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "offload/cuda_module_api.h"

namespace bo_gpu {

struct Loaded {
  void* handle = nullptr;
  const bo_cuda_module* mod = nullptr;
  const bo_kernel_registry* reg = nullptr;
  std::string path;
  std::string error;  // why loading failed (mod and reg are then null)
};

// The directory of the running program.
std::string exe_dir();
// Where the module is: `explicit_path` when not empty, else $BO_CUDA_MODULE, else $BO_GPU_TEST_MODULE, else the first
// readable of <exe>/../../libblasoffload_cuda.so (the build tree), <exe>/../lib/, <exe>/ (a carried folder).
std::string module_path(const std::string& explicit_path = "");
// dlopen(path) and both entry points, with the versions this code was compiled against. Does not call init().
Loaded load(const std::string& path);

// load() and the module's init() with a harness's host services (configuration from the environment, `log` for its
// messages, no CPU BLAS). Returns init()'s status (BO_CUDA_OK: ready), or -1 when the module did not load; out->error
// says why whenever the result is not BO_CUDA_OK.
int load_and_init(const std::string& explicit_path, void (*log)(int level, const char* message), Loaded* out);

// Host services' configuration lookup for a harness: the process environment. (The harness stands in for the core,
// whose configuration layer does the same plus the config file; tests set the module's knobs with setenv.)
const char* env_config(const char* key);
// The GPU the module uses (BLASOFFLOAD_DEVICE through env_config, default 0): a harness's own stream must live there.
int module_device();

// Indices of the registry entries of one routine (enum bo_routine), in registry order.
std::vector<int> entries_of(const bo_kernel_registry* reg, int routine);

// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace bo_gpu
