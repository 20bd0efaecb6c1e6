// Says in words why there is no usable NVIDIA GPU (no driver, driver without devices, driver too old), asking the
// driver library directly: the CUDA runtime's own error ("driver version is insufficient") misleads without one.
#pragma once

#include <string>

namespace blasoffload {

struct GpuDiagnosis {
  bool usable = false;     // the driver started and sees at least one device
  int driver_version = 0;  // CUDA version the driver supports (12040 = 12.4), 0 if unknown
  int devices = 0;
  std::string reason;  // why not usable, in words; "" when usable
};

// Loads libcuda.so.1 (if present) and asks it; `needed_cuda_major` (0 = any) is the CUDA major version the module
// was built with, since a driver for an older major version cannot run it.
GpuDiagnosis diagnose_gpu(int needed_cuda_major = 0);

}  // namespace blasoffload
