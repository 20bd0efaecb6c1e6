// The kernel keys (tuning/keys.h) and kernel_work (tuning/table.h): the work a table's rate is measured in, for the
// real and complex keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "tuning/keys.h"
#include "tuning/table.h"

namespace {

using bo::tuning::kernel_work;

TEST(Keys, OnePerRoutineKindAndTransposeInEveryPrecision) {
  std::set<std::string> names;
  for (int i = 0; i < bo::tuning::kKeyCount; ++i)
    if (const char* n = bo::tuning::key_name(i)) {
      names.insert(n);
      EXPECT_EQ(bo::tuning::find_key(n), i) << n;
      // The name is the routine's, plus the transpose's suffix for gemv and trsv.
      EXPECT_EQ(std::string(n).rfind(bo_routine_name(bo::tuning::key_routine(i)), 0), 0u) << n;
    } else {
      EXPECT_EQ(bo::tuning::key_routine(i), -1) << i;
    }
  EXPECT_EQ(names, (std::set<std::string>{"snrm2",   "sgemv_n", "sgemv_t", "strsv_n", "strsv_t", "sgemm",   "strsm",
                                          "ssyrk",   "dnrm2",   "dgemv_n", "dgemv_t", "dtrsv_n", "dtrsv_t", "dgemm",
                                          "dtrsm",   "dsyrk",   "scnrm2",  "cgemv_n", "cgemv_t", "ctrsv_n", "ctrsv_t",
                                          "cgemm",   "ctrsm",   "csyrk",   "cherk",   "dznrm2",  "zgemv_n", "zgemv_t",
                                          "ztrsv_n", "ztrsv_t", "zgemm",   "ztrsm",   "zsyrk",   "zherk"}));
  EXPECT_EQ(bo::tuning::key_name(-1), nullptr);
  EXPECT_EQ(bo::tuning::key_name(bo::tuning::kKeyCount), nullptr);
  for (const char* unknown : {"", "sherk", "cnrm2", "zgemv", "dgemm_nn"}) EXPECT_EQ(bo::tuning::find_key(unknown), -1);
}

TEST(Keys, TheTransposeLetterPicksGemvAndTrsvKeys) {
  auto name = [](int routine, char trans) {
    const char* n = bo::tuning::key_name(bo::tuning::key_index(routine, trans));
    return std::string(n ? n : "(none)");
  };
  EXPECT_EQ(name(BO_R_SGEMV, 'N'), "sgemv_n");
  EXPECT_EQ(name(BO_R_DGEMV, 'T'), "dgemv_t");
  EXPECT_EQ(name(BO_R_DGEMV, 'C'), "dgemv_t");
  EXPECT_EQ(name(BO_R_CGEMV, 'C'), "cgemv_t");  // the conjugate transpose shares the transposed key
  EXPECT_EQ(name(BO_R_ZTRSV, 'T'), "ztrsv_t");
  EXPECT_EQ(name(BO_R_ZTRSV, 'N'), "ztrsv_n");
  EXPECT_EQ(name(BO_R_ZGEMM, 'C'), "zgemm");  // only gemv and trsv keys depend on it
  EXPECT_EQ(name(BO_R_SCNRM2, 'N'), "scnrm2");
  EXPECT_EQ(name(BO_R_DZNRM2, 'N'), "dznrm2");
  EXPECT_EQ(name(BO_R_CHERK, 'N'), "cherk");
  EXPECT_EQ(name(BO_R_ZHERK, 'C'), "zherk");
  EXPECT_EQ(bo::tuning::key_index(BO_R_DGETRF, 'N'), -1);  // LAPACK: no key
  EXPECT_EQ(bo::tuning::key_index(-1, 'N'), -1);
  EXPECT_EQ(bo::tuning::key_index(BO_R_COUNT, 'N'), -1);
}

TEST(KernelWork, BandwidthKeysCountBytesOfTheirElementType) {
  const int64_t v[] = {1000};
  EXPECT_DOUBLE_EQ(kernel_work("snrm2", v).read, 4000.0);
  EXPECT_DOUBLE_EQ(kernel_work("dnrm2", v).read, 8000.0);
  EXPECT_DOUBLE_EQ(kernel_work("dnrm2", v).written, 8.0);
  // The complex norms read 2n parts and write one real.
  EXPECT_DOUBLE_EQ(kernel_work("scnrm2", v).read, 8000.0);
  EXPECT_DOUBLE_EQ(kernel_work("scnrm2", v).written, 4.0);
  EXPECT_DOUBLE_EQ(kernel_work("dznrm2", v).read, 16000.0);
  EXPECT_DOUBLE_EQ(kernel_work("dznrm2", v).written, 8.0);
  const int64_t mn[] = {100, 30};
  for (const auto& [p, es] : {std::pair<const char*, double>{"s", 4}, {"d", 8}, {"c", 8}, {"z", 16}}) {
    const auto n = kernel_work(std::string(p) + "gemv_n", mn);
    EXPECT_DOUBLE_EQ(n.read, es * (100.0 * 30 + 30)) << p;
    EXPECT_DOUBLE_EQ(n.written, es * 100) << p;
    const auto t = kernel_work(std::string(p) + "gemv_t", mn);
    EXPECT_DOUBLE_EQ(t.read, es * (100.0 * 30 + 100)) << p;
    EXPECT_DOUBLE_EQ(t.written, es * 30) << p;
    for (const char* k : {"trsv_n", "trsv_t"}) {
      const auto w = kernel_work(std::string(p) + k, mn);
      EXPECT_DOUBLE_EQ(w.read, es * (100.0 * 101 / 2 + 100)) << p;
      EXPECT_DOUBLE_EQ(w.written, es * 100) << p;
    }
  }
  // Complex elements: twice the bytes of their real precision.
  EXPECT_DOUBLE_EQ(kernel_work("zgemv_t", mn).read, 2 * kernel_work("dgemv_t", mn).read);
  EXPECT_DOUBLE_EQ(kernel_work("ctrsv_n", mn).read, 2 * kernel_work("strsv_n", mn).read);
}

TEST(KernelWork, FlopKeysAreTheRealFlopCount) {
  const int64_t d[] = {10, 20, 30};
  for (const char* p : {"s", "d"}) {
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "gemm", d).read, 2.0 * 10 * 20 * 30);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "gemm", d).written, 0.0);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "trsm", d).read, 10.0 * 10 * 20);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "syrk", d).read, 10.0 * 10 * 20);
  }
  // A complex multiply-add is four real ones (the descriptors' kFlopScale).
  for (const char* p : {"c", "z"}) {
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "gemm", d).read, 4 * 2.0 * 10 * 20 * 30);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "gemm", d).written, 0.0);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "trsm", d).read, 4 * 10.0 * 10 * 20);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "syrk", d).read, 4 * 10.0 * 10 * 20);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "herk", d).read, 4 * 10.0 * 10 * 20);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "herk", d).written, 0.0);
  }
  // By index, the same numbers.
  EXPECT_DOUBLE_EQ(kernel_work(bo::tuning::find_key("zherk"), d).read, kernel_work("zherk", d).read);
}

TEST(KernelWork, UnknownKeysAreZero) {
  const int64_t d[] = {10, 20, 30};
  for (const char* k : {"", "d", "sherk", "dherk", "cnrm2", "znrm2", "zgemv", "dgemv", "my_kernel", "dummy"}) {
    const auto w = kernel_work(k, d);
    EXPECT_EQ(w.read, 0.0) << k;
    EXPECT_EQ(w.written, 0.0) << k;
  }
  EXPECT_EQ(kernel_work(-1, d).read, 0.0);
  EXPECT_EQ(kernel_work(bo::tuning::kKeyCount, d).read, 0.0);
}

}  // namespace
