// OpenBLAS's self-report and the advice derived from it (see cpu_blas_probe.h).
#include "policy/cpu_blas_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace blasoffload {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

}  // namespace

std::string openblas_core_advice(const std::string& core, bool cpu_avx512, bool* serious) {
  *serious = false;
  if (!cpu_avx512 || core.empty()) return "";
  const std::string c = lower(core);
  // OpenBLAS's x86 cores without AVX2 kernels: SSE-era generic code paths.
  static const char* const kGeneric[] = {"prescott", "katmai",  "coppermine", "northwood", "banias",
                                         "core2",    "penryn",  "dunnington", "nehalem",   "atom",
                                         "generic",  "opteron", "barcelona",  "bobcat",    "sandybridge"};
  for (const char* g : kGeneric)
    if (c == g) {
      *serious = true;
      return "the CPU BLAS (OpenBLAS) runs its generic '" + core +
             "' kernels on this AVX-512 CPU (sgemm about 5x slower than it can be): set OPENBLAS_CORETYPE=SkylakeX";
    }
  if (c == "haswell" || c == "zen")
    return "the CPU BLAS (OpenBLAS) runs its AVX2 '" + core +
           "' kernels on this AVX-512 CPU: OPENBLAS_CORETYPE=SkylakeX may be faster (measure it)";
  return "";
}

void* cpu_blas_function(const void* sgemm_address, const char* name) {
  Dl_info info{};
  if (!sgemm_address || !dladdr(sgemm_address, &info) || !info.dli_fname) return nullptr;
  // RTLD_NOLOAD: only a handle to what is already mapped; nothing is loaded or initialised by us. A handle's lookup
  // searches the library's dependencies too (Debian's openblas-pthread/libblas.so.3 takes them from libopenblas.so.0).
  void* h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (!h) return nullptr;
  void* f = dlsym(h, name);
  dlclose(h);  // the library stays mapped: the program links it
  return f;
}

CpuBlasReport probe_cpu_blas(const void* sgemm_address, const std::string& prefix, const std::string& suffix) {
  CpuBlasReport r;
  using Str = char* (*)();
  using Int = int (*)();
  auto fn = [&](const char* name) { return cpu_blas_function(sgemm_address, (prefix + name + suffix).c_str()); };
  auto config = reinterpret_cast<Str>(fn("openblas_get_config"));
  auto corename = reinterpret_cast<Str>(fn("openblas_get_corename"));
  auto threads = reinterpret_cast<Int>(fn("openblas_get_num_threads"));
  if (config || corename) {
    std::string version = "OpenBLAS";
    if (config) {
      const std::string cfg = config();  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."
      const size_t sp = cfg.find(' ', cfg.find(' ') + 1);
      version = cfg.substr(0, sp);
    }
    const std::string core = corename ? corename() : "";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s (kernels: %s, %d threads)", version.c_str(), core.empty() ? "?" : core.c_str(),
                  threads ? threads() : 0);
    r.identity = buf;
    r.advice = openblas_core_advice(core, cpu_has_avx512(), &r.serious);
  }
  return r;
}

}  // namespace blasoffload
