// The policy without a working GPU in whole processes: failing GPU calls fall back to the CPU with one warning, and
// with no device, or no NVIDIA device nodes, auto mode is silent and stays on the CPU.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "policy_process_fixture.h"

namespace bo_policy_process {
namespace {

// ---- e. a failing GPU call falls back to the CPU, with one warning -----------------------------------------

TEST_F(PolicyProcess, GpuFailureFallsBackAndWarnsOnce) {
  Env env = PolicyEnv(Good(), "frozen");
  env["FAKE_CUDA_FAIL"] = "sgemm";
  const std::vector<std::string> script = Script("sgemm NN 384 384 384 x3 sgemm TN 300 200 250 sgemv N 2000 2000");
  Env quiet = env;
  quiet.erase("BLASOFFLOAD_LOG");
  const Outcome a = RunProbe(quiet, script);
  ExpectProbePassed(a);  // the fake wrote nothing to C: the right answers came from the CPU
  const std::vector<std::string> lines = a.LibraryLines();
  ASSERT_EQ(lines.size(), 1u) << "expected one warning for four failed calls\n" << a.Dump();
  EXPECT_NE(lines[0].find("sgemm"), std::string::npos) << lines[0];
  EXPECT_GE(Count(a, "sgemm"), 1) << "the GPU was never tried\n" << a.Dump();

  const Outcome b = RunProbe(env, script);
  ExpectProbePassed(b);
  ASSERT_EQ(b.calls.size(), 5u) << b.Dump();
  EXPECT_TRUE(b.calls[0].fell_back) << b.calls[0].text;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.calls[i].where, "cpu") << b.calls[i].text;
  const std::vector<long> row = b.SummaryRow("sgemm");
  ASSERT_EQ(row.size(), 5u) << b.log;
  EXPECT_EQ(row[2], 0) << "sgemm gpu calls";
  EXPECT_GE(row[3], 1) << "sgemm fallbacks";
}

// Every routine's GPU path can fail; each falls back with the right answer, and warnings do not repeat per call.
TEST_F(PolicyProcess, EveryRoutineFallsBack) {
  Env env = PolicyEnv(Good(), "frozen", "");
  env["FAKE_CUDA_FAIL"] = "sgemm,sgemv,strsv,snrm2,strsm,ssyrk";
  const Outcome r =
      RunProbe(env, Script("sgemm NN 384 384 384 x2  sgemv T 1500 2000 inc=2 incy=-3 x2  strsv UTU 2000 "
                           "inc=-2 x2  snrm2 1000000 inc=3 x2  strsm RUNU 300 384 x2  ssyrk UT 384 300 x2"));
  ExpectProbePassed(r);
  const std::size_t warnings = r.LibraryLines().size();
  EXPECT_GE(warnings, 1u) << r.Dump();
  EXPECT_LE(warnings, 6u) << "at most one warning per routine\n" << r.Dump();
  for (const char* routine : {"sgemm", "sgemv", "strsv", "snrm2", "strsm", "ssyrk"})
    EXPECT_GE(Count(r, routine), 1) << routine;
}

// ---- f. no device: auto mode is silent and stays on the CPU ------------------------------------------------

TEST_F(PolicyProcess, NoDeviceIsSilentInAutoMode) {
  PolicyFile p = Good();
  // The start-up (which fails) is tried within the first calls, before the pause: twice init_ms is reached once the 20
  // calls' measured gain passes 10 ms, which holds with the reference BLAS from 0.5 ms a call (1.9 ms on a 2026-11-29
  // CI machine; at 20, the goal of 40 ms was out of its reach).
  p.init_ms = 5;
  Env env = PolicyEnv(p, "adaptive", "");
  env["FAKE_CUDA_NO_DEVICE"] = "1";
  const std::vector<std::string> script =
      Script("sgemm NN 192 192 192 x20  sleep 300  sgemm NN 384 384 384 x2  sgemv N 2000 2000  snrm2 16");
  const Outcome a = RunProbe(env, script);
  ExpectProbePassed(a);
  EXPECT_TRUE(a.LibraryLines().empty()) << "auto mode must not complain about a missing GPU\n" << a.Dump();
  EXPECT_EQ(a.TraceCount("init-begin"), 1) << "initialisation must be tried once, not per call\n" << a.Dump();
  for (const char* routine : {"sgemm", "sgemv", "strsv", "snrm2", "strsm", "ssyrk"})
    EXPECT_EQ(Count(a, routine), 0) << a.Dump();

  env["BLASOFFLOAD_LOG"] = "calls";
  const Outcome b = RunProbe(env, script);
  ExpectProbePassed(b);
  ASSERT_EQ(b.calls.size(), 24u) << b.Dump();
  for (const CallLine& c : b.calls) EXPECT_EQ(c.where, "cpu") << c.text;
  // Once the start-up has failed, GPU-worthy calls say why they stay on the CPU.
  for (int i = 20; i < 23; ++i)
    EXPECT_TRUE(std::regex_search(b.calls[i].reason, std::regex(kNoGpu))) << b.calls[i].text;
  EXPECT_EQ(b.TraceCount("init-begin"), 1) << b.Dump();

  env["BLASOFFLOAD_DECISIONS"] = "frozen";
  const Outcome c = RunProbe(env, script);
  ExpectProbePassed(c);
  ASSERT_EQ(c.calls.size(), 24u) << c.Dump();
  for (const CallLine& l : c.calls) EXPECT_EQ(l.where, "cpu") << l.text;
  for (int i = 1; i < 23; ++i) EXPECT_TRUE(std::regex_search(c.calls[i].reason, std::regex(kNoGpu))) << c.calls[i].text;
  EXPECT_EQ(c.TraceCount("init-begin"), 1) << c.Dump();
}

// ---- g. no NVIDIA device nodes and no explicit module: auto mode never loads CUDA ----------------------------

// The library is copied next to the fake module named as the real one (libblasoffload_cuda.so), so the default
// lookup would find it: only the policy's check of the device nodes keeps it unloaded.
TEST_F(PolicyProcess, NoDeviceNodesAutoNeverLoadsTheModule) {
  if (access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "this machine has NVIDIA device nodes";
  ASSERT_EQ(mkdir(Path("lib").c_str(), 0755), 0);
  const std::string lib = Path("lib/libblasoffload.so"), module = Path("lib/libblasoffload_cuda.so");
  ASSERT_EQ(
      std::system(
          ("cp '" + std::string(kLibrary) + "' '" + lib + "' && cp '" + kFakeModule + "' '" + module + "'").c_str()),
      0);
  Env env = PolicyEnv(Good(), "adaptive", "debug");
  env["LD_PRELOAD"] = lib;
  env.erase("BLASOFFLOAD_CUDA_MODULE");
  const std::vector<std::string> script = Script("sgemm NN 384 384 384 x12 sgemv N 2000 2000 sgemm NN 8 8 8");
  const Outcome r = RunProbe(env, script);
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", kNoGpu, 13}, {"cpu", kTiny}});
  EXPECT_FALSE(r.traced) << "the module was loaded\n" << r.Dump();
  EXPECT_EQ(r.log.find("FAKE"), std::string::npos) << r.log;
  // Says why, in the debug output or the summary's GPU line.
  EXPECT_TRUE(std::regex_search(r.log, std::regex("nvidia|device node", std::regex::icase)) ||
              std::regex_search(r.log, std::regex("\n  GPU: not used")))
      << r.log;

  // Control: the same copy with the module named explicitly is tried even without device nodes.
  env["BLASOFFLOAD_CUDA_MODULE"] = module;
  env["BLASOFFLOAD_DECISIONS"] = "frozen";
  env["BLASOFFLOAD_LOG"] = "calls";
  const Outcome c = RunProbe(env, script);
  ExpectProbePassed(c);
  ExpectCalls(c, {{"gpu", kModel, 13}, {"cpu", kTiny}});
  EXPECT_TRUE(c.traced) << c.Dump();
}

}  // namespace
}  // namespace bo_policy_process
