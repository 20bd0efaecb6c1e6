// Loads cuSOLVER's kernels before the program's first LAPACK call on the GPU needs them (see solver_warm.cu).
#pragma once

namespace bom {

// Opens cuSOLVER and runs small factorizations and solves of each kind and precision on the calling thread's device
// (tens of milliseconds once the kernels are loaded); once per process. False when cuSOLVER is unavailable.
bool warm_solver();
// Whether the kernels are loaded: after warm_solver(), or after a LAPACK call ran on the GPU.
bool solver_warm();
void note_solver_used();

}  // namespace bom
