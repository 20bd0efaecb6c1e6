// The staging threads: parallel_for runs every item exactly once, also from many threads at once; pack/unpack
// copy exactly the block and nothing around it; run_concurrently runs each task once on a fixed worker; the threads
// carry our names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "offload/module/gpu_share.h"
#include "offload/module/staging_pool.h"
#include "thread_names.h"

namespace bom {
namespace {

TEST(StagingPool, EveryItemOnce) {
  for (int64_t n : {0, 1, 2, 7, 1000, 100000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    parallel_for(n, [&](int64_t i) { hits[size_t(i)].fetch_add(1); });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(StagingPool, ManyCallersAtOnce) {
  std::vector<std::thread> ts;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 16; ++t)
    ts.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) parallel_for(257, [&](int64_t) { total.fetch_add(1); });
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(total.load(), 16 * 50 * 257);
}

// A strided block between sentinel-filled neighbours: pack reads only the block, unpack writes only the block.
TEST(StagingPool, PackUnpackTouchOnlyTheBlock) {
  for (int64_t rows : {1, 3, 1000, 700000}) {
    const int64_t cols = rows > 1000 ? 3 : 17, ld = rows + 5;
    std::vector<float> src(size_t(ld * cols + 10), NAN);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) src[size_t(j * ld + i)] = float(i + 7 * j);
    std::vector<float> packed(size_t(rows * cols), -1.0f);
    pack_block(packed.data(), src.data(), rows, cols, ld, 4);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(packed[size_t(j * rows + i)], float(i + 7 * j));
    std::vector<float> dst(src.size(), -2.0f);
    unpack_block(dst.data(), packed.data(), rows, cols, ld, 4);
    for (int64_t p = 0; p < int64_t(dst.size()); ++p) {
      const int64_t j = p / ld, i = p % ld;
      if (j < cols && i < rows)
        ASSERT_EQ(dst[size_t(p)], float(i + 7 * j));
      else
        ASSERT_EQ(dst[size_t(p)], -2.0f) << "wrote outside the block at " << p;
    }
  }
}

// A rows x cols block of doubles (leading dimension ld) packed and unpacked: exactly its elements, nothing around it.
void check_doubles_block(int64_t rows, int64_t cols, int64_t ld) {
  SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " ld " + std::to_string(ld));
  std::vector<double> src(size_t(ld * cols + 7), NAN);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) src[size_t(j * ld + i)] = double(i) + 1e-9 * double(j);
  std::vector<double> packed(size_t(rows * cols), -1.0);
  pack_block(packed.data(), src.data(), rows, cols, ld, 8);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(packed[size_t(j * rows + i)], double(i) + 1e-9 * double(j));
  std::vector<double> dst(src.size(), -2.0);
  unpack_block(dst.data(), packed.data(), rows, cols, ld, 8);
  for (int64_t p = 0; p < int64_t(dst.size()); ++p) {
    const int64_t j = p / ld, i = p % ld;
    if (j < cols && i < rows)
      ASSERT_EQ(dst[size_t(p)], double(i) + 1e-9 * double(j));
    else
      ASSERT_EQ(dst[size_t(p)], -2.0) << "wrote outside the block at " << p;
  }
}

// With several threads a copy of 4 MiB or more goes in one part per thread (and the caller), not in 2 MiB parts: the
// parts' edges fall inside columns of a contiguous run and between columns of a strided block.
TEST(StagingPool, ManyThreads_CopiesSplitIntoAPartPerThread) {
  set_staging_threads_setting("8");  // before the pool's first use when this test runs alone; else no effect
  if (staging_threads() != 7) GTEST_SKIP() << "the pool was made before this test (run it alone, as CTest does)";
  check_doubles_block(1000, 1000, 1003);   // 8 MB strided: 8 parts of 125 columns, not 4 of 262
  check_doubles_block(786432, 1, 786432);  // 6 MiB contiguous: 8 parts, not 3
  check_doubles_block(4099, 197, 4099);    // contiguous, parts ending inside columns
  check_doubles_block(100000, 7, 100001);  // strided, fewer columns than parts
  check_doubles_block(1000, 300, 1003);    // 2.4 MB: one part, the caller's
}

// The same for doubles (8-byte elements), with columns long enough to take the streaming path and split pieces.
TEST(StagingPool, PackUnpackOfDoublesTouchOnlyTheBlock) {
  for (int64_t rows : {1, 5, 3000, 400000}) {
    const int64_t cols = rows > 3000 ? 3 : 11, ld = rows + 3;
    check_doubles_block(rows, cols, ld);
  }
  // One contiguous run at an odd byte offset (the streaming copy's unaligned head and tail).
  std::vector<char> a(3 << 20), b(3 << 20, 0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = char(i * 131 + 7);
  pack_block(b.data() + 3, a.data() + 5, int64_t((a.size() - 16) / 8), 1, int64_t((a.size() - 16) / 8), 8);
  EXPECT_EQ(std::memcmp(b.data() + 3, a.data() + 5, a.size() - 16), 0);
  EXPECT_EQ(b[2], 0);
  EXPECT_EQ(b[3 + a.size() - 16], 0);
}

TEST(StagingPool, RunConcurrentlyRunsEachTaskOnce) {
  std::atomic<int> count[4] = {};
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 4; ++i) tasks.push_back([&, i] { count[i].fetch_add(1); });
  for (int rep = 0; rep < 100; ++rep) run_concurrently(tasks.data(), int(tasks.size()));
  for (auto& c : count) EXPECT_EQ(c.load(), 100);
}

// Named threads let top, and the mix benchmark's per-thread CPU accounting, tell ours from the CPU BLAS's.
TEST(StagingPool, ThreadsCarryOurNames) {
  set_staging_threads_setting("3");  // before the pool's first use when this test runs alone; else no effect
  std::atomic<int64_t> total{0};
  parallel_for(1000, [&](int64_t) { total.fetch_add(1); });
  std::vector<std::function<void()>> tasks(4, [] {});
  run_concurrently(tasks.data(), int(tasks.size()));
  std::map<std::string, int> names = thread_names();
  EXPECT_EQ(total.load(), 1000);
  EXPECT_EQ(names["bo-stage"], staging_threads());
  EXPECT_GE(names["bo-worker"], 3);
}

// A call over several GPUs grows the pool to that many GPUs' default (gpu_share.h); one GPU leaves it as it is.
TEST(StagingPool, GrowsForACallOverSeveralGpus) {
  const int before = staging_threads();
  staging_threads_for_gpus(1);
  EXPECT_EQ(staging_threads(), before);
  staging_threads_for_gpus(2);
  const long want = std::max<long>(before + 1, staging_threads_for(sysconf(_SC_NPROCESSORS_ONLN), 1, 2));
  EXPECT_EQ(staging_threads() + 1, want);
  std::atomic<int64_t> total{0};
  parallel_for(1000, [&](int64_t) { total.fetch_add(1); });
  EXPECT_EQ(total.load(), 1000);
  EXPECT_EQ(thread_names()["bo-stage"], staging_threads());
}

}  // namespace
}  // namespace bom
