// The policy's estimate of a LAPACK call's time on the GPU (cuSOLVER, device operands), as data: per routine and
// precision a fixed cost, a cost per column (the panel factorizations' chain of small steps) and a rate for the rest.
#pragma once

#include "routines/call.h"

namespace bom {

// Microseconds for the call's computation alone (no transfers). cc_major/cc_minor: the GPU's compute capability; the
// table was measured on an H100 (9.0); other GPUs get it three times slower, so that guesses err toward the CPU.
double solver_kernel_us(const bo_call& c, int cc_major, int cc_minor);

}  // namespace bom
