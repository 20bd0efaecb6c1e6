// The tiled sgemm schedule: every plan fits its device budget, covers C exactly once per K pass, keeps the K
// passes contiguous, and moves A and B no more often than the schedule promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "offload/module/tile_plan.h"

namespace bom {
namespace {

constexpr int64_t kMiB = int64_t(1) << 20;

// Replays the work items as one device driver does (A panel i in slot i % a_slots, B panels in two slots, the
// older one replaced; whole panels: B panel j in slot j) and counts uploads; checks that every tile is computed exactly
// once.
struct Replay {
  int64_t a_uploads = 0, b_uploads = 0;
  bool each_tile_once = true;
};
// One device's block (the whole of C by default); `seen` collects the tiles over several blocks.
Replay replay(const Plan& p, const TileBlock* block = nullptr,
              std::map<std::pair<int64_t, int64_t>, int>* all = nullptr) {
  Replay r;
  std::vector<int64_t> a_slot(size_t(p.a_slots), -1), b_slot(size_t(p.b_slots), -1);
  int last_b = -1;
  std::map<std::pair<int64_t, int64_t>, int> own;
  std::map<std::pair<int64_t, int64_t>, int>& seen = all ? *all : own;
  const TileBlock b = block ? *block : split_tiles(p, 1).at(0);
  for (int64_t w = 0; w < b.items(); ++w) {
    int64_t i0, i1, j;
    block_item(p, b, w, &i0, &i1, &j);
    int bs = -1;
    for (int q = 0; q < int(p.b_slots); ++q)
      if (b_slot[q] == j) bs = q;
    if (bs < 0) {
      bs = p.whole ? int(j) : (last_b + 1) % 2;
      b_slot[bs] = j;
      ++r.b_uploads;
    }
    last_b = bs;
    for (int64_t i = i0; i < i1; ++i) {
      if (a_slot[i % p.a_slots] != i) {
        a_slot[i % p.a_slots] = i;
        ++r.a_uploads;
      }
      ++seen[{i, j}];
    }
  }
  r.each_tile_once = int64_t(seen.size()) == p.mt * p.nt;
  for (auto& kv : seen) r.each_tile_once &= kv.second == 1;
  return r;
}

TEST(TilePlan, InCoreMovesEveryPanelOnce) {
  PlanInput in;
  in.m = in.n = in.k = 8192;
  in.budget_bytes = 60 * 1024 * kMiB;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.mb, 2048);
  EXPECT_EQ(p.nb, 2048);
  EXPECT_EQ(p.passes, 1);
  EXPECT_EQ(p.a_slots, p.mt);  // all of A stays
  const Replay r = replay(p);
  EXPECT_TRUE(r.each_tile_once);
  EXPECT_EQ(r.a_uploads, p.mt);
  EXPECT_EQ(r.b_uploads, p.nt);
  EXPECT_LE(p.bytes_needed, in.budget_bytes);
}

TEST(TilePlan, OutOfCoreKeepsGroupsOfA) {
  // n = 49152 under 8 GiB: panels of 2048 x 49152 are 384 MiB; A cannot stay whole.
  PlanInput in;
  in.m = in.n = in.k = 49152;
  in.budget_bytes = 8 * 1024 * kMiB;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.passes, 1);
  EXPECT_GT(p.a_slots, 1);
  EXPECT_LT(p.a_slots, p.mt);
  EXPECT_LE(p.bytes_needed, in.budget_bytes);
  const Replay r = replay(p);
  EXPECT_TRUE(r.each_tile_once);
  EXPECT_EQ(r.a_uploads, p.mt);  // A once in all
  // B once per group, less the two panels still held at each snake turn.
  EXPECT_EQ(r.b_uploads, p.groups * p.nt - 2 * (p.groups - 1));
}

TEST(TilePlan, SplitsKWhenNoPanelPairFits) {
  PlanInput in;
  in.m = in.n = 300;
  in.k = 100000;
  in.tile = 64;
  in.budget_bytes = 2 * kMiB;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_GT(p.passes, 1);
  EXPECT_LE(p.bytes_needed, in.budget_bytes);
  int64_t covered = 0;
  for (int64_t q = 0; q < p.passes; ++q) {
    EXPECT_EQ(p.pass_k0(q), covered);
    EXPECT_GT(p.pass_k(q), 0);
    covered += p.pass_k(q);
  }
  EXPECT_EQ(covered, in.k);
}

