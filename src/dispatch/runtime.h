// Process-wide state of the core: lazy initialisation, the re-entry guard, exit and fork handling.
#pragma once

#include <atomic>

#include "abi/families.h"

namespace blasoffload {

// The layers of the interface we export. A call arriving at a layer we are already inside on this thread is the CPU
// library's own business (its CBLAS calling its Fortran routine back through us, its LAPACK calling its own LAPACK
// helpers): passed straight on. A call arriving from a higher layer running on the CPU (the BLAS calls of a LAPACK
// routine we handed to the CPU LAPACK) is a call like any program's: checked, decided and counted.
enum class Layer { kBlas = 0, kLapack = 1, kCount };

namespace detail {
extern std::atomic<bool> g_initialized;
// `first`: the symbol family of the call that initialises (abi/families.h), whose CPU library the summary describes
// where the process has none under the reference names.
void initialize_slow(Family first = Family::std);
// Depth of our own entry points on this thread, per layer: non-zero while we are inside a call of that layer
// (including while the CPU library runs it).
// initial-exec: one fs-relative access on every call instead of a __tls_get_addr call (policy.cpp does the same).
extern __attribute__((tls_model("initial-exec"))) thread_local int t_depth[int(Layer::kCount)];
}  // namespace detail

// Reads the configuration and resolves the CPU BLAS on the first intercepted call (of family `first`); never at load
// time.
inline void ensure_initialized(Family first = Family::std) {
  if (__builtin_expect(!detail::g_initialized.load(std::memory_order_acquire), 0)) detail::initialize_slow(first);
}

inline bool reentered(Layer l = Layer::kBlas) { return detail::t_depth[int(l)] != 0; }

// Marks this thread as inside a blasoffload call of layer `l` for the scope's lifetime.
class CallScope {
 public:
  explicit CallScope(Layer l = Layer::kBlas) : l_(int(l)) { ++detail::t_depth[l_]; }
  ~CallScope() { --detail::t_depth[l_]; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  int l_;
};

}  // namespace blasoffload
