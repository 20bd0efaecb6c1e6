// The policy file: schema and validation, interpolation, which file applies (missing, corrupt, stale, explicit),
// files from before strsm/ssyrk and the LAPACK classes were measured, and blasoffload-calibrate --quick end to end on
// the reference BLAS and LAPACK.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "policy/calibration.h"
#include "policy/calibration_checks.h"
#include "policy/cpu_blas_probe.h"
#include "routines/lapack.h"

namespace {

using namespace blasoffload::policy;

std::string temp_path(const char* name) {
  static std::string dir = [] {
    char t[] = "/tmp/bo-policy-XXXXXX";
    return std::string(mkdtemp(t));
  }();
  return dir + "/" + name;
}
void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

Calibration sample() {
  Calibration c;
  c.cpu = {"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
           "OpenBLAS 0.3.21 (kernels: SkylakeX, 16 threads)"};
  c.created = "2026-11-21T00:00:00Z";
  c.tool = "test";
  c.cpu_rates["sgemm.square"] = {{1e6, 100}, {1e9, 1000}};
  c.cpu_rates["sgemv.n"] = {{1e4, 10}, {1e8, 100}};
  return c;
}

TEST(Calibration, RoundTripAndGpuSection) {
  Calibration c = sample();
  c.gpu = "NVIDIA H100 80GB HBM3";
  c.h2d_gbs = 55;
  c.d2h_gbs = 55;
  c.pageable_gbs = 8;
  c.call_overhead_us = 40;
  c.init_ms = 300;
  Calibration back;
  std::string err;
  ASSERT_TRUE(parse_calibration(calibration_to_json(c), &back, &err)) << err;
  EXPECT_EQ(back.cpu, c.cpu);
  EXPECT_EQ(back.gpu, c.gpu);
  EXPECT_DOUBLE_EQ(back.h2d_gbs, 55);
  EXPECT_DOUBLE_EQ(back.init_ms, 300);
  ASSERT_EQ(back.cpu_rates.at("sgemm.square").size(), 2u);
  EXPECT_DOUBLE_EQ(back.cpu_rates.at("sgemv.n")[1].rate, 100);
}

TEST(Calibration, InterpolatesLogLogAndClamps) {
  const Calibration c = sample();
  EXPECT_DOUBLE_EQ(c.rate("sgemm.square", 1e3), 100);    // below: first point
  EXPECT_DOUBLE_EQ(c.rate("sgemm.square", 1e12), 1000);  // above: last point
  EXPECT_NEAR(c.rate("sgemm.square", std::sqrt(1e6 * 1e9)), std::sqrt(100.0 * 1000.0), 1e-9);
  EXPECT_EQ(c.rate("strsv.t", 1e6), 0);  // absent class
}

TEST(Calibration, ValidationNamesTheField) {
  Calibration out;
  std::string err;
  EXPECT_FALSE(parse_calibration("{", &out, &err));
  EXPECT_NE(err.find("JSON"), std::string::npos);
  EXPECT_FALSE(parse_calibration(R"({"schema":"other"})", &out, &err));
  EXPECT_NE(err.find("schema"), std::string::npos);
  EXPECT_FALSE(parse_calibration(
      R"({"schema":"blasoffload-policy/1","cpu":{"library":"x","rates":{"snrm2":[[2,1],[1,1]]}}})", &out, &err));
  EXPECT_NE(err.find("cpu.rates.snrm2"), std::string::npos) << err;
  EXPECT_FALSE(parse_calibration(
      R"({"schema":"blasoffload-policy/1","cpu":{"library":"x","rates":{"snrm2":[[1,-1]]}}})", &out, &err));
  EXPECT_FALSE(parse_calibration(
      R"({"schema":"blasoffload-policy/1","cpu":{"library":"x","rates":{}},"gpu":{"name":"g"}})", &out, &err));
  EXPECT_NE(err.find("gpu.h2d_gbs"), std::string::npos) << err;
}

TEST(ChooseCalibration, FileForThisCpuBlasIsUsed) {
  const Calibration c = sample();
  const std::string p = temp_path("ok.json");
  std::string err;
  ASSERT_TRUE(save_calibration(p, c, &err)) << err;
  const auto r = choose_calibration(p, false, c.cpu);
  EXPECT_TRUE(r.from_file);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_NE(r.message.find(p), std::string::npos);
  EXPECT_DOUBLE_EQ(r.calibration.rate("sgemm.square", 1e9), 1000);
}

TEST(ChooseCalibration, StaleCorruptAndMissingGiveDefaultsWithAWarning) {
  const Calibration c = sample();
  const std::string p = temp_path("stale.json");
  std::string err;
  ASSERT_TRUE(save_calibration(p, c, &err));
  CpuIdentity other = c.cpu;
  other.report = "OpenBLAS 0.3.21 (kernels: Prescott, 16 threads)";  // same library, other kernels
  auto r = choose_calibration(p, true, other);                       // a file the user named: warned about
  EXPECT_FALSE(r.from_file);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("Prescott"), std::string::npos) << r.warnings[0];
  EXPECT_EQ(r.calibration.cpu.library, "(built-in defaults)");
  r = choose_calibration(p, false, other);  // the default path (two CPU BLAS libraries on one machine): silent
  EXPECT_FALSE(r.from_file);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_NE(r.message.find("another CPU BLAS"), std::string::npos) << r.message;

