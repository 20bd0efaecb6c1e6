// The summary (BLASOFFLOAD_LOG=summary) counts the complex calls under their own names ("zgemm", "scnrm2", "cherk",
// "cgetrf" ...): complex_probe makes a known set of calls in a subprocess under LD_PRELOAD, and every row's calls, CPU
// runs and errors must be exactly those.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

struct Row {
  long calls = -1, cpu = -1, gpu = -1, fallback = -1, errors = -1;
};
struct Summary {
  std::map<std::string, Row> rows;
  long total = -1;
  std::string text;
};

const std::string kRefBlas = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3";
const std::string kRefLapack = "/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3";

// Runs the probe's call set `what` in cpu mode with a clean BLASOFFLOAD_* environment; returns its summary, parsed.
Summary run_probe(const std::string& what) {
  const std::string log =
      ::testing::TempDir() + "/blasoffload_complex_" + std::to_string(getpid()) + "_" + what + ".log";
  std::remove(log.c_str());
  const std::string cmd =
      "env -u BLASOFFLOAD_CPU_BLAS -u BLASOFFLOAD_CPU_LAPACK -u BLASOFFLOAD_MODE -u BLASOFFLOAD_LOG -u "
      "BLASOFFLOAD_LOG_FILE -u BLASOFFLOAD_CONFIG -u BLASOFFLOAD_POLICY_FILE -u BLASOFFLOAD_SUMMARY_ROUTINES "
      "XDG_CONFIG_HOME=/nonexistent/blasoffload-tests LD_PRELOAD=" BLASOFFLOAD_LIB_PATH " BLASOFFLOAD_CPU_BLAS=" +
      kRefBlas + " BLASOFFLOAD_CPU_LAPACK=" + kRefLapack + " BLASOFFLOAD_MODE=cpu BLASOFFLOAD_LOG=summary " +
      "BLASOFFLOAD_LOG_FILE=" + log + " " COMPLEX_PROBE " " + what + " 2>&1";
  std::string output;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    std::array<char, 512> buf;
    while (fgets(buf.data(), buf.size(), p)) output += buf.data();
    EXPECT_EQ(pclose(p), 0) << output;
  }
  EXPECT_NE(output.find("probe: done"), std::string::npos) << output;
  Summary s;
  std::ifstream in(log);
  std::stringstream all;
  all << in.rdbuf();
  s.text = all.str();
  std::remove(log.c_str());
  std::istringstream lines(s.text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::string first;
    f >> first;
    if (first == "total:") {
      f >> s.total;
      continue;
    }
    Row r;
    if (f >> r.calls >> r.cpu >> r.gpu >> r.fallback >> r.errors) s.rows[first] = r;
  }
  return s;
}

// Row `name` reads calls / cpu / errors as given, none on the GPU, no fallbacks.
void expect_row(const Summary& s, const std::string& name, long calls, long cpu, long errors) {
  SCOPED_TRACE(name + "\n" + s.text);
  const auto it = s.rows.find(name);
  ASSERT_TRUE(it != s.rows.end()) << "no summary row for " << name;
  EXPECT_EQ(it->second.calls, calls);
  EXPECT_EQ(it->second.cpu, cpu);
  EXPECT_EQ(it->second.gpu, 0);
  EXPECT_EQ(it->second.fallback, 0);
  EXPECT_EQ(it->second.errors, errors);
}

// Per precision: gemm a valid, an invalid and a quick-return Fortran call and a row-major CBLAS call; gemv a Fortran
// and a column-major ConjTrans CBLAS call; trsv a valid and an invalid one; trsm one; syrk a valid one and trans C
// (invalid); herk a valid one, trans T (invalid) and a row-major CBLAS call; the norm a valid call, incx < 0 (a quick
// return the CPU library answers) and a CBLAS call. Calls = CPU runs + errors + quick returns.
TEST(ComplexSummary, BlasCallsAreCountedUnderTheirNames) {
  const Summary s = run_probe("blas");
  for (const std::string p : {"c", "z"}) {
    expect_row(s, p + "gemm", 4, 2, 1);
    expect_row(s, p + "gemv", 2, 2, 0);
    expect_row(s, p + "trsv", 2, 1, 1);
    expect_row(s, p + "trsm", 1, 1, 0);
    expect_row(s, p + "syrk", 2, 1, 1);
    expect_row(s, p + "herk", 3, 2, 1);
  }
  expect_row(s, "scnrm2", 3, 2, 0);
  expect_row(s, "dznrm2", 3, 2, 0);
  EXPECT_EQ(s.rows.size(), 14u) << s.text;
  EXPECT_EQ(s.total, 34) << s.text;
}

// Per precision: getrf a valid and an invalid call, every other routine one call. The CPU LAPACK's own BLAS calls
// (its gemm, trsm, herk) show in other rows; its calls of its own LAPACK routines (gesv's getrf) are not counted again.
TEST(ComplexSummary, LapackCallsAreCountedUnderTheirNames) {
  const Summary s = run_probe("lapack");
  for (const std::string p : {"c", "z"}) {
    expect_row(s, p + "getrf", 2, 1, 1);
    for (const char* r : {"getrs", "gesv", "potrf", "potrs", "posv", "trtrs"}) expect_row(s, p + r, 1, 1, 0);
  }
}

// A valid row-major ConjTrans cblas_cgemv / cblas_ztrsv is intercepted (and run by the CPU CBLAS, no column-major call
// expressing it): it counts as a cgemv / ztrsv call on the CPU like every other.
TEST(ComplexSummary, RowMajorConjTransCallsAreCounted) {
  const Summary s = run_probe("rowconj");
  expect_row(s, "cgemv", 1, 1, 0);
  expect_row(s, "ztrsv", 1, 1, 0);
  EXPECT_EQ(s.total, 2) << s.text;
}

}  // namespace
