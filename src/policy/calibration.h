// Calibration data for the offload policy: the measured rates of this machine's CPU BLAS per routine and shape
// class, and (when a GPU was measured) its transfer rates and fixed costs; read from and written to the policy
// file, keyed by what was measured so that a file for another CPU library or configuration is not used.
//
// Shape classes and why: a CPU BLAS's throughput depends on the amount of work (what fits in which cache, when
// its threads engage) and, for sgemm, on whether a dimension is small (packing and parallel efficiency: LAPACK's
// rank-64 updates run well below square products); for Level 2 the transpose changes the access pattern (axpy
// versus dot form). So: sgemm.square, sgemm.rank_k (k <= 256), sgemm.panel (min(m, n) <= 256) by flops;
// sgemv.n, sgemv.t by matrix bytes; strsv.n, strsv.t by triangle bytes; snrm2 by vector bytes; strsm (m n t flops,
// t the triangle's order) and ssyrk (n^2 k flops) by flops, one class each: Level 3 throughput, like sgemm's.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace blasoffload::policy {

inline constexpr const char* kCalibrationSchema = "blasoffload-policy/1";

struct RatePoint {
  double size = 0;  // bytes, or flops for sgemm, strsm and ssyrk
  double rate = 0;  // GB/s, or GFLOP/s for sgemm, strsm and ssyrk
  bool operator==(const RatePoint& o) const { return size == o.size && rate == o.rate; }
};

// What identifies the CPU BLAS a calibration belongs to.
struct CpuIdentity {
  std::string library;  // path of the object defining sgemm_
  std::string report;   // its self-report (OpenBLAS: "OpenBLAS 0.3.21 (kernels: SkylakeX, 16 threads)"), or ""
  bool operator==(const CpuIdentity& o) const { return library == o.library && report == o.report; }
};

struct Calibration {
  CpuIdentity cpu;
  std::string created;                                      // ISO 8601 UTC
  std::string tool;                                         // "blasoffload-calibrate <version>"
  std::map<std::string, std::vector<RatePoint>> cpu_rates;  // class -> points, ascending size
  // GPU side; gpu.empty() when no GPU was measured.
  std::string gpu;
  double h2d_gbs = 0, d2h_gbs = 0;  // host <-> device from pinned memory
  double pageable_gbs = 0;          // staging copies from pageable memory
  double call_overhead_us = 0;      // a tiny offloaded call: one operand in, launch, synchronisation
  double copy_latency_us = 0;       // each further operand copied in or out
  double init_ms = 0;               // one-time: context, module, pinned pool

  // Interpolated rate of a class at `size` (log-log, clamped to the measured range); 0 if the class is absent.
  double rate(const std::string& cls, double size) const;
};

// The class names above, in file order.
const std::vector<std::string>& calibration_classes();
// Whether blasoffload-calibrate measures a class: not yet LAPACK part 2's (geqrf ... potri), whose curves always come
// from the built-in defaults, nor the complex ones (c, z), derived from the real ones of the same file.
bool measured_by_calibrate(const std::string& cls);

// Files written before strsm and ssyrk were measured lack their classes. They stay valid: the missing curves are
// derived from the same file's sgemm curves (the same CPU BLAS and configuration), which is closer to the truth than
// the built-in defaults. strsm: sgemm.panel at half the rate (a CPU trsm, with few right-hand sides or a small
// triangle, runs at about half its gemm speed: the triangular blocks are substitutions, only the updates are gemm);
// ssyrk: sgemm.square as it is (a syrk is half a gemm at about gemm's rate). Adds each missing class it can derive and
// returns their names (empty when the calibration has them all). Complex classes (c, z) come from the real ones of the
// same width (s, d) at the same rates, herk from the complex syrk.
std::vector<std::string> derive_missing_classes(Calibration* c);

bool parse_calibration(const std::string& json, Calibration* out, std::string* error);
std::string calibration_to_json(const Calibration& c);
bool save_calibration(const std::string& path, const Calibration& c, std::string* error);

struct Rejection;  // calibration_checks.h

// Which calibration applies: `path` (empty = none configured) must exist, parse, and name the CPU BLAS in use;
// otherwise the built-in defaults, with a warning for a corrupt or stale file (a missing file configured
// explicitly is warned about too; a missing default file is normal). A file's rates that are inconsistent with its
// others are removed (calibration_checks.h), with one warning. Never throws.
struct CalibrationChoice {
  bool from_file = false;
  Calibration calibration;            // the file's, or built_in_defaults()
  std::string message;                // one line for the log (says which classes were derived)
  std::vector<std::string> warnings;  // corrupt / stale / missing / rates rejected
  std::vector<std::string> rejected;  // each rate removed as inconsistent, and why
  double age_days = -1;               // since the file was written (its modification time); -1 without a file
};
CalibrationChoice choose_calibration(const std::string& path, bool path_explicit, const CpuIdentity& current);

// Conservative defaults for a machine not calibrated yet: a strong CPU (the lent machines' 16-core AVX-512 OpenBLAS and
// its LAPACK, as measured there) and a GPU behind a slow link that is slow to start, so that only clear wins go to it.
const Calibration& built_in_defaults();

}  // namespace blasoffload::policy