TEST(TilePlan, PartialTilesCoverCExactly) {
  PlanInput in;
  in.m = 101;
  in.n = 83;
  in.k = 59;
  in.tile = 37;
  in.budget_bytes = 64 * kMiB;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.mt, 3);
  EXPECT_EQ(p.nt, 3);
  EXPECT_EQ(p.tile_rows(2), 101 - 74);
  EXPECT_EQ(p.tile_cols(2), 83 - 74);
  int64_t rows = 0, cols = 0;
  for (int64_t i = 0; i < p.mt; ++i) rows += p.tile_rows(i);
  for (int64_t j = 0; j < p.nt; ++j) cols += p.tile_cols(j);
  EXPECT_EQ(rows, in.m);
  EXPECT_EQ(cols, in.n);
  EXPECT_TRUE(replay(p).each_tile_once);
}

TEST(TilePlan, OutputTileFitsAChunk) {
  PlanInput in;
  in.m = in.n = in.k = 20000;
  in.tile = 8192;  // 256 MiB per tile: too large for a 32 MiB chunk
  in.budget_bytes = 60 * 1024 * kMiB;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok);
  EXPECT_LE(4 * p.mb * p.nb, in.chunk_bytes);
}

// Doubles: every byte count of the plan doubles, so an output tile of doubles still fits a chunk, the plan its budget,
// and the same budget holds half the panel depth of floats.
TEST(TilePlan, DoublesCountEightBytesPerElement) {
  PlanInput in;
  in.m = in.n = in.k = 20000;
  in.tile = 4096;
  in.budget_bytes = 60 * 1024 * kMiB;
  in.elem_size = 8;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok);
  EXPECT_LE(8 * p.mb * p.nb, in.chunk_bytes);
  EXPECT_LE(p.bytes_needed, in.budget_bytes);
  EXPECT_TRUE(replay(p).each_tile_once);
  // A budget that holds all of K for floats needs K passes for doubles.
  PlanInput f;
  f.m = f.n = 4096;
  f.k = 100000;
  f.tile = 512;  // the smallest tile K passes keep: doubles cannot shrink their tiles to avoid passes
  f.budget_bytes = 3 * 4 * 512 * 512 + 3 * 4 * 512 * f.k + kMiB;
  const Plan pf = make_plan(f);
  f.elem_size = 8;
  const Plan pd = make_plan(f);
  ASSERT_TRUE(pf.ok);
  ASSERT_TRUE(pd.ok);
  EXPECT_EQ(pf.passes, 1);
  EXPECT_GT(pd.passes, 1);
  EXPECT_LE(pd.bytes_needed, f.budget_bytes);
  EXPECT_TRUE(replay(pd).each_tile_once);
  // Complex double (16 bytes): deeper passes still, within the budget. Element sizes other than 4, 8 and 16 are
  // refused.
  f.elem_size = 16;
  const Plan pz = make_plan(f);
  ASSERT_TRUE(pz.ok);
  EXPECT_GT(pz.passes, pd.passes);
  EXPECT_LE(pz.bytes_needed, f.budget_bytes);
  EXPECT_LE(16 * pz.mb * pz.nb, f.chunk_bytes);
  EXPECT_TRUE(replay(pz).each_tile_once);
  f.elem_size = 2;
  EXPECT_FALSE(make_plan(f).ok);
}

TEST(TilePlan, RefusesWhatCannotFit) {
  PlanInput in;
  in.m = in.n = in.k = 1000;
  in.budget_bytes = 1000;
  const Plan p = make_plan(in);
  EXPECT_FALSE(p.ok);
  EXPECT_FALSE(p.why.empty());
}

