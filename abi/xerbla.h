// Reference BLAS error reporting: XERBLA through the dynamic symbol, so that a program's own XERBLA wins.
#pragma once

#include <cstdint>

#include "abi/blas_types.h"
#include "abi/families.h"

namespace blasoffload {

// Calls the XERBLA of family `f` (xerbla_, xerbla_64_, scipy_xerbla_ ...) as reference BLAS does: SRNAME padded to 6
// characters, INFO in the family's integer type, and the hidden length. Looked up dynamically so that a program's
// own XERBLA wins over the CPU library's.
void report_xerbla(Family f, const char* srname6, std::int64_t info);

}  // namespace blasoffload
