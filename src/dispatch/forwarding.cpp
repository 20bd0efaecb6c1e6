// The forwarded interface's slot table: where each trampoline of forward_trampolines.S jumps, resolved lazily.
//
// Every forwarded routine of every complete family has one slot (a row per family, in forward_list.h's order). A slot
// starts at the resolver stub bo_fwd_lazy, which calls bo_fwd_resolve with the slot's address. A slot's first call
// looks its name up in the process (a hash lookup, nothing loaded), else fully, loading the system's library where the
// process holds none (find_cpu_definition), so that a program that never calls LAPACK never loads one, and a library
// loaded after the first call is still found. Only the names a program calls are looked up: resolving a family's
// whole row (2,200 names) at its first call had cost that call 1.2-2.0 ms on the H200 machine. A routine nothing
// defines ends the process at its call, naming the setting that would fix it. After resolution a forwarded call costs
// the trampoline's one indirect jump.
#include "dispatch/forwarding.h"

#include <atomic>
#include <cstdlib>

#include "dispatch/cpu_blas.h"
#include "dispatch/log.h"
#include "policy/config.h"

extern "C" {
// forward_trampolines.S: the slots (BO_FWD_ROWS rows of kNum) and the resolver stub.
extern void* bo_fwd_slots[];
void bo_fwd_lazy();
void* bo_fwd_resolve(void** slot);

// Reference CBLAS's two data symbols: cblas_xerbla reads them to report a row-major call's argument by its CBLAS
// number, and Debian's CBLAS test programs set and read them directly. Defined here so that such programs link against
// blasoffload alone. Whichever definition comes first in the global scope is the one everybody uses: the CPU library's
// own CBLAS reaches them through its GOT, which the dynamic linker binds by the global scope first even for a library
// loaded RTLD_LOCAL, so its writes land where the program reads (ours, or the program's copy of ours).
__attribute__((visibility("default"))) int CBLAS_CallFromC = 0;
__attribute__((visibility("default"))) int RowMajorStrg = 0;
}

namespace blasoffload {
namespace {

#define BO_FWD_FAMILY(id, row)
#include "forward_families.h"
#undef BO_FWD_FAMILY

constexpr ForwardedRoutine kRoutines[] = {
#define BO_FWD_BLAS(name) {#name, false, false, false},
#define BO_FWD_CBLAS(name) {#name, true, false, false},
#define BO_FWD_LAPACK(name) {#name, false, true, false},
#define BO_FWD_VERBATIM(symbol) {#symbol, false, true, true},
#include "forward_list.h"
#undef BO_FWD_BLAS
#undef BO_FWD_CBLAS
#undef BO_FWD_LAPACK
#undef BO_FWD_VERBATIM
};
constexpr std::size_t kNum = sizeof(kRoutines) / sizeof(kRoutines[0]);

#if BO_FWD_ROWS > 0
constexpr Family kRowFamily[] = {
#define BO_FWD_FAMILY(id, row) Family::id,
#include "forward_families.h"
#undef BO_FWD_FAMILY
};
#endif
std::atomic<bool> g_forwarded_a_call{false};  // a trampoline's first call has run (forwarded_a_call)

void* const kStub = reinterpret_cast<void*>(&bo_fwd_lazy);

// The cheap lookup first: the definition the process's global scope holds after ours (or the library
// BLASOFFLOAD_CPU_BLAS / BLASOFFLOAD_CPU_LAPACK names); nullptr where it holds none. A verbatim name outside the std
// family goes straight to the full lookup, as it always has.
void* find_in_process(Family f, const ForwardedRoutine& r) {
  if (r.verbatim && f != Family::std) return nullptr;
  void* p = r.verbatim ? find_cpu_symbol_verbatim(r.base, r.lapack, true)
                       : find_cpu_definition(f, r.base, r.cblas, r.lapack, true);
  return p && !is_our_address(p) ? p : nullptr;
}

[[noreturn]] void missing(Family f, const ForwardedRoutine& r, const std::string& symbol) {
  if (f == Family::std && !r.lapack) cpu_blas_missing(symbol.c_str());
  if (f == Family::std)
    log_fatal(
        "no CPU LAPACK defines %s, so this call cannot be forwarded. Set BLASOFFLOAD_CPU_LAPACK to a LAPACK library "
        "(e.g. BLASOFFLOAD_CPU_LAPACK=/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3), or link/load one after "
        "libblasoffload.so. Aborting.",
        symbol.c_str());
  else
    log_fatal(
        "no library in the process defines %s, and no ILP64 %s of the system defines %s%s, so this call cannot be "
        "forwarded. Install one (Debian: libopenblas64-0-pthread, or libblas64-3 and liblapack64-3), or load an "
        "ILP64 library with 64_-suffixed names before calling. Aborting.",
        symbol.c_str(), r.lapack ? "LAPACK (liblapack64.so.3)" : "BLAS (libblas64.so.3)", r.cblas ? "cblas_" : "",
        r.cblas ? r.base : (std::string(r.base) + "_").c_str());
  std::abort();
}

}  // namespace

bool forwarded_a_call() { return g_forwarded_a_call.load(std::memory_order_relaxed); }

std::string forwarded_symbol(Family f, std::size_t i) {
  const ForwardedRoutine& r = kRoutines[i];
  if (r.verbatim) return f == Family::std ? r.base : "";
  return r.cblas ? cblas_name(f, r.base) : fortran_name(f, r.base);
}

}  // namespace blasoffload

using namespace blasoffload;

// Called by the stub with a slot still at the stub: the slot's definition, stored for the next call. Runs on the
// caller's thread, possibly several threads at once for the same slot (each finds the same definition).
extern "C" __attribute__((visibility("hidden"))) void* bo_fwd_resolve(void** slot) {
  g_forwarded_a_call.store(true, std::memory_order_relaxed);
  const std::size_t at = std::size_t(slot - bo_fwd_slots);
  const int row = int(at / kNum);
  const std::size_t i = at % kNum;
#if BO_FWD_ROWS > 0
  const Family f = kRowFamily[row];
#else
  const Family f = Family::std;
#endif
  if (void* p = __atomic_load_n(slot, __ATOMIC_ACQUIRE); p != kStub) return p;
  const ForwardedRoutine& r = kRoutines[i];
  if (void* p = find_in_process(f, r)) {
    log_debug("forwarding: %s resolved at its first call, in the process", forwarded_symbol(f, i).c_str());
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
  }
  void* p = r.verbatim ? find_cpu_symbol_verbatim(r.base, r.lapack) : find_cpu_definition(f, r.base, r.cblas, r.lapack);
  const std::string symbol = forwarded_symbol(f, i);
  if (!p || is_our_address(p)) missing(f, r, symbol);
  log_debug("forwarding: %s resolved at its first call, outside the process's global scope", symbol.c_str());
  __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  return p;
}