  const std::string q = temp_path("corrupt.json");
  write(q, "{\"schema\": \"blasoffload-policy/1\", \"cpu\": ");
  r = choose_calibration(q, false, c.cpu);
  EXPECT_FALSE(r.from_file);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("corrupt"), std::string::npos);

  r = choose_calibration(temp_path("none.json"), false, c.cpu);  // the default location, not created yet
  EXPECT_FALSE(r.from_file);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_NE(r.message.find("blasoffload-calibrate"), std::string::npos);
  r = choose_calibration(temp_path("none.json"), true, c.cpu);  // named explicitly: say so
  EXPECT_EQ(r.warnings.size(), 1u);
  r = choose_calibration("", false, c.cpu);
  EXPECT_FALSE(r.from_file);
}

// A file written before strsm and ssyrk were measured (the lent machine's calibration, kept in bench/results) still
// loads, without a warning: their CPU curves come from its own sgemm curves, and the log line says so.
TEST(ChooseCalibration, AnOlderFileWithoutStrsmAndSsyrkLoadsWithDerivedCurves) {
  std::ifstream f(BO_OLD_POLICY_FILE);
  ASSERT_TRUE(f) << BO_OLD_POLICY_FILE;
  std::stringstream ss;
  ss << f.rdbuf();
  Calibration file;
  std::string err;
  ASSERT_TRUE(parse_calibration(ss.str(), &file, &err)) << err;
  ASSERT_FALSE(file.cpu_rates.count("strsm"));
  ASSERT_FALSE(file.cpu_rates.count("ssyrk"));
  const auto r = choose_calibration(BO_OLD_POLICY_FILE, true, file.cpu);
  EXPECT_TRUE(r.from_file);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  EXPECT_NE(r.message.find("strsm, strsm.narrow, ssyrk, dgemm.square"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("derived from its other rates"), std::string::npos) << r.message;
  const Calibration& c = r.calibration;
  ASSERT_EQ(c.cpu_rates.at("strsm").size(), file.cpu_rates.at("sgemm.panel").size());
  for (double size : {1e5, 3e7, 2e9, 1e12}) {
    EXPECT_DOUBLE_EQ(c.rate("strsm", size), 0.5 * file.rate("sgemm.panel", size)) << size;
    EXPECT_DOUBLE_EQ(c.rate("ssyrk", size), file.rate("sgemm.square", size)) << size;
  }
  // Double precision from single: half the flops where the class is flops, the same bytes per second where it is
  // bytes; dtrsm and dsyrk from the derived dgemm curves.
  for (double size : {1e5, 3e7, 2e9, 1e12}) {
    EXPECT_DOUBLE_EQ(c.rate("dgemm.square", size), 0.5 * file.rate("sgemm.square", size)) << size;
    EXPECT_DOUBLE_EQ(c.rate("dgemv.t", size), file.rate("sgemv.t", size)) << size;
    EXPECT_DOUBLE_EQ(c.rate("dtrsm", size), 0.25 * file.rate("sgemm.panel", size)) << size;
  }
  // Everything else is the file's own.
  EXPECT_DOUBLE_EQ(c.rate("sgemv.n", 1e6), file.rate("sgemv.n", 1e6));
  EXPECT_EQ(c.gpu, "NVIDIA H100 80GB HBM3");

  // A file that has the classes keeps them, and says nothing about deriving.
  Calibration full = sample();
  for (const auto& cls : calibration_classes())
    if (!full.cpu_rates.count(cls)) full.cpu_rates[cls] = {{1e6, 5}};
  full.cpu_rates["strsm"] = {{1e6, 3}};
  full.cpu_rates["ssyrk"] = {{1e6, 4}};
  const std::string p = temp_path("full.json");
  ASSERT_TRUE(save_calibration(p, full, &err)) << err;
  const auto q = choose_calibration(p, true, full.cpu);
  EXPECT_TRUE(q.from_file);
  EXPECT_EQ(q.message.find("derived"), std::string::npos) << q.message;
  EXPECT_DOUBLE_EQ(q.calibration.rate("strsm", 1e9), 3);
  EXPECT_DOUBLE_EQ(q.calibration.rate("ssyrk", 1e9), 4);
  // Only what is missing is derived, and only from what the file has.
  Calibration partial = sample();  // sgemm.square only
  partial.cpu_rates["strsm"] = {{1e6, 3}};
  // BLAS classes first, then LAPACK's (from gemm.square, trsv.n and trsm: here sgemm.square and strsm).
  const std::vector<std::string> blas_derived{"strsm.narrow", "ssyrk",        "dgemm.square", "dgemv.n",
                                              "dtrsm",        "dtrsm.narrow", "dsyrk"};
  const std::vector<std::string> got = derive_missing_classes(&partial);
  ASSERT_GE(got.size(), blas_derived.size());
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + blas_derived.size()), blas_derived);
  for (const char* cls : {"sgetrf", "sgesv", "spotrf", "sposv", "sgetrs.mat", "dgetrf", "dpotrs.mat"})
    EXPECT_NE(std::find(got.begin(), got.end(), cls), got.end()) << cls;
  EXPECT_EQ(std::find(got.begin(), got.end(), "sgetrs.vec"), got.end());  // no strsv.n in the file
  EXPECT_DOUBLE_EQ(partial.rate("sgetrf", 1e9), 0.5 * partial.rate("sgemm.square", 1e9));
  EXPECT_DOUBLE_EQ(partial.rate("strsm", 1e9), 3);
  Calibration no_panel = sample();
  const std::vector<std::string> got_np = derive_missing_classes(&no_panel);
  ASSERT_GE(got_np.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(got_np.begin(), got_np.begin() + 4),
            (std::vector<std::string>{"ssyrk", "dgemm.square", "dgemv.n", "dsyrk"}));
  EXPECT_FALSE(no_panel.cpu_rates.count("strsm"));
  EXPECT_FALSE(no_panel.cpu_rates.count("sgetrs.mat"));
  // A file from before the narrow blocks of right-hand sides: those at half the rate of its wide ones.
  Calibration no_narrow = built_in_defaults();
  for (const char* cls : {"sgetrs.narrow", "dgetrs.narrow"}) no_narrow.cpu_rates.erase(cls);
  EXPECT_EQ(derive_missing_classes(&no_narrow), (std::vector<std::string>{"sgetrs.narrow", "dgetrs.narrow"}));
  for (const double size : {1e7, 1e9, 1e11}) {
    EXPECT_DOUBLE_EQ(no_narrow.rate("sgetrs.narrow", size), 0.5 * no_narrow.rate("sgetrs.mat", size));
    EXPECT_DOUBLE_EQ(no_narrow.rate("dgetrs.narrow", size), 0.5 * no_narrow.rate("dgetrs.mat", size));
  }
  // The built-in defaults have both.
  const Calibration d = built_in_defaults();
  for (const auto& cls : calibration_classes()) EXPECT_TRUE(d.cpu_rates.count(cls)) << cls;
}

