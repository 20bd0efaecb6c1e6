// The forwarding table: the CPU BLAS's own definition of every routine in routines.def.
#pragma once

#include <string>

#include "abi/signatures.h"
#include "policy/cpu_blas_probe.h"
#include "dispatch/routine.h"

namespace blasoffload {

struct CpuBlas {
#define BO_ROUTINE(lower, UPPER)          \
  lower##_fortran_t* lower##_f = nullptr; \
  lower##_cblas_t* lower##_c = nullptr;
#include "routines.def"
#undef BO_ROUTINE
  std::string library;  // where the Fortran sgemm_ came from, for the log
  CpuBlasReport report;  // what that library says about itself, and advice
};

// Resolves the table (once): BLASOFFLOAD_CPU_BLAS if set, else the next definition after ours in lookup
// order, else an already-loaded library that defines the symbol (a CPU BLAS dlopen'ed RTLD_LOCAL by a
// plugin). Never returns one of our own definitions.
void resolve_cpu_blas();

// The resolved table. Valid after resolve_cpu_blas().
extern CpuBlas g_cpu;

// Ends the process with a message naming BLASOFFLOAD_CPU_BLAS: called when a needed entry is missing.
[[noreturn]] void cpu_blas_missing(const char* symbol);

// Finds a symbol the way the CPU table is found (used for xerbla_ and cblas_xerbla); nullptr if none.
void* find_foreign_symbol(const char* symbol);

// True when `p` lies inside libblasoffload.so itself.
bool is_our_address(const void* p);

}  // namespace blasoffload
