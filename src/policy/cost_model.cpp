// The cost model (see cost_model.h).
#include "policy/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "routines/all.h"

namespace blasoffload::policy {
namespace {
constexpr double kPitchedDma = 0.8;

// Bytes a call moves for host operands, from its descriptor's operand extents, and how many separate copies that is.
struct Traffic {
  double in = 0, out = 0;
  int copies = 0;
};
Traffic traffic(const bo_call& c) {
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = bo::routines::operands(c, ops);
  const double e = bo::routines::element_size(c.routine);
  Traffic t;
  for (int i = 0; i < n; ++i) {
    if (ops[i].read()) t.in += e * ops[i].elements(), ++t.copies;
    if (ops[i].written()) t.out += e * ops[i].elements(), ++t.copies;
  }
  t.out += bo::routines::result_bytes(c);  // written by the kernel straight into mapped memory: no copy
  return t;
}

}  // namespace

bool CostModel::pipelined(const Call& c) {
  if (bo_routine_kind_of(c.call.routine) != BO_KIND_GEMM || c.operands_on_device) return false;
  const Traffic t = traffic(c.call);
  return t.in + t.out - c.resident_in >= kPipelineBytes;
}

CostModel::CostModel(const Calibration& given, double margin) : margin_(margin) {
  const Calibration& defaults = built_in_defaults();
  // A file from before strsm and ssyrk were measured: their curves from its own sgemm curves (calibration.h).
  Calibration derived = given;
  derive_missing_classes(&derived);
  const Calibration& cal = derived;
  curves_.resize(std::size_t(class_count()));
  for (int i = 0; i < class_count(); ++i) {
    const char* name = class_name(i);
    auto it = cal.cpu_rates.find(name);
    if (it == cal.cpu_rates.end() || it->second.empty()) it = defaults.cpu_rates.find(name);
    Curve& cv = curves_[std::size_t(i)];
    for (const RatePoint& p : it->second) {
      if (cv.n == 24) break;
      cv.log_size[cv.n] = std::log(p.size);
      cv.log_rate[cv.n] = std::log(p.rate);
      ++cv.n;
    }
  }
  has_gpu_ = !cal.gpu.empty() && cal.h2d_gbs > 0 && cal.d2h_gbs > 0;
  h2d_gbs_ = cal.h2d_gbs;
  d2h_gbs_ = cal.d2h_gbs;
  pageable_gbs_ = cal.pageable_gbs > 0 ? cal.pageable_gbs : cal.h2d_gbs;
  call_us_ = cal.call_overhead_us;
  copy_us_ = cal.copy_latency_us;
  init_ms_ = cal.init_ms;
}

double CostModel::cpu_rate(int cls, double size) const {
  const Curve& cv = curves_[std::size_t(cls)];
  const double x = std::log(std::max(size, 1.0));
  if (cv.n == 1 || x <= cv.log_size[0]) return std::exp(cv.log_rate[0]);
  for (int i = 1; i < cv.n; ++i)
    if (x <= cv.log_size[i]) {
      const double t = (x - cv.log_size[i - 1]) / (cv.log_size[i] - cv.log_size[i - 1]);
      return std::exp(cv.log_rate[i - 1] + t * (cv.log_rate[i] - cv.log_rate[i - 1]));
    }
  return std::exp(cv.log_rate[cv.n - 1]);
}

Prediction CostModel::predict(const Call& c, double kernel_us) const {
  Prediction p;
  double size = 0;
  const int cls = classify(c.call, &size);
  p.cls = cls;
  p.size = size;
  p.cpu_us = cpu_us(cls, size);
  // What the module moves for host operands (whole operands, staged through pinned memory).
  const Traffic t = traffic(c.call);
  p.bytes_in = t.in;
  p.bytes_out = t.out;
  const int copies = std::max(1, t.copies);  // operands copied in or out; the calibrated call overhead includes one
  if (!has_gpu_) {
    p.gpu_us = std::numeric_limits<double>::infinity();
    return p;
  }
  p.bytes_in = std::max(0.0, p.bytes_in - c.resident_in);
  double transfer_us = 0;
  p.kernel_us = kernel_us;
  if (c.operands_on_device) {
    p.gpu_us = call_us_ + kernel_us;
  } else if ((p.pipelined = pipelined(c))) {
    // The tiled pipeline: transfers in both directions overlap the kernels; what shows is the slowest of the three
    // streams plus filling (the first A and B panels, and C tile) and draining it (the last C tile).
    // Both DMA directions run at once; staging copies of both directions share the host's cores and memory, so
    // unless the operands are registered, their sum goes at the calibrated staging rate.
    // Tiles are pitched (2D) copies with both directions busy at once: 42-47 GB/s on the lent H100 against 55 GB/s
    // for the calibration's contiguous one-way copies.
    const double in_rate = kPitchedDma * h2d_gbs_ * 1e3, out_rate = kPitchedDma * d2h_gbs_ * 1e3;
    const double staging = c.host_pinned ? 0.0 : (p.bytes_in + p.bytes_out) / (pageable_gbs_ * 1e3);
    const double m = double(c.call.m), n = double(c.call.n), k = double(c.call.k);
    const double e = bo::routines::element_size(c.call.routine);
    const double tm = std::min(m, kTile), tn = std::min(n, kTile);
    const double first = e * (tm * k + k * tn + (c.call.beta != 0 ? tm * tn : 0)), last = e * tm * tn;
    const double fill =
        first / in_rate + last / out_rate + (c.host_pinned ? 0.0 : (first + last) / (pageable_gbs_ * 1e3));
    const double steady = std::max({p.bytes_in / in_rate, p.bytes_out / out_rate, staging, kernel_us});
    p.gpu_us = call_us_ + fill + steady;
    transfer_us = p.gpu_us - call_us_ - kernel_us;
  } else if (bo::routines::is_lapack(c.call.routine)) {
    // The LAPACK path moves its operands through a ring of pinned pieces: the staging copies of one piece overlap the
    // DMA of the others, so the slower of the two shows (the calibrated staging rate is already both directions').
    const double in_rate = std::min(pageable_gbs_, h2d_gbs_), out_rate = std::min(pageable_gbs_, d2h_gbs_);
    transfer_us = p.bytes_in / (in_rate * 1e9) * 1e6 + p.bytes_out / (out_rate * 1e9) * 1e6 + (copies - 1) * copy_us_;
    p.gpu_us = call_us_ + transfer_us + kernel_us;
  } else {
    // Whole operands: staging copy, then DMA, one after the other (large ones overlap in pieces: conservative).
    const double in_rate = 1.0 / (1.0 / pageable_gbs_ + 1.0 / h2d_gbs_);
    const double out_rate = 1.0 / (1.0 / pageable_gbs_ + 1.0 / d2h_gbs_);
    transfer_us = p.bytes_in / (in_rate * 1e9) * 1e6 + p.bytes_out / (out_rate * 1e9) * 1e6 + (copies - 1) * copy_us_;
    p.gpu_us = call_us_ + transfer_us + kernel_us;
  }
  p.gpu_us += c.check_us;
  p.transfer_us = transfer_us + c.check_us;
  p.gpu = prefers_gpu(p.cpu_us, p.gpu_us);
  return p;
}

double CostModel::hybrid_us(double cpu_us, double gpu_us, double* cpu_share) const {
  // Both sides slow each other down (the CPU BLAS, the staging copies and the DMA share the host's memory): the
  // CPU runs at kHybridCpuEfficiency of its rate alone, the GPU's transfers at kHybridGpuEfficiency. The GPU side
  // keeps its fixed call cost and scales the rest; both end together when
  // share * cpu_slowed = call + (1 - share) * variable_slowed.
  const double cpu_slowed = cpu_us / kHybridCpuEfficiency;
  const double variable = std::max(0.0, gpu_us - call_us_) / kHybridGpuEfficiency;
  if (!(gpu_us > 0) || !(cpu_slowed > 0) || !std::isfinite(gpu_us) || call_us_ + variable >= cpu_slowed) {
    *cpu_share = 0;
    return gpu_us;
  }
  *cpu_share = (call_us_ + variable) / (cpu_slowed + variable);
  return *cpu_share * cpu_slowed;
}

}  // namespace blasoffload::policy
