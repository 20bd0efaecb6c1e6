// Reused host registrations, invalidated by userfaultfd events (see host_pins.h).
#include "offload/module/host_pins.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "offload/module/uffd_watch.h"

namespace bom {

bool anonymous_mapping(const void* p, size_t len, uintptr_t* lo, uintptr_t* hi, bool* guard_below) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + len;
  if (guard_below) *guard_below = false;
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (!f) return false;
  char line[512];
  bool ok = false, prev_guard = false;
  unsigned long prev_end = 0;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long s = 0, e = 0, off = 0, inode = 0;
    char perms[8] = {}, dev[16] = {};
    int pos = 0;
    if (std::sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &s, &e, perms, &off, dev, &inode, &pos) < 6) continue;
    if (a < s || a >= e) {
      prev_guard = std::strcmp(perms, "---p") == 0;
      prev_end = e;
      continue;
    }
    if (guard_below) *guard_below = prev_guard && prev_end == s;
    const char* name = line + pos;
    while (*name == ' ') ++name;
    // Unnamed anonymous mappings only: malloc's large blocks and the program's own mmaps. Not [heap]: brk trims
    // it on ordinary free() calls, and every trim would drop (and re-cost) the registration.
    const bool anon_name = *name == '\n' || *name == '\0';
    ok = b <= e && std::strcmp(perms, "rw-p") == 0 && inode == 0 && anon_name;
    *lo = s;
    *hi = e;
    break;
  }
  std::fclose(f);
  return ok;
}

HostPins::HostPins(PinOps ops, int64_t budget_bytes) : ops_(ops), budget_(budget_bytes) {}

void HostPins::start_tracking() {
  started_ = true;
  UffdWatch& w = UffdWatch::get();
  if (!(events_ = w.events(&why_not_))) return;
  seq_ = w.sequence();
  // Unpin at once, not at the next call: until then the program's own CUDA copies on these addresses would still
  // go through the old pages.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t u;
  if (pthread_create(&u, nullptr, &HostPins::unpinner_main, this) == 0) {
    pthread_detach(u);
    w.add_waker(&HostPins::wake, this);
  } else {
    why_not_ = "no thread for unpinning";
    events_ = false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void HostPins::wake(void* self) {
  HostPins* h = static_cast<HostPins*>(self);
  {
    std::lock_guard<std::mutex> g(h->unpin_mu_);
    h->unpin_due_ = true;
  }
  h->unpin_cv_.notify_one();
}

void* HostPins::unpinner_main(void* self) {
  HostPins* h = static_cast<HostPins*>(self);
  pthread_setname_np(pthread_self(), "bo-unpin");  // top and the mix benchmark tell it from the CPU BLAS's threads
  for (;;) {
    {
      std::unique_lock<std::mutex> g(h->unpin_mu_);
      h->unpin_cv_.wait(g, [&] { return h->unpin_due_; });
      h->unpin_due_ = false;
    }
    std::lock_guard<std::mutex> g(h->mu_);
    h->drain_locked();
    h->collect_locked();
  }
  return nullptr;
}

bool HostPins::tracking(std::string* why) {
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) start_tracking();
  if (why) *why = why_not_;
  return events_;
}

void HostPins::poll_events() {
  std::lock_guard<std::mutex> g(mu_);
  drain_locked();
}

void HostPins::drain_locked() {
  if (!events_) return;
  UffdWatch::get().changes_since(&seq_, [this](uintptr_t lo, uintptr_t hi) { changed_locked(lo, hi); });
}

void HostPins::changed_locked(uintptr_t lo, uintptr_t hi) {
  for (Entry& e : entries_)
    if (e.live && e.lo < hi && lo < e.hi) e.stale = true;
  for (Seen& s : seen_)
    if (s.lo < hi && lo < s.hi) {
      s.uses = 0;
      s.staged = 0;  // new memory pays its own rent
      ++s.changes;
    }
  refused_.erase(
      std::remove_if(refused_.begin(), refused_.end(),
                     [&](const std::pair<uintptr_t, uintptr_t>& r) { return r.first < hi && lo < r.second; }),
      refused_.end());
}

// Unpins what changed or was evicted once no call holds it.
void HostPins::collect_locked() {
  if (closing_.load()) return;
  bool busy = false;
  for (Entry& e : entries_) {
    if (!e.live || !e.stale || e.refs > 0) continue;
    // Unpinning a matrix the program freed costs the driver 15-20 ms of CPU per 256 MiB.
    if (!busy) {
      busy = true;
      unpinning_.store(true, std::memory_order_relaxed);
      if (ops_.busy) ops_.busy(+1);
    }
    // The mapping stays watched (uffd_watch.h: nothing is unregistered; the residency cache may rely on it).
    ops_.unpin(reinterpret_cast<void*>(e.lo), e.hi - e.lo);
    stats_.pinned_bytes -= int64_t(e.hi - e.lo);
    e.live = false;
  }
  if (busy) {
    if (ops_.busy) ops_.busy(-1);
    unpinning_.store(false, std::memory_order_relaxed);
  }
}

bool HostPins::register_locked(uintptr_t lo, uintptr_t hi) {
  const int64_t len = int64_t(hi - lo);
  if (len > budget_) return false;
  // Room within the budget: least recently used first (only those no call holds).
  while (stats_.pinned_bytes + len > budget_) {
    Entry* victim = nullptr;
    for (Entry& e : entries_)
      if (e.live && !e.stale && e.refs == 0 && (!victim || e.last_use < victim->last_use)) victim = &e;
    if (!victim) return false;
    victim->stale = true;
    ++stats_.evicted;
    collect_locked();
  }
  if (!UffdWatch::get().watch(lo, hi)) return false;
  if (!ops_.pin(reinterpret_cast<void*>(lo), size_t(len))) return false;
  Entry* slot = nullptr;
  for (Entry& e : entries_)
    if (!e.live) slot = &e;
  if (!slot) {
    entries_.emplace_back();
    slot = &entries_.back();
  }
  *slot = Entry{lo, hi, 0, false, true, ++clock_};
  stats_.pinned_bytes += len;
  ++stats_.registrations;
  // A change between reading the mapping and registering it is in the queue now.
  drain_locked();
  return !slot->stale;
}

HostPins::Lease HostPins::acquire(const void* p, size_t len) {
  Lease l;
  if (!p || len == 0) return l;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + len;
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) start_tracking();
  drain_locked();
  collect_locked();
  // Never hand out anything overlapping a changed registration still held by another call.
  for (const Entry& e : entries_)
    if (e.live && e.stale && e.lo < b && a < e.hi) return l;
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.live && !e.stale && e.lo <= a && b <= e.hi) {
      ++e.refs;
      e.last_use = ++clock_;
      ++stats_.hits;
      l.entry = int(i);
      l.direct = true;
      return l;
    }
  }
  if (ops_.pinned_elsewhere && ops_.pinned_elsewhere(p) &&
      ops_.pinned_elsewhere(reinterpret_cast<const void*>(b - 1))) {
    l.direct = true;  // the program's own page-locked memory
    return l;
  }
  if (!events_) return l;
  uintptr_t lo = 0, hi = 0;
  if (!anonymous_mapping(p, len, &lo, &hi)) return l;
  Seen* s = nullptr;
  for (Seen& q : seen_)
    if (q.lo == lo && q.hi == hi) s = &q;
  if (!s) {
    if (seen_.size() >= 256) seen_.erase(seen_.begin());
    seen_.push_back(Seen{lo, hi, 0, 0, 0});
    s = &seen_.back();
  }
  // A mapping that keeps changing under us (freed and reallocated between calls) is not worth pinning; nor one whose
  // staging has not yet cost what registering it (and undoing that) would.
  const bool due = s->due(pin_after(lo, hi));
  ++s->uses;
  if (!due) {
    s->staged += double(len);
    ++stats_.staged_unregistered;
    return l;
  }
  if (!register_locked(lo, hi)) return l;
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.live && !e.stale && e.lo == lo && e.hi == hi) {
      ++e.refs;
      l.entry = int(i);
      l.direct = true;
      return l;
    }
  }
  return l;
}

