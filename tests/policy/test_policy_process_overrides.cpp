// The user's overrides of the policy in whole processes: BLASOFFLOAD_<ROUTINE>_MIN, per-routine modes,
// BLASOFFLOAD_HYBRID and BLASOFFLOAD_MODE=cpu.
#include <string>
#include <vector>

#include "policy_process_fixture.h"

namespace bo_policy_process {
namespace {

// ---- c. overrides: BLASOFFLOAD_<ROUTINE>_MIN, per-routine modes, BLASOFFLOAD_MODE=cpu --------------------------

// With a GPU the model never picks, the thresholds alone send calls at or above them to the GPU.
TEST_F(PolicyProcess, MinSizeSendsCallsAtOrAboveItToGpuWhateverTheModel) {
  Env env = PolicyEnv(Hostile(), "frozen");
  env["BLASOFFLOAD_SGEMM_MIN"] = "200";
  env["BLASOFFLOAD_SGEMV_MIN"] = "1500";
  env["BLASOFFLOAD_STRSV_MIN"] = "1000";
  env["BLASOFFLOAD_SNRM2_MIN"] = "100000";
  const Outcome r = RunProbe(
      env, Script("sgemm NN 256 256 256  sgemm NN 128 128 128  sgemm NN 8 8 8  sgemm TN 300 200 250  sgemv N 1000 4000 "
                  "sgemv T 1000 1000  strsv LNN 1200  strsv UTN 800  snrm2 200000  snrm2 50000"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"gpu", MinSize(256, ">=", 200)},
                  {"cpu", MinSize(128, "<", 200)},
                  {"cpu", MinSize(8, "<", 200)},
                  {"gpu", MinSize(247, ">=", 200)},  // cbrt(300 * 200 * 250) = 246.6
                  {"gpu", MinSize(2000, ">=", 1500)},
                  {"cpu", MinSize(1000, "<", 1500)},
                  {"gpu", MinSize(1200, ">=", 1000)},
                  {"cpu", MinSize(800, "<", 1000)},
                  {"gpu", MinSize(200000, ">=", 100000)},
                  {"cpu", MinSize(50000, "<", 100000)}});
  EXPECT_EQ(Count(r, "sgemm"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "sgemv"), 1) << r.Dump();
  EXPECT_EQ(Count(r, "strsv"), 1) << r.Dump();
  EXPECT_EQ(Count(r, "snrm2"), 1) << r.Dump();
}

// With a GPU the model always picks for these sizes, the threshold keeps smaller calls on the CPU; other routines
// keep following the model.
TEST_F(PolicyProcess, MinSizeKeepsCallsBelowItOnCpuWhateverTheModel) {
  Env env = PolicyEnv(Good(), "frozen");
  env["BLASOFFLOAD_SGEMM_MIN"] = "300";
  const Outcome r = RunProbe(env, Script("sgemm NN 256 256 256 sgemm NN 384 384 384 sgemv N 2000 2000"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", MinSize(256, "<", 300)}, {"gpu", MinSize(384, ">=", 300)}, {"gpu", kModel}});
  EXPECT_EQ(Count(r, "sgemm"), 1) << r.Dump();
  EXPECT_EQ(Count(r, "sgemv"), 1) << r.Dump();
}

// BLASOFFLOAD_STRSM_MIN and BLASOFFLOAD_SSYRK_MIN measure sizes as the cube root of the work, as for sgemm: strsm
// cbrt(m n t), ssyrk cbrt(n^2 k).
TEST_F(PolicyProcess, MinSizeOfStrsmAndSsyrkIsTheCubeRootOfTheWork) {
  Env env = PolicyEnv(Hostile(), "frozen");
  env["BLASOFFLOAD_STRSM_MIN"] = "100";
  env["BLASOFFLOAD_SSYRK_MIN"] = "50";
  const Outcome r = RunProbe(env, Script("strsm LLNN 64 64  strsm RLTN 50 200  strsm LUTU 120 9 cblas  ssyrk UN 40 40 "
                                         "ssyrk LT 60 30  ssyrk UT 64 64 beta=0"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", MinSize(64, "<", 100)},
                  {"gpu", MinSize(126, ">=", 100)},  // cbrt(50 * 200 * 200) = 126.0
                  {"cpu", MinSize(51, "<", 100)},    // cbrt(120 * 9 * 120) = 50.6
                  {"cpu", MinSize(40, "<", 50)},
                  {"cpu", MinSize(48, "<", 50)},  // cbrt(60^2 * 30) = 47.6
                  {"gpu", MinSize(64, ">=", 50)}});
  EXPECT_EQ(Count(r, "strsm"), 1) << r.Dump();
  EXPECT_EQ(Count(r, "ssyrk"), 1) << r.Dump();
}

TEST_F(PolicyProcess, PerRoutineModesOfStrsmAndSsyrk) {
  Env env = PolicyEnv(Good(), "frozen");
  env["BLASOFFLOAD_STRSM"] = "gpu";
  env["BLASOFFLOAD_SSYRK"] = "cpu";
  const Outcome r = RunProbe(env, Script("strsm RLNU 8 8  ssyrk LN 384 384 x2  strsm LLTN 384 384"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"gpu", Mode("gpu")}, {"cpu", Mode("cpu"), 2}, {"gpu", Mode("gpu")}});
  EXPECT_EQ(Count(r, "strsm"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "ssyrk"), 0) << r.Dump();
}

TEST_F(PolicyProcess, PerRoutineCpuModeBeatsAuto) {
  Env env = PolicyEnv(Good(), "frozen");
  env["BLASOFFLOAD_SGEMM"] = "cpu";
  const Outcome r = RunProbe(env, Script("sgemm NN 384 384 384 x2 sgemv N 2000 2000"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", Mode("cpu"), 2}, {"gpu", kModel}});
  EXPECT_EQ(Count(r, "sgemm"), 0) << r.Dump();
  EXPECT_EQ(Count(r, "sgemv"), 1) << r.Dump();
}

TEST_F(PolicyProcess, PerRoutineGpuModeBeatsAuto) {
  Env env = PolicyEnv(Hostile(), "frozen");
  env["BLASOFFLOAD_SGEMM"] = "gpu";
  const Outcome r = RunProbe(env, Script("sgemm NN 8 8 8 sgemm NN 384 384 384 sgemv N 2000 2000"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"gpu", Mode("gpu"), 2}, {"cpu", kTiny}});
  EXPECT_EQ(Count(r, "sgemm"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "sgemv"), 0) << r.Dump();
}

// BLASOFFLOAD_HYBRID=F gives every sgemm the GPU runs a CPU share F, and says so in the log.
TEST_F(PolicyProcess, HybridFixedShareReachesTheModule) {
  Env env = PolicyEnv(Hostile(), "frozen");
  env["BLASOFFLOAD_SGEMM"] = "gpu";
  env["BLASOFFLOAD_HYBRID"] = "0.4";
  const Outcome r = RunProbe(env, Script("sgemm NN 384 384 384 sgemv N 2000 2000"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"gpu", "^mode gpu, CPU share 0.40$"}, {"cpu", kTiny}});
  EXPECT_EQ(r.TraceCount("sgemm cpu_share 0.40"), 1) << r.Dump();
}

// When the CPU and the GPU would take about as long, auto mode shares the call, with the share the model's balance
// gives (both sides finishing together); BLASOFFLOAD_HYBRID=off keeps it whole.
TEST_F(PolicyProcess, HybridAutoSharesCallsWhereCpuAndGpuAreClose) {
  PolicyFile p = Good();
  // sgemm 512^3 moves 4 MiB: 8 ms over a 1 GB/s link, staged twice; the CPU at 33.5 GFLOP/s takes 8 ms.
  p.link_gbs = 1;
  p.call_overhead_us = 50;
  p.cpu_gflops = 33.5;
  const Outcome r = RunProbe(PolicyEnv(p, "frozen"), Script("sgemm NN 512 512 512"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"gpu", R"(^model: cpu [0-9.]+ ms, hybrid [0-9.]+ ms with CPU share 0\.(3|4|5)[0-9]$)"}});
  EXPECT_EQ(Count(r, "sgemm"), 1) << r.Dump();
  long shared = 0;
  for (const std::string& t : r.trace) shared += t.rfind("sgemm cpu_share 0.", 0) == 0;
  EXPECT_EQ(shared, 1) << r.Dump();

  Env off = PolicyEnv(p, "frozen");
  off["BLASOFFLOAD_HYBRID"] = "off";
  const Outcome whole = RunProbe(off, Script("sgemm NN 512 512 512"));
  ExpectProbePassed(whole);
  ASSERT_EQ(whole.calls.size(), 1u) << whole.Dump();
  EXPECT_EQ(whole.calls[0].reason.find("hybrid"), std::string::npos) << whole.Dump();
  for (const std::string& t : whole.trace) EXPECT_EQ(t.rfind("sgemm cpu_share", 0), std::string::npos) << t;
}

TEST_F(PolicyProcess, HybridRejectsBadValues) {
  Env env = PolicyEnv(Hostile(), "frozen");
  env["BLASOFFLOAD_SGEMM"] = "gpu";
  env["BLASOFFLOAD_HYBRID"] = "1.5";
  const Outcome r = RunProbe(env, Script("sgemm NN 384 384 384"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"gpu", Mode("gpu")}});
  // Warnings go where the log goes (BLASOFFLOAD_LOG_FILE here).
  EXPECT_NE(r.log.find("BLASOFFLOAD_HYBRID=1.5 is not auto, off or a fraction"), std::string::npos) << r.Dump();
}

TEST_F(PolicyProcess, ModeCpuNeverLoadsTheModule) {
  Env env = PolicyEnv(Good(), "frozen");
  env["BLASOFFLOAD_MODE"] = "cpu";
  const Outcome r = RunProbe(env, kMixedScript);
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", Mode("cpu"), int(kMixedCalls)}});
  EXPECT_FALSE(r.traced) << "the CUDA module was loaded\n" << r.Dump();
  EXPECT_FALSE(r.counts_written) << r.Dump();
}

}  // namespace
}  // namespace bo_policy_process
