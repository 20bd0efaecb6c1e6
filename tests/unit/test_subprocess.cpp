// Whole-process behaviour, each case in a subprocess running blas_probe under LD_PRELOAD: a missing CPU
// BLAS (none in the process nor on the system) aborts with a message naming BLASOFFLOAD_CPU_BLAS (never a segfault);
// the config file is read and the environment overrides it; invalid values are reported.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Outcome {
  int signal = 0;
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the probe with a clean BLASOFFLOAD_* environment plus `env` ("K=V K2=V2").
Outcome run_probe(const std::string& env) {
  std::string cmd =
      "env -u BLASOFFLOAD_CPU_BLAS -u BLASOFFLOAD_MODE -u BLASOFFLOAD_LOG -u BLASOFFLOAD_LOG_FILE -u "
      "BLASOFFLOAD_CONFIG -u BLASOFFLOAD_POLICY_FILE XDG_CONFIG_HOME=/nonexistent/blasoffload-tests "
      "LD_PRELOAD=" BLASOFFLOAD_LIB_PATH " " +
      env + " " BLAS_PROBE " 2>&1; echo \"exit=$?\"";
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), p)) o.output += buf.data();
  pclose(p);
  // The shell reports a child killed by a signal as 128 + signal.
  auto pos = o.output.rfind("exit=");
  if (pos != std::string::npos) {
    o.exit_code = std::stoi(o.output.substr(pos + 5));
    if (o.exit_code > 128) o.signal = o.exit_code - 128;
    o.output.erase(pos);
  }
  return o;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/blasoffload_" + std::to_string(getpid()) + "_" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kRefBlas = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3";

TEST(NoCpuBlas, AbortsWithMessageNamingTheVariable) {
  // A system root with nothing in it: the library finds no CPU BLAS of the system's to load either.
  Outcome o = run_probe("BLASOFFLOAD_TEST_CPU_LIBRARY_ROOT=/nonexistent/root");
  EXPECT_EQ(o.signal, SIGABRT) << o.output;
  EXPECT_NE(o.output.find("BLASOFFLOAD_CPU_BLAS"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("returned"), std::string::npos);
}

TEST(NoCpuBlas, UnloadableNamedLibraryAborts) {
  Outcome o = run_probe("BLASOFFLOAD_CPU_BLAS=/nonexistent/libblas.so");
  EXPECT_EQ(o.signal, SIGABRT) << o.output;
  EXPECT_NE(o.output.find("BLASOFFLOAD_CPU_BLAS=/nonexistent/libblas.so"), std::string::npos) << o.output;
}

TEST(Config, FileIsReadAndEnvironmentWins) {
  const std::string conf = temp_path("conf"), log = temp_path("log");
  std::ofstream(conf) << "# test config\nmode = cpu\nBLASOFFLOAD_LOG=summary\ncpu_blas = " << kRefBlas
                      << "\nLOG_FILE=" << log << "\n";
  std::remove(log.c_str());
  Outcome o = run_probe("BLASOFFLOAD_CONFIG=" + conf);
  ASSERT_EQ(o.exit_code, 0) << o.output;  // the named CPU BLAS computed C
  std::string summary = slurp(log);
  EXPECT_NE(summary.find("mode cpu"), std::string::npos) << summary;
  EXPECT_NE(summary.find("CPU BLAS: " + kRefBlas), std::string::npos) << summary;
  EXPECT_NE(summary.find("total: 1 calls intercepted"), std::string::npos) << summary;

  std::remove(log.c_str());
  o = run_probe("BLASOFFLOAD_CONFIG=" + conf + " BLASOFFLOAD_LOG=off");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(slurp(log), "") << "BLASOFFLOAD_LOG=off in the environment must override the file";
  std::remove(conf.c_str());
  std::remove(log.c_str());  // opened (empty) all the same: warnings go to the file at any level
}

TEST(Config, InvalidValuesAreReportedAndIgnored) {
  Outcome o = run_probe("BLASOFFLOAD_CPU_BLAS=" + kRefBlas + " BLASOFFLOAD_MODE=fastest BLASOFFLOAD_LOG=loud");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("BLASOFFLOAD_MODE=fastest is not one of auto|cpu|gpu"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("BLASOFFLOAD_LOG=loud is not one of"), std::string::npos) << o.output;
}

TEST(Config, MissingExplicitConfigFileIsReported) {
  Outcome o = run_probe("BLASOFFLOAD_CPU_BLAS=" + kRefBlas + " BLASOFFLOAD_CONFIG=/nonexistent.conf");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("BLASOFFLOAD_CONFIG=/nonexistent.conf cannot be read"), std::string::npos) << o.output;
}

TEST(Silence, AutoModeWithoutGpuPrintsNothing) {
  Outcome o = run_probe("BLASOFFLOAD_CPU_BLAS=" + kRefBlas);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.output.find("blasoffload"), std::string::npos) << o.output;
}

}  // namespace
