// The forwarding table: the CPU library's own definition of every routine in routines.def, by symbol family and
// routine id.
#pragma once

#include <string>

#include "abi/families.h"
#include "dispatch/routine.h"
#include "policy/cpu_blas_probe.h"

namespace blasoffload {

struct CpuBlas {
  // [family][routine]: "dgemm_", "dgemm_64_", "scipy_dgemm_64_" (the descriptor says its type: D::Fortran in the
  // family's integer type). The std family is resolved at the first call; the others at their first call each.
  void* fortran[kNumFamilies][kNumRoutines] = {};
  void* cblas[kNumFamilies][kNumRoutines] = {};  // "cblas_dgemm", "scipy_cblas_dgemm64_"
  std::string library;                           // where the Fortran sgemm_ came from, for the log
  std::string lapack_library;                    // where dgetrf_ came from (empty: no CPU LAPACK in the process yet)
  // Why, where blasoffload loaded the library itself ("loaded by blasoffload: the program links none; ..."); empty
  // when the program brought it.
  std::string library_why, lapack_why;
  CpuBlasReport report;  // what that library says about itself, and advice
};

// Resolves the table (once): BLASOFFLOAD_CPU_BLAS if set, else the next definition after ours in lookup
// order, else an already-loaded library that defines the symbol (a CPU BLAS dlopen'ed RTLD_LOCAL by a
// plugin). Never returns one of our own definitions. A process that holds no CPU BLAS at all gets the system's,
// loaded here (cpu_library_search.h); one that holds a CPU BLAS pays nothing for that.
void resolve_cpu_blas();

// The resolved table. Valid after resolve_cpu_blas().
extern CpuBlas g_cpu;

// Looks a routine's CPU definition in family `f` up again (a library loaded after the first call, a family's first
// call), and where nothing in the process defines it, in the system's library, loaded then (the CPU LAPACK of a
// program that links none); stores it in the table; nullptr if none.
void* resolve_late(Routine r, Family f = Family::std);
// The same for a routine's CBLAS function.
void* resolve_late_cblas(Routine r, Family f);

// The CPU library's definition of a routine or function in family `f`, for the forwarding trampolines: `base` is a
// Fortran routine's name without the family's affixes ("dgemm", "xerbla") or, with `cblas`, a CBLAS function's ("dgemm"
// for cblas_dgemm); `lapack` says it belongs to LAPACK. Looked up as resolve_late does (the system's library loaded
// where the process holds none); nullptr if nothing defines it.
void* find_cpu_definition(Family f, const char* base, bool cblas, bool lapack);

// Ends the process with a message naming BLASOFFLOAD_CPU_BLAS: called when a needed entry is missing.
[[noreturn]] void cpu_blas_missing(const char* symbol);
// The same for a routine's Fortran entry point in family `f` ("dgemm_"; a LAPACK routine's names
// BLASOFFLOAD_CPU_LAPACK).
[[noreturn]] void cpu_blas_missing_routine(Routine r, Family f = Family::std);

// Finds a symbol the way the CPU table is found (used for xerbla_ and cblas_xerbla); nullptr if none.
void* find_foreign_symbol(const char* symbol);

// True when `p` lies inside libblasoffload.so itself.
bool is_our_address(const void* p);

}  // namespace blasoffload
