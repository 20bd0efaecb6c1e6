// Whether the program itself uses CUDA (its operands may then be device memory), looked at cheaply enough for the call
// path (see cuda_in_process.h).
#include "policy/cuda_in_process.h"

#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "dispatch/loaded_objects.h"
#include "offload/module_loader.h"

namespace blasoffload::policy {

// At most every 100 ms (a vDSO clock read: nanoseconds).
bool recheck_due() {
  static std::atomic<std::int64_t> next_ns{0};
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  const std::int64_t now = std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  std::int64_t due = next_ns.load(std::memory_order_relaxed);
  return now >= due && next_ns.compare_exchange_strong(due, now + 100000000, std::memory_order_relaxed);
}

namespace {

// By SONAME, as the linker matches; only asked where some object's file name says CUDA.
bool loaded(const char* soname) {
  void* h = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY);
  if (h) dlclose(h);
  return h != nullptr;
}

}  // namespace

// Whether the program itself uses CUDA, so that its operands may be device memory. Before this library loads the GPU
// module, the driver in the process is the program's. From then on the driver is ours (the module links its CUDA
// runtime statically), so a shared CUDA runtime says the program uses CUDA (BLASOFFLOAD_DEVICE_OPERANDS=check covers
// one linked statically). Not looked at while our module loads: dlopen would wait on the loader lock our load holds
// (cuBLAS's libraries take hundreds of milliseconds), stalling the program's CPU calls. Nor when nothing was loaded
// since the last look, which found no CUDA (it is asked only until it says yes): a dlopen of a name that is not
// loaded searches the linker's cache and opens files, microseconds that every 4096th tiny call would pay.
bool program_uses_cuda(const Settings& s) {
  static std::atomic<unsigned long long> looked_at_loads{~0ull};
  const GpuLoad state = gpu_load_state();
  if (state == GpuLoad::kLoading) return false;
  if (state == GpuLoad::kReady && s.check_device_operands) return true;
  // The objects in the process can only have changed when the linker's count of added ones moved (without the count:
  // every time). The dlopen is asked only where some loaded object's file name holds libcuda (the driver,
  // libcuda.so.1, and libcudart.so.*): 50-90 us a process's first call paid for nothing.
  const unsigned long long loads = loader_counts().first;
  if (loads != ~0ull && looked_at_loads.exchange(loads, std::memory_order_relaxed) == loads) return false;
  if (!any_object_named("libcuda")) return false;
  if (state == GpuLoad::kNotTried) return loaded("libcuda.so.1");
  return loaded("libcudart.so.13") || loaded("libcudart.so.12") || loaded("libcudart.so.11.0");
}

}  // namespace blasoffload::policy
