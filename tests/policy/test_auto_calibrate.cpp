// Auto-calibration end to end on a machine without a GPU: policy_probe runs under LD_PRELOAD=libblasoffload.so with
// no policy file for its CPU BLAS at the default path, and the library must start blasoffload-calibrate --auto
// (--quick through a test knob) in the background, once per path, detached, writing the default path only, so that
// the next run uses the file. Each test has its own XDG_CONFIG_HOME; the probe's own run never waits for the tool.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scratch_home.h"

namespace {

constexpr const char* kLibrary = BO_LIBRARY;
constexpr const char* kFakeModule = BO_FAKE_MODULE;
constexpr const char* kProbe = BO_PROBE;
constexpr const char* kRefBlasDir = BO_REF_BLAS_DIR;
constexpr const char* kFakeGpuName = "fake GPU (blasoffload tests)";
constexpr int kChildTimeoutS = 30;
// The background tool with --quick takes a few seconds on 2 cores (these tests run serially, so its lowest priority
// does not starve it).
constexpr int kFileTimeoutS = 45;
const std::string kStarted = "auto-calibration started in the background (pid ";

using Env = std::map<std::string, std::string>;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool WaitFor(const std::function<bool()>& done, int seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

struct ProbeRun {
  pid_t pid = -1;
  std::string tag;
  int exit_code = -1;
  double seconds = 0;
  std::string err, log;
};

class AutoCalibrate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = bo_policy_test::MakeScratchHome("bo-auto-calibrate");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    // A tool still measuring would write into the removed directory: give it its time first.
    WaitFor([&] { return !Busy(); }, kFileTimeoutS);
    bo_policy_test::DropScratchHome(dir_, HasFailure());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string DefaultFile() const { return Path("xdg/blasoffload/policy.json"); }

  // Nothing inherited from the developer's environment; the fake module stands in for the GPU unless removed.
  Env BaseEnv() const {
    Env env = bo_policy_test::HermeticEnv(dir_, kRefBlasDir, kLibrary, kFakeModule);
    env["BLASOFFLOAD_LOG"] = "summary";
    env["BLASOFFLOAD_TEST_AUTO_CALIBRATE_QUICK"] = "on";
    return env;
  }

  ProbeRun Start(Env env, std::vector<std::string> steps = {"snrm2", "4"}) {
    ProbeRun r;
    r.tag = Path("run" + std::to_string(++runs_));
    if (env.count("BLASOFFLOAD_LOG")) env["BLASOFFLOAD_LOG_FILE"] = r.tag + ".log";
    std::vector<std::string> envs, args = {kProbe};
    args.insert(args.end(), steps.begin(), steps.end());
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    for (auto& e : envs) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    r.pid = fork();
    if (r.pid == 0) {
      const int out = open((r.tag + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open((r.tag + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in = open("/dev/null", O_RDONLY);
      if (out < 0 || err < 0 || in < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(in, 0) < 0) _exit(126);
      // A descriptor the program leaves open across exec: the background tool must not keep it.
      const int leak = open(Path("leak").c_str(), O_WRONLY | O_CREAT, 0644);
      if (leak < 0 || dup2(leak, 9) < 0) _exit(126);
      if (chdir(dir_.c_str()) != 0) _exit(126);
      execve(kProbe, argv.data(), envp.data());
      _exit(127);
    }
    return r;
  }
  void Finish(ProbeRun* r) {
    const auto t0 = std::chrono::steady_clock::now();
    int status = 0;
    for (;;) {
      if (waitpid(r->pid, &status, WNOHANG) == r->pid) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(kChildTimeoutS)) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, &status, 0);
        ADD_FAILURE() << "the probe timed out";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->err = Slurp(r->tag + ".err");
    r->log = Slurp(r->tag + ".log");
    EXPECT_EQ(r->exit_code, 0) << r->err << r->log;
  }
  ProbeRun RunProbe(const Env& env) {
    ProbeRun r = Start(env);
    Finish(&r);
    return r;
  }

  // A calibration is running for the default path: its lock is held (flock: the measuring process holds it).
  bool Busy() const {
    const int fd = open((DefaultFile() + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0;
    close(fd);
    return busy;
  }

  // The default file, once valid JSON written by the tool for the reference BLAS; null after the timeout.
  nlohmann::json WaitForFile(const std::string& path) {
    nlohmann::json j;
    const bool ok = WaitFor(
        [&] {
          if (Busy()) return false;
          j = nlohmann::json::parse(Slurp(path), nullptr, false);
          return !j.is_discarded() && j.is_object() && j.value("tool", "").rfind("blasoffload-calibrate", 0) == 0;
        },
        kFileTimeoutS);
    if (!ok) {
      ADD_FAILURE() << "no calibration at " << path << " after " << kFileTimeoutS << " s; tool log:\n"
                    << Slurp(path + ".auto.log");
      return nullptr;
    }
    return j;
  }

  static std::string Real(const std::string& p) {
    char buf[PATH_MAX];
    return realpath(p.c_str(), buf) ? buf : p;
  }
  static void ExpectForReferenceBlas(const nlohmann::json& j) {
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(Real(j["cpu"]["library"]), Real(std::string(kRefBlasDir) + "/libblas.so.3"));
    EXPECT_TRUE(j["cpu"]["rates"].contains("sgemm.square"));
    EXPECT_TRUE(j["cpu"]["rates"].contains("dgetrf"));
  }

  std::string dir_;
  int runs_ = 0;
};

TEST_F(AutoCalibrate, FirstRunStartsItDetachedAndTheNextRunUsesTheFile) {
  const ProbeRun first = RunProbe(BaseEnv());
  EXPECT_EQ(Count(first.log, kStarted), 2) << "the init line and the summary's policy line\n" << first.log;
  EXPECT_NE(first.log.find("results for the next run in " + DefaultFile()), std::string::npos) << first.log;
  EXPECT_LT(first.seconds, 3.0) << "the probe waited for the calibration";
  // The measuring process: not the probe's child, a session of its own, lowest priority, no inherited descriptor
  // but the lock (0-2 on /dev/null and the log).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.log, m, std::regex(R"(\(pid ([0-9]+),)")));
  const std::string pid = m[1];
  const std::string stat = Slurp("/proc/" + pid + "/stat");
  if (!stat.empty()) {  // still measuring
    std::istringstream in(stat.substr(stat.rfind(')') + 2));
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    ASSERT_GT(f.size(), 17u);
    EXPECT_NE(f[1], std::to_string(first.pid)) << "parent";  // ppid
    EXPECT_NE(f[3], std::to_string(getsid(0))) << "session";
    EXPECT_EQ(f[16], "19") << "nice";
    std::set<std::string> fds;
    if (const auto d = std::unique_ptr<FILE, int (*)(FILE*)>(
            popen(("ls /proc/" + pid + "/fd 2>/dev/null").c_str(), "r"), pclose)) {
      char line[64];
      while (fgets(line, sizeof line, d.get())) fds.insert(std::string(line, strcspn(line, "\n")));
    }
    if (!fds.empty()) EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2", "3"}));
  }
  const nlohmann::json j = WaitForFile(DefaultFile());
  ExpectForReferenceBlas(j);
  EXPECT_EQ(j["gpu"]["name"], kFakeGpuName) << "the GPU side through BLASOFFLOAD_CUDA_MODULE";
  const ProbeRun next = RunProbe(BaseEnv());
  EXPECT_NE(next.log.find("policy: " + DefaultFile() + " (measured "), std::string::npos) << next.log;
  EXPECT_EQ(next.log.find("auto-calibration"), std::string::npos) << next.log;
}

// The measuring waits for the program that started it to end: beside a busy CPU BLAS, even at the lowest priority, it
// cost the program's threaded calls a scheduler slice each.
TEST_F(AutoCalibrate, MeasuresOnlyOnceTheProgramHasEnded) {
  ProbeRun run = Start(BaseEnv(), {"snrm2", "4", "sleep", "2500", "snrm2", "4"});
  const std::string log = DefaultFile() + ".auto.log";
  ASSERT_TRUE(WaitFor([&] { return Slurp(log).find("waiting for the program (pid ") != std::string::npos; }, 10))
      << Slurp(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // a quick calibration takes a few seconds at most
  // Its first line after the wait names the CPU BLAS it loads (a path).
  EXPECT_EQ(Slurp(log).find("blasoffload-calibrate: /"), std::string::npos) << "measuring beside the program\n"
                                                                            << Slurp(log);
  EXPECT_TRUE(Slurp(DefaultFile()).empty()) << "written while the program ran";
  Finish(&run);
  ExpectForReferenceBlas(WaitForFile(DefaultFile()));
}

TEST_F(AutoCalibrate, ConcurrentFirstRunsStartExactlyOne) {
  std::vector<ProbeRun> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(Start(BaseEnv()));
  int started = 0;
  for (ProbeRun& r : runs) {
    Finish(&r);
    started += Count(r.log, kStarted) > 0;
  }
  EXPECT_EQ(started, 1);
  ExpectForReferenceBlas(WaitForFile(DefaultFile()));
  const ProbeRun later = RunProbe(BaseEnv());
  EXPECT_EQ(later.log.find("auto-calibration"), std::string::npos) << later.log;
}

TEST_F(AutoCalibrate, StaleFileForAnotherCpuBlasIsReplaced) {
  ASSERT_EQ(mkdir(Path("xdg/blasoffload").c_str(), 0755), 0);
  std::ofstream(DefaultFile()) << R"({"schema": "blasoffload-policy/1", "created": "2026-01-01T00:00:00Z",
    "tool": "test", "cpu": {"library": "/nonexistent/libother.so", "report": "",
    "rates": {"sgemm.square": [[1e6, 1]]}}, "gpu": null})";
  const ProbeRun first = RunProbe(BaseEnv());
  EXPECT_NE(first.log.find("is for another CPU BLAS"), std::string::npos) << first.log;
  EXPECT_EQ(Count(first.log, kStarted), 2) << first.log;
  ExpectForReferenceBlas(WaitForFile(DefaultFile()));
}

TEST_F(AutoCalibrate, CorruptFileIsReplaced) {
  ASSERT_EQ(mkdir(Path("xdg/blasoffload").c_str(), 0755), 0);
  std::ofstream(DefaultFile()) << "{ not json";
  const ProbeRun first = RunProbe(BaseEnv());
  EXPECT_NE(first.log.find("is corrupt"), std::string::npos) << first.log;
  EXPECT_EQ(Count(first.log, kStarted), 2) << first.log;
  ExpectForReferenceBlas(WaitForFile(DefaultFile()));
}

TEST_F(AutoCalibrate, OffStartsNothing) {
  Env env = BaseEnv();
  env["BLASOFFLOAD_AUTO_CALIBRATE"] = "off";
  const ProbeRun r = RunProbe(env);
  EXPECT_NE(r.log.find("built-in defaults"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("auto-calibration"), std::string::npos) << r.log;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(Exists(DefaultFile() + ".lock"));
  EXPECT_FALSE(Exists(DefaultFile()));
}

TEST_F(AutoCalibrate, AFileTheUserNamedIsNeverWritten) {
  const std::string foreign = R"({"schema": "blasoffload-policy/1", "created": "", "tool": "test",
    "cpu": {"library": "/nonexistent/libother.so", "report": "", "rates": {"sgemm.square": [[1e6, 1]]}}, "gpu": null})";
  std::ofstream(Path("named.json")) << foreign;
  for (const std::string& named : {Path("named.json"), Path("missing.json")}) {
    Env env = BaseEnv();
    env["BLASOFFLOAD_POLICY_FILE"] = named;
    const ProbeRun r = RunProbe(env);
    EXPECT_EQ(r.log.find("auto-calibration"), std::string::npos) << r.log;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Slurp(Path("named.json")), foreign);
  EXPECT_FALSE(Exists(Path("missing.json")));
  EXPECT_FALSE(Exists(Path("named.json.lock")));
  EXPECT_FALSE(Exists(DefaultFile()));
}

TEST_F(AutoCalibrate, WithoutGpuOnlyTheCpuSideAndNothingOnStderr) {
  if (Exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has NVIDIA device nodes";
  Env env = BaseEnv();
  env.erase("BLASOFFLOAD_CUDA_MODULE");
  env.erase("BLASOFFLOAD_LOG");
  const ProbeRun r = RunProbe(env);
  EXPECT_EQ(r.err, "") << "logging is off";
  const nlohmann::json j = WaitForFile(DefaultFile());
  ExpectForReferenceBlas(j);
  EXPECT_TRUE(j["gpu"].is_null());
  EXPECT_NE(Slurp(DefaultFile() + ".auto.log").find("--no-gpu"), std::string::npos);
}

TEST_F(AutoCalibrate, AFailedCalibrationIsNotRetriedAtEveryRun) {
  // A calibration that leaves no usable file (here: spoilt after it ran): the next run within the hour does not start
  // another.
  const Env env = BaseEnv();
  const ProbeRun first = RunProbe(env);
  ASSERT_EQ(Count(first.log, kStarted), 2) << first.log;
  WaitForFile(DefaultFile());
  std::ofstream(DefaultFile()) << "{ broken after the run";  // as if the tool had failed
  const ProbeRun second = RunProbe(env);
  EXPECT_EQ(Count(second.log, kStarted), 0) << second.log;
  EXPECT_NE(second.log.find("ran less than an hour ago"), std::string::npos) << second.log;
}

}  // namespace
