// kernel_work (tuning/table.h): the work a table's rate is measured in, for the single- and double-precision keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tuning/table.h"

namespace {

using bo::tuning::kernel_work;

TEST(KernelWork, BandwidthKeysCountBytesOfTheirElementType) {
  const int64_t v[] = {1000};
  EXPECT_DOUBLE_EQ(kernel_work("snrm2", v).read, 4000.0);
  EXPECT_DOUBLE_EQ(kernel_work("dnrm2", v).read, 8000.0);
  EXPECT_DOUBLE_EQ(kernel_work("dnrm2", v).written, 8.0);
  const int64_t mn[] = {100, 30};
  for (const char* p : {"s", "d"}) {
    const double es = *p == 'd' ? 8.0 : 4.0;
    const auto n = kernel_work(std::string(p) + "gemv_n", mn);
    EXPECT_DOUBLE_EQ(n.read, es * (100.0 * 30 + 30));
    EXPECT_DOUBLE_EQ(n.written, es * 100);
    const auto t = kernel_work(std::string(p) + "gemv_t", mn);
    EXPECT_DOUBLE_EQ(t.read, es * (100.0 * 30 + 100));
    EXPECT_DOUBLE_EQ(t.written, es * 30);
    for (const char* k : {"trsv_n", "trsv_t"}) {
      const auto w = kernel_work(std::string(p) + k, mn);
      EXPECT_DOUBLE_EQ(w.read, es * (100.0 * 101 / 2 + 100));
      EXPECT_DOUBLE_EQ(w.written, es * 100);
    }
  }
}

TEST(KernelWork, FlopKeysAreThePrecisionIndependentFlopCount) {
  const int64_t d[] = {10, 20, 30};
  for (const char* p : {"s", "d"}) {
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "gemm", d).read, 2.0 * 10 * 20 * 30);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "gemm", d).written, 0.0);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "trsm", d).read, 10.0 * 10 * 20);
    EXPECT_DOUBLE_EQ(kernel_work(std::string(p) + "syrk", d).read, 10.0 * 10 * 20);
  }
}

TEST(KernelWork, UnknownKeysAreZero) {
  const int64_t d[] = {10, 20, 30};
  for (const char* k : {"", "d", "zgemm", "dgemv", "my_kernel", "dummy"}) {
    const auto w = kernel_work(k, d);
    EXPECT_EQ(w.read, 0.0) << k;
    EXPECT_EQ(w.written, 0.0) << k;
  }
}

}  // namespace
