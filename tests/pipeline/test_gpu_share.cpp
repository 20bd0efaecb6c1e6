// How MPI ranks of one node share its GPUs and cores (src/offload/module/gpu_share.h): the ranks on each GPU, each
// rank's share of the device memory defaults, its staging threads.
#include <gtest/gtest.h>

#include "offload/module/gpu_share.h"

namespace {

using bom::node_share;

TEST(GpuShare, RanksOnEachGpuByLocalRankModuloTheGpus) {
  EXPECT_EQ(node_share(1, 4, 0).gpu_ranks, 1) << "alone";
  EXPECT_EQ(node_share(0, 4, 0).node_ranks, 1) << "no local size known: alone";
  EXPECT_EQ(node_share(4, 4, 3).gpu_ranks, 1) << "a GPU each";
  EXPECT_EQ(node_share(4, 4, 3).node_ranks, 4);
  EXPECT_EQ(node_share(2, 4, 1).gpu_ranks, 1) << "fewer ranks than GPUs";
  EXPECT_EQ(node_share(4, 2, 0).gpu_ranks, 2) << "ranks 0 and 2";
  EXPECT_EQ(node_share(4, 2, 1).gpu_ranks, 2) << "ranks 1 and 3";
  EXPECT_EQ(node_share(5, 2, 0).gpu_ranks, 3) << "ranks 0, 2, 4";
  EXPECT_EQ(node_share(5, 2, 1).gpu_ranks, 2) << "ranks 1, 3";
  EXPECT_EQ(node_share(8, 1, 0).gpu_ranks, 8);
  EXPECT_EQ(node_share(8, 0, 0).gpu_ranks, 1) << "no GPU";
  // Every rank is counted once over the GPUs that hold one (a rank asks only about its own GPU).
  for (long size = 2; size <= 17; ++size)
    for (int gpus = 1; gpus <= 8; ++gpus) {
      long sum = 0;
      for (int d = 0; d < std::min<long>(size, gpus); ++d) sum += node_share(size, gpus, d).gpu_ranks;
      EXPECT_EQ(sum, size) << size << " ranks, " << gpus << " GPUs";
    }
}

TEST(GpuShare, RanksOnOneGpuAskForNoMoreThanItHas) {
  const int64_t total = int64_t(141) << 30;  // an H200
  const int64_t alone = bom::shared_pipeline_bytes(total, 1);
  EXPECT_EQ(alone, int64_t(double(total) * 0.9) - (int64_t(256) << 20)) << "one process: the default as it was";
  for (int k = 2; k <= 8; ++k) {
    EXPECT_LE(k * bom::shared_pipeline_bytes(total, k), alone);
    EXPECT_GE(k * bom::shared_pipeline_bytes(total, k), alone - k);
    EXPECT_LE(k * bom::shared_residency_bytes(total, k), total / 2);
  }
  EXPECT_EQ(bom::shared_pipeline_bytes(int64_t(100) << 20, 2), 0) << "a GPU too small: nothing, never negative";
}

TEST(GpuShare, StagingThreadsAreHalfTheRanksShareOfTheCores) {
  EXPECT_EQ(bom::staging_threads_for(16, 1), 8) << "alone: half the cores";
  EXPECT_EQ(bom::staging_threads_for(64, 1), 16) << "at most 16";
  EXPECT_EQ(bom::staging_threads_for(16, 4), 2);
  EXPECT_EQ(bom::staging_threads_for(64, 4), 8);
  EXPECT_EQ(bom::staging_threads_for(2, 4), 1) << "at least 1";
  EXPECT_EQ(bom::staging_threads_for(16, 0), 8) << "an unknown rank count: alone";
  // Several GPUs: 8 more for each beyond the first, leaving a core for each GPU's driver and two more.
  EXPECT_EQ(bom::staging_threads_for(32, 1, 2), 24);
  EXPECT_EQ(bom::staging_threads_for(64, 1, 4), 40);
  EXPECT_EQ(bom::staging_threads_for(16, 1, 2), 12) << "16 cores less 2 drivers and 2";
  EXPECT_EQ(bom::staging_threads_for(4, 1, 2), 2) << "never fewer than alone";
  EXPECT_EQ(bom::staging_threads_for(64, 4, 2), 12) << "a rank's share of 16 cores";
  EXPECT_EQ(bom::staging_threads_for(32, 1, 1), 16);
}

}  // namespace
