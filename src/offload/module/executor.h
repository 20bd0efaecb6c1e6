// The module's one generic call: every routine and precision runs through the same steps, driven by the routine's
// descriptor (routines/operand.h: which operands the call reads and writes, and their extents). Only gemm has a
// routing hook in front (the tiled pipeline for large host operands, a hybrid CPU share, out-of-core).
#pragma once

#include <cstdint>

#include "offload/cuda_module_api.h"

namespace bom {

// The entry table's call: BO_CUDA_OK with the outputs written element-exactly, or a status with nothing written.
int call(const bo_call* c, double cpu_share);

// The calling thread's last gemm (either precision).
const bo_gemm_stats& last_gemm_stats();

// What the generic path may do for one call.
struct ExecOptions {
  bool resident_only = false;  // run only when some operand has a device copy and the rest stages small (else
                               // kNotResident, nothing written)
  uint64_t use = 0;            // the call's residency use number (resident_copies.h); 0: a new one
};
constexpr int kNotResident = -1;

// What a successful generic call moved.
struct ExecReport {
  double bytes_h2d = 0, bytes_d2h = 0;
  const char* kernel = nullptr;
};

// The generic path: gate, device-operand detection, residency holds, staging of each operand by its extent, kernel
// choice from the registry, launch, copy back, element-exact write-back.
int execute(const bo_call& c, const ExecOptions& opt, ExecReport* report);

}  // namespace bom
