// Replaces the global operator new to count heap allocations, so a test can check that a call makes none.
// In a file of its own: GCC warns (falsely) about malloc/free pairs wherever these get inlined.
#include <atomic>
#include <cstdlib>
#include <new>

#include "support.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace bo::tuning::test {
long allocation_count() { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace bo::tuning::test
