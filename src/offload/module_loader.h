// Core-side loader of the CUDA module: dlopen on first GPU-bound call, never at library load time.
#pragma once

#include <string>

#include "offload/cuda_module_api.h"

namespace blasoffload {

// The module, loaded and initialised on first use; nullptr when no GPU can be used in this process (the
// reason is logged once and shown in the summary). Thread-safe; O(1) after the first call.
const bo_cuda_module* gpu_module();

// Where loading the module stands, without waiting.
enum class GpuLoad { kNotTried, kLoading, kReady, kUnavailable };
GpuLoad gpu_load_state();

// The module when it is loaded and initialised; nullptr otherwise. Never loads, never waits.
const bo_cuda_module* gpu_module_if_ready();

// Starts loading the module in a background thread (once per process); callers go on with the CPU meanwhile.
void gpu_load_in_background();

// Exit: waits up to max_ms for a background load still under way (the first call only; later ones just look), which
// from then on does only what the GPU needs to exist (no CUDA at all if it has not begun initialising it). False when
// it was left unfinished: the process then ends with that thread inside CUDA's initialisation (the GPU is not shut
// down; the driver releases it).
bool gpu_wait_background(int max_ms);

// On the main thread (elsewhere nothing): makes exit() from it wait for a background load under way before any exit
// handler runs, the CUDA runtime's own included (BLASOFFLOAD_EXIT_WAIT_MS). Called on initialisation and where a
// load starts or is waited on.
void gpu_arm_exit_guard();

// Remembers a failed GPU call's kind and warns once per kind.
void note_gpu_failure(const char* routine, int status);

// fork() child: tell the module never to touch CUDA again, and stop routing to it.
void gpu_forked_child();

// Exit: let the module release the device before the summary is printed.
void gpu_shutdown();

// One line for the summary: what happened with the GPU in this process.
std::string gpu_status_line();

}  // namespace blasoffload
