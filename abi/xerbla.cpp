// Reports invalid arguments through whichever XERBLA of the family the process resolves first (the program's own wins).
#include "abi/xerbla.h"

#include <cstdio>

#include "dispatch/cpu_blas.h"

namespace blasoffload {

void report_xerbla(Family f, const char* srname6, std::int64_t info) {
  // Looked up on every error rather than cached: errors are rare, and a plugin may bring its XERBLA later.
  void* xerbla = find_foreign_symbol(fortran_name(f, "xerbla").c_str());
  // A family whose CPU library uses other names (the 64_ family served by an ILP64 library's xerbla_).
  if (!xerbla) xerbla = find_cpu_definition(f, "xerbla", false, false);
  if (xerbla) {
    if (family_info(f).int_bytes == 8) {
      const std::int64_t i = info;
      reinterpret_cast<void (*)(const char*, const std::int64_t*, fortran_strlen)>(xerbla)(srname6, &i, 6);
    } else {
      const std::int32_t i = std::int32_t(info);
      reinterpret_cast<void (*)(const char*, const std::int32_t*, fortran_strlen)>(xerbla)(srname6, &i, 6);
    }
    return;
  }
  // No XERBLA anywhere: print reference XERBLA's message ourselves.
  std::fprintf(stderr, " ** On entry to %.6s parameter number %2d had an illegal value\n", srname6,
               static_cast<int>(info));
}

}  // namespace blasoffload
