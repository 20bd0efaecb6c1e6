// What the dynamic linker has loaded, read through dl_iterate_phdr (the linker's short list lock, not the lock a
// dlopen holds throughout): its counters of objects added and removed, and whether any object's file name holds a
// string. Header-only: the CPU tables (cpu_blas.cpp) and the policy's look for CUDA (cuda_in_process.cpp) share it.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstring>
#include <utility>

namespace blasoffload {

// dlpi_adds and dlpi_subs: the objects in the process can only have changed when these moved. Both ~0 where the C
// library does not report them (then every reader must look again each time).
using LoaderCounts = std::pair<unsigned long long, unsigned long long>;
inline LoaderCounts loader_counts() {
  LoaderCounts c{~0ull, ~0ull};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t size, void* data) -> int {
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
          *static_cast<LoaderCounts*>(data) = {info->dlpi_adds, info->dlpi_subs};
        return 1;  // the counters are the linker's, the same in every entry
      },
      &c);
  return c;
}

// Whether a loaded object's file name (as the linker recorded it) contains `part`: tens of ns an object.
inline bool any_object_named(const char* part) {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, std::size_t, void* data) -> int {
               return info->dlpi_name && std::strstr(info->dlpi_name, static_cast<const char*>(data)) ? 1 : 0;
             },
             const_cast<char*>(part)) != 0;
}

}  // namespace blasoffload
