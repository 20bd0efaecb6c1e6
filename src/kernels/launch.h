// Launching a registry entry from the module: the entry's own launch, with its first launch in the process timed as a
// one-time cost of the call that makes it (CUDA loads a kernel at its first launch, cuBLAS a routine's kernels at
// its first use; offload/one_time_cost.h).
#pragma once

#include <cuda_runtime.h>

#include "kernels/registry.h"

namespace bok {

// entries[index].launch(args, workspace, stream).
cudaError_t launch(int index, const bo_kernel_args* args, void* workspace, cudaStream_t stream);

}  // namespace bok