TEST(TilePlan, RandomShapesRespectTheBudget) {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 2000; ++t) {
    PlanInput in;
    in.m = 1 + int64_t(rng() % 5000);
    in.n = 1 + int64_t(rng() % 5000);
    in.k = 1 + int64_t(rng() % 20000);
    in.tile = 1 + int64_t(rng() % 3000);
    in.budget_bytes = int64_t(64 * 1024) + int64_t(rng() % (512 * kMiB));
    in.workspace_bytes = int64_t(rng() % kMiB);
    in.elem_size = t % 2 ? 8 : 4;
    const Plan p = make_plan(in);
    if (!p.ok) continue;
    ASSERT_LE(p.bytes_needed, in.budget_bytes) << in.m << "x" << in.n << "x" << in.k << " tile " << in.tile;
    ASSERT_GE(p.a_slots, 1);
    ASSERT_LE(p.a_slots, p.mt);
    ASSERT_EQ(p.groups * p.a_slots >= p.mt, true);
    ASSERT_TRUE(replay(p).each_tile_once);
  }
}

TEST(ParseBytes, Suffixes) {
  EXPECT_EQ(parse_bytes("123"), 123);
  EXPECT_EQ(parse_bytes("8G"), 8 * 1024 * kMiB);
  EXPECT_EQ(parse_bytes("8GB"), 8 * 1024 * kMiB);
  EXPECT_EQ(parse_bytes("512m"), 512 * kMiB);
  EXPECT_EQ(parse_bytes("1.5K"), 1536);
  EXPECT_EQ(parse_bytes("x"), -1);
  EXPECT_EQ(parse_bytes("8Q"), -1);
  EXPECT_EQ(parse_bytes(""), -1);
  EXPECT_EQ(parse_bytes(nullptr), -1);
}

// The blocks of 2 .. 8 devices cover C once, and each device moves less than all of A and B.
void split_moves_less(const Plan& p) {
  for (int devices : {2, 3, 4, 6, 8}) {
    const std::vector<TileBlock> blocks = split_tiles(p, devices);
    ASSERT_EQ(int(blocks.size()), devices);
    std::map<std::pair<int64_t, int64_t>, int> seen;
    int64_t most = 0;
    for (const TileBlock& b : blocks) {
      const Replay r = replay(p, &b, &seen);
      most = std::max(most, r.a_uploads + r.b_uploads);
    }
    EXPECT_EQ(int64_t(seen.size()), p.mt * p.nt) << devices;
    for (auto& kv : seen) EXPECT_EQ(kv.second, 1) << devices;
    // 4 devices: a 2 x 2 grid, 8 A and 8 B panels each (not all 16 A panels and 4 B panels).
    if (devices == 4) {
      EXPECT_EQ(most, 16);
    } else if (devices == 2) {
      EXPECT_EQ(most, 16 + 8);
    }
    EXPECT_LT(most, p.mt + p.nt) << devices;  // less than one device moving everything
  }
}

// Several devices: each device's block moves only its share of A and B, and the blocks cover C exactly once.
TEST(TilePlan, SplitAmongDevicesMovesLessPerDevice) {
  for (bool whole : {false, true}) {
    SCOPED_TRACE(whole ? "whole panels" : "column order");
    PlanInput in;
    in.m = in.n = in.k = 32768;
    in.elem_size = 8;
    in.budget_bytes = 100 * 1024 * kMiB;
    in.whole_panels = whole;
    const Plan p = make_plan(in);
    ASSERT_TRUE(p.ok) << p.why;
    ASSERT_EQ(p.whole, whole);
    ASSERT_EQ(p.mt, 16);
    ASSERT_EQ(p.a_slots, 16);
    const std::vector<TileBlock> one = split_tiles(p, 1);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].items(), whole ? p.mt * p.nt : p.nt);  // tiles; or one group of A, every B panel
    split_moves_less(p);
  }
}

TEST(TilePlan, SplitOfASmallTileGridLeavesDevicesToSteal) {
  PlanInput in;
  in.m = 4096;
  in.n = 2048;
  in.k = 512;
  in.budget_bytes = 8 * 1024 * kMiB;
  const Plan p = make_plan(in);
  ASSERT_TRUE(p.ok) << p.why;
  ASSERT_EQ(p.mt, 2);
  ASSERT_EQ(p.nt, 1);
  const std::vector<TileBlock> blocks = split_tiles(p, 4);
  ASSERT_EQ(blocks.size(), 2u);  // one per tile row; the other two devices take items from these
  std::map<std::pair<int64_t, int64_t>, int> seen;
  for (const TileBlock& b : blocks) replay(p, &b, &seen);
  EXPECT_EQ(int64_t(seen.size()), 2);
  for (auto& kv : seen) EXPECT_EQ(kv.second, 1);
}

