// Asks the NVIDIA driver library (driver API, through dlopen) what it sees, to explain an unusable GPU in words.
#include "offload/gpu_diagnose.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace blasoffload {
namespace {

using cu_init_t = int (*)(unsigned);
using cu_version_t = int (*)(int*);
using cu_count_t = int (*)(int*);
using cu_error_name_t = int (*)(int, const char**);

constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNoDevice = 100;

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

GpuDiagnosis diagnose_gpu(int needed_cuda_major) {
  GpuDiagnosis d;
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    d.reason = access("/dev/nvidiactl", F_OK) == 0
                   ? "NVIDIA device nodes exist but the driver library libcuda.so.1 is not found (not on the library "
                     "path, e.g. in a container without the NVIDIA runtime)"
                   : "no NVIDIA driver (libcuda.so.1 not found)";
    return d;
  }
  auto cu_init = reinterpret_cast<cu_init_t>(dlsym(h, "cuInit"));
  auto cu_version = reinterpret_cast<cu_version_t>(dlsym(h, "cuDriverGetVersion"));
  auto cu_count = reinterpret_cast<cu_count_t>(dlsym(h, "cuDeviceGetCount"));
  auto cu_error_name = reinterpret_cast<cu_error_name_t>(dlsym(h, "cuGetErrorName"));
  if (!cu_init || !cu_version || !cu_count) {
    d.reason = "libcuda.so.1 is not a usable NVIDIA driver library (cuInit missing)";
    dlclose(h);
    return d;
  }
  cu_version(&d.driver_version);
  const std::string driver = "NVIDIA driver present (CUDA " + version_text(d.driver_version) + ")";
  const int rc = cu_init(0);
  if (rc == kCudaErrorNoDevice) {
    // CUDA's own variable, not a blasoffload setting: read as the environment has it (secure_getenv semantics).
    const char* visible = secure_getenv("CUDA_VISIBLE_DEVICES");
    d.reason = driver + " but no device" +
               (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + " hides them?)" : std::string());
  } else if (rc != kCudaSuccess) {
    const char* name = nullptr;
    if (!cu_error_name || cu_error_name(rc, &name) != kCudaSuccess) name = nullptr;
    d.reason = driver + " but it does not start: " + (name ? name : "error " + std::to_string(rc)) +
               (access("/dev/nvidiactl", F_OK) != 0 ? " (no /dev/nvidiactl: kernel module not loaded?)" : "");
  } else if (cu_count(&d.devices) != kCudaSuccess || d.devices == 0) {
    d.reason = driver + " but no device";
  } else if (needed_cuda_major > 0 && d.driver_version / 1000 < needed_cuda_major) {
    d.reason = driver + " is too old: the CUDA module needs a driver for CUDA " + std::to_string(needed_cuda_major) +
               ".x or newer";
  } else {
    d.usable = true;
  }
  // Not closed: once cuInit ran, unloading the driver under its own threads is not safe.
  return d;
}

}  // namespace blasoffload
