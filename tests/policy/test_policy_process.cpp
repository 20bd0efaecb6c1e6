// The offload policy end to end, in whole processes on a machine without a GPU: policy_probe runs scripted BLAS calls
// under LD_PRELOAD=libblasoffload.so with the fake CUDA module (fake_module.c) as the GPU, and each test checks the
// decision and reason of every call (BLASOFFLOAD_LOG=calls), what reached the module (its counts and trace files),
// the warnings, and that every result was right (the probe checks them itself).
//
// Policy files are written per test. "Good" files make the CPU slow (0.5 GFLOP/s, 0.5 GB/s) and the link fast, so
// that the calls called large here are GPU-worthy by a factor of 20 or more and the tiny ones lose to the per-call
// overhead by as much; assertions stay away from the crossovers, floors and margins the implementation may tune.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char* kLibrary = BO_LIBRARY;          // libblasoffload.so
constexpr const char* kFakeModule = BO_FAKE_MODULE;   // libblasoffload_fake_cuda.so
constexpr const char* kProbe = BO_PROBE;              // policy_probe
constexpr const char* kRefBlasDir = BO_REF_BLAS_DIR;  // pinned: Debian's alternatives may point at OpenBLAS
constexpr const char* kFakeGpuName = "fake GPU (blasoffload tests)";  // what fake_module.c's measure() reports
constexpr int kChildTimeoutS = 40;

using Env = std::map<std::string, std::string>;

