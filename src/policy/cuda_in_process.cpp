// Whether the program itself uses CUDA (its operands may then be device memory), looked at cheaply enough for the call
// path (see cuda_in_process.h).
#include "policy/cuda_in_process.h"

#include <dlfcn.h>
#include <link.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

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

// Whether any loaded object's file name holds "libcuda" (the driver, libcuda.so.1, and the runtimes, libcudart.so.*):
// tens of ns a object, where a dlopen of a name not loaded searches the linker's cache and stats files (50-90 us, a
// sizable part of a process's first call).
bool any_cuda_named() {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, std::size_t, void*) -> int {
               return info->dlpi_name && std::strstr(info->dlpi_name, "libcuda") ? 1 : 0;
             },
             nullptr) != 0;
}

// By SONAME, as the linker matches; only asked where some object's file name says CUDA.
bool loaded(const char* soname) {
  void* h = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY);
  if (h) dlclose(h);
  return h != nullptr;
}

// Objects the dynamic linker has loaded so far, a counter it keeps: the libraries in the process can only have
// changed when it moved. Takes the linker's short list lock, not the lock a dlopen holds throughout; tens of ns.
unsigned long long loads_so_far() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t size, void* out) -> int {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // every object carries the counter: the first will do
      },
      &adds);
  return adds;
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
  const unsigned long long loads = loads_so_far();
  if (looked_at_loads.exchange(loads, std::memory_order_relaxed) == loads) return false;
  if (!any_cuda_named()) return false;
  if (state == GpuLoad::kNotTried) return loaded("libcuda.so.1");
  return loaded("libcudart.so.13") || loaded("libcudart.so.12") || loaded("libcudart.so.11.0");
}

}  // namespace blasoffload::policy
