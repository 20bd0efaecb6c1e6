// The cost model: shape classes, the side it picks on either side of the crossover for given rates, operands
// already on the device, no GPU numbers, strsm/ssyrk (their transfers, and curves derived for older calibrations),
// and that a prediction allocates nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>

#include "dispatch/routine.h"
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
  for (const char* cls : {"sgemv.n", "sgemv.t", "strsv.n", "strsv.t", "snrm2"})
    c.cpu_rates[cls] = {{1e4, 20}, {1e8, 100}};
  c.gpu = "GPU";
  c.h2d_gbs = c.d2h_gbs = 50;
  c.pageable_gbs = 10;
  c.call_overhead_us = 40;
  return c;
}
// A call as the old aggregate spelled it: routine, op (gemm transa, gemv/trsv trans, trsm side, syrk trans), m, n, k,
// whether the output is read (beta != 0), and whether every operand is on the device.
Call mk(Routine r, char op, int64_t m, int64_t n, int64_t k = 0, bool reads_output = false, bool on_device = false) {
  Call c;
  c.call = bo_call{};
  bo_call& b = c.call;
  b.routine = int(r);
  b.m = m;
  b.n = n;
  b.k = k;
  b.alpha = 1;
  b.beta = reads_output ? 1 : 0;
  b.incx = b.incy = 1;
  b.lda = b.ldb = b.ldc = 1 << 20;
  switch (bo_routine_kind_of(int(r))) {
    case BO_KIND_GEMM:
      b.op[0] = op, b.op[1] = 'N';
      break;
    case BO_KIND_GEMV:
      b.op[0] = op;
      break;
    case BO_KIND_TRSV:
      b.op[0] = 'L', b.op[1] = op, b.op[2] = 'N';
      break;
    case BO_KIND_TRSM:
      b.op[0] = op, b.op[1] = 'L', b.op[2] = 'N', b.op[3] = 'N';
      break;
    case BO_KIND_SYRK:
      b.op[0] = 'L', b.op[1] = op;
      break;
    default:
      break;
  }
  c.operands_on_device = on_device;
  return c;
}
double sgemm_kernel_us(double m, double n, double k) { return 2 * m * n * k / 50e12 * 1e6; }

TEST(CostModel, Classes) {
  double size = 0;
  EXPECT_EQ(classify(mk(Routine::sgemm, 'N', 4096, 4096, 64).call, &size), class_index("sgemm.rank_k"));
  EXPECT_DOUBLE_EQ(size, 2.0 * 4096 * 4096 * 64);
  EXPECT_EQ(classify(mk(Routine::sgemm, 'N', 100, 5000, 5000).call, &size), class_index("sgemm.panel"));
  EXPECT_EQ(classify(mk(Routine::sgemm, 'T', 2000, 2000, 2000).call, &size), class_index("sgemm.square"));
  EXPECT_EQ(classify(mk(Routine::sgemv, 'T', 10, 20).call, &size), class_index("sgemv.t"));
  EXPECT_DOUBLE_EQ(size, 800);
  EXPECT_EQ(classify(mk(Routine::strsv, 'N', 0, 100).call, &size), class_index("strsv.n"));
  EXPECT_EQ(classify(mk(Routine::snrm2, 'N', 0, 1000).call, &size), class_index("snrm2"));
  // strsm: m n t flops, t the triangle's order (m for side L, n for side R); ssyrk: n^2 k flops.
  // A narrow block of right-hand sides (at most 256) is its own class.
  EXPECT_EQ(classify(mk(Routine::strsm, 'L', 300, 20).call, &size), class_index("strsm.narrow"));
  EXPECT_DOUBLE_EQ(size, 300.0 * 20 * 300);
  EXPECT_EQ(classify(mk(Routine::strsm, 'R', 300, 20).call, &size), class_index("strsm"));
  EXPECT_DOUBLE_EQ(size, 300.0 * 20 * 20);
  EXPECT_EQ(classify(mk(Routine::ssyrk, 'T', 100, 100, 50).call, &size), class_index("ssyrk"));
  EXPECT_DOUBLE_EQ(size, 100.0 * 100 * 50);
  EXPECT_STREQ(class_name(class_index("strsm")), "strsm");
  EXPECT_STREQ(class_name(class_index("ssyrk")), "ssyrk");
}

