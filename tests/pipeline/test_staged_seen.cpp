// The module's medians (median.h) and the rate of the program's own staged uploads (staged_seen.h): the last five
// large uploads decide, small ones are not counted, and one slow or fast upload does not move the rate.
#include <gtest/gtest.h>

#include <vector>

#include "offload/module/median.h"
#include "offload/module/staged_seen.h"

namespace bom {
namespace {

TEST(Median, OddEvenAndEmpty) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({7}), 7.0);
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({50, 33, 34, 49, 35, 96, 33}), 35.0) << "one cold rep and two slow ones do not decide";
}

// One process's record: the cases run in order in this one test.
TEST(StagedSeen, TheLastFiveLargeUploadsDecide) {
  int64_t samples = -1;
  EXPECT_EQ(staged_gbs_seen(&samples), 0.0);
  EXPECT_EQ(samples, 0);
  const double big = kSeenMinBytes * 2;        // 128 MiB: at 25 GB/s, bytes / (25e6) ms
  note_staged_upload(kSeenMinBytes / 2, 1.0);  // below the size that is timed
  note_staged_upload(big, 0.0);                // no time: not a rate
  EXPECT_EQ(staged_gbs_seen(&samples), 0.0);
  EXPECT_EQ(samples, 0);
  note_staged_upload(big, big / 25e6);
  EXPECT_NEAR(staged_gbs_seen(&samples), 25.0, 1e-9);
  EXPECT_EQ(samples, 1);
  note_staged_upload(big, big / 5e6);  // one slow upload (a preemption)
  note_staged_upload(big, big / 27e6);
  EXPECT_NEAR(staged_gbs_seen(&samples), 25.0, 1e-9) << "the median of 5, 25 and 27";
  for (double r : {40.0, 41.0, 42.0, 43.0}) note_staged_upload(big, big / (r * 1e6));
  // The last five: 27, 40, 41, 42, 43; the first two are forgotten.
  EXPECT_NEAR(staged_gbs_seen(&samples), 41.0, 1e-9);
  EXPECT_EQ(samples, 7);
}

}  // namespace
}  // namespace bom
