// The module's LAPACK path, part 2: QR and least squares (geqrf orgqr ormqr gels), the symmetric eigenproblem (syevd
// syev syevr), the SVD (gesvd gesdd) and the inverses (getri potri), either precision, on host operands with cuSOLVER
// (and cuBLAS's trsm for gels).
#pragma once

#include "offload/cuda_module_api.h"

namespace bom {

// Whether a routine kind is one of part 2's (lapack_call hands those to decomp_call).
bool is_decomp_kind(int kind);
// As lapack_call (lapack_exec.h): BO_CUDA_OK with every output written as the CPU LAPACK would (element-exactly, after
// every step succeeded); BO_CUDA_CPU_ANSWERS when the GPU found INFO > 0, non-finite values or a magnitude LAPACK
// scales first; any other status: nothing written.
int decomp_call(const bo_call& c);
// geqrf and gels on A (and gels's B) in this GPU's memory, computed in place (lapack_in_place); TAU in host memory.
// As decomp_call's results, but A and B may be overwritten whatever the result.
int decomp_in_place(const bo_call& c);

}  // namespace bom