// The solves' classes by the width of the block of right-hand sides: up to 31 the bytes of the factors read (.vec),
// 32 to 127 a narrow block (.narrow), 128 and more a wide one (.mat), both by flops (2 n^2 k for getrs and potrs,
// n^2 k for trtrs).
TEST(CostModel, SolveClassesByTheWidthOfTheRightHandSides) {
  auto solve = [](Routine r, int64_t n, int64_t k) {
    bo_call c{};
    c.routine = int(r);
    c.n = n, c.k = k, c.lda = c.ldc = n;
    return c;
  };
  double size = 0;
  EXPECT_EQ(classify(solve(Routine::dgetrs, 1000, 31), &size), class_index("dgetrs.vec"));
  EXPECT_DOUBLE_EQ(size, 2 * 8.0 * 1000 * 1000 / 2);
  for (const int64_t k : {32, 64, 127}) {
    EXPECT_EQ(classify(solve(Routine::dgetrs, 1000, k), &size), class_index("dgetrs.narrow")) << k;
    EXPECT_DOUBLE_EQ(size, 2.0 * 1000 * 1000 * double(k));
  }
  for (const int64_t k : {128, 256, 4000}) {
    EXPECT_EQ(classify(solve(Routine::spotrs, 1000, k), &size), class_index("spotrs.mat")) << k;
    EXPECT_DOUBLE_EQ(size, 2.0 * 1000 * 1000 * double(k));
  }
  EXPECT_EQ(classify(solve(Routine::strtrs, 1000, 64), &size), class_index("strtrs.narrow"));
  EXPECT_DOUBLE_EQ(size, 1000.0 * 1000 * 64);
}

// What strsm and ssyrk move from host memory, and the GPU time that makes: the triangle plus B in and B out for
// strsm; A in, and C's triangle in (beta != 0) and out for ssyrk; one calibrated latency per copy after the first.
TEST(CostModel, StrsmAndSsyrkTransfers) {
  Calibration c = machine();
  c.copy_latency_us = 7;
  const CostModel m(c);
  const double staged_bps = 1e9 / (1 / 10.0 + 1 / 50.0);  // staging copy then DMA, each way
  const double t = 1000, other = 64;
  Prediction p = m.predict(mk(Routine::strsm, 'L', int64_t(t), int64_t(other), 0, true, false), 25);
  EXPECT_EQ(p.cls, class_index("strsm.narrow"));
  EXPECT_DOUBLE_EQ(p.bytes_in, 4.0 * (t * (t + 1) / 2 + t * other));
  EXPECT_DOUBLE_EQ(p.bytes_out, 4.0 * t * other);
  EXPECT_NEAR(p.gpu_us, 40 + 2 * 7 + (p.bytes_in + p.bytes_out) / staged_bps * 1e6 + 25, 1e-6 * p.gpu_us);
  EXPECT_DOUBLE_EQ(p.kernel_us, 25);
  // Side R: the triangle is n x n.
  p = m.predict(mk(Routine::strsm, 'R', int64_t(other), int64_t(t), 0, true, false), 25);
  EXPECT_DOUBLE_EQ(p.bytes_in, 4.0 * (t * (t + 1) / 2 + t * other));

  const double n = 2000, k = 128;
  Call syrk = mk(Routine::ssyrk, 'N', int64_t(n), int64_t(n), int64_t(k), false, false);
  p = m.predict(syrk, 0);
  EXPECT_EQ(p.cls, class_index("ssyrk"));
  EXPECT_DOUBLE_EQ(p.bytes_in, 4.0 * n * k);  // beta = 0: C is not read
  EXPECT_DOUBLE_EQ(p.bytes_out, 4.0 * n * (n + 1) / 2);
  EXPECT_NEAR(p.gpu_us, 40 + 7 + (p.bytes_in + p.bytes_out) / staged_bps * 1e6, 1e-6 * p.gpu_us);
  syrk.call.beta = 1;  // C is read
  const Prediction pr = m.predict(syrk, 0);
  EXPECT_NEAR(pr.gpu_us - p.gpu_us, 7 + 4.0 * n * (n + 1) / 2 / staged_bps * 1e6, 1e-6 * pr.gpu_us);
  // Operands already on the device: the call overhead and the kernel only.
  Call dev = mk(Routine::strsm, 'L', 4096, 4096, 0, true, true);
  EXPECT_NEAR(m.predict(dev, 500).gpu_us, 540, 1e-9);
  // Never the tiled pipeline (sgemm only), however large.
  EXPECT_FALSE(CostModel::pipelined(mk(Routine::ssyrk, 'N', 16384, 16384, 4096, true, false)));
  EXPECT_FALSE(m.predict(mk(Routine::strsm, 'L', 16384, 16384, 0, true, false), 1e5).pipelined);
}

