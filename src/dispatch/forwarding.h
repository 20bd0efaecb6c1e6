// The forwarded interface: every BLAS/CBLAS/LAPACK routine blasoffload does not accelerate, exported by a trampoline
// that jumps to the CPU library's definition through a slot this file's table resolves.
#pragma once

#include <cstddef>
#include <string>

#include "abi/families.h"

namespace blasoffload {

// One forwarded routine: its name without the family's affixes ("daxpy"; a verbatim symbol as is), and its interface.
struct ForwardedRoutine {
  const char* base;
  bool cblas;     // a CBLAS function (cblas_daxpy)
  bool lapack;    // a LAPACK routine (looked up in the CPU LAPACK)
  bool verbatim;  // a name of no family (gfortran's module procedures): the std family only, looked up as is
};

// The exported name of routine `i` in family `f` ("ddot_64_"); empty where the family has no such export.
std::string forwarded_symbol(Family f, std::size_t i);

// Whether any forwarded routine has been called in this process (the summary of a process that called only those);
// false where the trampolines are not built (a weak definition in runtime.cpp stands in).
bool forwarded_a_call();

}  // namespace blasoffload