// Whole panels: each panel has its own slot and moves once; the items are single tiles in growing squares, so after
// s * s items of a block exactly its s x s corner is done (the panels of s rows and s columns), on a square block, a
// tall one (2 devices: 16 x 8), grids with partial tiles, and long thin grids (100 x 9, 9 x 100).
TEST(TilePlan, WholePanelsGrowSquares) {
  struct Case {
    int64_t m, n, k, tile;
    int devices;
  };
  for (const Case& c : {Case{32768, 32768, 32768, 2048, 1}, Case{32768, 32768, 32768, 2048, 2},
                        Case{1000, 700, 300, 128, 1}, Case{1000, 700, 300, 128, 4}, Case{1000, 90, 50, 10, 1},
                        Case{90, 1000, 50, 10, 1}, Case{1000, 1000, 50, 7, 3}}) {
    SCOPED_TRACE(testing::Message() << c.m << "x" << c.n << " tile " << c.tile << " on " << c.devices);
    PlanInput in;
    in.m = c.m, in.n = c.n, in.k = c.k, in.tile = c.tile;
    in.elem_size = 8;
    in.budget_bytes = 100 * 1024 * kMiB;
    const Plan p = make_plan(in);
    ASSERT_TRUE(p.ok) << p.why;
    ASSERT_TRUE(p.whole);
    EXPECT_EQ(p.a_slots, p.mt);
    EXPECT_EQ(p.b_slots, p.nt);
    EXPECT_LE(p.bytes_needed, in.budget_bytes);
    std::map<std::pair<int64_t, int64_t>, int> seen;
    for (const TileBlock& b : split_tiles(p, c.devices)) {
      const int64_t rows = b.r1 - b.r0, cols = b.c1 - b.c0;
      ASSERT_EQ(b.items(), rows * cols);
      const Replay r = replay(p, &b, &seen);
      EXPECT_EQ(r.a_uploads, rows);  // each of the block's panels once
      EXPECT_EQ(r.b_uploads, cols);
      std::set<std::pair<int64_t, int64_t>> done;
      for (int64_t w = 0; w < b.items(); ++w) {
        int64_t i0, i1, j;
        block_item(p, b, w, &i0, &i1, &j);
        ASSERT_EQ(i1, i0 + 1);
        ASSERT_TRUE(i0 >= b.r0 && i0 < b.r1 && j >= b.c0 && j < b.c1);
        done.insert({i0 - b.r0, j - b.c0});
        // After the items of shells 0 .. s-1, exactly the tiles whose coordinates are both below s (within the block).
        for (int64_t s = 1; s <= std::max(rows, cols); ++s) {
          if (w + 1 != std::min(s, rows) * std::min(s, cols)) continue;
          for (const auto& t : done) EXPECT_TRUE(t.first < s && t.second < s) << w;
        }
      }
      EXPECT_EQ(int64_t(done.size()), rows * cols);
    }
    EXPECT_EQ(int64_t(seen.size()), p.mt * p.nt);
    for (auto& kv : seen) EXPECT_EQ(kv.second, 1);
  }
}

// Whole panels only where every panel fits in half the budget: just below that, the column order with A whole.
TEST(TilePlan, WholePanelsOnlyWithinHalfTheBudget) {
  PlanInput in;
  in.m = in.n = in.k = 8192;
  in.elem_size = 8;
  const int64_t panels = 2 * 8192 * int64_t(8192) * 8;  // A and B
  in.budget_bytes = 2 * panels + 256 * kMiB;            // and the three C tiles (32 MiB each)
  Plan p = make_plan(in);
  ASSERT_TRUE(p.ok);
  EXPECT_TRUE(p.whole);
  in.budget_bytes = 2 * panels - 64 * kMiB;
  p = make_plan(in);
  ASSERT_TRUE(p.ok);
  EXPECT_FALSE(p.whole);
  EXPECT_EQ(p.a_slots, p.mt);
  EXPECT_EQ(p.b_slots, 2);
  EXPECT_TRUE(replay(p).each_tile_once);
}

}  // namespace
}  // namespace bom
