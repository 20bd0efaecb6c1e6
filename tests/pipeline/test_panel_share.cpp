// Who uploads a panel several GPUs need (panel_share.h): the sharers take turns, each panel is staged once and copied
// to the others from a driver that holds it, drivers that would wait for each other do not, and a failed or finished
// driver is not waited for.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "offload/module/panel_share.h"

namespace bom {
namespace {

using namespace std::chrono_literals;

Plan whole_plan(int64_t tiles_m, int64_t tiles_n) {
  PlanInput in;
  in.m = 4 * tiles_m;
  in.n = 4 * tiles_n;
  in.k = 8;
  in.elem_size = 8;
  in.tile = 4;
  in.budget_bytes = int64_t(1) << 30;
  Plan p = make_plan(in);
  EXPECT_TRUE(p.ok && p.whole);
  return p;
}

TEST(PanelShare, SharersTakeTurnsAtUploading) {
  const Plan p = whole_plan(10, 10);
  // Two devices: blocks side by side (each needs every A panel and its own half of B's).
  const auto two = split_tiles(p, 2);
  ASSERT_EQ(two.size(), 2u);
  ASSERT_TRUE(any_shared_panel(two));
  const auto u2 = preferred_uploaders(p, two);
  ASSERT_EQ(u2.size(), size_t(p.mt + p.nt));
  for (int64_t i = 0; i < p.mt; ++i) EXPECT_EQ(u2[size_t(i)], int(i % 2)) << "A panel " << i;
  for (int64_t j = 0; j < p.nt; ++j) {
    const int owner = two[0].c0 <= j && j < two[0].c1 ? 0 : 1;
    EXPECT_EQ(u2[size_t(p.mt + j)], owner) << "B panel " << j;
  }
  // Four devices, 2 x 2: a band's panels alternate between the two blocks of that band.
  const auto four = split_tiles(p, 4);
  ASSERT_EQ(four.size(), 4u);
  const auto u4 = preferred_uploaders(p, four);
  for (int64_t q = 0; q < p.mt + p.nt; ++q) {
    const bool a = q < p.mt;
    const int64_t x = a ? q : q - p.mt;
    std::vector<int> sharers;
    for (int b = 0; b < 4; ++b)
      if (a ? (four[b].r0 <= x && x < four[b].r1) : (four[b].c0 <= x && x < four[b].c1)) sharers.push_back(b);
    ASSERT_EQ(sharers.size(), 2u);
    EXPECT_EQ(u4[size_t(q)], sharers[size_t(x % 2)]) << "panel " << q;
  }
  // One device: nothing to share.
  EXPECT_FALSE(any_shared_panel(split_tiles(p, 1)));
}

// Runs `drivers` drivers over the plan's blocks as gemm_tiles.cu does (own block first, then the others' items), each
// asking the share for every panel its items need; `delay(d)` is the time driver d spends on an upload and `fail` the
// driver whose uploads fail from its `fail_at`-th on. Checks that every copy comes from a driver holding the panel.
struct Outcome {
  int64_t needs = 0;           // panels asked for, over all drivers
  std::set<int64_t> distinct;  // the panels some driver needed
  int64_t uploads = 0, copies = 0, failed = 0;
  std::vector<int> uploader;  // per panel: the driver that last uploaded it (-1: none)
  bool bad_source = false;
  bool finished = false;
};
Outcome simulate(const Plan& p, int drivers, std::vector<int> delay_us, int fail = -1, int fail_at = 0,
                 unsigned seed = 1) {
  const auto blocks = split_tiles(p, drivers);
  PanelShare share(preferred_uploaders(p, blocks), drivers);
  std::vector<std::atomic<int64_t>> next(blocks.size());
  for (auto& n : next) n.store(0);
  // holder[q * drivers + d]: driver d's slot holds panel q (set before uploaded(), as the driver's event is recorded
  // before it publishes).
  std::vector<std::atomic<int>> holder(size_t((p.mt + p.nt) * drivers));
  for (auto& h : holder) h.store(0);
  Outcome out;
  out.uploader.assign(size_t(p.mt + p.nt), -1);
  std::mutex mu;
  auto run = [&](int me) {
    std::mt19937 rng(seed * 31 + unsigned(me));
    std::vector<char> held(size_t(p.mt + p.nt), 0);
    int uploads = 0;
    bool left = false, failed = false;
    for (;;) {
      int64_t i0 = 0, i1 = 0, j = 0;
      int got = -1;
      for (int q = 0; q < int(blocks.size()) && got < 0; ++q) {
        const int b = (me + q) % int(blocks.size());
        const int64_t w = next[size_t(b)].fetch_add(1);
        if (w < blocks[size_t(b)].items()) {
          block_item(p, blocks[size_t(b)], w, &i0, &i1, &j);
          got = b;
        }
      }
      if (got < 0 || failed) break;
      if (got != me && !left) {
        left = true;
        share.left_own_block(me);
      }
      // Stages panel q (claimed by me): false when the upload failed (the driver stops, as a failed GPU's does).
      auto stage = [&](int64_t q) {
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us[size_t(me)] + int(rng() % 50)));
        const bool ok = !(me == fail && uploads++ >= fail_at);
        if (ok) {
          held[size_t(q)] = 1;
          holder[size_t(q * drivers + me)].store(1);
        }
        share.uploaded(q, me, ok);
        std::lock_guard<std::mutex> g(mu);
        if (ok) out.uploader[size_t(q)] = me;
        if (!ok) out.failed++;
        return ok;
      };
      for (int64_t q : {p.mt + j, i0}) {
        if (held[size_t(q)] || failed) continue;
        // As gemm_tiles.cu's stage_ahead: about to wait, stage one panel of the coming own items that is this
        // driver's turn.
        if (!left && !share.ready_for(q, me)) {
          const int64_t from = next[size_t(me)].load();
          bool staged = false;
          for (int64_t w = from; w < std::min(blocks[size_t(me)].items(), from + 64) && !staged; ++w) {
            int64_t a0 = 0, a1 = 0, b0 = 0;
            block_item(p, blocks[size_t(me)], w, &a0, &a1, &b0);
            for (int64_t r : {p.mt + b0, a0}) {
              if (staged || held[size_t(r)] || !share.claim_own(r, me)) continue;
              {
                std::lock_guard<std::mutex> g(mu);
                out.needs++;
                out.distinct.insert(r);
              }
              staged = true;
              failed = !stage(r);
            }
          }
          if (failed) break;
        }
        const PanelShare::Source s = share.need(q, me);
        {
          std::lock_guard<std::mutex> g(mu);
          out.needs++;
          out.distinct.insert(q);
          if (!s.upload && !holder[size_t(q * drivers + s.from)].load()) out.bad_source = true;
        }
        if (!s.upload) {
          held[size_t(q)] = 1;
          holder[size_t(q * drivers + me)].store(1);
          continue;
        }
        if (!stage(q)) {
          failed = true;
          break;
        }
      }
    }
    if (!left) share.left_own_block(me);
  };
  auto all = std::async(std::launch::async, [&] {
    std::vector<std::thread> t;
    for (int d = 0; d < drivers; ++d) t.emplace_back(run, d);
    for (auto& x : t) x.join();
  });
  if (all.wait_for(20s) != std::future_status::ready) {
    ADD_FAILURE() << "drivers still waiting after 20 s: a deadlock";
    std::_Exit(1);  // the threads cannot be stopped; the test must not hang
  }
  out.uploads = share.uploads();
  out.copies = share.copies();
  out.finished = true;
  return out;
}

