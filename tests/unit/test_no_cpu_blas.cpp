// In a subprocess: with no CPU BLAS anywhere, or a BLASOFFLOAD_CPU_BLAS that cannot be loaded, the call
// ends in one clear message naming the variable and abort() (SIGABRT), never a segfault.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Outcome {
  int signal = 0;
  int exit_code = -1;
  std::string stderr_text;
};

Outcome run_probe(const std::string& extra_env) {
  std::string cmd = "env -u BLASOFFLOAD_CPU_BLAS LD_PRELOAD=" BLASOFFLOAD_LIB_PATH " " + extra_env +
                    " " NO_CPU_BLAS_PROBE " 2>&1 >/dev/null";
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), p)) o.stderr_text += buf.data();
  int st = pclose(p);
  // The shell reports a child killed by a signal as exit status 128 + signal.
  if (WIFEXITED(st)) {
    o.exit_code = WEXITSTATUS(st);
    if (o.exit_code > 128) o.signal = o.exit_code - 128;
  } else if (WIFSIGNALED(st)) {
    o.signal = WTERMSIG(st);
  }
  return o;
}

TEST(NoCpuBlas, AbortsWithMessageNamingTheVariable) {
  Outcome o = run_probe("");
  EXPECT_EQ(o.signal, SIGABRT) << o.stderr_text;
  EXPECT_NE(o.stderr_text.find("BLASOFFLOAD_CPU_BLAS"), std::string::npos) << o.stderr_text;
  EXPECT_EQ(o.stderr_text.find("unexpected"), std::string::npos);
}

TEST(NoCpuBlas, UnloadableNamedLibraryAborts) {
  Outcome o = run_probe("BLASOFFLOAD_CPU_BLAS=/nonexistent/libblas.so");
  EXPECT_EQ(o.signal, SIGABRT) << o.stderr_text;
  EXPECT_NE(o.stderr_text.find("BLASOFFLOAD_CPU_BLAS=/nonexistent/libblas.so"), std::string::npos) << o.stderr_text;
}

}  // namespace
