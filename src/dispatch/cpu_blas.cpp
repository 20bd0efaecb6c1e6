// Finds the CPU BLAS that every call not run on the GPU is forwarded to.
#include "dispatch/cpu_blas.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <vector>

#include "dispatch/log.h"
#include "policy/config.h"
#include "routines/all.h"

namespace blasoffload {

CpuBlas g_cpu;

namespace {

void* g_named_handle = nullptr;         // BLASOFFLOAD_CPU_BLAS, when given
void* g_named_lapack_handle = nullptr;  // BLASOFFLOAD_CPU_LAPACK, when given

const void* our_base() {
  static const void* base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<const void*>(&our_base), &info);
    return info.dli_fbase;
  }();
  return base;
}

int collect_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name && info->dlpi_name[0] && reinterpret_cast<const void*>(info->dlpi_addr) != our_base())
    names->emplace_back(info->dlpi_name);
  return 0;
}

// Libraries loaded in a local scope (dlopen RTLD_LOCAL) are invisible to RTLD_NEXT and RTLD_DEFAULT;
// ask each loaded object directly, in load order.
void* find_in_loaded_objects(const char* symbol) {
  std::vector<std::string> names;
  dl_iterate_phdr(collect_object, &names);
  for (const auto& name : names) {
    void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    void* p = dlsym(h, symbol);
    dlclose(h);  // RTLD_NOLOAD only took a reference; the object stays loaded by its owner
    if (p && !is_our_address(p)) return p;
  }
  return nullptr;
}

void* find_default(const char* symbol) {
  void* p = dlsym(RTLD_NEXT, symbol);
  if (p && !is_our_address(p)) return p;
  return find_in_loaded_objects(symbol);
}

void* find_cpu_symbol(const char* symbol, bool lapack = false) {
  if (lapack && g_named_lapack_handle) {
    if (void* p = dlsym(g_named_lapack_handle, symbol); p && !is_our_address(p)) return p;
    log_debug("%s not in BLASOFFLOAD_CPU_LAPACK; looking it up in BLASOFFLOAD_CPU_BLAS and the process", symbol);
  }
  if (g_named_handle) {
    if (void* p = dlsym(g_named_handle, symbol); p && !is_our_address(p)) return p;
    log_debug("%s not in BLASOFFLOAD_CPU_BLAS; looking it up in the process", symbol);
  }
  return find_default(symbol);
}

std::string object_of(const void* p) {
  Dl_info info{};
  if (p && dladdr(p, &info) && info.dli_fname) return info.dli_fname;
  return "(not found)";
}

}  // namespace

bool is_our_address(const void* p) {
  Dl_info info{};
  return dladdr(p, &info) && info.dli_fbase == our_base();
}

void* find_foreign_symbol(const char* symbol) {
  void* p = dlsym(RTLD_DEFAULT, symbol);
  if (p && !is_our_address(p)) return p;
  return find_cpu_symbol(symbol);
}

void resolve_cpu_blas() {
  const Settings& s = settings();
  if (!s.cpu_blas.empty()) {
    g_named_handle = dlopen(s.cpu_blas.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!g_named_handle) {
      log_fatal("BLASOFFLOAD_CPU_BLAS=%s cannot be loaded: %s. Aborting.", s.cpu_blas.c_str(), dlerror());
      std::abort();
    }
  }
  if (!s.cpu_lapack.empty()) {
    g_named_lapack_handle = dlopen(s.cpu_lapack.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!g_named_lapack_handle) {
      log_fatal("BLASOFFLOAD_CPU_LAPACK=%s cannot be loaded: %s. Aborting.", s.cpu_lapack.c_str(), dlerror());
      std::abort();
    }
  }
  for (std::size_t r = 0; r < kNumRoutines; ++r) {
    const std::string name = routine_name(Routine(r));
    const bool lapack = bo::routines::is_lapack(int(r));
    g_cpu.fortran[r] = find_cpu_symbol((name + "_").c_str(), lapack);
    if (!lapack) g_cpu.cblas[r] = find_cpu_symbol(("cblas_" + name).c_str());
  }
  if (void* getrf = g_cpu.fortran[index(Routine::dgetrf)]) g_cpu.lapack_library = object_of(getrf);
  const void* sgemm = g_cpu.fortran[index(Routine::sgemm)];
  g_cpu.library = object_of(sgemm);
  g_cpu.report = probe_cpu_blas(sgemm);
  log_debug("CPU BLAS: %s %s", g_cpu.library.c_str(), g_cpu.report.identity.c_str());
  // The advice goes into the summary (once): a user problem we can see, not a failure of ours, so it is not a
  // warning (a program must stay silent unless asked).
  if (!g_cpu.report.advice.empty()) log_debug("%s", g_cpu.report.advice.c_str());
}

void* resolve_late(Routine r) {
  // A LAPACK (or BLAS) loaded after the first call, e.g. by a plugin: looked up again, once per missing routine call.
  const std::string name = routine_name(r) + std::string("_");
  void* p = find_cpu_symbol(name.c_str(), bo::routines::is_lapack(int(r)));
  if (p) __atomic_store_n(&g_cpu.fortran[index(r)], p, __ATOMIC_RELEASE);
  return p;
}

void cpu_blas_missing(const char* symbol) {
  log_fatal(
      "no CPU BLAS defines %s, so this call cannot be forwarded. Set BLASOFFLOAD_CPU_BLAS to a BLAS library "
      "(e.g. BLASOFFLOAD_CPU_BLAS=/usr/lib/x86_64-linux-gnu/blas/libblas.so.3), or link/load one after "
      "libblasoffload.so. Aborting.",
      symbol);
  std::abort();
}

}  // namespace blasoffload

namespace blasoffload {
void cpu_blas_missing_routine(Routine r) {
  const std::string symbol = std::string(routine_name(r)) + "_";
  if (!bo::routines::is_lapack(int(r))) cpu_blas_missing(symbol.c_str());
  log_fatal(
      "no CPU LAPACK defines %s, so this call cannot be forwarded. Set BLASOFFLOAD_CPU_LAPACK to a LAPACK library "
      "(e.g. BLASOFFLOAD_CPU_LAPACK=/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3), or link/load one after "
      "libblasoffload.so. Aborting.",
      symbol.c_str());
  std::abort();
}
}  // namespace blasoffload
