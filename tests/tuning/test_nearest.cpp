// Nearest-tile lookup (log distance per axis, missing tiles, with and without the index) and bandwidth curves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support.h"
#include "tuning/table.h"

namespace bo::tuning {
namespace {

using test::full_grid;
using test::tile_name;

// The config of the tile nearest to dims ("t<at>"), or "null".
std::string near(const KernelTable& k, std::vector<int64_t> dims) {
  const Tile* t = k.nearest(dims.data());
  return t ? t->config : "null";
}

// The same table without an index: never finalized, tiles in reverse order.
KernelTable unindexed(const KernelTable& k) {
  KernelTable u;
  u.unit = k.unit;
  u.axes = k.axes;
  u.grid = k.grid;
  u.tiles.assign(k.tiles.rbegin(), k.tiles.rend());
  return u;
}

// Every lookup is checked with the index and by the scan without it: both must agree.
#define EXPECT_NEAR_TILE(table, dims, expected)                           \
  do {                                                                    \
    EXPECT_EQ(near(table, dims), expected) << "indexed";                  \
    EXPECT_EQ(near(unindexed(table), dims), expected) << "not finalized"; \
  } while (0)

using V = std::vector<int64_t>;

TEST(Nearest, OneAxisExactPoints) {
  KernelTable k = full_grid({{1, 4, 16, 64}});
  for (int64_t n : {1, 4, 16, 64}) EXPECT_NEAR_TILE(k, V{n}, tile_name({n}));
}

TEST(Nearest, OneAxisBetweenPointsLogMidpointTiesToSmaller) {
  KernelTable k = full_grid({{1, 4, 16, 64}});
  EXPECT_NEAR_TILE(k, V{2}, "t1");  // sqrt(1 * 4): tie
  EXPECT_NEAR_TILE(k, V{3}, "t4");  // 3 * 3 > 1 * 4: past the log midpoint
  EXPECT_NEAR_TILE(k, V{8}, "t4");  // sqrt(4 * 16): tie
  EXPECT_NEAR_TILE(k, V{9}, "t16");
  EXPECT_NEAR_TILE(k, V{10}, "t16");  // a linear tie (6 and 6); in log distance 16 is nearer
  EXPECT_NEAR_TILE(k, V{32}, "t16");  // sqrt(16 * 64): tie
  EXPECT_NEAR_TILE(k, V{33}, "t64");  // linear distance would say 16 (17 < 31); log says 64
  EXPECT_NEAR_TILE(k, V{40}, "t64");
}

TEST(Nearest, BelowAndAboveTheGrid) {
  KernelTable k = full_grid({{4, 16}});
  EXPECT_NEAR_TILE(k, V{1}, "t4");
  EXPECT_NEAR_TILE(k, V{0}, "t4");
  EXPECT_NEAR_TILE(k, V{-7}, "t4");
  EXPECT_NEAR_TILE(k, V{std::numeric_limits<int64_t>::min()}, "t4");
  EXPECT_NEAR_TILE(k, V{1000}, "t16");
  EXPECT_NEAR_TILE(k, V{std::numeric_limits<int64_t>::max()}, "t16");
}

TEST(Nearest, ZeroDimsCountAsOne) {
  KernelTable k = full_grid({{1, 16}, {1, 16}});
  EXPECT_NEAR_TILE(k, (V{0, 0}), "t1x1");
  EXPECT_NEAR_TILE(k, (V{0, 20}), "t1x16");
  // With 2 as the smallest grid point, 0 -> 1 -> 2 (below the grid), not a tie with anything.
  KernelTable two = full_grid({{2, 8}});
  EXPECT_NEAR_TILE(two, V{0}, "t2");
}

TEST(Nearest, TwoAxesEachAxisOnItsOwn) {
  KernelTable k = full_grid({{1, 16, 256}, {1, 16, 256}});
  EXPECT_NEAR_TILE(k, (V{16, 256}), "t16x256");
  EXPECT_NEAR_TILE(k, (V{300, 2}), "t256x1");
  EXPECT_NEAR_TILE(k, (V{4, 4}), "t1x1");     // both log midpoints
  EXPECT_NEAR_TILE(k, (V{5, 64}), "t16x16");  // 5 > sqrt(16); 64 = sqrt(16 * 256) ties to 16
  EXPECT_NEAR_TILE(k, (V{17, 65}), "t16x256");
}

TEST(Nearest, HugeValuesDoNotOverflow) {
  const int64_t a = int64_t{1} << 40, b = int64_t{1} << 62;
  KernelTable k = full_grid({{1, a, b}});
  EXPECT_NEAR_TILE(k, V{int64_t{1} << 51}, tile_name({a}));  // sqrt(2^40 * 2^62) = 2^51: tie
  EXPECT_NEAR_TILE(k, V{(int64_t{1} << 51) + 1}, tile_name({b}));
  EXPECT_NEAR_TILE(k, V{int64_t{1} << 20}, "t1");  // sqrt(1 * 2^40): tie
  EXPECT_NEAR_TILE(k, V{(int64_t{1} << 20) + 1}, tile_name({a}));
}

TEST(Nearest, MissingTileOneAxis) {
  KernelTable k = full_grid({{1, 2, 1024}}, {{2}});
  EXPECT_NEAR_TILE(k, V{2}, "t1");       // log 2 away vs log 512
  EXPECT_NEAR_TILE(k, V{3}, "t1");       // snaps to the missing 2 first (9 < 2048), then its nearest tile
  EXPECT_NEAR_TILE(k, V{100}, "t1024");  // 100^2 > 2048: snaps to 1024 itself
  KernelTable far = full_grid({{1, 512, 1024}}, {{512}});
  EXPECT_NEAR_TILE(far, V{512}, "t1024");
  EXPECT_NEAR_TILE(far, V{600}, "t1024");
}

TEST(Nearest, MissingTileTwoAxes) {
  // The four neighbours of (16, 16) are all log 16 away: ties go to the lexicographically smallest.
  KernelTable k = full_grid({{1, 16, 256}, {1, 16, 256}}, {{16, 16}});
  EXPECT_NEAR_TILE(k, (V{16, 16}), "t1x16");
  KernelTable k3 = full_grid({{1, 16, 256}, {1, 16, 256}}, {{16, 16}, {1, 16}, {16, 1}});
  EXPECT_NEAR_TILE(k3, (V{16, 16}), "t16x256");
  EXPECT_NEAR_TILE(k3, (V{20, 12}), "t16x256");
  // Summed over axes: the diagonal (1, 1) is log 4 away, beating (2, 1024) at log 512.
  KernelTable d = full_grid({{1, 2, 1024}, {1, 2, 1024}}, {{2, 2}, {1, 2}, {2, 1}});
  EXPECT_NEAR_TILE(d, (V{2, 2}), "t1x1");
  EXPECT_NEAR_TILE(d, (V{1, 2}), "t1x1");
  EXPECT_NEAR_TILE(d, (V{2, 1024}), "t2x1024");
}

TEST(Nearest, ThreeAxesSampleTableWithMissingTile) {
  Table t;
  std::string error;
  ASSERT_TRUE(load_table(BO_TUNING_SAMPLE_TABLE, &t, &error)) << error;
  const KernelTable& k = t.kernels.at("sgemm");
  auto at = [&](V dims) {
    const Tile* tile = k.nearest(dims.data());
    return tile ? tile->at : V{};
  };
  EXPECT_EQ(at({1024, 1024, 64}), (V{1024, 1024, 64}));
  EXPECT_EQ(k.nearest(V{1024, 1024, 64}.data())->config, "sgemm_128x128_8x8");
  EXPECT_EQ(k.nearest(V{128, 128, 64}.data())->config, "cublas");
  EXPECT_EQ(at({100, 2000, 5000}), (V{128, 1024, 4096}));  // 2000^2 < 1024 * 8192
  EXPECT_EQ(at({100, 3000, 5000}), (V{128, 8192, 4096}));  // 3000^2 > 1024 * 8192
  EXPECT_EQ(at({8192, 8192, 100}), (V{8192, 8192, 64}));
  // (8192, 8192, 4096) did not fit: (1024, 8192, 4096) and (8192, 1024, 4096) are log 8 away, the
  // k = 64 neighbour log 64: the smaller of the tied pair.
  EXPECT_EQ(at({8192, 8192, 4096}), (V{1024, 8192, 4096}));
  EXPECT_EQ(at({100000, 100000, 1000000}), (V{1024, 8192, 4096}));
  EXPECT_EQ(near(unindexed(k), V{100000, 100000, 1000000}), k.nearest(V{8192, 8192, 4096}.data())->config);
}

TEST(Nearest, ThreeAxesFullGrid) {
  KernelTable k = full_grid({{1, 8, 64}, {1, 8, 64}, {1, 8}}, {{8, 8, 8}});
  EXPECT_NEAR_TILE(k, (V{8, 8, 1}), "t8x8x1");
  // (8, 8, 8) is missing; its five neighbours are all log 8 away: the smallest wins.
  EXPECT_NEAR_TILE(k, (V{8, 8, 8}), "t1x8x8");
  EXPECT_NEAR_TILE(k, (V{7, 9, 3}), "t1x8x8");  // snaps to (8, 8, 8) first
  EXPECT_NEAR_TILE(k, (V{60, 2, 5}), "t64x1x8");
}

TEST(Nearest, AgreesWithoutIndexEverywhere) {
  KernelTable k = full_grid({{1, 4, 32, 256}, {2, 16, 128}}, {{4, 16}, {32, 16}, {1, 2}, {256, 128}, {4, 2}});
  KernelTable u = unindexed(k);
  for (int64_t m = -1; m < 400; m += 3) {
    for (int64_t n = 0; n < 300; n += 5) {
      V d{m, n};
      ASSERT_EQ(near(k, d), near(u, d)) << m << "," << n;
    }
  }
}

TEST(Nearest, NoTilesGivesNull) {
  KernelTable k = full_grid({{1, 16}}, {{1}, {16}});
  EXPECT_TRUE(k.tiles.empty());
  EXPECT_NEAR_TILE(k, V{16}, "null");
}

TEST(Nearest, InconsistentHandBuiltTableStillAnswers) {
  KernelTable k = full_grid({{1, 16}});
  Tile off = k.tiles[0];
  off.at = {5};
  off.config = "t5";
  k.tiles.push_back(off);  // not a grid point: no index can be built
  k.finalize();
  EXPECT_EQ(near(k, V{1}), "t1");
  EXPECT_EQ(near(k, V{3}), "t1");   // 3 * 3 < 1 * 16: snaps to 1
  EXPECT_EQ(near(k, V{5}), "t16");  // 25 > 16: snaps to 16
}

TEST(Nearest, DoesNotAllocate) {
  KernelTable k = full_grid({{1, 4, 32, 256}, {2, 16, 128}, {1, 1000}}, {{4, 16, 1}, {256, 128, 1000}});
  KernelTable u = unindexed(k);
  int64_t dims[3];
  long sum = 0;
  long before = test::allocation_count();
  for (int64_t i = 0; i < 2000; ++i) {
    dims[0] = i;
    dims[1] = 3 * i;
    dims[2] = i * i;
    sum += k.nearest(dims)->at[0] + u.nearest(dims)->at[1];
  }
  EXPECT_EQ(test::allocation_count() - before, 0);
  EXPECT_GT(sum, 0);
}

// --- Bandwidth curves -------------------------------------------------------------------------------------

TEST(Bandwidth, EmptyCurveGivesZero) {
  Table t;
  EXPECT_EQ(t.read_gbs(1e6), 0);
  EXPECT_EQ(t.write_gbs(1e6), 0);
}

TEST(Bandwidth, LogLogInterpolationClampedAtTheEnds) {
  Table t;
  t.read = {{1e3, 10}, {1e6, 100}, {1e9, 50}};
  t.write = {{1024, 1}, {1048576, 1000}};
  EXPECT_DOUBLE_EQ(t.read_gbs(1e3), 10);
  EXPECT_DOUBLE_EQ(t.read_gbs(1e6), 100);
  EXPECT_DOUBLE_EQ(t.read_gbs(1e9), 50);
  EXPECT_NEAR(t.read_gbs(std::sqrt(1e9)), std::sqrt(1000.0), 1e-9);  // log midpoint: geometric mean
  EXPECT_NEAR(t.read_gbs(1e7), 100 * std::pow(0.5, 1.0 / 3), 1e-9);
  EXPECT_DOUBLE_EQ(t.read_gbs(1), 10);
  EXPECT_DOUBLE_EQ(t.read_gbs(0), 10);
  EXPECT_DOUBLE_EQ(t.read_gbs(-1), 10);
  EXPECT_DOUBLE_EQ(t.read_gbs(1e15), 50);
  EXPECT_NEAR(t.write_gbs(32768), std::sqrt(1000.0), 1e-9);
  EXPECT_DOUBLE_EQ(t.write_gbs(1e12), 1000);
}

TEST(Bandwidth, SamplePointsAreExact) {
  Table t;
  std::string error;
  ASSERT_TRUE(load_table(BO_TUNING_SAMPLE_TABLE, &t, &error)) << error;
  ASSERT_FALSE(t.read.empty());
  for (const BandwidthPoint& p : t.read) EXPECT_NEAR(t.read_gbs(p.bytes), p.gbs, 1e-9 * p.gbs);
  for (const BandwidthPoint& p : t.write) EXPECT_NEAR(t.write_gbs(p.bytes), p.gbs, 1e-9 * p.gbs);
}

}  // namespace
}  // namespace bo::tuning
