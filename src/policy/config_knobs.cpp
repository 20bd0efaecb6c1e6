// The registry's data: every BLASOFFLOAD_* setting, declared once (name, kind, default, values, one-line doc).
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policy/config.h"

namespace blasoffload {
namespace {

Knob words(const char* name, KnobOwner owner, std::vector<std::string> choices, const char* doc) {
  Knob k{name, KnobKind::kWords, owner, choices.front(), "", doc, std::move(choices)};
  k.allowed = "one of ";
  for (std::size_t i = 0; i < k.choices.size(); ++i) k.allowed += (i ? "|" : "") + k.choices[i];
  return k;
}

Knob integer(const char* name, KnobOwner owner, const char* def, double min, double max, const char* doc) {
  Knob k{name, KnobKind::kInteger, owner, def, "", doc, {}, min, max};
  k.allowed = max > 1e17 ? "an integer >= " + std::to_string(long(min))
                         : "an integer in [" + std::to_string(long(min)) + ", " + std::to_string(long(max)) + "]";
  return k;
}

Knob typed(const char* name, KnobKind kind, KnobOwner owner, const char* def, const char* allowed, const char* doc) {
  return Knob{name, kind, owner, def, allowed, doc, {}};
}

constexpr double kNoMax = 1e18;

// A number setting of at least `min` (no upper bound).
Knob number_from(const char* name, KnobOwner owner, const char* def, double min, const char* doc) {
  Knob k{name, KnobKind::kNumber, owner, def, "", doc, {}, min, kNoMax, false};
  char allowed[48];
  std::snprintf(allowed, sizeof allowed, "a number >= %g", min);
  k.allowed = allowed;
  return k;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<Knob> build() {
  using O = KnobOwner;
  using K = KnobKind;
  std::vector<Knob> v;
  v.reserve(3 * kNumRoutines + 64);  // built at every process's first call: no copies, no regrowth
  // Core: where calls run.
  v.push_back(words("BLASOFFLOAD_MODE", O::kCore, {"auto", "cpu", "gpu"},
                    "where calls run: auto (the cost policy decides per call), cpu (never the GPU), gpu (every call "
                    "the GPU can take, falling back to the CPU on any GPU failure)"));
  std::string list;
  for (std::size_t i = 0; i < kNumRoutines; ++i) {
    const std::string r = routine_name(static_cast<Routine>(i));
    Knob k = words(("BLASOFFLOAD_" + upper(r)).c_str(), O::kCore, {"auto", "cpu", "gpu"}, "");
    k.def = "BLASOFFLOAD_MODE";
    k.doc = "BLASOFFLOAD_MODE for " + r + " only (overrides it)";
    v.push_back(std::move(k));
    Knob m = integer(("BLASOFFLOAD_" + upper(r) + "_MIN").c_str(), O::kCore, "unset", 0, kNoMax, "");
    m.doc = "in auto mode, a fixed size threshold for " + r +
            " replacing the model: calls of at least this size go to the GPU (size: docs/settings.md)";
    v.push_back(std::move(m));
  }
  v.push_back(words("BLASOFFLOAD_DECISIONS", O::kCore, {"adaptive", "frozen"},
                    "adaptive: measured times correct the model as the program runs; frozen: the calibrated model "
                    "only, so a program makes the same decisions (and gets the same bits) run to run"));
  v.push_back(words("BLASOFFLOAD_DEVICE_OPERANDS", O::kCore, {"auto", "check"},
                    "auto: look for device-memory operands where the program uses CUDA itself (it loaded the driver "
                    "before this library did, or a shared CUDA runtime is loaded); check: on every call once CUDA is "
                    "in the process (a program linking the CUDA runtime statically that starts CUDA after the "
                    "library started the GPU)"));
  v.push_back(integer("BLASOFFLOAD_EXIT_WAIT_MS", O::kCore, "10000", 0, 600000,
                      "at exit, how long to wait for a GPU start-up still under way in the background (it usually "
                      "ends within a second once the program stops) before ending without it: the CUDA runtime's "
                      "exit teardown under a running start-up can crash the process"));
  v.push_back(words("BLASOFFLOAD_STARTUP", O::kCore, {"amortised", "eager", "amortized"},
                    "when auto starts the GPU: once predicted gains cover the start-up cost, or at the first call "
                    "it wins"));
  v.back().allowed = "one of amortised|eager";
  v.push_back(words("BLASOFFLOAD_LEND_CORE", O::kCore, {"auto", "on", "off"},
                    "while work of ours runs beside the program (the GPU's start-up, unpinning memory the program "
                    "freed), OpenBLAS (pthreads build) whose threads fill the process's CPUs runs one thread less, so "
                    "that our thread takes no slices from them: with 8 threads or more (auto), with 2 or more (on), "
                    "never (off)"));
  v.push_back(words("BLASOFFLOAD_SCALAPACK", O::kCore, {"auto", "gather", "off"},
                    "ScaLAPACK's p?getrf, p?potrf, p?geqrf, p?gesv, p?posv and p?gels on a grid whose processes share "
                    "one node: auto gathers the matrix (and the right-hand sides) onto process (0,0), factors (and "
                    "solves) there (the GPU) and scatters them back when the policy sends the LAPACK call to the GPU; "
                    "gather always does (tests: the CPU factors where there is no GPU); off leaves every call to "
                    "ScaLAPACK (its local BLAS calls still come here). Every process must have the same value"));
  v.push_back(integer("BLASOFFLOAD_SCALAPACK_MIN_N", O::kCore, "4096", 0, kNoMax,
                      "min(m, n) from which auto may take a ScaLAPACK factorization over, where the policy also "
                      "sends the factorization to the GPU (with the GPU up, pdpotrf gained 4x at 4096 on 4 ranks)"));
  {
    Knob k{"BLASOFFLOAD_HYBRID",
           K::kNumber,
           O::kCore,
           "auto",
           "auto, off or a fraction in [0, 1)",
           "the CPU BLAS's share of sgemm calls the GPU runs: the model's (auto), none (off), or fixed",
           {"auto", "off"},
           0,
           1,
           true};
    v.push_back(std::move(k));
  }
  v.push_back(typed("BLASOFFLOAD_POLICY_FILE", K::kPath, O::kCore, "$XDG_CONFIG_HOME/blasoffload/policy.json", "a path",
                    "the calibration the model uses (blasoffload-calibrate writes it); missing: built-in defaults"));
  v.push_back(words("BLASOFFLOAD_LOG", O::kCore, {"off", "summary", "calls", "debug", "0", "1", "2", "3"},
                    "off; summary: a table at exit; calls: also one line per call with where it ran and why; "
                    "debug: also lookup decisions"));
  v.back().allowed = "one of off|summary|calls|debug";
  v.push_back(words("BLASOFFLOAD_SUMMARY_ROUTINES", O::kCore, {"called", "all"},
                    "the exit summary's rows: the routines the program called (called) or every intercepted "
                    "routine (all)"));
  v.push_back(typed("BLASOFFLOAD_LOG_FILE", K::kPath, O::kCore, "stderr", "a path",
                    "append the log to this file instead of stderr"));
  v.push_back(typed("BLASOFFLOAD_CPU_BLAS", K::kPath, O::kCore, "found automatically", "a path",
                    "the CPU BLAS to forward to (default: the next definition after blasoffload in the process; "
                    "if it holds none, the system's libblas.so.3 alternative, else another installed BLAS, OpenBLAS "
                    "first)"));
  v.push_back(typed("BLASOFFLOAD_CPU_LAPACK", K::kPath, O::kCore, "found automatically", "a path",
                    "the CPU LAPACK to forward LAPACK calls to (default: BLASOFFLOAD_CPU_BLAS if it defines the "
                    "routine, else the next definition after blasoffload in the process; if it holds none, the "
                    "system's liblapack.so.3 alternative, else another installed LAPACK, OpenBLAS first)"));
  v.push_back(typed("BLASOFFLOAD_CUDA_MODULE", K::kPath, O::kCore, "next to libblasoffload.so", "a path",
                    "the CUDA module libblasoffload_cuda.so to load"));
  v.push_back(typed("BLASOFFLOAD_CONFIG", K::kPath, O::kCore, "searched", "a path",
                    "the config file to read instead of the default search (environment only)"));
  // The CUDA module's knobs: read through the host services; their finer checks stay in the module.
  v.push_back(integer("BLASOFFLOAD_DEVICE", O::kModule, "MPI local rank, else 0", 0, kNoMax,
                      "the GPU to use (default: the node-local MPI rank from OMPI_COMM_WORLD_LOCAL_RANK, "
                      "SLURM_LOCALID or MV2_COMM_WORLD_LOCAL_RANK, modulo the device count)"));
  v.push_back(typed("BLASOFFLOAD_DEVICES", K::kIndices, O::kModule, "all visible", "a list of GPU indices such as 0,1",
                    "GPUs that share one large call (only the process's GPU when BLASOFFLOAD_DEVICE or an MPI local "
                    "rank chose one); a GPU listed twice takes two shares of a trsm, syrk, getrf, potrf or geqrf (0,0 "
                    "tries the split on one GPU)"));
  v.push_back(integer("BLASOFFLOAD_MULTI_GPU_MIN_N", O::kModule, "32768", 0, kNoMax,
                      "order from which getrf (square) spreads one matrix over BLASOFFLOAD_DEVICES' GPUs with "
                      "cuSOLVERMg (potrf from twice it, or beyond one GPU's cuSOLVER at 46341), min(m, n) from which "
                      "geqrf does with a tiled QR, and twice the order and other dimension from which trsm and "
                      "syrk/herk share theirs (0: never; needs two GPUs or more)"));
  v.push_back(integer("BLASOFFLOAD_PINNED_MAX_MB", O::kModule, "4096", 1, kNoMax,
                      "MiB: the largest pinned staging buffer per thread slot of whole-operand calls (a trsm or syrk "
                      "beyond it moves its operands through a ring of pinned pieces instead)"));
  v.push_back(words("BLASOFFLOAD_PIPELINE", O::kModule, {"auto", "always", "off"},
                    "the tiled sgemm pipeline: auto (large, hybrid or out-of-core calls), always (tests), off (whole "
                    "operands only)"));
  v.push_back(integer("BLASOFFLOAD_PIPELINE_MIN_MB", O::kModule, "32", 0, kNoMax,
                      "MiB of host operands from which auto uses the tiled pipeline"));
  v.push_back(integer("BLASOFFLOAD_TILE", O::kModule, "2048", 1, kNoMax, "elements: edge of the pipeline's C tiles"));
  v.push_back(typed("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", K::kBytes, O::kModule,
                    "90% of free memory less 256 MiB (MPI ranks sharing a GPU: each its share of 90% of it)",
                    "a size such as 8G", "device memory the pipeline may use per GPU"));
  v.push_back(integer("BLASOFFLOAD_STAGING_THREADS", O::kModule,
                      "half the cores, at most 16 (an MPI rank: half its share of the node's cores); from a call over "
                      "several GPUs on, 8 more for each GPU beyond the first, leaving a core for each GPU and two more",
                      1, 256, "host threads of the staging copies"));
  v.push_back(integer("BLASOFFLOAD_PINNED_MB", O::kModule, "1024", 3, kNoMax,
                      "MiB: the most the ring of pinned staging chunks grows to, per GPU (it starts at two chunks and "
                      "adds one where a call finds the next still in flight)"));
  v.push_back(words("BLASOFFLOAD_PIN_HOST", O::kModule, {"auto", "on", "off"},
                    "registering the program's memory for direct DMA (auto: on unless the program uses CUDA itself)"));
  v.push_back(typed("BLASOFFLOAD_PIN_MAX", K::kBytes, O::kModule, "a quarter of RAM", "a size such as 16G",
                    "the most host memory kept registered"));
  v.push_back(number_from("BLASOFFLOAD_PIN_AFTER", O::kModule, "8", 0,
                          "a mapping of BLASOFFLOAD_PIN_AFTER_MIN or more is registered once calls have staged this "
                          "many times its size from it (registering and undoing it cost about that much staging; 0: "
                          "at its second use)"));
  v.push_back(typed("BLASOFFLOAD_PIN_AFTER_MIN", K::kBytes, O::kModule, "256M", "a size such as 256M",
                    "smaller mappings are registered at their second use (BLASOFFLOAD_PIN_AFTER)"));
  v.push_back(words("BLASOFFLOAD_RESIDENCY", O::kModule, {"auto", "on", "off"},
                    "device copies of operands reused across calls (auto: where write tracking works and no RDMA "
                    "library is loaded)"));
  v.push_back(typed("BLASOFFLOAD_RESIDENCY_MEM", K::kBytes, O::kModule,
                    "half the GPU's memory (MPI ranks sharing a GPU: each its share of half)", "a size such as 8G",
                    "device memory for resident copies"));
  v.push_back(number_from("BLASOFFLOAD_STRSM_INV_MAX_COND", O::kModule, "1000", 0,
                          "the largest condition estimate of a diagonal block strsm uses inverted (0: always "
                          "substitution)"));
  v.push_back(typed("BLASOFFLOAD_CUBLAS", K::kText, O::kModule, "libcublas.so.13", "off or a path",
                    "cuBLAS as a tuning candidate and where the table picks it"));
  v.push_back(typed("BLASOFFLOAD_CUSOLVER", K::kText, O::kModule, "libcusolver.so.12", "off or a path",
                    "cuSOLVER, the GPU engine of the LAPACK routines (off: they run on the CPU LAPACK)"));
  v.push_back(typed("BLASOFFLOAD_TUNED_PARAMS", K::kPath, O::kModule, "by GPU name, then compute capability", "a path",
                    "the tuned table to use (a file), or a directory searched first"));
  // Test hooks: declared so that they are known (not warned about as unknown).
  v.push_back(integer("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", O::kTest, "unset", -1, kNoMax,
                      "tests: the pipeline fails after this many tiles"));
  v.push_back(typed("BLASOFFLOAD_TEST_PIPELINE_ORDER", K::kText, O::kTest,
                    "unset (growing squares where every panel fits)", "columns",
                    "benchmarks: the pipeline's column order (every A panel before the first column's tiles)"));
  v.push_back(integer("BLASOFFLOAD_TEST_STEAL_DEPTH", O::kTest, "2", -1, kNoMax,
                      "benchmarks: a GPU of the gemm pipeline takes another GPU's tiles only when at most this many of "
                      "its own wait to run (-1: whenever its own are all taken)"));
  v.push_back(words("BLASOFFLOAD_TEST_PEER_PANELS", O::kTest, {"on", "off"},
                    "benchmarks: what several GPUs need of A (gemm: the panels of A or B in the order of growing "
                    "squares; trsm and syrk: A) is staged once and copied between them (on), or staged by each (off)"));
  v.push_back(typed("BLASOFFLOAD_TEST_ALLOW_GPU", K::kText, O::kTest, "unset", "any value",
                    "tests: results are checked against bounds, not bits (read by the test programs)"));
  v.push_back(typed("BLASOFFLOAD_TEST_CPU_LIBRARY_ROOT", K::kPath, O::kTest, "unset", "a path",
                    "tests: where a process that links no CPU BLAS or LAPACK looks for the system's (alternatives, "
                    "dpkg's records of them, well-known paths): under this directory instead of /"));
  v.push_back(words("BLASOFFLOAD_TEST_SCALAPACK_COPY", O::kTest, {"auto", "host", "messages"},
                    "tests: how a ScaLAPACK takeover moves the matrix: straight to the GPU that factors it where "
                    "every process can open its memory, else through host memory the node's processes share (auto); "
                    "through that host memory though the GPU factors (host); always by BLACS messages (messages)"));
  v.push_back(typed("BLASOFFLOAD_TEST_SEED", K::kText, O::kTest, "random", "an integer",
                    "tests: the seed of the randomised residency test (read by the test program)"));
  return v;
}

}  // namespace

const std::vector<Knob>& knobs() {
  static const auto* v = new std::vector<Knob>(build());
  return *v;
}

bool retired_knob(const std::string& name) {
  // Settings of earlier versions that no longer do anything: accepted silently, so that an environment or config file
  // written for them is not warned about. BLASOFFLOAD_AUTO_CALIBRATE: the background calibration is gone.
  static const char* const kRetired[] = {"BLASOFFLOAD_AUTO_CALIBRATE", "BLASOFFLOAD_TEST_AUTO_CALIBRATE_QUICK"};
  for (const char* r : kRetired)
    if (name == r) return true;
  return false;
}

const Knob* find_knob(const std::string& name) {
  // By name through an index built once: the settings' load asks for each routine's knobs by name, and a scan of the
  // list for each was a tenth of a millisecond of every process's first call.
  static const auto* by_name = [] {
    auto* m = new std::unordered_map<std::string_view, const Knob*>();
    for (const auto& k : knobs()) m->emplace(k.name, &k);
    return m;
  }();
  const auto it = by_name->find(name);
  return it == by_name->end() ? nullptr : it->second;
}

}  // namespace blasoffload
