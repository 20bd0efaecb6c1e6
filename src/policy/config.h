// Run-time configuration: environment variables (secure_getenv semantics) over an optional config file.
#pragma once

#include <cstdint>
#include <string>

#include "dispatch/routine.h"

namespace blasoffload {

enum class Mode { kAuto, kCpu, kGpu };
enum class LogLevel { kOff = 0, kSummary = 1, kCalls = 2, kDebug = 3 };

const char* mode_name(Mode m);

struct Settings {
  Mode mode = Mode::kAuto;
  Mode routine_mode[kNumRoutines];  // BLASOFFLOAD_<ROUTINE>, defaults to `mode`
  // BLASOFFLOAD_<ROUTINE>_MIN: in auto mode, a fixed size threshold replacing the model (-1 = unset). Size:
  // sgemm cbrt(m n k), sgemv sqrt(m n), strsv n, snrm2 n, strsm cbrt(m n t) (t = m for side L, else n), ssyrk
  // cbrt(n^2 k).
  std::int64_t min_size[kNumRoutines];
  bool frozen = false;       // BLASOFFLOAD_DECISIONS=frozen: the calibrated model only, no run-time adaptation
  bool eager_start = false;  // BLASOFFLOAD_STARTUP=eager: start the GPU at the first call it wins, not once paid for
  // BLASOFFLOAD_HYBRID: auto (-1: the model's share of large sgemm calls for the CPU BLAS), off (0), or a fixed
  // fraction in (0, 1) for every sgemm the GPU runs.
  float hybrid_share = -1;
  std::string policy_file;   // BLASOFFLOAD_POLICY_FILE, else the per-user default path (may not exist)
  bool policy_file_explicit = false;
  LogLevel log = LogLevel::kOff;
  std::string log_file;     // BLASOFFLOAD_LOG_FILE; empty = stderr
  std::string cpu_blas;     // BLASOFFLOAD_CPU_BLAS; empty = automatic lookup
  std::string cuda_module;  // BLASOFFLOAD_CUDA_MODULE; empty = next to libblasoffload.so
  std::string config_file;  // the file actually read, empty if none
};

// Reads the environment and the config file once; later calls return the same object.
const Settings& settings();

// Looks a key up: the environment first, then the config file. Returns nullptr when unset.
// Valid after settings() has run; used by the CUDA module through the host services.
const char* config_value(const char* key);

}  // namespace blasoffload
