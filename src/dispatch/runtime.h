// Process-wide state of the core: lazy initialisation, the re-entry guard, exit and fork handling.
#pragma once

#include <atomic>

namespace blasoffload {

namespace detail {
extern std::atomic<bool> g_initialized;
void initialize_slow();
// Depth of our own entry points on this thread: non-zero while we are inside a call (including while the
// CPU BLAS runs it), so a CPU CBLAS calling its Fortran routine back through us is passed straight on.
extern thread_local int t_depth;
}  // namespace detail

// Reads the configuration and resolves the CPU BLAS on the first intercepted call; never at load time.
inline void ensure_initialized() {
  if (__builtin_expect(!detail::g_initialized.load(std::memory_order_acquire), 0)) detail::initialize_slow();
}

inline bool reentered() { return detail::t_depth != 0; }

// Marks this thread as inside a blasoffload call for the scope's lifetime.
class CallScope {
 public:
  CallScope() { ++detail::t_depth; }
  ~CallScope() { --detail::t_depth; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
};

}  // namespace blasoffload
