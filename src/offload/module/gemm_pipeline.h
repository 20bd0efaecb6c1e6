// The tiled, pipelined gemm (either precision) for host operands: C tiles computed on one or more GPUs while their
// operands stream in through pinned staging chunks and results stream back, optionally with a share of C computed by
// the CPU BLAS at the same time; tiles a failing GPU did not write back are finished on the CPU.
#pragma once

#include <cstdint>

#include "offload/cuda_module_api.h"

namespace bom {

struct GemmCall {
  bo_call c;  // a gemm of either precision (routine BO_R_SGEMM or BO_R_DGEMM) on host operands
  double cpu_share;
  bool stage_only = false;  // never DMA straight from registered host memory (measuring the staging path)
};

// What the engine needs from the rest of the module.
struct EngineHost {
  const bo_cuda_host_services* host;  // config, log, cpu_call
  const int* devices;                 // device ordinals to use
  int device_count;
  // Called with a real CUDA error (not an injected one): the module decides whether the device is still usable.
  void (*on_cuda_error)(int cuda_error);
  void (*log)(int level, const char* fmt, ...);
};

// Runs the call. BO_CUDA_OK: C is complete (possibly partly computed on the CPU after a GPU failure).
// Anything else: C was not written (nothing could be started: no memory for the plan, no device).
int pipeline_gemm(const EngineHost& h, const GemmCall& call, bo_gemm_stats* stats);

// The engine's staging rate for blasoffload-calibrate: bytes moved in plus bytes moved out per second when `bytes`
// of pageable memory go to the first device and back through the staging pipeline (both directions share the
// staging threads and the host's memory bandwidth); the median of seven.
double measure_staged_gbs(const EngineHost& h, int64_t bytes);

// 1: the engine moves [p, p + bytes) by DMA without staging; 2: not yet, but it will register the mapping on its
// next use; 0: staged (host_pins.h). Byte ranges: the same for every element size.
int host_range_state(const void* p, int64_t bytes);

// Whether calls may register host memory: BLASOFFLOAD_PIN_HOST=on|off, or auto (on unless the program itself had
// CUDA loaded before the module started: its own copies must never meet a registration of ours mid-change).
void set_pinning_default(bool program_uses_cuda);
// Process exit: registrations are left to the process's end.
void pins_shutdown();
// Registrations are being undone now (host_pins.h: unpinning): the policy's queries answer without waiting.
bool pins_unpinning();
bool pinning_enabled(const bo_cuda_host_services* h);

}  // namespace bom