std::string Slurp(const std::string& path, bool* exists = nullptr) {
  std::ifstream in(path);
  if (exists) *exists = bool(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A probe script written as one string of whitespace-separated steps (see policy_probe.c).
std::vector<std::string> Script(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// One BLASOFFLOAD_LOG=calls line: "blasoffload: sgemm(NN m=8 n=8 k=8) -> cpu [small], took 0.001 ms".
struct CallLine {
  std::string routine, args, where, reason, text;
  bool fell_back = false;
};

std::vector<CallLine> ParseCalls(const std::string& log) {
  static const std::regex re(R"(^blasoffload: (sgemm|sgemv|strsv|snrm2|strsm|ssyrk)\((.*)\) -> (cpu|gpu) \[(.*)\])"
                             R"((, GPU failed: fell back)?, took [0-9.]+ ms$)");
  std::vector<CallLine> calls;
  for (const std::string& line : Lines(log)) {
    std::smatch m;
    if (std::regex_match(line, m, re)) calls.push_back({m[1], m[2], m[3], m[4], line, m[5].matched});
  }
  return calls;
}

struct Outcome {
  int exit_code = -1, signal = 0;
  bool timed_out = false;
  double seconds = 0;
  std::string out, err, log;  // the probe's stdout and stderr, and BLASOFFLOAD_LOG_FILE
  std::vector<CallLine> calls;
  bool counts_written = false, traced = false;
  std::map<std::string, long> counts;  // the fake module's calls per routine, written at exit
  std::vector<std::string> trace;      // the fake module's lifecycle events (absent: never loaded)

  bool ExitedCleanly() const { return !timed_out && signal == 0 && exit_code == 0; }
  // Lines the library printed on stderr (the default log destination for warnings).
  std::vector<std::string> LibraryLines() const {
    std::vector<std::string> v;
    for (const std::string& l : Lines(err + out))
      if (l.rfind("blasoffload:", 0) == 0) v.push_back(l);
    return v;
  }
  long TraceCount(const std::string& event) const {
    long n = 0;
    for (const std::string& t : trace) n += t == event || t.rfind(event + " ", 0) == 0;
    return n;
  }
  // The summary's row for a routine: calls cpu gpu fallback errors.
  std::vector<long> SummaryRow(const std::string& routine) const {
    std::smatch m;
    const std::regex re("(^|\n)  " + routine + " +([0-9]+) +([0-9]+) +([0-9]+) +([0-9]+) +([0-9]+) ");
    if (!std::regex_search(log, m, re)) return {};
    return {std::stol(m[2]), std::stol(m[3]), std::stol(m[4]), std::stol(m[5]), std::stol(m[6])};
  }
  std::string Dump() const {
    std::ostringstream s;
    s << "exit " << exit_code << " signal " << signal << (timed_out ? " TIMED OUT" : "") << " after " << seconds
      << " s\n---- stdout ----\n"
      << out << "---- stderr ----\n"
      << err << "---- log ----\n"
      << log << "---- fake module trace" << (traced ? "" : " (absent: never loaded)") << " ----\n";
    for (const std::string& t : trace) s << t << "\n";
    s << "---- fake module counts" << (counts_written ? "" : " (absent)") << " ----\n";
    for (const auto& [k, v] : counts) s << k << " " << v << "\n";
    return s.str();
  }
};

// What the library will compare a policy file's "cpu" section with: read from its own summary, so the tests follow
// however the core names the CPU BLAS (the object defining sgemm_, and OpenBLAS's self-report if any).
struct CpuId {
  std::string library, report;
};

// CPU rates flat over all sizes, so each predicted CPU time is simply work / rate.
struct PolicyFile {
  std::string schema = "blasoffload-policy/1";
  CpuId cpu;
  double cpu_gflops = 0.5, cpu_gbs = 0.5;
  bool has_gpu = true;
  std::string gpu_name = kFakeGpuName;
  double link_gbs = 50, call_overhead_us = 50, init_ms = 100;

  std::string Json() const {
    auto flat = [](double rate, double lo, double hi) {
      char b[96];
      std::snprintf(b, sizeof b, "[[%g, %g], [%g, %g]]", lo, rate, hi, rate);
      return std::string(b);
    };
    std::ostringstream j;
    j << "{\n  \"schema\": \"" << schema << "\",\n  \"created\": \"2026-11-22T00:00:00Z\",\n  \"tool\": \"test\",\n"
      << "  \"cpu\": {\n    \"library\": \"" << cpu.library << "\",\n    \"report\": \"" << cpu.report << "\",\n"
      << "    \"rates\": {\n";
    const char* const flops_classes[] = {"sgemm.square", "sgemm.rank_k", "sgemm.panel"};
    const char* const byte_classes[] = {"sgemv.n", "sgemv.t", "strsv.n", "strsv.t", "snrm2"};
    for (const char* c : flops_classes) j << "      \"" << c << "\": " << flat(cpu_gflops, 1e3, 1e13) << ",\n";
    for (const char* c : byte_classes)
      j << "      \"" << c << "\": " << flat(cpu_gbs, 1e2, 1e11) << (std::strcmp(c, "snrm2") ? ",\n" : "\n");
    j << "    }\n  },\n";
    if (has_gpu)
      j << "  \"gpu\": {\"name\": \"" << gpu_name << "\", \"h2d_gbs\": " << link_gbs << ", \"d2h_gbs\": " << link_gbs
        << ", \"pageable_gbs\": " << link_gbs << ", \"call_overhead_us\": " << call_overhead_us
        << ", \"init_ms\": " << init_ms << "}\n";
    else
      j << "  \"gpu\": null\n";
    j << "}\n";
    return j.str();
  }
  // The CPU time this file predicts for an sgemm, in ms.
  double SgemmCpuMs(double m, double n, double k) const { return 2 * m * n * k / (cpu_gflops * 1e9) * 1e3; }
};

// Reasons, as BLASOFFLOAD_LOG=calls prints them (the policy spec's list).
const std::string kModel = R"(^model: cpu [0-9.]+ ms, gpu [0-9.]+ ms$)";
// Any decision of the adaptive model once the GPU is up: its own, a hybrid split, or the bounded exploration.
const std::string kModelAny = R"(^(exploring the other side; )?model: cpu [0-9.]+ ms, (gpu|hybrid) [0-9.]+ ms)";
// A tiny call stays on the CPU either before the model (below the floor) or by it.
const std::string kTiny = R"(^(small|model: cpu [0-9.]+ ms, gpu [0-9.]+ ms)$)";
const std::string kNoGpu = "^no GPU$";
const std::string kInitialising = R"(^GPU initialising; model: cpu [0-9.]+ ms, gpu [0-9.]+ ms$)";
const std::regex kAmortising(
    R"(^amortising init \(([0-9.]+) of ([0-9.]+) ms\); model: cpu ([0-9.]+) ms, gpu ([0-9.]+) ms$)");
std::string Mode(const std::string& m) { return "^mode " + m + "$"; }
std::string MinSize(int size, const char* op, int min) {
  return "^min-size " + std::to_string(size) + " " + op + " " + std::to_string(min) + "$";
}

bool ModelNumbers(const std::string& reason, double* cpu_ms, double* gpu_ms) {
  static const std::regex re(R"(model: cpu ([0-9.]+) ms, gpu ([0-9.]+) ms$)");
  std::smatch m;
  if (!std::regex_search(reason, m, re)) return false;
  *cpu_ms = std::stod(m[1]);
  *gpu_ms = std::stod(m[2]);
  return true;
}

struct Expect {
  std::string where, reason;  // reason: a regex
  int times = 1;
};

class PolicyProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = ::testing::TempDir();
    if (t.empty() || t.back() != '/') t += '/';
    t += "bo-policy-process-XXXXXX";
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir_ = t;
    ASSERT_EQ(mkdir(Path("home").c_str(), 0755), 0);
    ASSERT_EQ(mkdir(Path("xdg").c_str(), 0755), 0);
    std::ofstream(Path("empty.conf")).flush();
  }
  void TearDown() override {
    if (HasFailure())
      std::printf("(files kept in %s)\n", dir_.c_str());
    else if (std::system(("rm -rf '" + dir_ + "'").c_str()) != 0)
      std::printf("(could not remove %s)\n", dir_.c_str());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // The child's whole environment: nothing inherited, so a developer's BLASOFFLOAD_*, config and policy files or
  // LD_PRELOAD cannot leak in. The module is the fake unless a test removes it.
  Env BaseEnv() const {
    return {{"PATH", "/usr/bin:/bin"},
            {"HOME", Path("home")},
            {"XDG_CONFIG_HOME", Path("xdg")},
            {"LD_LIBRARY_PATH", kRefBlasDir},
            {"LD_PRELOAD", kLibrary},
            {"BLASOFFLOAD_CONFIG", Path("empty.conf")},
            {"BLASOFFLOAD_AUTO_CALIBRATE", "off"},  // test_auto_calibrate.cpp's subject; here, files as written
            {"BLASOFFLOAD_CUDA_MODULE", kFakeModule}};
  }
  // BaseEnv with a policy file written for this run and the calls logged to a file.
  Env PolicyEnv(const PolicyFile& p, const std::string& decisions, const std::string& log = "calls") {
    const std::string path = Path("policy" + std::to_string(++files_) + ".json");
    std::ofstream(path) << p.Json();
    Env env = BaseEnv();
    env["BLASOFFLOAD_POLICY_FILE"] = path;
    env["BLASOFFLOAD_DECISIONS"] = decisions;
    if (!log.empty()) env["BLASOFFLOAD_LOG"] = log;
    return env;
  }
  PolicyFile Good() {
    PolicyFile p;
    p.cpu = Cpu();
    return p;
  }
  // The GPU costs a second per call: the model never picks it.
  PolicyFile Hostile() {
    PolicyFile p = Good();
    p.call_overhead_us = 1e6;
    return p;
  }

  // Runs the probe with exactly `env` (plus the fake module's output files and, when BLASOFFLOAD_LOG is set, a log
  // file), waits at most kChildTimeoutS, and collects everything.
  Outcome RunProbe(Env env, const std::vector<std::string>& steps) {
    const std::string tag = Path("run" + std::to_string(++runs_));
    env["FAKE_CUDA_COUNTS"] = tag + ".counts";
    env["FAKE_CUDA_TRACE"] = tag + ".trace";
    if (env.count("BLASOFFLOAD_LOG") && !env.count("BLASOFFLOAD_LOG_FILE")) env["BLASOFFLOAD_LOG_FILE"] = tag + ".log";
    std::vector<std::string> envs, args = {kProbe};
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    args.insert(args.end(), steps.begin(), steps.end());
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    for (auto& e : envs) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);

    Outcome r;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      const int out = open((tag + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open((tag + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in = open("/dev/null", O_RDONLY);
      if (out < 0 || err < 0 || in < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(in, 0) < 0) _exit(126);
      if (chdir(dir_.c_str()) != 0) _exit(126);
      execve(kProbe, argv.data(), envp.data());
      _exit(127);
    }
    int status = 0;
    for (;;) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(kChildTimeoutS)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        r.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = Slurp(tag + ".out");
    r.err = Slurp(tag + ".err");
    r.log = Slurp(tag + ".log");
    r.calls = ParseCalls(r.log.empty() ? r.err : r.log);
    for (const std::string& l : Lines(Slurp(tag + ".counts", &r.counts_written))) {
      char name[16];
      long n = 0;
      if (std::sscanf(l.c_str(), "%15s %ld", name, &n) == 2) r.counts[name] = n;
    }
    r.trace = Lines(Slurp(tag + ".trace", &r.traced));
    return r;
  }

  // The identity the library reports for the reference BLAS, asked once per test.
  CpuId Cpu() {
    if (!cpu_.library.empty()) return cpu_;
    Env env = BaseEnv();
    env["BLASOFFLOAD_MODE"] = "cpu";
    env["BLASOFFLOAD_LOG"] = "summary";
    const Outcome r = RunProbe(env, Script("snrm2 4"));
    std::smatch m;
    if (std::regex_search(r.log, m, std::regex("\n  CPU BLAS: ([^\n]+)\n"))) cpu_.library = m[1];
    if (std::regex_search(r.log, m, std::regex("\n  CPU BLAS reports: ([^\n]+)\n"))) cpu_.report = m[1];
    EXPECT_FALSE(cpu_.library.empty()) << "no 'CPU BLAS:' line in the summary\n" << r.Dump();
    return cpu_;
  }

  // Every call line in order against the expectations; a mismatch names the call and the run.
  static void ExpectCalls(const Outcome& r, const std::vector<Expect>& ex) {
    std::vector<std::pair<std::string, std::string>> flat;
    for (const Expect& e : ex)
      for (int i = 0; i < e.times; ++i) flat.emplace_back(e.where, e.reason);
    ASSERT_EQ(r.calls.size(), flat.size()) << "number of logged calls\n" << r.Dump();
    for (std::size_t i = 0; i < flat.size(); ++i) {
      EXPECT_EQ(r.calls[i].where, flat[i].first) << "call " << i << ": " << r.calls[i].text;
      EXPECT_TRUE(std::regex_search(r.calls[i].reason, std::regex(flat[i].second)))
          << "call " << i << ": reason [" << r.calls[i].reason << "] does not match /" << flat[i].second << "/";
    }
  }

  static void ExpectProbePassed(const Outcome& r) {
    EXPECT_TRUE(r.ExitedCleanly()) << r.Dump();
    EXPECT_NE(r.out.find("policy_probe: PASS"), std::string::npos) << r.Dump();
    EXPECT_EQ((r.err + r.out).find("contract violation"), std::string::npos) << r.Dump();
  }

  // `script` under `env` with frozen decisions: nothing of ours printed; then, with the summary logged, no warning in
  // it and `says` (a regex, case-insensitive) found.
  void ExpectSilentWithSummarySaying(Env env, const std::vector<std::string>& script, const std::string& says) {
    env["BLASOFFLOAD_DECISIONS"] = "frozen";
    const Outcome a = RunProbe(env, script);
    ExpectProbePassed(a);
    EXPECT_TRUE(a.LibraryLines().empty()) << a.Dump();
    env["BLASOFFLOAD_LOG"] = "summary";
    const Outcome b = RunProbe(env, script);
    ExpectProbePassed(b);
    EXPECT_EQ(b.log.find("warning"), std::string::npos) << b.log;
    EXPECT_TRUE(std::regex_search(b.log, std::regex(says, std::regex::icase))) << b.log;
  }

  // The counts the fake module wrote at exit; missing routines read as -1 so a missing file never passes for 0.
  static long Count(const Outcome& r, const std::string& routine) {
    auto it = r.counts.find(routine);
    return it == r.counts.end() ? -1 : it->second;
  }

 private:
  std::string dir_;
  int runs_ = 0, files_ = 0;
  CpuId cpu_;
};

// ---- a. auto + frozen: the calibration alone decides, call by call ------------------------------------------

const std::vector<std::string> kMixedScript = Script(
    // tiny: lose to a 50 us call overhead by far
    "sgemm NN 8 8 8 x3  sgemm NT 12 10 9 beta=0  sgemv N 16 16  strsv LNN 8  snrm2 16 "
    // large: the CPU needs 20 to 1500 times what the GPU is predicted to
    "sgemm NN 384 384 384 x2  sgemm TN 300 200 250 pad=3  sgemm NT 256 300 200 beta=0  "
    "sgemm TT 320 320 320 alpha=-1 cblas  sgemv N 2000 2000 x2  sgemv T 1500 2000 inc=2 incy=-3 pad=5  "
    "strsv LNN 3000  strsv UTU 2000 inc=-2  snrm2 4000000 x2  snrm2 1000000 inc=3 "
    // tiny again, after the GPU is up: still the CPU
    "sgemm NN 8 8 8  snrm2 16");
constexpr std::size_t kMixedCalls = 22;

TEST_F(PolicyProcess, FrozenSmallCallsStayOnCpuLargeGoToGpu) {
  const PolicyFile p = Good();
  const Outcome r = RunProbe(PolicyEnv(p, "frozen"), kMixedScript);
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", kTiny, 7},
                  {"gpu", kModel, 5},
                  {"gpu", kModel, 3},
                  {"gpu", kModel, 2},
                  {"gpu", kModel, 3},
                  {"cpu", kTiny, 2}});
  // Frozen decisions are the calibration's own numbers: the CPU side is work / the file's rate, uncorrected.
  double cpu_ms = 0, gpu_ms = 0;
  ASSERT_GE(r.calls.size(), 8u);
  ASSERT_TRUE(ModelNumbers(r.calls[7].reason, &cpu_ms, &gpu_ms)) << r.calls[7].text;
  EXPECT_NEAR(cpu_ms, p.SgemmCpuMs(384, 384, 384), 0.02 * p.SgemmCpuMs(384, 384, 384)) << r.calls[7].text;
  EXPECT_LT(gpu_ms, cpu_ms / 20) << r.calls[7].text;
  EXPECT_EQ(Count(r, "sgemm"), 5) << r.Dump();
  EXPECT_EQ(Count(r, "sgemv"), 3) << r.Dump();
  EXPECT_EQ(Count(r, "strsv"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "snrm2"), 3) << r.Dump();
  // Frozen: initialised synchronously, once, and shut down at exit.
  EXPECT_EQ(r.TraceCount("init-begin"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("shutdown"), 1) << r.Dump();
  const std::vector<long> row = r.SummaryRow("sgemm");
  ASSERT_EQ(row.size(), 5u) << r.log;
  EXPECT_EQ(row[1], 5);  // cpu
  EXPECT_EQ(row[2], 5);  // gpu
  EXPECT_NE(r.log.find("GPU: blasoffload FAKE CUDA module"), std::string::npos) << r.log;
}

// The same program decides the same way every run in frozen mode.
TEST_F(PolicyProcess, FrozenDecisionsRepeatRunToRun) {
  const PolicyFile p = Good();
  const Outcome a = RunProbe(PolicyEnv(p, "frozen"), kMixedScript), b = RunProbe(PolicyEnv(p, "frozen"), kMixedScript);
  ExpectProbePassed(a);
  ExpectProbePassed(b);
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (std::size_t i = 0; i < a.calls.size(); ++i)
    EXPECT_EQ(a.calls[i].where + " " + a.calls[i].reason, b.calls[i].where + " " + b.calls[i].reason) << i;
}

// strsm and ssyrk under a file written before they had shape classes (PolicyFile writes only the older ones): their
// CPU curves come from the file's sgemm curves (strsm at half the panel rate, ssyrk at the square rate), the summary
// says so, tiny calls stay on the CPU and large ones go to the GPU; quick returns (alpha = 0, k = 0) never reach it.
TEST_F(PolicyProcess, FrozenStrsmAndSsyrkWithCurvesDerivedFromAnOlderFile) {
  const PolicyFile p = Good();
  const Outcome r = RunProbe(
      PolicyEnv(p, "frozen"),
      Script(
          "strsm LLNN 8 8  ssyrk UN 8 8  strsm LLNN 384 384  strsm RUTU 300 200 pad=3 cblas  ssyrk LT 384 384 beta=0 "
          "ssyrk UN 300 250 cblas  strsm LUNN 384 384 alpha=0  ssyrk UN 384 384 alpha=0 beta=0.5  ssyrk LN 200 0 "
          "beta=2"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", kTiny, 2}, {"gpu", kModel, 4}});
  ASSERT_EQ(r.calls.size(), 6u) << r.Dump();
  EXPECT_EQ(r.calls[2].args, "LLNN m=384 n=384") << r.calls[2].text;
  EXPECT_EQ(r.calls[4].args, "LT n=384 k=384") << r.calls[4].text;
  double cpu_ms = 0, gpu_ms = 0;
  const double flops = 384.0 * 384 * 384;
  ASSERT_TRUE(ModelNumbers(r.calls[2].reason, &cpu_ms, &gpu_ms)) << r.calls[2].text;
  EXPECT_NEAR(cpu_ms, flops / (0.5 * p.cpu_gflops * 1e9) * 1e3, 0.02 * cpu_ms) << r.calls[2].text;
  ASSERT_TRUE(ModelNumbers(r.calls[4].reason, &cpu_ms, &gpu_ms)) << r.calls[4].text;
  EXPECT_NEAR(cpu_ms, flops / (p.cpu_gflops * 1e9) * 1e3, 0.02 * cpu_ms) << r.calls[4].text;
  EXPECT_EQ(Count(r, "strsm"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "ssyrk"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "sgemm"), 0) << r.Dump();
  // calls cpu gpu fallback errors: the quick returns count as calls, on neither side.
  EXPECT_EQ(r.SummaryRow("strsm"), (std::vector<long>{4, 1, 2, 0, 0})) << r.log;
  EXPECT_EQ(r.SummaryRow("ssyrk"), (std::vector<long>{5, 1, 2, 0, 0})) << r.log;
  EXPECT_NE(r.log.find("strsm, ssyrk, dgemm.square"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << "an older file is no reason for a warning\n" << r.Dump();
}

// ---- b. auto + adaptive: the one-time start-up is amortised, then runs in the background ---------------------

TEST_F(PolicyProcess, AdaptiveAmortisesInitThenInitialisesInBackgroundThenUsesGpu) {
  PolicyFile p = Good();
  p.init_ms = 50;  // twice that is about 4 calls' predicted gain, or 15 once the CPU's measured speed corrected it
  Env env = PolicyEnv(p, "adaptive");
  env["FAKE_CUDA_INIT_MS"] = "1500";  // far longer than the calls before the pause take on the CPU
  constexpr std::size_t kBlock = 40, kAfterPause = 2 + kBlock;
  const Outcome r = RunProbe(env, Script("sgemm NN 8 8 8 x2  sgemm NN 192 192 192 x" + std::to_string(kBlock) +
                                         "  sleep 2500  sgemm NN 192 192 192 x3  sgemv N 2000 2000 x2"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), kAfterPause + 5) << r.Dump();
  EXPECT_EQ(r.calls[0].where, "cpu");
  EXPECT_EQ(r.calls[1].where, "cpu");

  // The GPU-worthy calls before the pause: amortising..., then GPU initialising..., all on the CPU.
  std::size_t i = 2;
  double last_gain = -1;
  int amortising = 0;
  for (std::smatch m; i < kAfterPause && std::regex_match(r.calls[i].reason, m, kAmortising); ++i, ++amortising) {
    const double gain = std::stod(m[1]), of = std::stod(m[2]), cpu = std::stod(m[3]), gpu = std::stod(m[4]);
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
    EXPECT_NEAR(of, 2 * p.init_ms, 0.5) << "the gain to reach is twice the calibrated init_ms: " << r.calls[i].text;
    // Below the goal, as printed (to 0.1 ms: a gain of 99.96 of 100 reads 100.0).
    EXPECT_LT(gain, of + 0.05) << r.calls[i].text;
    EXPECT_GT(cpu, 20 * gpu) << r.calls[i].text;
    // The gain grows by each call's predicted saving (allowing for a margin taken off it, and the 0.1 ms rounding).
    if (last_gain >= 0) {
      EXPECT_GT(gain - last_gain, 0.4 * (cpu - gpu) - 0.1) << r.calls[i].text;
      EXPECT_LT(gain - last_gain, 1.05 * (cpu - gpu) + 0.1) << r.calls[i].text;
    }
    last_gain = gain;
  }
  EXPECT_GE(amortising, 1) << "no call was amortising the start-up\n" << r.Dump();
  const std::size_t first_initialising = i;
  for (; i < kAfterPause && std::regex_search(r.calls[i].reason, std::regex(kInitialising)); ++i)
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
  EXPECT_GE(i - first_initialising, 1u) << "no call ran while the GPU was initialising\n" << r.Dump();
  // Should the start-up finish before the pause, the first call after it is the GPU's, and the rest follow the model
  // as it learns (the fake GPU's CPU loops may be slower than the CPU BLAS: then the CPU wins the bucket back).
  const std::size_t first_up = i;
  for (; i < r.calls.size(); ++i) {
    if (i == first_up) EXPECT_EQ(r.calls[i].where, "gpu") << "the first call after the start-up: " << r.calls[i].text;
    EXPECT_TRUE(std::regex_search(r.calls[i].reason, std::regex(kModelAny))) << r.calls[i].text;
  }
  // Another class, never measured: the model alone, GPU-worthy by a factor of about 40.
  EXPECT_EQ(r.calls[kAfterPause + 3].where, "gpu") << r.calls[kAfterPause + 3].text;
  EXPECT_GE(Count(r, "sgemm"), 1) << r.Dump();
  EXPECT_GE(Count(r, "sgemv"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("init-begin"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
}

// The program ends while the background start-up is still running: it must still exit 0, print its summary, and
// never call the module's shutdown() during init().
TEST_F(PolicyProcess, AdaptiveExitWhileInitialisingIsClean) {
  PolicyFile p = Good();
  // Two GPU-worthy calls (about 28 ms each on this CPU) cover it; neither is long enough to wait for a 20 ms start-up
  // (policy.cpp kWaitForStartFraction), so the second starts it and runs on the CPU.
  p.init_ms = 20;
  Env env = PolicyEnv(p, "adaptive", "calls");
  env["FAKE_CUDA_INIT_MS"] = "300";
  const Outcome r = RunProbe(env, Script("sgemm NN 8 8 8 x2 sgemm NN 192 192 192 x2"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), 4u) << r.Dump();
  // The last call started the initialisation, so it was under way when main() returned.
  EXPECT_TRUE(std::regex_search(r.calls[3].reason, std::regex(kInitialising))) << r.calls[3].text;
  EXPECT_EQ(r.calls[3].where, "cpu");
  EXPECT_EQ(r.TraceCount("init-begin"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("violation"), 0) << r.Dump();
  EXPECT_EQ(Count(r, "sgemm"), 0) << r.Dump();
  EXPECT_NE(r.log.find("blasoffload summary (pid"), std::string::npos) << r.Dump();
}

// The program ends while the GPU starts in the background. The fake module, like the CUDA runtime, registers an exit
// handler of its own when its init() begins, which runs before the core's atexit handler: exit from the main thread
// must wait for the start-up before any exit handler (the runtime's teardown under a running init() crashed processes
// on the GPU), and then shut the module down in order. Up to BLASOFFLOAD_EXIT_WAIT_MS only: past it, the process ends
// without the start-up (and the fake reports the teardown it then meets).
TEST_F(PolicyProcess, ExitFromTheMainThreadWaitsForTheStartUpBeforeAnyExitHandler) {
  PolicyFile p = Good();
  Env env = PolicyEnv(p, "adaptive");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_INIT_MS"] = "1500";
  const std::vector<std::string> script = Script("sgemm NN 192 192 192");
  const Outcome r = RunProbe(env, script);
  ExpectProbePassed(r);
  EXPECT_EQ(r.TraceCount("violation"), 0) << r.Dump();
  ASSERT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
  ASSERT_EQ(r.TraceCount("runtime-exit"), 1) << r.Dump();
  const auto at = [&](const std::string& event) {
    return std::find_if(r.trace.begin(), r.trace.end(), [&](const std::string& t) { return t.rfind(event, 0) == 0; }) -
           r.trace.begin();
  };
  EXPECT_LT(at("init-end ok"), at("runtime-exit")) << r.Dump();
  EXPECT_EQ(r.TraceCount("shutdown"), 1) << r.Dump();
  EXPECT_EQ(r.log.find("ending without it"), std::string::npos) << r.Dump();

  env["FAKE_CUDA_INIT_MS"] = "6000";
  env["BLASOFFLOAD_EXIT_WAIT_MS"] = "300";
  const Outcome bounded = RunProbe(env, script);
  EXPECT_TRUE(bounded.ExitedCleanly()) << bounded.Dump();
  EXPECT_LT(bounded.seconds, 3.0) << "exit waited past BLASOFFLOAD_EXIT_WAIT_MS\n" << bounded.Dump();
  EXPECT_EQ(bounded.TraceCount("init-end ok"), 0) << bounded.Dump();
  EXPECT_EQ(bounded.TraceCount("shutdown"), 0) << "shut down under a running init()\n" << bounded.Dump();
  EXPECT_NE(bounded.log.find("did not finish within 300 ms; ending without it"), std::string::npos) << bounded.Dump();
  EXPECT_NE(bounded.log.find("GPU: still starting (in the background)"), std::string::npos) << bounded.Dump();
}

// A GPU far slower than predicted (every fake call takes 200 ms more; the model expects well under a millisecond):
// the measurements move the bucket to the CPU within a few calls (the first GPU call of a class is not learned from:
// one-time costs), and the bounded exploration spends at most a small share of the run trying the GPU again.
TEST_F(PolicyProcess, AdaptiveLeavesAGpuFarSlowerThanPredicted) {
  PolicyFile p = Good();
  Env env = PolicyEnv(p, "adaptive", "calls");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_CALL_MS"] = "200";
  env["BLASOFFLOAD_LOG"] = "calls";
  constexpr int kCalls = 40;
  // The first call starts the GPU in the background (at the lowest priority: a loaded machine may starve it), the
  // pause lets it come up before the rest.
  const Outcome r =
      RunProbe(env, Script("sgemm NN 192 192 192 sleep 1000 sgemm NN 192 192 192 x" + std::to_string(kCalls - 1)));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), std::size_t(kCalls)) << r.Dump();
  const long gpu = Count(r, "sgemm");
  EXPECT_GE(gpu, 2) << "the GPU was never tried (eager start, a model that prefers it)\n" << r.Dump();
  EXPECT_LE(gpu, 5) << "too many calls on a GPU measured 200 ms a call\n" << r.Dump();
  // After the GPU's last call, the CPU by the model (or the exploration's rare GPU try): never the GPU again for the
  // model's sake.
  std::size_t last_gpu = 0;
  for (std::size_t i = 0; i < r.calls.size(); ++i)
    if (r.calls[i].where == "gpu") last_gpu = i;
  EXPECT_LT(last_gpu, 10u) << r.Dump();
  for (std::size_t i = last_gpu + 1; i < r.calls.size(); ++i) {
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
    double cpu = 0, g = 0;
    ASSERT_TRUE(ModelNumbers(r.calls[i].reason, &cpu, &g)) << r.calls[i].text;
    EXPECT_GT(g, cpu) << "the GPU's corrected prediction should exceed the CPU's: " << r.calls[i].text;
  }
  EXPECT_TRUE(std::regex_search(r.log, std::regex("adaptive: [0-9]+ CPU and [0-9]+ GPU calls learned from")))
      << r.Dump();
}

// Calls above the floor that the model gives the CPU by far (sgemm n = 16: about 16 us on this file's slow CPU
// against at least the 50 us GPU call): calls alike are then taken to the CPU without the model, one in 32 decided in
// full; each is logged with the numbers it was remembered with, and the summary counts them.
TEST_F(PolicyProcess, CallsTheModelGaveTheCpuByFarSkipTheModel) {
  Env env = PolicyEnv(Good(), "adaptive", "calls");
  const Outcome r = RunProbe(env, Script("sgemm NN 16 16 16 x40"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), 40u) << r.Dump();
  for (const CallLine& c : r.calls) {
    EXPECT_EQ(c.where, "cpu") << c.text;
    double cpu = 0, gpu = 0;
    ASSERT_TRUE(ModelNumbers(c.reason, &cpu, &gpu)) << "not decided by the model (above the floor?): " << c.text;
    EXPECT_GE(gpu, 2 * cpu) << c.text;
  }
  // 40 calls: the 1st and the 33rd decided in full, the other 38 from memory.
  EXPECT_NE(r.log.find("  38 calls taken to the CPU without the model"), std::string::npos) << r.Dump();
  EXPECT_EQ(r.TraceCount("load"), 0) << "no call was worth starting the GPU for\n" << r.Dump();
}

// Not where a device copy of an operand may come to pay: a 1100 x 1100 sgemv (4.8 MB) the model gives the CPU by far
// is decided in full every time (the module counts the uses of a residency candidate only in the model's queries),
// a 400 x 400 one (640 KB) from memory.
TEST_F(PolicyProcess, CallsWithAMatrixADeviceCopyCouldServeAreAlwaysModelled) {
  PolicyFile p = Good();
  p.cpu_gbs = 30;  // sgemv 400^2 about 21 us, 1100^2 about 160 us on the CPU
  p.link_gbs = 5;  // the GPU at least 50 us plus the matrix at 5 GB/s: over twice the CPU's time at both sizes
  Env env = PolicyEnv(p, "adaptive", "summary");
  const Outcome r = RunProbe(env, Script("sgemv N 400 400 x40  sgemv N 1100 1100 x40"));
  ExpectProbePassed(r);
  EXPECT_NE(r.log.find("  38 calls taken to the CPU without the model"), std::string::npos) << r.Dump();
  const std::vector<long> row = r.SummaryRow("sgemv");
  ASSERT_EQ(row.size(), 5u) << r.Dump();
  EXPECT_EQ(row[0], 80) << r.Dump();
  EXPECT_EQ(row[1], 80) << "every call on the CPU\n" << r.Dump();
}

// A clean residency candidate (the fake module: its copy made at 0.5 ns a byte) is credited what the model moves for
// it, and charged its copy's making shared over its reuses: after one reuse that costs more than staging the matrix
// (Good()'s link: 25 GB/s staged), after a thousand it is almost free; a triangle's credit is its elements, half a
// square's.
TEST_F(PolicyProcess, ResidencyCreditChargesTheCopySharedOverItsReuses) {
  auto gpu_ms = [&](const std::string& reuses, double* gemv, double* trsv) {
    Env env = PolicyEnv(Good(), "frozen");
    if (!reuses.empty()) env["FAKE_CUDA_RESIDENT"] = reuses;
    const Outcome r = RunProbe(env, Script("sgemv N 1100 1100  strsv LNN 1100"));
    ExpectProbePassed(r);
    ASSERT_EQ(r.calls.size(), 2u) << r.Dump();
    double cpu = 0;
    ASSERT_TRUE(ModelNumbers(r.calls[0].reason, &cpu, gemv)) << r.calls[0].text;
    ASSERT_TRUE(ModelNumbers(r.calls[1].reason, &cpu, trsv)) << r.calls[1].text;
  };
  double gemv0 = 0, trsv0 = 0, gemv1 = 0, trsv1 = 0, gemvk = 0, trsvk = 0;
  gpu_ms("", &gemv0, &trsv0);
  gpu_ms("1", &gemv1, &trsv1);
  gpu_ms("1000", &gemvk, &trsvk);
  // One reuse: half of 2.4 ms of copy-making against 0.19 ms (sgemv's matrix) or 0.1 ms (the triangle) staged.
  EXPECT_GT(gemv1, gemv0 + 0.5) << "a fresh copy was taken for cheaper than staging the matrix";
  EXPECT_GT(trsv1, trsv0 + 0.5) << "a fresh copy was taken for cheaper than staging the triangle";
  // A thousand: the matrix's transfer is spared, the triangle's half of it (less 2.4 us of copy-making each).
  const double gemv_drop = gemv0 - gemvk, trsv_drop = trsv0 - trsvk;
  EXPECT_GT(gemv_drop, 0.15);
  EXPECT_NEAR(trsv_drop, 0.5 * gemv_drop - 0.0012, 0.004) << "the triangle was credited more or less than it moves";
}

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
  // sgemm 512^3 moves 4 MiB: 800 ms over a 0.01 GB/s link, staged twice; the CPU at 0.335 GFLOP/s takes 800 ms.
  p.link_gbs = 0.01;
  p.call_overhead_us = 50;
  p.cpu_gflops = 0.335;
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
  p.init_ms = 20;  // the start-up (which fails) is tried within the first calls, before the pause
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
