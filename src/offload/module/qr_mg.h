// QR (geqrf, every precision) of one large host matrix over several GPUs of the process, or on one GPU where the
// matrix is too large for the one-GPU path (cuSOLVER's 32-bit interface): a blocked Householder QR of our own over
// cuSOLVER's panel factorization and its application of the reflectors.
#pragma once

#include "offload/cuda_module_api.h"

namespace bom {

// BO_CUDA_UNSUPPORTED when the call is not for this path: not a geqrf; min(m, n) below BLASOFFLOAD_MULTI_GPU_MIN_N or
// fewer than two GPUs in BLASOFFLOAD_DEVICES' list (a GPU listed twice counts twice), unless m * n is beyond INT_MAX,
// which the one-GPU path cannot take; device operands; no cuSOLVER; a GPU without room for its share.
// Otherwise as lapack_call: BO_CUDA_OK with A and TAU written; BO_CUDA_CPU_ANSWERS for non-finite values, nothing
// written; another status: nothing written.
int mg_qr_call(const bo_call& c);

}  // namespace bom