TEST(PanelShare, EachPanelStagedOnceAndCopiedFromItsHolder) {
  const Plan p = whole_plan(12, 12);
  for (int drivers : {2, 4})
    for (unsigned seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("drivers " + std::to_string(drivers) + " seed " + std::to_string(seed));
      const Outcome o = simulate(p, drivers, std::vector<int>(size_t(drivers), 200), -1, 0, seed);
      ASSERT_TRUE(o.finished);
      EXPECT_FALSE(o.bad_source);
      // Every panel once from the host; each other need was a copy.
      EXPECT_EQ(o.uploads, int64_t(o.distinct.size()));
      EXPECT_EQ(o.distinct.size(), size_t(p.mt + p.nt));
      // Two devices side by side share A: each A panel is needed twice, staged once.
      if (drivers == 2) {
        EXPECT_GE(o.copies, p.mt);
      }
    }
}

// Two GPUs side by side, one staging four times as fast: the shared A panels are still staged by the two in turn (the
// faster waits for its turn rather than staging every panel), except near the end, once the faster one takes the
// other's items.
TEST(PanelShare, UploadersTakeTheirTurns) {
  const Plan p = whole_plan(16, 16);
  const auto u = preferred_uploaders(p, split_tiles(p, 2));
  const Outcome o = simulate(p, 2, {100, 400});
  int64_t in_turn = 0;
  for (int64_t i = 0; i < p.mt; ++i) in_turn += o.uploader[size_t(i)] == u[size_t(i)];
  EXPECT_GE(in_turn, p.mt - 1) << "of " << p.mt << " A panels staged by their turn's GPU";
}

