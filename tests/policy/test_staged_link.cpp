// When the model's staged rate follows the program's uploads (src/policy/staged_link.h): news, tolerance, the cap.
#include <gtest/gtest.h>

#include "policy/staged_link.h"

namespace {

using blasoffload::policy::StagedLink;

TEST(StagedLink, TakesANewRateOnlyBeyondItsToleranceAndAtMostSoManyTimes) {
  StagedLink l;
  EXPECT_FALSE(l.news(0));
  EXPECT_FALSE(l.take(0, 30, 10)) << "no upload timed yet";
  EXPECT_TRUE(l.news(1));
  EXPECT_FALSE(l.take(1, 11, 10)) << "within 15%";
  EXPECT_FALSE(l.news(1)) << "the same samples looked at twice";
  EXPECT_FALSE(l.take(1, 30, 10)) << "the same samples taken twice";
  EXPECT_TRUE(l.take(2, 30, 10));
  EXPECT_EQ(l.last_gbs(), 30);
  EXPECT_FALSE(l.take(3, 0, 30)) << "no rate";
  EXPECT_FALSE(l.take(4, 27, 30)) << "within 15% of the new rate";
  EXPECT_TRUE(l.take(5, 20, 30)) << "slower by a third: followed too";
  for (int i = 0; i < 20; ++i) l.take(6 + i, i % 2 ? 10 : 40, i % 2 ? 40 : 10);
  EXPECT_EQ(l.updates(), StagedLink::kMaxUpdates);
  EXPECT_EQ(l.samples(), 25);
}

}  // namespace
