// trsm and syrk/herk of one large host call shared among the process's GPUs (BLASOFFLOAD_DEVICES), each GPU taking
// a range of the independent columns or rows through its own pinned ring; also the one-GPU path of such calls whose
// operands are too large for the whole-operand staging (BLASOFFLOAD_PINNED_MAX_MB).
#pragma once

#include "offload/cuda_module_api.h"

namespace bom {

// BO_CUDA_UNSUPPORTED when the call is not for this path: another routine, an operand in device memory, no cuBLAS,
// a GPU's share of 2^31 elements or more, or neither several GPUs for an order and other dimension of at least half
// BLASOFFLOAD_MULTI_GPU_MIN_N nor operands beyond the pinned staging limit. Otherwise BO_CUDA_OK with the output
// written, or a failure with nothing written (BO_CUDA_OUT_OF_MEMORY: a GPU had no room for its share).
int level3_mg_call(const bo_call& c);

}  // namespace bom