TEST(PanelShare, SlowAndStealingDriversNeitherHangNorCopyFromNowhere) {
  const Plan p = whole_plan(9, 13);  // blocks of unequal shapes
  for (int drivers : {2, 3, 4}) {
    SCOPED_TRACE("drivers " + std::to_string(drivers));
    std::vector<int> delay(size_t(drivers), 50);
    delay[0] = 3000;  // the others finish their blocks and take most of driver 0's
    const Outcome o = simulate(p, drivers, delay);
    EXPECT_FALSE(o.bad_source);
    EXPECT_EQ(o.uploads, int64_t(o.distinct.size()));
    EXPECT_GT(o.copies, 0);
  }
}

TEST(PanelShare, AFailedUploaderIsNotWaitedFor) {
  const Plan p = whole_plan(12, 12);
  for (int drivers : {2, 4})
    for (int fail_at : {0, 3}) {
      SCOPED_TRACE("drivers " + std::to_string(drivers) + " fail_at " + std::to_string(fail_at));
      const Outcome o = simulate(p, drivers, std::vector<int>(size_t(drivers), 100), 1, fail_at);
      EXPECT_EQ(o.failed, 1);
      EXPECT_FALSE(o.bad_source);
      // The panel that failed is uploaded again by another driver: every needed panel was staged at least once.
      EXPECT_EQ(o.uploads, int64_t(o.distinct.size()) + 1);
    }
}

// Two drivers each wait for the other to start a panel: the second to ask uploads, and the first then copies.
TEST(PanelShare, DriversWaitingForEachOtherDoNotWait) {
  PanelShare share({1, 0}, 2);  // panel 0 preferred by driver 1, panel 1 by driver 0
  std::atomic<bool> returned{false};
  PanelShare::Source first;
  std::thread t([&] {
    first = share.need(0, 0);  // waits for driver 1 to start panel 0
    returned.store(true);
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(returned.load()) << "driver 0 did not wait for driver 1, which is working through its block";
  // Driver 1 needs panel 1, which driver 0 should start, but driver 0 is waiting: it uploads panel 1 itself.
  auto asked = std::async(std::launch::async, [&] { return share.need(1, 1); });
  if (asked.wait_for(5s) != std::future_status::ready) {
    ADD_FAILURE() << "driver 1 waits for driver 0, which waits for driver 1: a deadlock";
    std::_Exit(1);
  }
  const PanelShare::Source second = asked.get();
  EXPECT_TRUE(second.upload);
  share.uploaded(1, 1, true);
  EXPECT_FALSE(returned.load());
  // Driver 1 reaches panel 0 and uploads it; driver 0 copies it from driver 1.
  const PanelShare::Source third = share.need(0, 1);
  EXPECT_TRUE(third.upload);
  share.uploaded(0, 1, true);
  t.join();
  EXPECT_FALSE(first.upload);
  EXPECT_EQ(first.from, 1);
  EXPECT_EQ(share.uploads(), 2);
  EXPECT_EQ(share.copies(), 1);
}

// A driver about to wait stages its own coming panels meanwhile: claim_own takes only a free panel of its turn (or of
// nobody's), and ready_for says whether need() would return at once.
TEST(PanelShare, StagingAheadTakesOnlyItsOwnTurns) {
  PanelShare share({0, 1, -1}, 2);
  EXPECT_FALSE(share.ready_for(1, 0)) << "panel 1 is driver 1's to start, and driver 1 is at work";
  EXPECT_TRUE(share.ready_for(0, 0));
  EXPECT_FALSE(share.claim_own(1, 0)) << "driver 1's turn";
  EXPECT_TRUE(share.claim_own(0, 0));
  EXPECT_FALSE(share.claim_own(0, 1)) << "already claimed";
  EXPECT_FALSE(share.ready_for(0, 1)) << "claimed, not yet queued";
  share.uploaded(0, 0, true);
  EXPECT_TRUE(share.ready_for(0, 1));
  const PanelShare::Source s = share.need(0, 1);
  EXPECT_FALSE(s.upload);
  EXPECT_EQ(s.from, 0);
  EXPECT_TRUE(share.claim_own(2, 1)) << "nobody's turn";
  share.uploaded(2, 1, true);
  EXPECT_EQ(share.uploads(), 2);
  EXPECT_EQ(share.copies(), 1);
}

// A driver past its own block (stealing, or stopped) is not waited for: the panel's other sharer uploads it.
TEST(PanelShare, ADriverPastItsBlockIsNotWaitedFor) {
  PanelShare share({1}, 2);
  std::atomic<bool> returned{false};
  PanelShare::Source s;
  std::thread t([&] {
    s = share.need(0, 0);
    returned.store(true);
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(returned.load());
  share.left_own_block(1);
  t.join();
  EXPECT_TRUE(s.upload);
  // And a stealing driver does not wait for an active one either.
  PanelShare other({0}, 2);
  other.left_own_block(1);
  EXPECT_TRUE(other.need(0, 1).upload);
}

}  // namespace
}  // namespace bom
