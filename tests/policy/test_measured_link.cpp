// The link measured at the start-up and followed on the program's uploads (src/policy/measured_link.h): nothing applied
// before the measurement, the tolerance, both directions, the cap, the summary's lines.
#include <gtest/gtest.h>

#include <mutex>

#include "policy/measured_link.h"

namespace {

using blasoffload::policy::Calibration;
using blasoffload::policy::MeasuredLink;

bo_cuda_rates Rates(double h2d, double d2h, double staged) {
  bo_cuda_rates r{};
  r.h2d_gbs = h2d;
  r.d2h_gbs = d2h;
  r.pageable_gbs = staged;
  return r;
}

TEST(MeasuredLink, AppliesNothingBeforeTheStartUpsMeasurement) {
  MeasuredLink l;
  Calibration c;
  c.h2d_gbs = 1, c.d2h_gbs = 2, c.pageable_gbs = 3;
  double was = 0;
  EXPECT_FALSE(l.follow(1, 30, &was)) << "uploads followed before any measurement";
  l.apply(&c);
  EXPECT_EQ(c.h2d_gbs, 1);
  EXPECT_EQ(c.pageable_gbs, 3);
  EXPECT_EQ(l.summary(), "");
  {
    std::lock_guard<std::mutex> lock(l.mutex());
    l.set(Rates(50, 55, 9), 140);
  }
  EXPECT_TRUE(l.measured());
  l.apply(&c);
  EXPECT_EQ(c.h2d_gbs, 50);
  EXPECT_EQ(c.d2h_gbs, 55);
  EXPECT_EQ(c.pageable_gbs, 9);
  EXPECT_NE(l.summary().find("50.0 GB/s to it, 55.0 back, 9.0 staged, in 140 ms"), std::string::npos) << l.summary();
  EXPECT_EQ(l.summary().find("staged copies priced"), std::string::npos) << l.summary();
}

TEST(MeasuredLink, FollowsTheUploadsBeyondItsToleranceAndAtMostSoManyTimes) {
  MeasuredLink l;
  l.set(Rates(50, 55, 10), 100);
  double was = 0;
  EXPECT_FALSE(l.news(0));
  EXPECT_TRUE(l.news(1));
  EXPECT_FALSE(l.follow(1, 11, &was)) << "within 15%";
  EXPECT_FALSE(l.news(1)) << "the same samples looked at twice";
  EXPECT_FALSE(l.follow(1, 30, &was)) << "the same samples taken twice";
  EXPECT_TRUE(l.follow(2, 30, &was));
  EXPECT_EQ(was, 10);
  Calibration c;
  l.apply(&c);
  EXPECT_EQ(c.pageable_gbs, 30);
  EXPECT_EQ(c.h2d_gbs, 50) << "the pinned rates stay the start-up's";
  EXPECT_FALSE(l.follow(3, 0, &was)) << "no rate";
  EXPECT_FALSE(l.follow(4, 27, &was)) << "within 15% of the new rate";
  EXPECT_TRUE(l.follow(5, 20, &was)) << "slower by a third: followed too";
  EXPECT_EQ(was, 30);
  for (int i = 0; i < 20; ++i) l.follow(6 + i, i % 2 ? 10 : 40, &was);
  const std::string s = l.summary();
  EXPECT_NE(s.find("10.0 staged, in 100 ms"), std::string::npos) << "the start-up's staged rate, as measured\n" << s;
  EXPECT_NE(s.find("(25 timed, 8 changes)"), std::string::npos) << s;
  EXPECT_EQ(MeasuredLink::kMaxUpdates, 8);
}

}  // namespace