// A file written before the LAPACK classes were measured (the lent machine's calibration of both precisions) loads
// without a warning: the factorizations come from its gemm.square curve, the solves with few right-hand sides from
// trsv.n and those with many from trsm, and the log line names them.
TEST(ChooseCalibration, AFileWithoutLapackClassesLoadsWithThemDerived) {
  std::ifstream f(BO_NO_LAPACK_POLICY_FILE);
  ASSERT_TRUE(f) << BO_NO_LAPACK_POLICY_FILE;
  std::stringstream ss;
  ss << f.rdbuf();
  Calibration file;
  std::string err;
  ASSERT_TRUE(parse_calibration(ss.str(), &file, &err)) << err;
  ASSERT_TRUE(file.cpu_rates.count("strsm"));
  for (const char* cls : {"sgetrf", "dgetrf", "spotrs.vec", "dtrtrs.mat"}) ASSERT_FALSE(file.cpu_rates.count(cls));
  const auto r = choose_calibration(BO_NO_LAPACK_POLICY_FILE, true, file.cpu);
  EXPECT_TRUE(r.from_file);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  EXPECT_NE(r.message.find("sgetrf, sgesv, spotrf, sposv, sgetrs.vec"), std::string::npos) << r.message;
  const Calibration& c = r.calibration;
  for (const auto& cls : calibration_classes()) EXPECT_TRUE(c.cpu_rates.count(cls)) << cls;
  // (Scaled curves interpolate to the scaled rate up to rounding.)
  auto expect_scaled = [&](const std::string& cls, const std::string& from, double factor) {
    for (double size : {1e5, 3e7, 2e9, 1e12}) {
      const double want = factor * file.rate(from, size);
      EXPECT_NEAR(c.rate(cls, size), want, 1e-12 * want) << cls << " at " << size;
    }
  };
  // Each precision from its own BLAS curves.
  for (const std::string p : {"s", "d"}) {
    expect_scaled(p + "getrf", p + "gemm.square", 0.5);
    expect_scaled(p + "gesv", p + "gemm.square", 0.5);
    expect_scaled(p + "potrf", p + "gemm.square", 0.45);
    expect_scaled(p + "posv", p + "gemm.square", 0.45);
    for (const std::string solve : {"getrs", "potrs", "trtrs"}) {
      expect_scaled(p + solve + ".vec", p + "trsv.n", 1);
      expect_scaled(p + solve + ".mat", p + "trsm", 1);
      expect_scaled(p + solve + ".narrow", p + "trsm", 0.5);
    }
  }
  // The BLAS classes are the file's own.
  EXPECT_DOUBLE_EQ(c.rate("dgemm.square", 1e9), file.rate("dgemm.square", 1e9));
  EXPECT_DOUBLE_EQ(c.rate("strsm", 1e9), file.rate("strsm", 1e9));
}

