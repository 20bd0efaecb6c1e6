// The module's LAPACK path: LU and Cholesky factorizations and solves (getrf getrs gesv potrf potrs posv trtrs, either
// precision) on host operands, with cuSOLVER (and cuBLAS for trtrs).
#pragma once

#include "offload/cuda_module_api.h"

namespace bom {

// BO_CUDA_OK with A, B, the pivots and INFO written exactly as the CPU LAPACK would (element-exactly, after every
// step succeeded); BO_CUDA_CPU_ANSWERS when the GPU found INFO > 0 or non-finite values (the CPU LAPACK must compute
// the call: its INFO and outputs are the reference); any other status: nothing written.
int lapack_call(const bo_call& c);

// The same routines' factorizations and solves (getrf potrf gesv posv) on A and B in this GPU's memory, computed in
// place (the module table's lapack_in_place): BO_CUDA_OK with the pivots and INFO = 0 written; BO_CUDA_CPU_ANSWERS
// when the GPU found INFO > 0 or non-finite values; A and B may be overwritten whatever the result.
int lapack_in_place(const bo_call& c);

}  // namespace bom
