// A test's scratch directory for the programs it starts: home/ and xdg/ (their HOME and XDG_CONFIG_HOME) and an empty
// config file, kept when the test failed (to read what the programs wrote), removed otherwise. Shared by the policy
// process tests and the auto-calibration tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
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

}  // namespace bo_policy_test
