// Reports invalid arguments through whichever xerbla_ the process resolves first (the program's own wins).
#include <cstdio>

#include "abi/xerbla.h"
#include "dispatch/cpu_blas.h"

namespace blasoffload {

void report_xerbla(const char* srname6, blas_int info) {
  // Looked up on every error rather than cached: errors are rare, and a plugin may bring its XERBLA later.
  auto* xerbla = reinterpret_cast<xerbla_fortran_t*>(find_foreign_symbol("xerbla_"));
  if (xerbla) {
    xerbla(srname6, &info, 6);
    return;
  }
  // No XERBLA anywhere: print reference XERBLA's message ourselves.
  std::fprintf(stderr, " ** On entry to %.6s parameter number %2d had an illegal value\n", srname6,
               static_cast<int>(info));
}

}  // namespace blasoffload
