// The per-call cost model of the offload policy: predicted CPU time (calibrated rates of the CPU BLAS in use,
// per shape class) against predicted GPU time (bytes to move over the measured rates, the per-call overhead and
// the kernel's time), O(1) and allocation-free once built. Pure: the caller supplies the kernel time (from the
// tuned table) and whether operands are already on the device; one-time costs (context, module) are the
// policy's concern, not a call's.
#pragma once
#include <cstdint>
#include <vector>

#include "policy/calibration.h"
#include "policy/shape_classes.h"
#include "routines/call.h"

namespace blasoffload::policy {

// A call as the policy sees it: the normalised call (routines/call.h) and what is known about where its operands are.
struct Call {
  bo_call call;  // not initialised here: the descriptor's prepare() writes all of it before any use (a tiny call
                 // would otherwise pay for zeroing it twice)
  bool operands_on_device = false;  // every operand already in device memory: no transfer
  bool host_pinned = false;         // gemm: every host operand registered for DMA: no staging copies
  // Input bytes the module's device copies spare (resident operands: all but their written pages; a clean candidate:
  // its upload shared over the clean reuses seen), and the write-record scans those copies cost first.
  double resident_in = 0, check_us = 0;
  // Of resident_in, the bytes of clean candidates: their copies are made by the call, or, when the module declines to
  // make one, the operand is staged (so its bytes count toward growing the staging buffers).
  double candidate_in = 0;
};

struct Prediction {
  int cls = 0;      // shape_classes.h
  double size = 0;  // in the class's unit (bytes, or flops for sgemm, strsm and ssyrk)
  double cpu_us = 0;
  double gpu_us = 0;                      // infinity when there are no GPU numbers
  double transfer_us = 0, kernel_us = 0;  // parts of gpu_us (the rest is the call overhead)
  double bytes_in = 0, bytes_out = 0;
  bool pipelined = false;  // predicted as the module's tiled pipeline (CostModel::pipelined)
  bool gpu = false;        // gpu_us < cpu_us by the margin
};

class CostModel {
 public:
  // margin: the GPU must be predicted at least this fraction faster (model error; never slower is the goal).
  explicit CostModel(const Calibration& c, double margin = 0.1);
  // The module's defaults: host-operand gemm moving this many bytes goes through the tiled pipeline
  // (BLASOFFLOAD_PIPELINE_MIN_MB), in tiles of this edge (BLASOFFLOAD_TILE).
  static constexpr double kPipelineBytes = 32.0 * 1048576.0;
  static constexpr double kTile = 2048;
  // Whether the module runs this call through the tiled pipeline (whose time depends on registered host memory): a
  // gemm (either precision) on host operands moving at least kPipelineBytes.
  static bool pipelined(const Call& c);
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
  double cpu_us(int cls, double size) const { return size / (cpu_rate(cls, size) * 1e9) * 1e6; }
  bool has_gpu() const { return has_gpu_; }
  double call_overhead_us() const { return call_us_; }
  double init_ms() const { return init_ms_; }

 private:
  struct Curve {
    int n = 0;
    double log_size[24];
    double log_rate[24];
  };
  double cpu_rate(int cls, double size) const;
  std::vector<Curve> curves_;
  bool has_gpu_ = false;
  double h2d_gbs_ = 0, d2h_gbs_ = 0, pageable_gbs_ = 0, call_us_ = 0, copy_us_ = 0, init_ms_ = 0, margin_ = 0.1;
};

}  // namespace blasoffload::policy
