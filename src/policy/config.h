// Run-time configuration: one typed registry of every BLASOFFLOAD_* setting (core and CUDA module), read from the
// environment (secure_getenv semantics) over an optional config file, each value's source recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/routine.h"

namespace blasoffload {

enum class Mode { kAuto, kCpu, kGpu };
enum class LogLevel { kOff = 0, kSummary = 1, kCalls = 2, kDebug = 3 };

const char* mode_name(Mode m);

enum class ScalapackTakeover { kAuto, kGather, kOff };
// How a takeover's copies go (BLASOFFLOAD_TEST_SCALAPACK_COPY): auto (the GPU's memory, else shared host memory, else
// messages), host (shared host memory, else messages), messages.
enum class ScalapackCopy { kAuto, kHost, kMessages };

struct Settings {
  Mode mode = Mode::kAuto;
  Mode routine_mode[kNumRoutines];  // BLASOFFLOAD_<ROUTINE>, defaults to `mode`
  // BLASOFFLOAD_<ROUTINE>_MIN: in auto mode, a fixed size threshold replacing the model (-1 = unset). Size:
  // sgemm cbrt(m n k), sgemv sqrt(m n), strsv n, snrm2 n, strsm cbrt(m n t) (t = m for side L, else n), ssyrk
  // cbrt(n^2 k).
  std::int64_t min_size[kNumRoutines];
  bool frozen = false;       // BLASOFFLOAD_DECISIONS=frozen: the calibrated model only, no run-time adaptation
  bool eager_start = false;  // BLASOFFLOAD_STARTUP=eager: start the GPU at the first call it wins, not once paid for
  // BLASOFFLOAD_LEND_CORE: whether OpenBLAS runs one thread less while work of ours runs beside the program
  // (policy/lent_core.h): 0 off, 1 auto (8 threads or more), 2 on (2 or more).
  int lend_core = 1;
  // BLASOFFLOAD_DEVICE_OPERANDS=check: ask the GPU about every call's pointers once CUDA is in the process, even where
  // only this library loaded it (a program linking the CUDA runtime statically that starts CUDA after the library did).
  bool check_device_operands = false;
  // BLASOFFLOAD_HYBRID: auto (-1: the model's share of large sgemm calls for the CPU BLAS), off (0), or a fixed
  // fraction in (0, 1) for every sgemm the GPU runs.
  float hybrid_share = -1;
  // BLASOFFLOAD_SCALAPACK and _MIN_N: whether ScaLAPACK's factorizations and solvers are taken over whole
  // (src/scalapack/), and from which min(m, n) in auto; BLASOFFLOAD_TEST_SCALAPACK_COPY: how their copies go (tests:
  // through host memory though the GPU factors, or by BLACS messages even where the processes share memory).
  ScalapackTakeover scalapack = ScalapackTakeover::kAuto;
  std::int64_t scalapack_min_n = 4096;
  ScalapackCopy scalapack_copy = ScalapackCopy::kAuto;
  int exit_wait_ms = 10000;  // BLASOFFLOAD_EXIT_WAIT_MS: exit's wait for an unfinished background GPU start-up
  std::string policy_file;   // BLASOFFLOAD_POLICY_FILE, else the per-user default path (may not exist)
  bool policy_file_explicit = false;
  LogLevel log = LogLevel::kOff;
  std::string log_file;  // BLASOFFLOAD_LOG_FILE; empty = stderr
  std::string cpu_blas;  // BLASOFFLOAD_CPU_BLAS; empty = automatic lookup
  // BLASOFFLOAD_CPU_LAPACK; empty = automatic lookup (BLASOFFLOAD_CPU_BLAS first, then the process)
  std::string cpu_lapack;
  // BLASOFFLOAD_TEST_CPU_LIBRARY_ROOT (tests): the directory that stands for / where the system's CPU BLAS and LAPACK
  // are looked for (dispatch/cpu_library_search.h); empty = the real file system.
  std::string cpu_library_root;
  std::string cuda_module;  // BLASOFFLOAD_CUDA_MODULE; empty = next to libblasoffload.so
  std::string config_file;  // the file actually read, empty if none
};

// Reads the environment and the config file once; later calls return the same object.
const Settings& settings();

// The value of a setting as the library uses it: the environment first, then the config file; nullptr when unset
// or when the value given was invalid (a warning said so; the knob's default applies). Used by the CUDA module
// through the host services, so its knobs go through the same registry. Reads the configuration if not yet read.
const char* config_value(const char* key);

// ---- The registry (blasoffload-info, docs/settings.md, tests) ----

enum class KnobKind {
  kWords,    // one of `choices`
  kInteger,  // an integer in [min, max], or one of `choices`
  kNumber,   // a real number in [min, max) (max exclusive when max_open), or one of `choices`
  kBytes,    // a size: a number with an optional K/M/G suffix
  kIndices,  // a comma-separated list of non-negative integers
  kPath,     // a file or directory
  kText,     // anything (validated where it is used)
};
enum class KnobOwner { kCore, kModule, kTest };

struct Knob {
  std::string name;  // BLASOFFLOAD_MODE
  KnobKind kind;
  KnobOwner owner;
  std::string def;      // the default, as shown ("auto", "2048", "unset")
  std::string allowed;  // the values, as shown in messages and docs/settings.md ("one of auto|cpu|gpu")
  std::string doc;      // one line
  std::vector<std::string> choices;
  double min = 0, max = 0;
  bool max_open = false;
};

// Every knob, in docs/settings.md's order: fixed ones declared as data, per-routine ones generated from the routine
// list.
const std::vector<Knob>& knobs();
const Knob* find_knob(const std::string& name);
// A setting of an earlier version that no longer does anything (ignored without a warning).
bool retired_knob(const std::string& name);

// Whether `value` is valid for `k` (pure).
bool knob_accepts(const Knob& k, const std::string& value);

enum class Source { kDefault, kFile, kEnvironment };
struct EffectiveValue {
  const Knob* knob;
  std::string value;    // as given ("" when the default applies)
  Source source;        // where the value came from (kDefault also when the given value was invalid)
  std::string where;    // "default", "environment" or "FILE:LINE"
  std::string invalid;  // the rejected value, if one was given
};

// Every knob's effective value and source. Reads the configuration if not yet read.
std::vector<EffectiveValue> effective_values();

// The problems found while reading the configuration (unknown variables and keys with the nearest valid name,
// unreadable files, invalid values), each as printed once as a warning.
const std::vector<std::string>& config_problems();

// The config files considered, in order, and what became of each ("read", "not present", "cannot be read").
const std::vector<std::pair<std::string, std::string>>& config_files_considered();

// The registered knob closest to `name` (edit distance, case-insensitive), or "" if none is close.
std::string nearest_knob(const std::string& name);

// For tests and blasoffload-info: forget what was read, so the next call reads the environment and file again,
// and say where the library lies (its directory decides the system config file); "" = where this code lies.
void config_reload_for_tests();
void config_set_library_dir(const std::string& dir);

}  // namespace blasoffload