// A calibration from before strsm and ssyrk were measured (machine() has only the older classes): strsm runs at half
// the sgemm.panel rate, ssyrk at the sgemm.square rate; a calibration that has them uses its own.
TEST(CostModel, StrsmAndSsyrkCurvesOfAnOlderCalibrationComeFromItsSgemmCurves) {
  Calibration c = machine();
  c.cpu_rates["sgemm.panel"] = {{1e6, 100}, {1e10, 600}};
  c.cpu_rates["sgemm.square"] = {{1e6, 300}, {1e10, 1500}};
  const CostModel old(c);
  for (double size : {1e5, 1e6, 1e8, 1e10, 1e12}) {
    EXPECT_NEAR(old.cpu_us(class_index("strsm"), size), 2 * old.cpu_us(class_index("sgemm.panel"), size),
                1e-9 * old.cpu_us(class_index("strsm"), size))
        << size;
    EXPECT_NEAR(old.cpu_us(class_index("ssyrk"), size), old.cpu_us(class_index("sgemm.square"), size),
                1e-9 * old.cpu_us(class_index("ssyrk"), size))
        << size;
  }
  // strsm 1000 x 64 on the left (a narrow block of right-hand sides: trsm.narrow, 0.3 of trsm): 6.4e7 flops at 0.3 of
  // half of 100..600 GFLOP/s interpolated log-log.
  const Prediction p = old.predict(mk(Routine::strsm, 'L', 1000, 64, 0, true, false), 0);
  const double panel = std::exp(std::log(100.0) + std::log(6.4e7 / 1e6) / std::log(1e4) * std::log(6.0));
  EXPECT_NEAR(p.cpu_us, 6.4e7 / (0.3 * 0.5 * panel * 1e9) * 1e6, 1e-6 * p.cpu_us);

  c.cpu_rates["strsm"] = {{1e3, 42}, {1e15, 42}};
  c.cpu_rates["ssyrk"] = {{1e3, 7}, {1e15, 7}};
  const CostModel measured(c);
  EXPECT_NEAR(measured.cpu_us(class_index("strsm"), 4.2e10), 1e6, 1e-3);
  EXPECT_NEAR(measured.cpu_us(class_index("ssyrk"), 7e9), 1e6, 1e-3);
}

