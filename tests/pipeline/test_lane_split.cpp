// How a large trsm or syrk is shared among GPU lanes (lane_split.h): the ranges cover every column once, in order,
// with the alignment and the least width the split promises, and a triangle's ranges hold about equal areas.
#include <gtest/gtest.h>

#include <vector>

#include "offload/module/lane_split.h"

namespace bom {
namespace {

void expect_cover(const std::vector<LaneRange>& r, int64_t total, int lanes, int64_t align, const char* what) {
  SCOPED_TRACE(std::string(what) + " total " + std::to_string(total) + " lanes " + std::to_string(lanes));
  if (total <= 0) {
    EXPECT_TRUE(r.empty());
    return;
  }
  ASSERT_FALSE(r.empty());
  EXPECT_LE(int(r.size()), lanes);
  // As many ranges as lanes whenever every lane can have `align` columns.
  EXPECT_EQ(int64_t(r.size()), std::min<int64_t>(lanes, std::max<int64_t>(1, total / align)));
  int64_t at = 0;
  for (size_t q = 0; q < r.size(); ++q) {
    EXPECT_EQ(r[q].s0, at);
    EXPECT_GT(r[q].width(), 0);
    if (r.size() > 1) {
      EXPECT_GE(r[q].width(), align) << "range " << q;
    }
    if (q + 1 < r.size()) {
      EXPECT_EQ(r[q].s1 % align, 0) << "range " << q;
    }
    at = r[q].s1;
  }
  EXPECT_EQ(at, total);
}

TEST(LaneSplit, EvenCoversEveryColumnOnce) {
  for (int lanes : {1, 2, 3, 4, 8})
    for (int64_t total : {0, 1, 255, 256, 511, 512, 513, 777, 1000, 32768, 65536 + 17})
      expect_cover(split_even(total, lanes, 256), total, lanes, 256, "even");
  // Widths differ by at most one unit of alignment.
  const auto r = split_even(32768, 3, 256);
  ASSERT_EQ(r.size(), 3u);
  for (const LaneRange& x : r) EXPECT_NEAR(double(x.width()), 32768.0 / 3, 256.0);
}

TEST(LaneSplit, TriangleCoversEveryColumnOnceInEqualAreas) {
  for (bool lower : {true, false})
    for (int lanes : {1, 2, 3, 4, 8})
      for (int64_t n : {0, 1, 255, 256, 511, 512, 600, 777, 1030, 32768, 65536 + 17}) {
        const auto r = split_triangle(n, lanes, lower, 256);
        expect_cover(r, n, lanes, 256, lower ? "lower" : "upper");
        if (n < 4096 || r.size() < 2) continue;
        // Each range's elements within one aligned column's worth of the mean.
        const double mean = double(n) * double(n + 1) / 2 / double(r.size());
        for (const LaneRange& x : r) {
          double area = 0;
          for (int64_t j = x.s0; j < x.s1; ++j) area += lower ? double(n - j) : double(j + 1);
          EXPECT_NEAR(area, mean, 256.0 * double(n)) << "n " << n << " lanes " << lanes << " range " << x.s0;
        }
      }
  // The lower triangle's first range is the narrowest (its columns are the tallest); the upper's the widest.
  const auto lo = split_triangle(32768, 2, true, 256), up = split_triangle(32768, 2, false, 256);
  EXPECT_LT(lo[0].width(), lo[1].width());
  EXPECT_GT(up[0].width(), up[1].width());
}

}  // namespace
}  // namespace bom
