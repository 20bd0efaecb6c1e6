// The per-call cost model of the offload policy: predicted CPU time (calibrated rates of the CPU BLAS in use,
// per shape class) against predicted GPU time (bytes to move over the measured rates, the per-call overhead and
// the kernel's time), O(1) and allocation-free once built. Pure: the caller supplies the kernel time (from the
// tuned table) and whether operands are already on the device; one-time costs (context, module) are the
// policy's concern, not a call's.
#pragma once
#include <cstdint>

#include "dispatch/routine.h"
#include "policy/calibration.h"

namespace blasoffload::policy {

enum class ShapeClass {
  kSgemmSquare,
  kSgemmRankK,
  kSgemmPanel,
  kSgemvN,
  kSgemvT,
  kStrsvN,
  kStrsvT,
  kSnrm2,
  kStrsm,
  kSsyrk,
  kCount
};

struct Call {
  Routine routine;
  char op = 'N';                    // sgemv trans, strsv trans, sgemm transa, strsm side, ssyrk trans
  int64_t m = 0, n = 0, k = 0;      // ssyrk: m = n
  bool reads_output = false;        // beta != 0 (sgemm C, sgemv y, ssyrk C); strsv x and strsm B are always read
  bool operands_on_device = false;  // every operand already in device memory: no transfer
  const void* operand[3] = {};      // A, B/x, C/y (strsm: A, B; ssyrk: A, -, C): the policy asks the module whether
                                    // they are device memory
  bool host_pinned = false;         // sgemm: every host operand registered for DMA: no staging copies
  char op_b = 'N';                  // sgemm transb, strsm transa
  int64_t ld[3] = {};               // leading dimensions of A, B, C (the residency cache's question)
  // Input bytes the module's device copies spare (resident operands: all but their written pages; a clean candidate:
  // its upload shared over the clean reuses seen), and the write-record scans those copies cost first.
  double resident_in = 0, check_us = 0;
};

// The class's name in the policy file and the log ("sgemm.square", ...).
const char* class_name(ShapeClass c);

// Which class a call belongs to and its size in the class's unit (bytes, or flops for sgemm, strsm and ssyrk).
ShapeClass classify(const Call& c, double* size);

struct Prediction {
  ShapeClass cls = ShapeClass::kSnrm2;
  double size = 0;  // in the class's unit (bytes, or flops for sgemm, strsm and ssyrk)
  double cpu_us = 0;
  double gpu_us = 0;      // infinity when there are no GPU numbers
  double transfer_us = 0, kernel_us = 0;  // parts of gpu_us (the rest is the call overhead)
  double bytes_in = 0, bytes_out = 0;
  bool pipelined = false;  // predicted as the module's tiled pipeline (CostModel::pipelined)
  bool gpu = false;       // gpu_us < cpu_us by the margin
};

class CostModel {
 public:
  // margin: the GPU must be predicted at least this fraction faster (model error; never slower is the goal).
  explicit CostModel(const Calibration& c, double margin = 0.1);
  // The module's defaults: host-operand sgemm moving this many bytes goes through the tiled pipeline
  // (BLASOFFLOAD_PIPELINE_MIN_MB), in tiles of this edge (BLASOFFLOAD_TILE).
  static constexpr double kPipelineBytes = 32.0 * 1048576.0;
  static constexpr double kTile = 2048;
  // Whether the module runs this call through the tiled pipeline (whose time depends on registered host memory).
  static bool pipelined(const Call& c) {
    if (c.routine != Routine::sgemm || c.operands_on_device) return false;
    const double m = double(c.m), n = double(c.n), k = double(c.k);
    return 4.0 * (m * k + k * n + (c.reads_output ? 2 : 1) * m * n) - c.resident_in >= kPipelineBytes;
  }
  Prediction predict(const Call& c, double kernel_us) const;
  // The margin rule, for predictions the policy has corrected with measured times.
  bool prefers_gpu(double cpu_us, double gpu_us) const { return gpu_us < cpu_us * (1.0 - margin_); }
  // The hybrid split of a call predicted at cpu_us on the CPU alone and gpu_us on the GPU alone: the CPU's share
  // (so that both sides finish together) and the predicted time. The CPU BLAS runs slower beside the staging
  // threads and the DMA, which take cores and memory bandwidth, and the transfers slower beside the CPU BLAS.
  static constexpr double kHybridCpuEfficiency = 0.6;  // measured 0.55-0.8 on the lent H100 machine
  static constexpr double kHybridGpuEfficiency = 0.8;  // PCIe transfers beside a running CPU BLAS: 0.75-0.85 there
  double hybrid_us(double cpu_us, double gpu_us, double* cpu_share) const;
  // Predicted CPU time alone (the fast path of tiny calls and the floors use it).
  double cpu_us(ShapeClass cls, double size) const { return size / (cpu_rate(cls, size) * 1e9) * 1e6; }
  bool has_gpu() const { return has_gpu_; }
  double call_overhead_us() const { return call_us_; }
  double init_ms() const { return init_ms_; }

 private:
  struct Curve {
    int n = 0;
    double log_size[24];
    double log_rate[24];
  };
  double cpu_rate(ShapeClass cls, double size) const;
  Curve curves_[int(ShapeClass::kCount)];
  bool has_gpu_ = false;
  double h2d_gbs_ = 0, d2h_gbs_ = 0, pageable_gbs_ = 0, call_us_ = 0, copy_us_ = 0, init_ms_ = 0, margin_ = 0.1;
};

}  // namespace blasoffload::policy
