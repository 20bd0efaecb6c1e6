// Who uploads a panel several devices need, and who copies it from whom (see panel_share.h).
#include "offload/module/panel_share.h"

#include <algorithm>
#include <utility>

namespace bom {

std::vector<int> preferred_uploaders(const Plan& p, const std::vector<TileBlock>& blocks) {
  std::vector<int> out(size_t(p.mt + p.nt), -1);
  std::vector<int> sharers;
  for (int64_t q = 0; q < p.mt + p.nt; ++q) {
    const bool a = q < p.mt;
    const int64_t x = a ? q : q - p.mt;
    sharers.clear();
    for (size_t b = 0; b < blocks.size(); ++b) {
      const TileBlock& t = blocks[b];
      if (a ? (t.r0 <= x && x < t.r1) : (t.c0 <= x && x < t.c1)) sharers.push_back(int(b));
    }
    if (!sharers.empty()) out[size_t(q)] = sharers[size_t(x % int64_t(sharers.size()))];
  }
  return out;
}

bool any_shared_panel(const std::vector<TileBlock>& blocks) {
  for (size_t b = 0; b < blocks.size(); ++b)
    for (size_t c = b + 1; c < blocks.size(); ++c) {
      const TileBlock &x = blocks[b], &y = blocks[c];
      if (std::max(x.r0, y.r0) < std::min(x.r1, y.r1) || std::max(x.c0, y.c0) < std::min(x.c1, y.c1)) return true;
    }
  return false;
}

PanelShare::PanelShare(std::vector<int> preferred, int drivers)
    : p_(preferred.size()), waits_for_(size_t(drivers), -1), away_(size_t(drivers), 0) {
  for (size_t q = 0; q < preferred.size(); ++q) p_[q].preferred = preferred[q];
}

bool PanelShare::waiting_to_start(int d) const {
  // Still waiting for a panel that nobody has started. (A driver woken because its panel was started may not have run
  // yet: it is no longer waiting for anyone to start one, and its turns are still its own.)
  const int64_t q = waits_for_[size_t(d)];
  return q >= 0 && p_[size_t(q)].state == kFree;
}

bool PanelShare::may_start(const Panel& x, int me) const {
  const int u = x.preferred;
  const bool others = u >= 0 && u != me && u < int(away_.size());
  return !others || away_[size_t(me)] || away_[size_t(u)] || waiting_to_start(u);
}

bool PanelShare::ready_for(int64_t q, int me) const {
  std::lock_guard<std::mutex> g(mu_);
  const Panel& x = p_[size_t(q)];
  if (x.state == kReady) return true;
  return x.state == kFree && may_start(x, me);
}

bool PanelShare::claim_own(int64_t q, int me) {
  std::lock_guard<std::mutex> g(mu_);
  Panel& x = p_[size_t(q)];
  if (x.state != kFree || (x.preferred >= 0 && x.preferred != me)) return false;
  x.state = kClaimed;
  x.by = me;
  uploads_++;
  return true;
}

PanelShare::Source PanelShare::need(int64_t q, int me) {
  std::unique_lock<std::mutex> lk(mu_);
  Panel& x = p_[size_t(q)];
  for (;;) {
    if (x.state == kReady && x.by != me) {
      copies_++;
      return {false, x.by};
    }
    if (x.state == kFree || (x.state == kReady && x.by == me)) {
      if (x.state == kReady || may_start(x, me)) {  // kReady here: me's own upload, which it no longer holds
        x.state = kClaimed;
        x.by = me;
        uploads_++;
        return {true, me};
      }
      // Wait for its uploader to start it; those waiting for me to start a panel see me waiting and stop.
      waits_for_[size_t(me)] = q;
      cv_.notify_all();
      cv_.wait(lk);
      waits_for_[size_t(me)] = -1;
      continue;
    }
    // Claimed by another driver, which is queuing its upload now (it waits for nothing in between): a short wait.
    cv_.wait(lk);
  }
}

void PanelShare::uploaded(int64_t q, int me, bool ok) {
  std::lock_guard<std::mutex> g(mu_);
  Panel& x = p_[size_t(q)];
  if (x.state == kClaimed && x.by == me) {
    x.state = ok ? kReady : kFree;
    x.by = ok ? me : -1;
  }
  if (!ok) away_[size_t(me)] = 1;
  cv_.notify_all();
}

void PanelShare::left_own_block(int me) {
  std::lock_guard<std::mutex> g(mu_);
  away_[size_t(me)] = 1;
  cv_.notify_all();
}

int64_t PanelShare::uploads() const {
  std::lock_guard<std::mutex> g(mu_);
  return uploads_;
}
int64_t PanelShare::copies() const {
  std::lock_guard<std::mutex> g(mu_);
  return copies_;
}

}  // namespace bom
