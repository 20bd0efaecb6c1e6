// LU (square getrf) and Cholesky (potrf) of one large host matrix over several GPUs of the process with cuSOLVERMg:
// the columns dealt to the GPUs in blocks, each GPU's blocks moved through its own pinned ring by its own thread.
#pragma once

#include "offload/cuda_module_api.h"

namespace bom {

// BO_CUDA_UNSUPPORTED when the call is not for several GPUs (fewer than two in BLASOFFLOAD_DEVICES' list, where a GPU
// listed twice counts twice; an order below BLASOFFLOAD_MULTI_GPU_MIN_N, for potrf below twice it; no cuSOLVERMg; not
// enough device memory): the one-GPU path then runs it. A matrix too large for the one-GPU path (n * n above INT_MAX)
// comes here, with one GPU too.
// Otherwise as lapack_call: BO_CUDA_OK with A, the pivots and INFO written; BO_CUDA_CPU_ANSWERS for INFO > 0 or
// non-finite values, nothing written; another status: nothing written.
int mg_factor_call(const bo_call& c);

}  // namespace bom
