// Opening a vendor library at run time (cuBLAS, cuSOLVER): the first of a list of names that dlopen accepts, and typed
// symbol lookup. Never a link dependency, so the module works without them.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <string>

namespace bok::vendor {

// f = the symbol `name` of h; false when h lacks it.
template <class F>
bool sym(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

// The first of names[0 .. n) that dlopen loads (null entries skipped), or nullptr; *used is its name, *tried lists the
// names that failed ("a, b").
inline void* open_first(const char* const* names, std::size_t n, std::string* used, std::string* tried) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!names[i]) continue;
    if (void* h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) {
      *used = names[i];
      return h;
    }
    *tried += std::string(tried->empty() ? "" : ", ") + names[i];
  }
  return nullptr;
}

}  // namespace bok::vendor