TEST(CostModel, SgemmCrossoverFromHostMemory) {
  const CostModel m(machine());
  bool seen_gpu = false;
  for (int n = 64; n <= 16384; n *= 2) {
    const Call c = mk(Routine::sgemm, 'N', n, n, n, false, false);
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
  const Prediction pb = m.predict(mk(Routine::sgemm, 'N', below, below, below, false, false), 0);
  const Prediction pa = m.predict(mk(Routine::sgemm, 'N', above, above, above, false, false), 0);
  EXPECT_FALSE(pb.gpu) << "n = " << below << ": cpu " << pb.cpu_us << " us, gpu " << pb.gpu_us << " us";
  EXPECT_TRUE(pa.gpu) << "n = " << above << ": cpu " << pa.cpu_us << " us, gpu " << pa.gpu_us << " us";
  EXPECT_NEAR(pa.gpu_us, gpu_us(double(above)), 1e-6 * pa.gpu_us);
  // beta != 0 reads C: one more copy in, and 4 n^2 more bytes.
  const Prediction pr = m.predict(mk(Routine::sgemm, 'N', above, above, above, true, false), 0);
  EXPECT_NEAR(pr.gpu_us - pa.gpu_us, 7 + 4.0 * above * above / staged_bps * 1e6, 1e-6 * pr.gpu_us);
}

TEST(CostModel, Level2FromHostStaysOnTheCpuResidentGoesToTheGpu) {
  const CostModel m(machine());
  // sgemv 16384^2 from host memory: 1 GiB over PCIe (> 100 ms here) against ~11 ms on the CPU.
  Call c = mk(Routine::sgemv, 'N', 16384, 16384, 0, false, false);
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
  const Prediction p = m.predict(mk(Routine::sgemm, 'N', 8192, 8192, 8192), 1);
  EXPECT_FALSE(p.gpu);
  EXPECT_TRUE(std::isinf(p.gpu_us));
  EXPECT_GT(p.cpu_us, 0);
}

// Uncalibrated, the CPU LAPACK's small factorizations are predicted at what they take on the lent machines' OpenBLAS
// (the CPU alone in bench/results/mix: sgetrf n = 256 0.89-0.99 ms, spotrf 0.63-0.64 ms, dgetrf 1.4-1.6 ms), not at
// half gemm's rate as for a file that lacks them (6-10x less: more than learning may correct), so that the GPU,
// which takes half their time there, is considered; the solves are measured too, not taken from trsv and trsm.
TEST(CostModel, UncalibratedSmallFactorizationsArePredictedAtTheirMeasuredTimes) {
  const Calibration d = built_in_defaults();
  const CostModel m(d);
  auto fact_us = [&](Routine r, double n) {
    bo_call c{};
    c.routine = int(r);
    c.m = c.n = int64_t(n);
    c.lda = int64_t(n);
    double size = 0;
    const int cls = classify(c, &size);
    return m.cpu_us(cls, size);
  };
  EXPECT_GT(fact_us(Routine::sgetrf, 256), 700);
  EXPECT_LT(fact_us(Routine::sgetrf, 256), 1000);
  EXPECT_GT(fact_us(Routine::spotrf, 256), 400);
  EXPECT_LT(fact_us(Routine::spotrf, 256), 640);
  EXPECT_GT(fact_us(Routine::dgetrf, 256), 1000);
  EXPECT_LT(fact_us(Routine::dgetrf, 256), 1500);
  // What deriving would have said: half gemm.square's rate, far faster.
  Calibration no_lapack = d;
  for (const auto& cls : calibration_classes())
    for (const char* f : {"getr", "potr", "trtrs", "gesv", "posv"})
      if (cls.find(f) != std::string::npos) no_lapack.cpu_rates.erase(cls);
  derive_missing_classes(&no_lapack);
  for (const char* cls : {"sgetrf", "spotrf", "dgetrf"}) {
    const double size =
        std::string(cls).find("potrf") != std::string::npos ? 256.0 * 256 * 256 / 3 : 2.0 * 256 * 256 * 256 / 3;
    EXPECT_GT(no_lapack.rate(cls, size), 4 * d.rate(cls, size)) << cls;
  }
  // The solves' curves are their own too (spotrs with one right-hand side runs well below strsv's rate there).
  EXPECT_LT(d.rate("spotrs.vec", 4e6), d.rate("strsv.n", 4e6));
}

// Uncalibrated, a solve with 64 right-hand sides on factors of order 8192 is predicted at what it takes on the lent
// machines' OpenBLAS (the CPU alone in bench/results/mix at 8eb5988: sgetrs 75-80 ms, dgetrs 75-90 ms, strtrs 38-40
// ms, dtrtrs 41-43 ms), not at the rate of 256 right-hand sides (which made it 13-22 ms and kept it on the CPU, where
// the GPU takes a fifth of its time); those at n = 1024 too (sgetrs 1.1-1.3 ms, dtrtrs 0.78-0.85 ms).
TEST(CostModel, UncalibratedSolvesWithANarrowBlockArePredictedAtTheirMeasuredTimes) {
  const CostModel m(built_in_defaults());
  auto solve_ms = [&](Routine r, double n, double k) {
    bo_call c{};
    c.routine = int(r);
    c.n = int64_t(n), c.k = int64_t(k), c.lda = c.ldc = int64_t(n);
    double size = 0;
    const int cls = classify(c, &size);
    return m.cpu_us(cls, size) * 1e-3;
  };
  auto within = [](double predicted, double lo, double hi) { return predicted > 0.8 * lo && predicted < 1.25 * hi; };
  EXPECT_PRED3(within, solve_ms(Routine::sgetrs, 8192, 64), 75, 80);
  EXPECT_PRED3(within, solve_ms(Routine::dgetrs, 8192, 64), 75, 90);
  EXPECT_PRED3(within, solve_ms(Routine::strtrs, 8192, 64), 38, 40);
  EXPECT_PRED3(within, solve_ms(Routine::dtrtrs, 8192, 64), 41, 43);
  EXPECT_PRED3(within, solve_ms(Routine::sgetrs, 1024, 64), 1.1, 1.3);
  EXPECT_PRED3(within, solve_ms(Routine::dtrtrs, 1024, 64), 0.78, 0.85);
  // 256 right-hand sides are the wide class, at its own (higher) rate.
  EXPECT_GT(solve_ms(Routine::sgetrs, 8192, 64) / 64, 2 * solve_ms(Routine::sgetrs, 8192, 256) / 256);
}

TEST(CostModel, MissingClassesUseTheDefaultsAndPredictionsDoNotAllocate) {
  Calibration c = machine();
  c.cpu_rates.erase("snrm2");
  const CostModel m(c);
  const long before = g_allocs.load();
  double sum = 0;
  for (int i = 1; i < 1000; ++i) sum += m.predict(mk(Routine::snrm2, 'N', 0, i * 100), 5).cpu_us;
  EXPECT_EQ(g_allocs.load(), before);
  EXPECT_GT(sum, 0);
}

}  // namespace
