// The policy process tests' common part (test_policy_process_*.cpp): the fixture that runs policy_probe in a child
// process with a clean environment, writes policy files and parses the library's log, and the reasons it checks.
//
// The offload policy end to end, in whole processes on a machine without a GPU: policy_probe runs scripted BLAS calls
// under LD_PRELOAD=libblasoffload.so with the fake CUDA module (fake_module.c) as the GPU, and each test checks the
// decision and reason of every call (BLASOFFLOAD_LOG=calls), what reached the module (its counts and trace files),
// the warnings, and that every result was right (the probe checks them itself).
//
// Policy files are written per test. "Good" files make the CPU slow (0.5 GFLOP/s, 0.5 GB/s) and the link fast, so
// that the calls called large here are GPU-worthy by a factor of 20 or more and the tiny ones lose to the per-call
// overhead by as much; assertions stay away from the crossovers, floors and margins the implementation may tune.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "scratch_home.h"

// Named, not anonymous: GoogleTest requires the one PolicyProcess fixture type in every file that uses it.
namespace bo_policy_process {

inline constexpr const char* kLibrary = BO_LIBRARY;          // libblasoffload.so
inline constexpr const char* kFakeModule = BO_FAKE_MODULE;   // libblasoffload_fake_cuda.so
inline constexpr const char* kProbe = BO_PROBE;              // policy_probe
inline constexpr const char* kRefBlasDir = BO_REF_BLAS_DIR;  // pinned: Debian's alternatives may point at OpenBLAS
inline constexpr const char* kFakeGpuName = "fake GPU (blasoffload tests)";  // what fake_module.c's measure() reports
inline constexpr int kChildTimeoutS = 40;

using Env = std::map<std::string, std::string>;

inline std::string Slurp(const std::string& path, bool* exists = nullptr) {
  std::ifstream in(path);
  if (exists) *exists = bool(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A probe script written as one string of whitespace-separated steps (see policy_probe.c).
inline std::vector<std::string> Script(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// One BLASOFFLOAD_LOG=calls line: "blasoffload: sgemm(NN m=8 n=8 k=8) -> cpu [small], took 0.001 ms", a GPU call's
// ending ", took 48.7 ms (40.000 ms of it one-time)" when the module reported one-time costs, and "; deciding took
// 0.120 ms" when the decision itself took 50 us or more (route.h).
struct CallLine {
  std::string routine, args, where, reason, text;
  bool fell_back = false;
};

inline std::vector<CallLine> ParseCalls(const std::string& log) {
  static const std::regex re(
      R"(^blasoffload: (sgemm|sgemv|strsv|snrm2|strsm|ssyrk)\((.*)\) -> (cpu|gpu) \[(.*)\])"
      R"((, GPU failed: fell back)?, took [0-9.]+ ms( \([0-9.]+ ms of it one-time\))?(; deciding took [0-9.]+ ms)?$)");
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
  std::map<std::string, double> scale;  // classes whose rate is this many times the flat one (a disturbed class)

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
    auto times = [&](const char* c) { return scale.count(c) ? scale.at(c) : 1.0; };
    for (const char* c : flops_classes)
      j << "      \"" << c << "\": " << flat(cpu_gflops * times(c), 1e3, 1e13) << ",\n";
    for (const char* c : byte_classes)
      j << "      \"" << c << "\": " << flat(cpu_gbs * times(c), 1e2, 1e11) << (std::strcmp(c, "snrm2") ? ",\n" : "\n");
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
inline const std::string kModel = R"(^model: cpu [0-9.]+ ms, gpu [0-9.]+ ms$)";
// Any decision of the adaptive model once the GPU is up: its own, a hybrid split, or the bounded exploration.
inline const std::string kModelAny = R"(^(exploring the other side; )?model: cpu [0-9.]+ ms, (gpu|hybrid) [0-9.]+ ms)";
// A tiny call stays on the CPU either before the model (below the floor) or by it.
inline const std::string kTiny = R"(^(small|model: cpu [0-9.]+ ms, gpu [0-9.]+ ms)$)";
inline const std::string kNoGpu = "^no GPU$";
inline const std::string kInitialising = R"(^GPU initialising; model: cpu [0-9.]+ ms, gpu [0-9.]+ ms$)";
inline const std::regex kAmortising(
    R"(^amortising init \(([0-9.]+) of ([0-9.]+) ms\); model: cpu ([0-9.]+) ms, gpu ([0-9.]+) ms$)");
inline std::string Mode(const std::string& m) { return "^mode " + m + "$"; }
inline std::string MinSize(int size, const char* op, int min) {
  return "^min-size " + std::to_string(size) + " " + op + " " + std::to_string(min) + "$";
}

inline bool ModelNumbers(const std::string& reason, double* cpu_ms, double* gpu_ms) {
  static const std::regex re(R"(model: cpu ([0-9.]+) ms, gpu ([0-9.]+) ms$)");
  std::smatch m;
  if (!std::regex_search(reason, m, re)) return false;
  *cpu_ms = std::stod(m[1]);
  *gpu_ms = std::stod(m[2]);
  return true;
}

// The GPU side the model predicted for a run's last call, in ms (-1 when the run has no such call).
inline double LastGpuMs(const Outcome& r) {
  double cpu_ms = 0, gpu_ms = -1;
  if (!r.calls.empty()) EXPECT_TRUE(ModelNumbers(r.calls.back().reason, &cpu_ms, &gpu_ms)) << r.calls.back().text;
  return gpu_ms;
}

struct Expect {
  std::string where, reason;  // reason: a regex
  int times = 1;
};

class PolicyProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = bo_policy_test::MakeScratchHome("bo-policy-process");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { bo_policy_test::DropScratchHome(dir_, HasFailure()); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // The child's whole environment: nothing inherited, so a developer's BLASOFFLOAD_*, config and policy files or
  // LD_PRELOAD cannot leak in. The module is the fake unless a test removes it.
  Env BaseEnv() const { return bo_policy_test::HermeticEnv(dir_, kRefBlasDir, kLibrary, kFakeModule); }
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

  // The adaptive tests' program under `env` (eager start, every call logged): one sgemm n = 192 starts the GPU in the
  // background (at the lowest priority: a loaded machine may starve it), a pause lets it come up, then `calls` - 1
  // more.
  // `script` under policy file `p` and `decisions`, the GPU started eagerly, the fake reporting `link` from its
  // start-up measurement (FAKE_CUDA_LINK_GBS) and, unless empty, the rate of the program's timed uploads
  // (FAKE_CUDA_STAGED_SEEN): the link tests' run, expected to log `calls` calls.
  Outcome RunWithLink(const PolicyFile& p, const std::vector<std::string>& script, const char* link, const char* seen,
                      const char* decisions, std::size_t calls) {
    Env env = PolicyEnv(p, decisions);
    env["BLASOFFLOAD_STARTUP"] = "eager";
    env["FAKE_CUDA_LINK_GBS"] = link;
    if (*seen) env["FAKE_CUDA_STAGED_SEEN"] = seen;
    const Outcome r = RunProbe(env, script);
    ExpectProbePassed(r);
    EXPECT_EQ(r.calls.size(), calls) << r.Dump();
    return r;
  }

  Outcome RunEagerSgemms(Env env, int calls) {
    env["BLASOFFLOAD_STARTUP"] = "eager";
    env["BLASOFFLOAD_LOG"] = "calls";
    const Outcome r =
        RunProbe(env, Script("sgemm NN 192 192 192 sleep 1000 sgemm NN 192 192 192 x" + std::to_string(calls - 1)));
    ExpectProbePassed(r);
    EXPECT_EQ(r.calls.size(), std::size_t(calls)) << r.Dump();
    return r;
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
    if (cpu_.library.empty()) cpu_ = CpuUnder(BaseEnv());
    return cpu_;
  }
  // The identity the library reports for the CPU BLAS a program under `env` finds.
  CpuId CpuUnder(Env env) {
    env["BLASOFFLOAD_MODE"] = "cpu";
    env["BLASOFFLOAD_LOG"] = "summary";
    const Outcome r = RunProbe(env, Script("snrm2 4"));
    CpuId id;
    std::smatch m;
    if (std::regex_search(r.log, m, std::regex("\n  CPU BLAS: ([^\n]+)\n"))) id.library = m[1];
    if (std::regex_search(r.log, m, std::regex("\n  CPU BLAS reports: ([^\n]+)\n"))) id.report = m[1];
    EXPECT_FALSE(id.library.empty()) << "no 'CPU BLAS:' line in the summary\n" << r.Dump();
    return id;
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

// Tiny and large sgemm, sgemv, strsv and snrm2 calls, shared by the decision, override and policy file tests.
inline const std::vector<std::string> kMixedScript = Script(
    // tiny: lose to a 50 us call overhead by far
    "sgemm NN 8 8 8 x3  sgemm NT 12 10 9 beta=0  sgemv N 16 16  strsv LNN 8  snrm2 16 "
    // large: the CPU needs 20 to 1500 times what the GPU is predicted to
    "sgemm NN 384 384 384 x2  sgemm TN 300 200 250 pad=3  sgemm NT 256 300 200 beta=0  "
    "sgemm TT 320 320 320 alpha=-1 cblas  sgemv N 2000 2000 x2  sgemv T 1500 2000 inc=2 incy=-3 pad=5  "
    "strsv LNN 3000  strsv UTU 2000 inc=-2  snrm2 4000000 x2  snrm2 1000000 inc=3 "
    // tiny again, after the GPU is up: still the CPU
    "sgemm NN 8 8 8  snrm2 16");
inline constexpr std::size_t kMixedCalls = 22;

}  // namespace bo_policy_process
