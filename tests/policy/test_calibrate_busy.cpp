// blasoffload-calibrate on a busy machine: beside another process's threaded OpenBLAS (busy_blas), the tool used to
// write rates hundreds to thousands of times too low, which every later program trusted. It now notices the other
// process's CPU time, waits, stops, and writes nothing: a file already there stays as it was.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "policy/calibration.h"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// busy_blas on OpenBLAS with as many threads as the machine has CPUs, for at most `seconds`; killed by the destructor.
class BusyProcess {
 public:
  explicit BusyProcess(int seconds) {
    const std::string threads = std::to_string(std::max(2L, sysconf(_SC_NPROCESSORS_ONLN)));
    pid_ = fork();
    if (pid_ == 0) {
      setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 1);
      execl(BO_BUSY_BLAS, BO_BUSY_BLAS, BO_OPENBLAS, std::to_string(seconds).c_str(), (char*)nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // its threads up and spinning
  }
  ~BusyProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
};

TEST(CalibrateBesideABusyProcess, WritesNothingAndKeepsTheOldFile) {
  if (access(BO_OPENBLAS, R_OK) != 0) GTEST_SKIP() << "no OpenBLAS at " << BO_OPENBLAS;
  char dir[] = "/tmp/bo-busy-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string kept = std::string(dir) + "/kept.json", fresh = std::string(dir) + "/fresh.json",
                    log = std::string(dir) + "/log";
  std::ofstream(kept) << "a calibration made earlier\n";
  const auto t0 = std::chrono::steady_clock::now();
  int status = -1;
  {
    BusyProcess busy(120);
    ASSERT_TRUE(busy.running());
    for (const std::string& out : {kept, fresh}) {
      const std::string cmd = std::string(BO_CALIBRATE) + " --quick --no-gpu --cpu-blas=" + BO_REF_BLAS +
                              " --lapack=" + BO_REF_LAPACK + " --out=" + out + " 2>" + log;
      status = std::system(cmd.c_str());
      ASSERT_TRUE(WIFEXITED(status)) << slurp(log);
      EXPECT_EQ(WEXITSTATUS(status), 3) << slurp(log);
      EXPECT_NE(slurp(log).find("the machine was busy (other processes"), std::string::npos) << slurp(log);
      EXPECT_NE(slurp(log).find("nothing written"), std::string::npos) << slurp(log);
    }
    EXPECT_TRUE(busy.running()) << "the busy process ended early: the test measured nothing beside it";
  }
  // It gives up within the wait it allows itself (10 s) and a few disturbed points, not after a whole calibration.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60);
  EXPECT_EQ(slurp(kept), "a calibration made earlier\n");
  EXPECT_NE(access(fresh.c_str(), F_OK), 0) << slurp(fresh);
  std::system(("rm -rf " + std::string(dir)).c_str());
}

}  // namespace
