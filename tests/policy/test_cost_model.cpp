// The cost model: shape classes, the side it picks on either side of the crossover for given rates, operands
// already on the device, no GPU numbers, and that a prediction allocates nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

#include "policy/cost_model.h"

namespace {
std::atomic<long> g_allocs{0};
}
void* operator new(std::size_t n) {
  ++g_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace blasoffload::policy;
using blasoffload::Routine;

// The lent machine's orders of magnitude: CPU sgemm 1 TFLOP/s, sgemv 100 GB/s; PCIe 50 GB/s each way from
// pinned memory, 10 GB/s staging from pageable memory, 40 us per offloaded call.
Calibration machine() {
  Calibration c;
  c.cpu = {"/lib/libblas.so.3", ""};
  for (const char* cls : {"sgemm.square", "sgemm.rank_k", "sgemm.panel"}) c.cpu_rates[cls] = {{1e6, 200}, {1e10, 1000}};
  for (const char* cls : {"sgemv.n", "sgemv.t", "strsv.n", "strsv.t", "snrm2"}) c.cpu_rates[cls] = {{1e4, 20}, {1e8, 100}};
  c.gpu = "GPU";
  c.h2d_gbs = c.d2h_gbs = 50;
  c.pageable_gbs = 10;
  c.call_overhead_us = 40;
  return c;
}
double sgemm_kernel_us(double m, double n, double k) { return 2 * m * n * k / 50e12 * 1e6; }

TEST(CostModel, Classes) {
  double size = 0;
  EXPECT_EQ(classify({Routine::sgemm, 'N', 4096, 4096, 64}, &size), ShapeClass::kSgemmRankK);
  EXPECT_DOUBLE_EQ(size, 2.0 * 4096 * 4096 * 64);
  EXPECT_EQ(classify({Routine::sgemm, 'N', 100, 5000, 5000}, &size), ShapeClass::kSgemmPanel);
  EXPECT_EQ(classify({Routine::sgemm, 'T', 2000, 2000, 2000}, &size), ShapeClass::kSgemmSquare);
  EXPECT_EQ(classify({Routine::sgemv, 'T', 10, 20}, &size), ShapeClass::kSgemvT);
  EXPECT_DOUBLE_EQ(size, 800);
  EXPECT_EQ(classify({Routine::strsv, 'N', 0, 100}, &size), ShapeClass::kStrsvN);
  EXPECT_EQ(classify({Routine::snrm2, 'N', 0, 1000}, &size), ShapeClass::kSnrm2);
}

TEST(CostModel, SgemmCrossoverFromHostMemory) {
  const CostModel m(machine());
  bool seen_gpu = false;
  for (int n = 64; n <= 16384; n *= 2) {
    const Call c{Routine::sgemm, 'N', n, n, n, false, false};
    const Prediction p = m.predict(c, sgemm_kernel_us(n, n, n));
    EXPECT_EQ(p.gpu, p.gpu_us < 0.9 * p.cpu_us) << n;
    if (seen_gpu) EXPECT_TRUE(p.gpu) << "the decision must not flip back at n = " << n;
    seen_gpu |= p.gpu;
    if (n <= 256) EXPECT_FALSE(p.gpu) << "small products stay on the CPU, n = " << n;
    if (n >= 4096) EXPECT_TRUE(p.gpu) << "large products go to the GPU, n = " << n;
  }
}

// With flat rates the crossover has a closed form; the model must switch sides exactly there (within 1%), and each
// further operand copied must cost its calibrated latency.
TEST(CostModel, SwitchesSidesAtTheComputedCrossover) {
  Calibration c = machine();
  c.cpu_rates["sgemm.square"] = {{1e3, 1000}, {1e15, 1000}};  // 1 TFLOP/s at every size
  c.copy_latency_us = 7;
  const CostModel m(c, 0.1);
  // beta = 0: 8 n^2 bytes in, 4 n^2 out at 1 / (1/10 + 1/50) GB/s; 2 copies beyond the first; no kernel time.
  // GPU wins when 40 + 14 + 12 n^2 bytes / 8.33 GB/s < 0.9 * 2 n^3 flops / 1 TFLOP/s.
  const double staged_bps = 1e9 / (1 / 10.0 + 1 / 50.0);
  auto gpu_us = [&](double n) { return 40 + 14 + 12 * n * n / staged_bps * 1e6; };
  auto cpu_us = [](double n) { return 2 * n * n * n / 1e12 * 1e6; };
  double lo = 64, hi = 16384;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (gpu_us(mid) < 0.9 * cpu_us(mid) ? hi : lo) = mid;
  }
  const int64_t below = int64_t(lo * 0.99), above = int64_t(lo * 1.01) + 1;
  const Prediction pb = m.predict({Routine::sgemm, 'N', below, below, below, false, false}, 0);
  const Prediction pa = m.predict({Routine::sgemm, 'N', above, above, above, false, false}, 0);
  EXPECT_FALSE(pb.gpu) << "n = " << below << ": cpu " << pb.cpu_us << " us, gpu " << pb.gpu_us << " us";
  EXPECT_TRUE(pa.gpu) << "n = " << above << ": cpu " << pa.cpu_us << " us, gpu " << pa.gpu_us << " us";
  EXPECT_NEAR(pa.gpu_us, gpu_us(double(above)), 1e-6 * pa.gpu_us);
  // beta != 0 reads C: one more copy in, and 4 n^2 more bytes.
  const Prediction pr = m.predict({Routine::sgemm, 'N', above, above, above, true, false}, 0);
  EXPECT_NEAR(pr.gpu_us - pa.gpu_us, 7 + 4.0 * above * above / staged_bps * 1e6, 1e-6 * pr.gpu_us);
}

TEST(CostModel, Level2FromHostStaysOnTheCpuResidentGoesToTheGpu) {
  const CostModel m(machine());
  // sgemv 16384^2 from host memory: 1 GiB over PCIe (> 100 ms here) against ~11 ms on the CPU.
  Call c{Routine::sgemv, 'N', 16384, 16384, 0, false, false};
  Prediction p = m.predict(c, 350);
  EXPECT_FALSE(p.gpu);
  EXPECT_NEAR(p.bytes_in, 4.0 * (16384.0 * 16384 + 16384), 1);
  c.operands_on_device = true;  // the matrix is already there: only the kernel and the call overhead
  p = m.predict(c, 350);
  EXPECT_TRUE(p.gpu);
  EXPECT_NEAR(p.gpu_us, 390, 1e-9);
}

TEST(CostModel, NoGpuNumbersNeverOffload) {
  Calibration c = machine();
  c.gpu.clear();
  const CostModel m(c);
  EXPECT_FALSE(m.has_gpu());
  const Prediction p = m.predict({Routine::sgemm, 'N', 8192, 8192, 8192}, 1);
  EXPECT_FALSE(p.gpu);
  EXPECT_TRUE(std::isinf(p.gpu_us));
  EXPECT_GT(p.cpu_us, 0);
}

TEST(CostModel, MissingClassesUseTheDefaultsAndPredictionsDoNotAllocate) {
  Calibration c = machine();
  c.cpu_rates.erase("snrm2");
  const CostModel m(c);
  const long before = g_allocs.load();
  double sum = 0;
  for (int i = 1; i < 1000; ++i) sum += m.predict({Routine::snrm2, 'N', 0, i * 100}, 5).cpu_us;
  EXPECT_EQ(g_allocs.load(), before);
  EXPECT_GT(sum, 0);
}

}  // namespace
