// Auto-calibration: when the policy finds no calibration for the CPU BLAS in use, the library starts
// blasoffload-calibrate --auto as a detached, lowest-priority background process that writes the default policy
// file for the next run; the current run keeps the built-in defaults and never waits for it.
#pragma once

#include <string>

#include "policy/calibration.h"
#include "policy/config.h"

namespace blasoffload::policy {

// Called once by the policy's init when no file applies. Starts the calibration when allowed: on
// (BLASOFFLOAD_AUTO_CALIBRATE), the path the default one (a file the user named is never written), the tool found,
// this process not a fork child of a CUDA process, and no other process calibrating for the same path (a flock on
// PATH.lock, held by the measuring process until it ends), nor one started for the same CPU BLAS within the last
// hour (it left no usable file) or for another within the last 15 minutes. `cpu`, `lapack_library`: what this
// process resolved (the file is keyed by the CPU BLAS). Returns one phrase for the policy line ("" when there is
// nothing to say).
std::string start_auto_calibration(const Settings& s, const CpuIdentity& cpu, const std::string& lapack_library);

}  // namespace blasoffload::policy
