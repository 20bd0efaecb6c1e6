// The CUDA module's entry table: initialises the device lazily and runs the four routines on the GPU.
// (Skeleton: the device runtime and kernels arrive with the GPU-path issue; until then every call is
// declined with BO_CUDA_UNSUPPORTED and runs on the CPU BLAS.)
#include <cuda_runtime.h>

#include <cstdio>

#include "offload/cuda_module_api.h"

namespace {

const bo_cuda_host_services* g_host = nullptr;
bool g_forked = false;

int init(const bo_cuda_host_services* host) {
  g_host = host;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    if (g_host) {
      char msg[256];
      std::snprintf(msg, sizeof msg, "CUDA: %s", err != cudaSuccess ? cudaGetErrorString(err) : "no device");
      g_host->log(BO_LOG_DEBUG, msg);
    }
    return BO_CUDA_NO_DEVICE;
  }
  return BO_CUDA_OK;
}

int sgemm(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
          int64_t) {
  return g_forked ? BO_CUDA_FORKED_CHILD : BO_CUDA_UNSUPPORTED;
}
int sgemv(char, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*, int64_t) {
  return g_forked ? BO_CUDA_FORKED_CHILD : BO_CUDA_UNSUPPORTED;
}
int strsv(char, char, char, int64_t, const float*, int64_t, float*, int64_t) {
  return g_forked ? BO_CUDA_FORKED_CHILD : BO_CUDA_UNSUPPORTED;
}
int snrm2(int64_t, const float*, int64_t, float*) { return g_forked ? BO_CUDA_FORKED_CHILD : BO_CUDA_UNSUPPORTED; }
void forked_child() { g_forked = true; }
void shutdown() {}

const bo_cuda_module kModule = {BO_CUDA_API_VERSION, "blasoffload-cuda (skeleton)", init, sgemm, sgemv, strsv,
                                snrm2, forked_child, shutdown};

}  // namespace

extern "C" __attribute__((visibility("default"))) const bo_cuda_module* blasoffload_cuda_module_v1() {
  return &kModule;
}
