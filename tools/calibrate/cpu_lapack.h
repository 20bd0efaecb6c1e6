// blasoffload-calibrate's CPU LAPACK side: the rates of the LAPACK shape classes (factorizations, one-call solvers,
// and the solves with few and with many right-hand sides) on the CPU LAPACK, in both precisions.
#pragma once
#include <string>

#include "policy/calibration.h"

namespace blasoffload::calibrate {

// Measures the LAPACK classes on `path` when given; else on the CPU BLAS (`blas`, a dlopen handle) when it defines
// LAPACK too (libopenblas does; the library looks there before the process), else on liblapack.so.3 as the
// dynamic linker finds it. A library that is not there or lacks the routines leaves the classes out (the policy
// then derives them from the BLAS rates), with a note; false, with the reason, only when `path` cannot be loaded.
bool measure_cpu_lapack(const std::string& path, void* blas, bool quick, policy::Calibration* c, std::string* why);

}  // namespace blasoffload::calibrate
