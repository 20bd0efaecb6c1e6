// The policy file's consistency checks (src/policy/calibration_checks.h): undisturbed calibrations (the built-in
// rates, real ones of OpenBLAS on two GPU machines) pass untouched; disturbed points, classes and GPU sides are
// removed, and choose_calibration warns once and falls back to derived or built-in rates for them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "policy/calibration.h"
#include "policy/calibration_checks.h"

namespace {

using namespace blasoffload::policy;

Calibration load(const std::string& name) {
  std::ifstream f(std::string(BO_POLICY_DATA) + "/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  Calibration c;
  std::string e;
  EXPECT_TRUE(parse_calibration(ss.str(), &c, &e)) << name << ": " << e;
  return c;
}

std::string all(const std::vector<Rejection>& r) {
  std::string s;
  for (const Rejection& x : r) s += describe(x) + "\n";
  return s;
}

// A real H100 calibration with the built-in CPU rates: a consistent file to disturb.
Calibration consistent() {
  Calibration c = load("h100-openblas.json");
  c.cpu.library = "/usr/lib/libblas.so.3";
  c.cpu_rates = built_in_defaults().cpu_rates;
  return c;
}

TEST(CalibrationChecks, UndisturbedCalibrationsPassUntouched) {
  Calibration b = consistent();
  const auto before = b.cpu_rates;
  EXPECT_EQ(all(reject_inconsistent(&b)), "");
  EXPECT_EQ(b.cpu_rates, before);
  EXPECT_FALSE(b.gpu.empty());
  for (const char* f : {"h100-openblas.json", "h200-openblas.json"}) {
    Calibration c = load(f);
    const auto rates = c.cpu_rates;
    EXPECT_EQ(all(reject_inconsistent(&c)), "") << f;
    EXPECT_EQ(c.cpu_rates, rates) << f;
    EXPECT_FALSE(c.gpu.empty()) << f;
  }
}

TEST(CalibrationChecks, RealDisturbedPointIsRejected) {
  // A calibration of 16-thread OpenBLAS in which one sgemm.panel point read 2.24 GFLOP/s where the others read
  // 284-428 (steal while it measured): that point alone goes.
  Calibration c = load("h100-one-disturbed-point.json");
  const size_t panel = c.cpu_rates["sgemm.panel"].size();
  const auto r = reject_inconsistent(&c);
  ASSERT_EQ(r.size(), 1u) << all(r);
  EXPECT_NE(r[0].what.find("sgemm.panel at 3.36e+07 flops"), std::string::npos) << all(r);
  EXPECT_EQ(c.cpu_rates["sgemm.panel"].size(), panel - 1);
  EXPECT_GT(c.rate("sgemm.panel", 3.36e7), 100);
}

RatePoint* at(Calibration& c, const std::string& cls, double size) {
  for (RatePoint& p : c.cpu_rates[cls])
    if (p.size == size) return &p;
  ADD_FAILURE() << cls << " has no point at " << size;
  static RatePoint none;
  return &none;
}

TEST(CalibrationChecks, FactorizationsThousandsOfTimesBelowGemmAreRejected) {
  // What a calibration beside a busy OpenBLAS wrote: dgesv at 0.03 GFLOP/s where dgemm runs at about 100 at that
  // size; every dpotrf point at 0.0003 of its rate.
  Calibration c = consistent();
  at(c, "dgesv", 1.13e7)->rate = 0.03;
  for (RatePoint& p : c.cpu_rates["dpotrf"]) p.rate *= 3e-4;
  const auto r = reject_inconsistent(&c);
  EXPECT_EQ(r.size(), 1 + built_in_defaults().cpu_rates.at("dpotrf").size()) << all(r);
  EXPECT_EQ(c.cpu_rates.count("dpotrf"), 0u);
  EXPECT_EQ(c.cpu_rates["dgesv"].size(), 2u);
  for (const Rejection& x : r) EXPECT_NE(x.why.find("below dgemm.square"), std::string::npos) << describe(x);
}

TEST(CalibrationChecks, ReferenceClassMeasuredTooSlowIsRejected) {
  Calibration c = consistent();
  for (RatePoint& p : c.cpu_rates["sgemm.square"]) p.rate *= 0.005;
  const auto r = reject_inconsistent(&c);
  ASSERT_EQ(r.size(), 1u) << all(r);
  EXPECT_EQ(r[0].what, "sgemm.square (every size)");
  EXPECT_EQ(c.cpu_rates.count("sgemm.square"), 0u);
  EXPECT_GT(c.cpu_rates["sgetrf"].size(), 3u);  // the classes it would have condemned stay
}

TEST(CalibrationChecks, FallWithinAClassIsRejected) {
  Calibration c = consistent();
  at(c, "sgetrf", 4.58e10)->rate /= 20;
  at(c, "dgemv.n", 2.7e8)->rate /= 30;  // a class by bytes: its fall from the next smaller size
  const auto r = reject_inconsistent(&c);
  ASSERT_EQ(r.size(), 2u) << all(r);
  EXPECT_NE(all(r).find("sgetrf at 4.58e+10 flops"), std::string::npos) << all(r);
  EXPECT_NE(all(r).find("dgemv.n at 2.7e+08 bytes"), std::string::npos) << all(r);
}

TEST(CalibrationChecks, ImplausibleGpuSideIsReplaced) {
  auto rejected = [](void (*edit)(Calibration&)) {
    Calibration c = consistent();
    edit(c);
    const auto r = reject_inconsistent(&c);
    return c.gpu.empty() && r.size() == 1 && r[0].what.find("GPU side") != std::string::npos;
  };
  EXPECT_TRUE(rejected([](Calibration& c) { c.h2d_gbs = 5000; }));
  EXPECT_TRUE(rejected([](Calibration& c) { c.pageable_gbs = 0.01; }));
  EXPECT_TRUE(rejected([](Calibration& c) { c.pageable_gbs = 200; }));  // staging faster than the DMA it feeds
  EXPECT_TRUE(rejected([](Calibration& c) { c.call_overhead_us = 0.2; }));
  EXPECT_TRUE(rejected([](Calibration& c) { c.init_ms = 0; }));
  EXPECT_FALSE(rejected([](Calibration& c) {
    c.h2d_gbs = c.d2h_gbs = 6;
    c.pageable_gbs = 4;
  }));  // PCIe 3 x8
}

TEST(CalibrationChecks, AbsurdlyFastAndUnknownClasses) {
  Calibration c = consistent();
  at(c, "snrm2", 4e7)->rate = 1e6;
  c.cpu_rates["sfuture.class"] = {{1, 1e-9}};  // a newer tool's class: neither checked nor touched
  const auto r = reject_inconsistent(&c);
  ASSERT_EQ(r.size(), 1u) << all(r);
  EXPECT_NE(r[0].what.find("snrm2 at 4e+07 bytes"), std::string::npos) << describe(r[0]);
  EXPECT_EQ(c.cpu_rates["sfuture.class"].size(), 1u);
}

TEST(CalibrationChecks, ChooseCalibrationWarnsOnceAndDerivesWhatWasRejected) {
  Calibration c = consistent();
  for (RatePoint& p : c.cpu_rates["dpotrf"]) p.rate *= 3e-4;
  char dir[] = "/tmp/bo-checks-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/policy.json";
  std::string e;
  ASSERT_TRUE(save_calibration(path, c, &e)) << e;
  const CalibrationChoice ch = choose_calibration(path, false, c.cpu);
  EXPECT_TRUE(ch.from_file);
  ASSERT_EQ(ch.warnings.size(), 1u);
  EXPECT_NE(ch.warnings[0].find("rejected 7 rates"), std::string::npos) << ch.warnings[0];
  EXPECT_EQ(ch.rejected.size(), 7u);
  EXPECT_NE(ch.message.find("7 inconsistent rates rejected"), std::string::npos) << ch.message;
  EXPECT_NE(ch.message.find("dpotrf"), std::string::npos) << ch.message;  // derived again, and said so
  // Derived from dgemm.square (0.45 of it): hundreds of GFLOP/s at n = 4096, not the 0.06 written.
  EXPECT_GT(ch.calibration.rate("dpotrf", 2.29e10), 50);
  EXPECT_GE(ch.age_days, 0);
  EXPECT_LT(ch.age_days, 1);
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
