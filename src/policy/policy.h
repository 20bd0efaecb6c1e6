// Decides, per call, whether it runs on the GPU or the CPU BLAS.
#pragma once

#include "dispatch/routine.h"
#include "policy/config.h"

namespace blasoffload {

enum class Target { kCpu, kGpu };

// BLASOFFLOAD_MODE / BLASOFFLOAD_<ROUTINE> decide here. `auto` keeps every call on the CPU until the cost
// model (the policy issue) predicts a gain; until then the GPU path runs only when asked for.
inline Target decide(const Settings& s, Routine r) {
  return s.routine_mode[index(r)] == Mode::kGpu ? Target::kGpu : Target::kCpu;
}

}  // namespace blasoffload
