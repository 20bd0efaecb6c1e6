// The policy file in whole processes: a missing, corrupt or stale file gives one warning and the built-in defaults,
// the default locations are read, a file of another CPU BLAS or GPU is set aside or kept in part, and without GPU
// numbers of this GPU the start-up measures the link.
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "policy_process_fixture.h"

namespace bo_policy_process {
namespace {

// ---- d. the policy file: missing, corrupt, stale -> one warning and the built-in defaults ---------------------

class PolicyFileProblems : public PolicyProcess {
 protected:
  // Runs kMixedScript twice with the policy file at `path`: at the default log level (only warnings print) and
  // with the calls logged. Expects one warning naming the file and saying /problem/, right results, and that the
  // file's numbers were not used: its CPU prediction for sgemm 384 (226 ms) appears nowhere, and the summary says
  // the built-in defaults are in use.
  void Check(const std::string& path, const std::string& problem) {
    Env env = BaseEnv();
    env["BLASOFFLOAD_POLICY_FILE"] = path;
    env["BLASOFFLOAD_DECISIONS"] = "frozen";
    const Outcome a = RunProbe(env, kMixedScript);
    ExpectProbePassed(a);
    const std::vector<std::string> lines = a.LibraryLines();
    ASSERT_EQ(lines.size(), 1u) << "expected exactly one line from the library\n" << a.Dump();
    EXPECT_EQ(lines[0].rfind("blasoffload: warning: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(path), std::string::npos) << "the warning should name the file: " << lines[0];
    EXPECT_TRUE(std::regex_search(lines[0], std::regex(problem, std::regex::icase)))
        << "the warning should say /" << problem << "/: " << lines[0];

    env["BLASOFFLOAD_LOG"] = "calls";
    const Outcome b = RunProbe(env, kMixedScript);
    ExpectProbePassed(b);
    ASSERT_EQ(b.calls.size(), kMixedCalls) << b.Dump();
    const double file_ms = PolicyFile().SgemmCpuMs(384, 384, 384);
    for (const CallLine& c : b.calls) {
      double cpu_ms = 0, gpu_ms = 0;
      if (c.args.find("m=384 n=384 k=384") != std::string::npos && ModelNumbers(c.reason, &cpu_ms, &gpu_ms))
        EXPECT_GT(std::fabs(cpu_ms - file_ms), 0.05 * file_ms) << "the ignored file's rates were used: " << c.text;
    }
    EXPECT_TRUE(std::regex_search(b.log, std::regex("built-in defaults", std::regex::icase)))
        << "the summary should say the built-in defaults are in use\n"
        << b.log;
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
};

TEST_F(PolicyFileProblems, ExplicitFileMissing) {
  Check(Path("no-such-policy.json"), "not exist|missing|not found|no such|cannot (open|read)");
}

TEST_F(PolicyFileProblems, InvalidJson) {
  const std::string good = Good().Json();
  Check(Write("truncated.json", good.substr(0, good.size() / 2)), "corrupt|invalid|JSON|parse");
}

TEST_F(PolicyFileProblems, WrongSchema) {
  PolicyFile p = Good();
  p.schema = "blasoffload-policy/0";
  Check(Write("schema0.json", p.Json()), "schema");
}

TEST_F(PolicyFileProblems, StaleOtherLibrary) {
  PolicyFile p = Good();
  p.cpu.library = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
  Check(Write("openblas.json", p.Json()), "stale|openblas-pthread/libblas|another CPU BLAS");
}

TEST_F(PolicyFileProblems, StaleSameLibraryOtherSelfReport) {
  PolicyFile p = Good();
  p.cpu.report = "OpenBLAS 0.3.21 (kernels: Haswell, 2 threads)";
  Check(Write("report.json", p.Json()), "stale|Haswell|another CPU BLAS");
}

// The default location is optional: no file there is normal and silent (the summary still says so).
TEST_F(PolicyProcess, MissingDefaultFileIsSilent) {
  ExpectSilentWithSummarySaying(BaseEnv(), kMixedScript, "built-in defaults");
}

// A default file measured with another CPU BLAS (a machine whose programs use two; auto-calibration writes the default
// path for whichever ran last) is set aside silently: built-in defaults, and the summary says why.
TEST_F(PolicyProcess, DefaultFileOfAnotherCpuBlasIsSetAsideSilently) {
  PolicyFile p = Good();
  p.cpu.library = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
  ASSERT_EQ(mkdir(Path("xdg/blasoffload").c_str(), 0755), 0);
  std::ofstream(Path("xdg/blasoffload/policy.json")) << p.Json();
  ExpectSilentWithSummarySaying(BaseEnv(), kMixedScript, "is for another CPU BLAS");
}

// Positive control for the above: the default locations are read ($XDG_CONFIG_HOME, else ~/.config).
TEST_F(PolicyProcess, DefaultFileIsUsed) {
  const std::string json = Good().Json();
  ASSERT_EQ(mkdir(Path("xdg/blasoffload").c_str(), 0755), 0);
  std::ofstream(Path("xdg/blasoffload/policy.json")) << json;
  Env env = BaseEnv();
  env["BLASOFFLOAD_DECISIONS"] = "frozen";
  env["BLASOFFLOAD_LOG"] = "calls";
  const std::vector<std::string> script = Script("sgemm NN 384 384 384 sgemm NN 8 8 8");
  const Outcome a = RunProbe(env, script);
  ExpectProbePassed(a);
  ExpectCalls(a, {{"gpu", kModel}, {"cpu", kTiny}});
  EXPECT_NE(a.log.find(Path("xdg/blasoffload/policy.json")), std::string::npos) << a.log;

  ASSERT_EQ(mkdir(Path("home/.config").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(Path("home/.config/blasoffload").c_str(), 0755), 0);
  std::ofstream(Path("home/.config/blasoffload/policy.json")) << json;
  env.erase("XDG_CONFIG_HOME");
  const Outcome b = RunProbe(env, script);
  ExpectProbePassed(b);
  ExpectCalls(b, {{"gpu", kModel}, {"cpu", kTiny}});
  EXPECT_NE(b.log.find(Path("home/.config/blasoffload/policy.json")), std::string::npos) << b.log;
}

// The same CPU BLAS reached through another name (here the file the libblas.so.3 symlink points at) is not stale.
TEST_F(PolicyProcess, SameLibraryUnderAnotherNameIsNotStale) {
  PolicyFile p = Good();
  char real[4096];
  ASSERT_NE(realpath(p.cpu.library.c_str(), real), nullptr) << p.cpu.library;
  if (p.cpu.library == real) GTEST_SKIP() << p.cpu.library << " is not a symlink here";
  p.cpu.library = real;
  Env env = PolicyEnv(p, "frozen");
  env.erase("BLASOFFLOAD_LOG");
  const Outcome a = RunProbe(env, Script("sgemm NN 384 384 384"));
  ExpectProbePassed(a);
  EXPECT_TRUE(a.LibraryLines().empty()) << a.Dump();
  EXPECT_EQ(Count(a, "sgemm"), 1) << "the file was not used\n" << a.Dump();
}

// A file whose GPU section was measured on another GPU keeps its CPU side (the CPU BLAS is the same) and warns once
// the module is up; the calls stay right.
TEST_F(PolicyProcess, PolicyFileFromAnotherGpuKeepsItsCpuSide) {
  PolicyFile p = Good();
  p.gpu_name = "NVIDIA H100 80GB HBM3";
  Env env = PolicyEnv(p, "frozen", "");
  const std::vector<std::string> script = Script("sgemm NN 384 384 384 x3  sgemm NN 8 8 8");
  const Outcome a = RunProbe(env, script);
  ExpectProbePassed(a);
  const std::vector<std::string> lines = a.LibraryLines();
  ASSERT_EQ(lines.size(), 1u) << a.Dump();
  EXPECT_EQ(lines[0].rfind("blasoffload: warning: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(p.gpu_name), std::string::npos) << lines[0];

  env["BLASOFFLOAD_LOG"] = "calls";
  const Outcome b = RunProbe(env, script);
  ExpectProbePassed(b);
  ASSERT_EQ(b.calls.size(), 4u) << b.Dump();
  double cpu_ms = 0, gpu_ms = 0;
  ASSERT_TRUE(ModelNumbers(b.calls[1].reason, &cpu_ms, &gpu_ms)) << b.calls[1].text;
  EXPECT_NEAR(cpu_ms, p.SgemmCpuMs(384, 384, 384), 0.02 * p.SgemmCpuMs(384, 384, 384)) << b.calls[1].text;
}

// ---- e. no calibration of this GPU: its link is measured at the start-up ----------------------------------------

// A file measured without a GPU (its CPU side slow, so that the first sgemm starts the GPU eagerly): the start-up
// measures the link once and the model takes its rates in place of the built-in ones. An sgemv of a 16 MB matrix, not
// pipelined, moves it at 1 / (1 / staged + 1 / h2d): 5.7 GB/s with the built-in numbers (20 and 8 GB/s, which the
// slow run reports), 66.7 GB/s with the fast run's.
TEST_F(PolicyProcess, WithoutACalibrationOfThisGpuTheLinkIsMeasuredAtTheStartUp) {
  PolicyFile p = Good();
  p.has_gpu = false;
  const std::vector<std::string> script = Script("sgemm NN 192 192 192  sleep 1000  sgemv N 2000 2000");
  auto run = [&](const char* link, const char* decisions) { return RunWithLink(p, script, link, "", decisions, 2); };
  auto sgemv_gpu_ms = LastGpuMs;
  const Outcome slow = run("20,20,8", "adaptive"), fast = run("200,200,100", "adaptive");
  for (const Outcome* r : {&slow, &fast}) {
    EXPECT_EQ(r->TraceCount("measure-link"), 1) << r->Dump();
    // At the program's priority (its staging threads keep their creator's), while the start-up ran at nice 19.
    EXPECT_EQ(r->TraceCount("measure-link nice=0"), 1) << r->Dump();
    EXPECT_EQ(r->TraceCount("init-begin nice=19"), 1) << r->Dump();
    EXPECT_TRUE(std::regex_search(r->log, std::regex("link measured at start-up"))) << r->log;
  }
  EXPECT_TRUE(std::regex_search(fast.log, std::regex("200\\.0 GB/s to it.*100\\.0 staged"))) << fast.log;
  const double matrix_bytes = 4.0 * 2000 * 2000;
  const double expected_ms = matrix_bytes * (1 / 5.714e9 - 1 / 66.67e9) * 1e3;  // 2.56 ms
  EXPECT_NEAR(sgemv_gpu_ms(slow) - sgemv_gpu_ms(fast), expected_ms, 0.05 * expected_ms)
      << slow.calls.back().text << "\n"
      << fast.calls.back().text;

  // Frozen decisions are the file's and the built-in numbers': nothing measured, the slow run's prediction.
  const Outcome frozen = run("200,200,100", "frozen");
  EXPECT_EQ(frozen.TraceCount("measure-link"), 0) << frozen.Dump();
  EXPECT_NEAR(sgemv_gpu_ms(frozen), sgemv_gpu_ms(slow), 0.01 * sgemv_gpu_ms(slow)) << frozen.calls.back().text;
  // A measurement that fails leaves the built-in numbers, and the calls right.
  const Outcome failed = run("fail", "adaptive");
  EXPECT_EQ(failed.TraceCount("measure-link"), 1) << failed.Dump();
  EXPECT_NEAR(sgemv_gpu_ms(failed), sgemv_gpu_ms(slow), 0.01 * sgemv_gpu_ms(slow)) << failed.calls.back().text;
}

// Where the link is the start-up's measurement, the staged rate follows what the program's own large staged uploads
// reach (the fake counts each call that ran as one at FAKE_CUDA_STAGED_SEEN GB/s): a start-up reading 8 GB/s staged
// and uploads seen at 32 predict an sgemv as a start-up reading 32 does. A rate within 15% of the model's, a file of
// this GPU, and frozen decisions change nothing.
TEST_F(PolicyProcess, TheStagedRateFollowsTheProgramsLargeUploads) {
  PolicyFile p = Good();
  p.has_gpu = false;
  const std::vector<std::string> script =
      Script("sgemm NN 192 192 192  sleep 1000  sgemm NN 192 192 192 x3  sgemv N 2000 2000");
  auto run = [&](const PolicyFile& file, const char* link, const char* seen, const char* decisions) {
    return RunWithLink(file, script, link, seen, decisions, 5);
  };
  auto sgemv_gpu_ms = LastGpuMs;
  const std::regex priced("staged uploads reached 32\\.0 GB/s; staged copies are priced at it \\(was 8\\.0\\)");
  const Outcome slow = run(p, "20,20,8", "", "adaptive"), fast = run(p, "20,20,32", "", "adaptive");
  const Outcome seen = run(p, "20,20,8", "32", "adaptive");
  EXPECT_GE(std::count_if(seen.calls.begin(), seen.calls.end(), [](const CallLine& c) { return c.where == "gpu"; }), 1)
      << "no GPU call timed an upload\n"
      << seen.Dump();
  EXPECT_TRUE(std::regex_search(seen.log, priced)) << seen.log;
  EXPECT_TRUE(std::regex_search(seen.log, std::regex("staged copies priced at 32\\.0 GB/s.*1 changes"))) << seen.log;
  EXPECT_TRUE(std::regex_search(seen.log, std::regex("link measured at start-up.*20\\.0 back, 8\\.0 staged")))
      << seen.log;
  EXPECT_GT(sgemv_gpu_ms(slow) - sgemv_gpu_ms(fast), 1.0) << slow.calls.back().text << "\n" << fast.calls.back().text;
  EXPECT_NEAR(sgemv_gpu_ms(seen), sgemv_gpu_ms(fast), 0.01 * sgemv_gpu_ms(fast)) << seen.calls.back().text;

  // Uploads within 15% of the start-up's rate: left as they are.
  const Outcome near = run(p, "20,20,8", "9", "adaptive");
  EXPECT_EQ(near.log.find("staged copies are priced"), std::string::npos) << near.log;
  EXPECT_NEAR(sgemv_gpu_ms(near), sgemv_gpu_ms(slow), 0.01 * sgemv_gpu_ms(slow)) << near.calls.back().text;
  // A calibration of this GPU and frozen decisions: its numbers, whatever the uploads reach.
  const Outcome own = run(Good(), "20,20,8", "32", "adaptive"), own_alone = run(Good(), "20,20,8", "", "adaptive");
  EXPECT_EQ(own.log.find("staged copies are priced"), std::string::npos) << own.log;
  EXPECT_NEAR(sgemv_gpu_ms(own), sgemv_gpu_ms(own_alone), 0.01 * sgemv_gpu_ms(own_alone)) << own.calls.back().text;
  const Outcome frozen = run(p, "20,20,8", "32", "frozen");
  EXPECT_EQ(frozen.log.find("staged copies are priced"), std::string::npos) << frozen.log;
}

// A file measured on this GPU is used as it is: no measurement at the start-up. One of another GPU keeps its CPU side
// and takes the measured link (with its warning).
TEST_F(PolicyProcess, TheLinkIsMeasuredOnlyWhereTheFileHasNoNumbersOfThisGpu) {
  PolicyFile p = Good();
  const std::vector<std::string> script = Script("sgemm NN 192 192 192  sleep 1000  sgemv N 2000 2000");
  Env env = PolicyEnv(p, "adaptive");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_LINK_GBS"] = "200,200,100";
  const Outcome own = RunProbe(env, script);
  ExpectProbePassed(own);
  EXPECT_EQ(own.TraceCount("measure-link"), 0) << own.Dump();
  EXPECT_EQ(own.log.find("link measured"), std::string::npos) << own.log;

  p.gpu_name = "NVIDIA H100 80GB HBM3";
  env = PolicyEnv(p, "adaptive");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_LINK_GBS"] = "200,200,100";
  const Outcome other = RunProbe(env, script);
  ExpectProbePassed(other);
  EXPECT_EQ(other.TraceCount("measure-link"), 1) << other.Dump();
  EXPECT_TRUE(std::regex_search(other.log, std::regex("measured on NVIDIA H100 80GB HBM3.*with the link as measured")))
      << other.log;
  ASSERT_EQ(other.calls.size(), 2u) << other.Dump();
  double cpu_ms = 0, gpu_ms = 0;
  ASSERT_TRUE(ModelNumbers(other.calls[1].reason, &cpu_ms, &gpu_ms)) << other.calls[1].text;
  // 16 MB at 66.7 GB/s (0.24 ms), the built-in 30 us a call and 5 us for each of three more copies, and the fake's
  // kernel time (16 us); at the built-in link the same call is predicted at 2.86 ms.
  EXPECT_NEAR(gpu_ms, 0.24 + 0.03 + 0.015 + 0.016, 0.03) << other.calls[1].text;
}

}  // namespace
}  // namespace bo_policy_process