// The CPU time all processes took over `seconds` while this one sleeps, in cores (from /proc/stat).
double machine_load(double seconds) {
  auto busy = [] {
    unsigned long long v[8] = {};
    if (std::FILE* f = std::fopen("/proc/stat", "r")) {
      if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                      &v[7]) != 8)
        v[0] = 0;
      std::fclose(f);
    }
    return double(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / double(sysconf(_SC_CLK_TCK));
  };
  const double a = busy();
  usleep(useconds_t(seconds * 1e6));
  return (busy() - a) / seconds;
}

// Runs blasoffload-calibrate --quick with `args`, its stderr into `log`; the exit status. The tool writes nothing on a
// busy machine (exit status 3): where it said so and the machine is indeed busy (other tests, a developer's build),
// the caller is told to skip; where the machine was quiet, that is the tool's failure.
int calibrate(const std::string& args, const std::string& log, bool* busy = nullptr) {
  const std::string cmd = std::string(BO_CALIBRATE) + " --quick --no-gpu " + args + " 2>" + log;
  const int rc = std::system(cmd.c_str());
  const int status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  if (busy) *busy = status == 3 && machine_load(2.0) > 0.3;
  return status;
}
std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The tool on the reference BLAS and LAPACK: a valid file with every class, keyed so that the same library is
// recognised, the LAPACK classes' sizes those of the descriptors for the orders --quick times.
TEST(Calibrate, QuickRunOnTheReferenceBlas) {
  void* h = dlopen(BO_REF_BLAS, RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "reference BLAS not installed";
  if (!dlopen(BO_REF_LAPACK, RTLD_NOW | RTLD_LOCAL)) GTEST_SKIP() << "reference LAPACK not installed";
  const std::string out = temp_path("calibrated.json"), log = temp_path("calibrated.log");
  bool busy = false;
  const int rc =
      calibrate(std::string("--cpu-blas=") + BO_REF_BLAS + " --lapack=" + BO_REF_LAPACK + " --out=" + out, log, &busy);
  if (busy) GTEST_SKIP() << "the machine is busy: " << read(log);
  ASSERT_EQ(rc, 0) << read(log);
  Calibration c;
  std::string err;
  ASSERT_TRUE(parse_calibration(read(out), &c, &err)) << err;
  for (const auto& cls : calibration_classes()) {
    if (!measured_by_calibrate(cls)) {  // LAPACK part 2: the built-in curves, never the file's
      EXPECT_FALSE(c.cpu_rates.count(cls)) << cls;
      continue;
    }
    ASSERT_TRUE(c.cpu_rates.count(cls)) << cls;
    for (const RatePoint& p : c.cpu_rates.at(cls)) EXPECT_GT(p.rate, 0) << cls;
  }
  EXPECT_TRUE(c.gpu.empty());
  EXPECT_NE(read(log).find(std::string("CPU LAPACK ") + BO_REF_LAPACK), std::string::npos) << read(log);
  // A calibration of the reference BLAS and LAPACK on an idle machine passes the library's consistency checks.
  Calibration checked = c;
  for (const Rejection& r : reject_inconsistent(&checked)) ADD_FAILURE() << describe(r);
  // Sizes in the class's unit (flops = 2 x multiply-adds, or bytes of the factors read), as the policy computes
  // them for the same calls: orders 64 and 128 for the factorizations and one-call solvers, 128 for the solves.
  using namespace bo::routines;
  auto sizes = [&](const std::string& cls) {
    std::vector<double> v;
    for (const RatePoint& p : c.cpu_rates.at(cls)) v.push_back(p.size);
    return v;
  };
  for (const auto& [p, e] : {std::pair{std::string("s"), 4.0}, std::pair{std::string("d"), 8.0}}) {
    EXPECT_EQ(sizes(p + "getrf"), (std::vector<double>{2 * getrf_work(64, 64), 2 * getrf_work(128, 128)})) << p;
    EXPECT_EQ(sizes(p + "potrf"), (std::vector<double>{2 * potrf_work(64), 2 * potrf_work(128)})) << p;
    EXPECT_EQ(sizes(p + "gesv"), (std::vector<double>{2 * (getrf_work(64, 64) + solve_work(64, 1)),
                                                      2 * (getrf_work(128, 128) + solve_work(128, 1))}))
        << p;
    EXPECT_EQ(sizes(p + "posv"), (std::vector<double>{2 * (potrf_work(64) + solve_work(64, 1)),
                                                      2 * (potrf_work(128) + solve_work(128, 1))}))
        << p;
    for (const char* solve : {"getrs", "potrs"}) {
      EXPECT_EQ(sizes(p + solve + ".vec"), (std::vector<double>{e * 128 * 128})) << p << solve;
      EXPECT_EQ(sizes(p + solve + ".narrow"), (std::vector<double>{2 * solve_work(128, 64)})) << p << solve;
      EXPECT_EQ(sizes(p + solve + ".mat"), (std::vector<double>{2 * solve_work(128, 256)})) << p << solve;
    }
    EXPECT_EQ(sizes(p + "trtrs.vec"), (std::vector<double>{e * 128 * 128 / 2})) << p;
    EXPECT_EQ(sizes(p + "trtrs.narrow"), (std::vector<double>{solve_work(128, 64)})) << p;
    EXPECT_EQ(sizes(p + "trtrs.mat"), (std::vector<double>{solve_work(128, 256)})) << p;
  }
  // The library builds its key the same way: the object defining sgemm_ and its self-report.
  Dl_info info{};
  void* sgemm = dlsym(h, "sgemm_");
  ASSERT_TRUE(dladdr(sgemm, &info));
  const CpuIdentity current{info.dli_fname, blasoffload::probe_cpu_blas(sgemm).identity};
  EXPECT_TRUE(choose_calibration(out, true, current).from_file);
}

// A CPU LAPACK that lacks the routines (here the reference BLAS named as one) leaves the LAPACK classes out, with a
// note, and the file loads with them derived; a LAPACK named that cannot be loaded is an error.
TEST(Calibrate, WithoutACpuLapackTheClassesAreDerived) {
  void* h = dlopen(BO_REF_BLAS, RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "reference BLAS not installed";
  const std::string out = temp_path("no-lapack.json"), log = temp_path("no-lapack.log");
  bool busy = false;
  const int rc =
      calibrate(std::string("--cpu-blas=") + BO_REF_BLAS + " --lapack=" + BO_REF_BLAS + " --out=" + out, log, &busy);
  if (busy) GTEST_SKIP() << "the machine is busy: " << read(log);
  ASSERT_EQ(rc, 0) << read(log);
  EXPECT_NE(read(log).find("lacks sgetrf_ sgetrs_"), std::string::npos) << read(log);
  EXPECT_NE(read(log).find("derives them from the BLAS rates"), std::string::npos) << read(log);
  Calibration c;
  std::string err;
  ASSERT_TRUE(parse_calibration(read(out), &c, &err)) << err;
  EXPECT_TRUE(c.cpu_rates.count("sgemm.square"));
  EXPECT_TRUE(c.cpu_rates.count("dtrsv.n"));
  for (const char* cls : {"sgetrf", "dgetrf", "spotrf", "dposv", "sgetrs.vec", "dtrtrs.mat"})
    EXPECT_FALSE(c.cpu_rates.count(cls)) << cls;
  const auto r = choose_calibration(out, true, c.cpu);
  EXPECT_TRUE(r.from_file);
  EXPECT_NE(r.message.find("sgetrf"), std::string::npos) << r.message;
  for (const auto& cls : calibration_classes()) EXPECT_TRUE(r.calibration.cpu_rates.count(cls)) << cls;
  // Measured d BLAS classes are not listed as derived.
  EXPECT_EQ(r.message.find("dgemm.square"), std::string::npos) << r.message;

  const std::string bad = temp_path("bad-lapack.json");
  EXPECT_EQ(
      calibrate("--cpu-blas=" + std::string(BO_REF_BLAS) + " --lapack=/nonexistent/liblapack.so.3 --out=" + bad, log),
      1);
  EXPECT_NE(read(log).find("cannot load the CPU LAPACK /nonexistent/liblapack.so.3"), std::string::npos) << read(log);
  EXPECT_NE(access(bad.c_str(), F_OK), 0);  // nothing written
}

}  // namespace
