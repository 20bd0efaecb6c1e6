// Staging growth amortised per class and bucket (src/policy/growth_credit.h) on its own: deferred calls' gains add up
// until they cover the growth, the covering call pays it, what a paid bucket defers again, and the regret bound.
#include <gtest/gtest.h>

#include <memory>

#include "policy/growth_credit.h"

namespace {

using blasoffload::policy::GrowthCredit;

constexpr int kCls = 2, kBucket = 7;

std::unique_ptr<GrowthCredit> Fresh() { return std::make_unique<GrowthCredit>(); }

TEST(GrowthCredit, NoGrowthIsNeverDeferred) {
  auto gc = Fresh();
  EXPECT_FALSE(gc->defer(kCls, kBucket, 1000.0, 0.0));
  EXPECT_FALSE(gc->defer(kCls, kBucket, 1000.0, -5.0));
  EXPECT_EQ(gc->deferred(), 0u);
}

TEST(GrowthCredit, GainsAddUpUntilTheyCoverTheGrowthAndThatCallPaysIt) {
  auto gc = Fresh();
  // 300 ms of growth, 40 ms gained a call: seven calls stay on the CPU (280 ms), the eighth covers it.
  for (int i = 0; i < 7; ++i) EXPECT_TRUE(gc->defer(kCls, kBucket, 40e3, 300e3)) << "call " << i;
  EXPECT_NEAR(gc->credit_us(kCls, kBucket), 280e3, 1.0);
  EXPECT_FALSE(gc->defer(kCls, kBucket, 40e3, 300e3));
  EXPECT_EQ(gc->deferred(), 7u);
  EXPECT_EQ(gc->paid(), 1u);
  EXPECT_EQ(gc->credit_us(kCls, kBucket), 0.0);
}

TEST(GrowthCredit, BucketsAreSeparate) {
  auto gc = Fresh();
  EXPECT_TRUE(gc->defer(kCls, kBucket, 40e3, 100e3));
  EXPECT_TRUE(gc->defer(kCls, kBucket + 1, 40e3, 100e3));
  EXPECT_TRUE(gc->defer(kCls + 1, kBucket, 40e3, 100e3));
  EXPECT_NEAR(gc->credit_us(kCls, kBucket), 40e3, 1.0);
  EXPECT_NEAR(gc->credit_us(kCls, kBucket + 1), 40e3, 1.0);
}

TEST(GrowthCredit, APaidBucketDefersAgainOnlyForAGrowthMoreThanTwiceAsLarge) {
  auto gc = Fresh();
  EXPECT_TRUE(gc->defer(kCls, kBucket, 60e3, 100e3));
  EXPECT_FALSE(gc->defer(kCls, kBucket, 60e3, 100e3));  // 120 ms of gains: paid
  // An estimate that did not come true (a device copy spared the operand): the bucket stays on the GPU.
  EXPECT_FALSE(gc->defer(kCls, kBucket, 60e3, 100e3));
  EXPECT_FALSE(gc->defer(kCls, kBucket, 60e3, 200e3));
  // A much larger growth (the program's operands grew) is amortised again.
  EXPECT_TRUE(gc->defer(kCls, kBucket, 60e3, 250e3));
}

TEST(GrowthCredit, GainsOfCallsTheModelDoesNotPreferAddNothing) {
  auto gc = Fresh();
  EXPECT_TRUE(gc->defer(kCls, kBucket, -50e3, 10e3));  // an exploration toward a slower GPU
  EXPECT_EQ(gc->credit_us(kCls, kBucket), 0.0);
}

// The ski-rental bound: over any number of calls, what the rule costs against the better of "grow at once" and "never
// grow" is at most the growth itself (the gains forgone before paying, never more than the growth).
TEST(GrowthCredit, RegretIsAtMostTheGrowth) {
  for (int calls : {1, 3, 8, 20, 200}) {
    auto gc = Fresh();
    const double grow = 300e3, gain = 40e3;
    double forgone = 0, paid = 0;
    for (int i = 0; i < calls; ++i) {
      if (gc->defer(kCls, kBucket, gain, gc->paid() ? 0.0 : grow))
        forgone += gain;
      else if (!paid && gc->paid())
        paid = grow;
    }
    const double rule = forgone + paid, best = std::min(calls * gain, grow);  // the cost of each strategy in gains
    EXPECT_LE(rule, best + grow) << calls << " calls";
  }
}

}  // namespace
