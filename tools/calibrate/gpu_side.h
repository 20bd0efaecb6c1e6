// blasoffload-calibrate's GPU side: loads the CUDA module, times its one-time start-up and asks it to measure the
// transfer rates and the per-call overhead.
#pragma once
#include <string>

#include "policy/calibration.h"

namespace blasoffload::calibrate {

// The module next to this executable (build tree), or in ../lib (installed).
std::string default_module_path();

// Fills c's GPU fields; false with the reason when there is no usable GPU (c is then left without GPU numbers). May be
// called again to measure again (the module is loaded and started once).
bool measure_gpu(const std::string& module_path, policy::Calibration* c, std::string* why);

}  // namespace blasoffload::calibrate
