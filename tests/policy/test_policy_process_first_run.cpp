// What a user gets from the first run, in whole processes with the fake module: a policy file with rates inconsistent
// with its others is rejected with one warning; a file whose CPU rates are far too slow throughout (as a calibration
// disturbed by other work wrote them) never has a short call wait for the GPU's start-up, nor starts the GPU for gains
// that are not there; and without a GPU the library measures nothing, writes nothing and starts no process.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "policy_process_fixture.h"

namespace bo_policy_process {
namespace {

// Processes a probe left behind (a detached background calibration was one), reparented to this process as the
// subreaper: counted, and ended.
int LeftBehind() {
  int n = 0;
  for (;;) {
    const pid_t pid = waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) {
      ++n;  // one that had ended already
      continue;
    }
    if (pid < 0) return n;  // none left
    ++n;
    std::system(("pkill -KILL -P " + std::to_string(getpid())).c_str());
    waitpid(-1, nullptr, 0);
  }
}

TEST_F(PolicyProcess, InconsistentRatesAreRejectedWithOneWarning) {
  PolicyFile p = Good();
  p.scale["sgemm.rank_k"] = 1e-5;  // a hundred thousand times below sgemm.square at every size
  Env env = PolicyEnv(p, "frozen", "");
  const std::vector<std::string> script = Script("sgemm NN 64 64 16 x2  sgemv N 300 300");
  const Outcome a = RunProbe(env, script);
  ExpectProbePassed(a);
  const std::vector<std::string> lines = a.LibraryLines();
  ASSERT_EQ(lines.size(), 1u) << a.Dump();
  EXPECT_NE(lines[0].find("rejected 2 rates"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("sgemm.rank_k"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("blasoffload-info"), std::string::npos) << lines[0];

  env["BLASOFFLOAD_LOG"] = "summary";
  const Outcome b = RunProbe(env, script);
  ExpectProbePassed(b);
  EXPECT_NE(b.log.find("2 inconsistent rates rejected"), std::string::npos) << b.log;
}

// A file consistent in itself but ten thousand times too slow (every class): the policy's first GPU-worthy calls would
// each predict minutes on the CPU. The GPU's start-up (2 s here) must not be waited for by calls of milliseconds, nor
// begun for their gains, whatever the file says.
TEST_F(PolicyProcess, ShortCallsNeverWaitForTheStartUpWhateverTheRates) {
  PolicyFile p = Good();
  p.cpu_gflops = 1e-4;
  p.cpu_gbs = 1e-4;
  Env env = PolicyEnv(p, "adaptive");
  env["FAKE_CUDA_INIT_MS"] = "2000";
  const Outcome r = RunProbe(env, Script("sgemm NN 256 256 256 x4  sgemv N 1000 1000 x2"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), 6u) << r.Dump();
  for (const CallLine& c : r.calls) {
    EXPECT_EQ(c.where, "cpu") << c.text;
    EXPECT_TRUE(std::regex_search(c.reason, kAmortising) || std::regex_search(c.reason, std::regex(kModel))) << c.text;
  }
  EXPECT_EQ(r.TraceCount("init-begin"), 0) << "the GPU was started for gains of microseconds\n" << r.Dump();
  EXPECT_LT(r.seconds, 1.5) << "the program waited for the start-up (2 s)\n" << r.Dump();
}

// No NVIDIA device nodes and no module named: nothing measured, no file or folder written in the configuration
// directory, no thread of the GPU's and no process started, nothing printed.
TEST_F(PolicyProcess, WithoutAGpuNothingIsMeasuredWrittenOrStarted) {
  if (access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "this machine has NVIDIA device nodes";
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // a detached descendant of the probe becomes our child
  Env env = BaseEnv();
  env.erase("BLASOFFLOAD_CUDA_MODULE");
  const std::vector<std::string> script = Script("sgemm NN 384 384 384 x3  sgemv N 2000 2000 x2  snrm2 1000000");
  const Outcome a = RunProbe(env, script);
  ExpectProbePassed(a);
  EXPECT_TRUE(a.LibraryLines().empty()) << a.Dump();
  env["BLASOFFLOAD_LOG"] = "debug";
  const Outcome b = RunProbe(env, script);
  ExpectProbePassed(b);
  EXPECT_NE(b.log.find("built-in defaults (no policy file at"), std::string::npos) << b.log;
  EXPECT_EQ(b.log.find("GPU start-up"), std::string::npos) << b.log;
  EXPECT_EQ(b.log.find("measur"), b.log.find("measured with")) << "something was measured\n" << b.log;
  // Nothing in the configuration directory (the default policy file's folder, or anything beside it).
  EXPECT_EQ(std::system(("test -z \"$(ls -A '" + env["XDG_CONFIG_HOME"] + "')\"").c_str()), 0)
      << "the configuration directory is not empty";
  usleep(300000);
  EXPECT_EQ(LeftBehind(), 0) << "the library left a process behind after the program ended";
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace bo_policy_process
