// A test's scratch directory for the programs it starts: home/ and xdg/ (their HOME and XDG_CONFIG_HOME) and an empty
// config file, kept when the test failed (to read what the programs wrote), removed otherwise; and the environment
// those programs get. Shared by the policy process tests and the auto-calibration tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace bo_policy_test {

// Makes <TempDir>/<prefix>-XXXXXX with home/, xdg/ and empty.conf in it; "" (and a test failure) when it cannot.
inline std::string MakeScratchHome(const std::string& prefix) {
  std::string t = ::testing::TempDir();
  if (t.empty() || t.back() != '/') t += '/';
  t += prefix + "-XXXXXX";
  if (!mkdtemp(t.data())) {
    ADD_FAILURE() << "mkdtemp " << t;
    return "";
  }
  EXPECT_EQ(mkdir((t + "/home").c_str(), 0755), 0);
  EXPECT_EQ(mkdir((t + "/xdg").c_str(), 0755), 0);
  std::ofstream(t + "/empty.conf").flush();
  return t;
}

// Keeps the directory if the test failed (and says where), removes it otherwise.
inline void DropScratchHome(const std::string& dir, bool failed) {
  if (dir.empty()) return;
  if (failed)
    std::printf("(files kept in %s)\n", dir.c_str());
  else if (std::system(("rm -rf '" + dir + "'").c_str()) != 0)
    std::printf("(could not remove %s)\n", dir.c_str());
}

// The environment of a program a test starts with its scratch home `dir`: nothing inherited, so a developer's
// BLASOFFLOAD_*, config and policy files or LD_PRELOAD cannot leak in; `library` preloaded over the reference BLAS of
// `ref_blas_dir`, and `fake_module` standing in for the GPU (unless a test removes it). Tests add their own settings.
inline std::map<std::string, std::string> HermeticEnv(const std::string& dir, const char* ref_blas_dir,
                                                      const char* library, const char* fake_module) {
  return {{"PATH", "/usr/bin:/bin"},
          {"HOME", dir + "/home"},
          {"XDG_CONFIG_HOME", dir + "/xdg"},
          {"LD_LIBRARY_PATH", ref_blas_dir},
          {"LD_PRELOAD", library},
          {"BLASOFFLOAD_CONFIG", dir + "/empty.conf"},
          {"BLASOFFLOAD_CUDA_MODULE", fake_module}};
}

}  // namespace bo_policy_test