void HostPins::credit_staged(const void* p, size_t len, double bytes) {
  if (!p || len == 0 || !(bytes > 0)) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + len;
  std::lock_guard<std::mutex> g(mu_);
  for (Seen& q : seen_)
    if (q.lo <= a && b <= q.hi) q.staged += bytes;
}

int HostPins::state(const void* p, size_t len) {
  if (!p || len == 0) return 0;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + len;
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) start_tracking();
  drain_locked();
  for (const Entry& e : entries_)
    if (e.live && e.lo < b && a < e.hi) return !e.stale && e.lo <= a && b <= e.hi ? 1 : 0;
  if (!events_) return 0;
  for (const Seen& q : seen_)
    if (q.lo <= a && b <= q.hi) {
      const double after = pin_after(q.lo, q.hi);
      return q.changes < 3 && (after == 0 || q.due(after)) ? 2 : 0;
    }
  for (const auto& r : refused_)
    if (r.first <= a && b <= r.second) return 0;
  uintptr_t lo = 0, hi = 0;
  const bool ok = anonymous_mapping(p, len, &lo, &hi);
  if (!ok) {
    if (lo < hi && lo <= a && b <= hi) {
      if (refused_.size() >= 64) refused_.erase(refused_.begin());
      refused_.emplace_back(lo, hi);
    }
    return 0;
  }
  if (seen_.size() >= 256) seen_.erase(seen_.begin());
  seen_.push_back(Seen{lo, hi, 0, 0, 0});
  return pin_after(lo, hi) == 0 ? 2 : 0;  // with rent or buy, a first use stages
}

void HostPins::release(const Lease& l) {
  if (l.entry < 0) return;
  std::lock_guard<std::mutex> g(mu_);
  --entries_[size_t(l.entry)].refs;
}

PinStats HostPins::stats() {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

}  // namespace bom
