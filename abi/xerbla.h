// Reference BLAS error reporting: XERBLA through the dynamic symbol, so that a program's own XERBLA wins.
#pragma once

#include "abi/blas_types.h"

namespace blasoffload {

// xerbla_(srname, info, srname_len): the reference BLAS error handler.
using xerbla_fortran_t = void(const char* srname, const blas_int* info, fortran_strlen srname_len);

// Calls xerbla_ as reference BLAS does: SRNAME padded to 6 characters, INFO, and the hidden length.
// Looked up dynamically so that a program's own XERBLA wins over the CPU library's.
void report_xerbla(const char* srname6, blas_int info);

}  // namespace blasoffload
