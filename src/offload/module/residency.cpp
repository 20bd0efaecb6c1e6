// The residency cache (see residency.h).
#include "offload/module/residency.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "offload/module/host_pins.h"
#include "offload/module/uffd_watch.h"
#include "offload/one_time_cost.h"

namespace bom {
namespace {

constexpr uintptr_t kPage = 4096;
constexpr uintptr_t kRegionAlign = uintptr_t(64) << 20;  // copies of parts of huge mappings grow in these steps
uintptr_t page_down(uintptr_t x) { return x & ~(kPage - 1); }
uintptr_t page_up(uintptr_t x) { return (x + kPage - 1) & ~(kPage - 1); }

bool bit(const std::vector<uint64_t>& v, size_t i) { return (v[i >> 6] >> (i & 63)) & 1; }
// Pages [i0, i1) of a bit vector: how many are set, and setting them all (whole words at a time: an operand of a
// resident 1 GiB matrix is 262144 pages, asked about at every call).
int64_t count_bits(const std::vector<uint64_t>& v, size_t i0, size_t i1) {
  int64_t n = 0;
  while (i0 < i1 && (i0 & 63)) n += bit(v, i0++);
  for (; i0 + 64 <= i1; i0 += 64) n += __builtin_popcountll(v[i0 >> 6]);
  while (i0 < i1) n += bit(v, i0++);
  return n;
}
void set_bits(std::vector<uint64_t>& v, size_t i0, size_t i1) {
  while (i0 < i1 && (i0 & 63)) v[i0 >> 6] |= uint64_t(1) << (i0 & 63), ++i0;
  for (; i0 + 64 <= i1; i0 += 64) v[i0 >> 6] = ~uint64_t(0);
  while (i0 < i1) v[i0 >> 6] |= uint64_t(1) << (i0 & 63), ++i0;
}
void set_bit(std::vector<uint64_t>& v, size_t i, bool on) {
  if (on)
    v[i >> 6] |= uint64_t(1) << (i & 63);
  else
    v[i >> 6] &= ~(uint64_t(1) << (i & 63));
}

uint64_t span_bytes(const Residency::Operand& o) {
  return uint64_t(o.elem_size) * uint64_t((o.cols - 1) * o.ld + o.rows);
}

// An operand's page range; false when it is too small to matter. *dense: its elements fill at least half of its pages
// (a new copy is made only for those: a 64-row strip of a large matrix touches every page of it; inside an existing
// copy such a strip is served like any operand).
bool worth_it(const Residency::Operand& o, uintptr_t* a, uintptr_t* b, bool* dense) {
  if (!o.p || o.rows <= 0 || o.cols <= 0 || o.ld < o.rows || o.elem_size <= 0) return false;
  const uintptr_t p = reinterpret_cast<uintptr_t>(o.p);
  *a = page_down(p);
  *b = page_up(p + span_bytes(o));
  const int64_t bytes = int64_t(o.elem_size) * o.rows * o.cols;
  *dense = uint64_t(bytes) * 2 >= *b - *a;
  return bytes >= Residency::kMinBytes;
}

// Stack pages are rewritten by every call frame: the calling thread's stack (own_stack), and mappings the kernel marks
// as stacks (grows-down) or that glibc maps for thread stacks (MAP_STACK sets "no huge pages" since Linux 6.7):
// flagged_stack, from /proc/self/smaps. That read walks the page tables of every mapping it lists, 7-20 ms at the first
// query about each n = 1024 to 8192 matrix of bench/mix on the lent H100, so only mappings laid out like a thread's
// stack (glibc puts a guard page below) are read, once each. (Were one missed, its samples would be found written
// and the candidate backed off; a copy is validated by the write record before every use either way.)
bool own_stack(uintptr_t lo, uintptr_t hi) {
  // Asked once per thread: for the main thread glibc reads /proc/self/maps to answer.
  thread_local uintptr_t s = 0, e = 0;
  thread_local bool known = false;
  if (!known) {
    known = true;
    pthread_attr_t at;
    if (pthread_getattr_np(pthread_self(), &at) != 0) return false;
    void* addr = nullptr;
    size_t size = 0;
    pthread_attr_getstack(&at, &addr, &size);
    pthread_attr_destroy(&at);
    s = reinterpret_cast<uintptr_t>(addr);
    e = s + size;
  }
  return lo < e && s < hi;
}

bool flagged_stack(uintptr_t lo) {
  FILE* f = std::fopen("/proc/self/smaps", "re");
  if (!f) return true;
  char line[512];
  bool in = false, stack = false;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long s = 0, e = 0;
    if (std::sscanf(line, "%lx-%lx ", &s, &e) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
      if (in) break;
      in = s == lo;
      continue;
    }
    if (in && std::strncmp(line, "VmFlags:", 8) == 0) {
      stack = std::strstr(line, " gd") || std::strstr(line, " nh");
      break;
    }
  }
  std::fclose(f);
  return stack;
}

}  // namespace

std::string residency_blocked(const char* setting) {
  if (setting && std::strcmp(setting, "off") == 0) return "BLASOFFLOAD_RESIDENCY=off";
  // RDMA and fabric libraries pin memory and let the network card write it: writes no page table sees.
  for (const char* lib : {"libibverbs.so.1", "libfabric.so.1", "libucp.so.0", "libpsm2.so.2"}) {
    if (void* h = dlopen(lib, RTLD_NOLOAD | RTLD_LAZY)) {
      dlclose(h);
      return std::string(lib) +
             " is loaded (network DMA into host memory cannot be tracked; BLASOFFLOAD_RESIDENCY=on "
             "overrides)";
    }
  }
  return "";
}

Residency::Residency(ResidencyOps ops, int64_t budget_bytes) : ops_(ops), budget_(budget_bytes) {}

bool Residency::available(std::string* why) {
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) {
    started_ = true;
    tracking_ = UffdWatch::get().write_tracking(&why_not_);
    if (tracking_) seq_ = UffdWatch::get().sequence();
  }
  if (why) *why = why_not_;
  return tracking_;
}

void Residency::drain_locked() {
  UffdWatch::get().changes_since(&seq_, [this](uintptr_t lo, uintptr_t hi) { changed_locked(lo, hi); });
}

void Residency::changed_locked(uintptr_t lo, uintptr_t hi) {
  for (Entry& e : entries_) {
    if (!e.live || e.hi <= lo || hi <= e.lo) continue;
    if (e.refs == 0) {
      ++stats_.dropped_changed;
      drop_locked(e, true);  // what is left of it stays mapped: no more faults for nothing
      continue;
    }
    const uintptr_t a = std::max(lo, e.lo), b = std::min(hi, e.hi);
    for (uintptr_t x = a; x < b; x += kPage) set_bit(e.valid, (x - e.lo) / kPage, false);
  }
  candidates_.erase(std::remove_if(candidates_.begin(), candidates_.end(),
                                   [&](const Candidate& c) { return c.lo < hi && lo < c.hi; }),
                    candidates_.end());
  auto overlaps = [&](const std::pair<uintptr_t, uintptr_t>& r) { return r.first < hi && lo < r.second; };
  refused_.erase(std::remove_if(refused_.begin(), refused_.end(), overlaps), refused_.end());
  not_stack_.erase(std::remove_if(not_stack_.begin(), not_stack_.end(), overlaps), not_stack_.end());
}

void Residency::drop_locked(Entry& e, bool unprotect) {
  if (unprotect) UffdWatch::get().protect(e.lo, e.hi, false);  // fails harmlessly where the mapping is gone
  ops_.release(ops_.ctx, e.dev, e.hi - e.lo);
  stats_.device_bytes -= int64_t(e.hi - e.lo);
  e = Entry{};
}

bool Residency::eligible_locked(uintptr_t a, uintptr_t b, uintptr_t* map_lo, uintptr_t* map_hi, bool fresh) {
  // Verdicts are remembered (a LAPACK factorization asks thousands of times), but /proc is read again now and then:
  // an unwatched mapping can be replaced without an event.
  if (++refused_age_ >= 256) {
    refused_age_ = 0;
    refused_.clear();
  }
  for (const auto& r : refused_)
    if (r.first <= a && b <= r.second) return false;
  // A watched mapping already found eligible is not read again: its changes come as events. The sample's arming and
  // the copy's creation read it fresh.
  if (!fresh)
    for (const Candidate& c : candidates_)
      if (c.watched && c.lo <= a && b <= c.hi) {
        if (ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(a)) ||
            ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(b - 1)))
          return false;
        *map_lo = c.lo;
        *map_hi = c.hi;
        return true;
      }
  uintptr_t lo = 0, hi = 0;
  bool guard_below = false;
  const bool anon = anonymous_mapping(reinterpret_cast<const void*>(a), b - a, &lo, &hi, &guard_below);
  bool stack = anon && own_stack(lo, hi);
  // Only what is laid out like a thread's stack (a guard page below) has its flags read: malloc's blocks are not.
  if (anon && !stack && guard_below &&
      std::find(not_stack_.begin(), not_stack_.end(), std::make_pair(lo, hi)) == not_stack_.end()) {
    ++stats_.flag_reads;
    stack = flagged_stack(lo);
    if (!stack) {
      if (not_stack_.size() >= 64) not_stack_.erase(not_stack_.begin());
      not_stack_.emplace_back(lo, hi);
    }
  }
  if (!anon || stack) {
    if (lo < hi && lo <= a && b <= hi) {
      if (refused_.size() >= 64) refused_.erase(refused_.begin());
      refused_.emplace_back(lo, hi);
    }
    return false;
  }
  if (ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(a)) ||
      ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(b - 1)))
    return false;  // asked every time: the program may register or unregister it between calls
  *map_lo = lo;
  *map_hi = hi;
  return true;
}

Residency::Candidate* Residency::candidate_locked(uintptr_t map_lo, uintptr_t map_hi, bool create) {
  for (Candidate& c : candidates_)
    if (c.lo == map_lo && c.hi == map_hi) return &c;
  if (!create) return nullptr;
  if (candidates_.size() >= 64) candidates_.erase(candidates_.begin());
  candidates_.emplace_back();
  candidates_.back().lo = map_lo;
  candidates_.back().hi = map_hi;
  return &candidates_.back();
}

void Residency::back_off_locked(Candidate& c) {
  UffdWatch& w = UffdWatch::get();
  for (int i = 0; i < c.n_samples; ++i) w.protect(c.samples[i], c.samples[i] + kPage, false);
  c.n_samples = 0;
  c.uses = 0;
  c.clean = 0;
  c.unscanned = 0;
  c.skip = c.backoff;
  c.backoff = std::min(c.backoff * 2, 1024);
  ++stats_.backoffs;
}

// Read-only either way: a written sample backs the candidate off, which lifts every sample's protection.
int Residency::written_samples(const Candidate& c) {
  UffdWatch& w = UffdWatch::get();
  int written = 0;
  if (c.n_samples > 0 && (c.samples[c.n_samples - 1] - c.samples[0]) / kPage < kSpanScanPages) {
    int next = 0;  // samples ascend; runs come in address order
    const int64_t r =
        w.scan_written(c.samples[0], c.samples[c.n_samples - 1] + kPage, false, [&](uintptr_t lo, uintptr_t hi) {
          while (next < c.n_samples && c.samples[next] < lo) ++next;
          for (; next < c.n_samples && c.samples[next] < hi; ++next) ++written;
        });
    return r < 0 ? std::max(written, 1) : written;  // refused: nothing is known, everything counts as written
  }
  for (int i = 0; i < c.n_samples; ++i)
    if (w.scan_written(c.samples[i], c.samples[i] + kPage, false, [](uintptr_t, uintptr_t) {}) != 0) ++written;
  return written;
}

bool Residency::touch_locked(Candidate& c, uintptr_t a, uintptr_t b, uint64_t use, bool scan_now) {
  const bool counted = use != 0 && use == c.last_use;  // this call already counted (its query, now its GPU call)
  if (counted && !(scan_now && c.unscanned > 0)) return c.clean > 0;
  if (!counted) {
    c.last_use = use;
    // Another range of the mapping (an arena's next matrix): its reuses start from none, and the samples are looked
    // at now, since filling it may have written them (a copy's upload is shared only over uses of the same pages).
    const bool moved = c.ra != a || c.rb != b;
    c.ra = a;
    c.rb = b;
    if (moved) c.clean = 0;
    if (c.skip > 0) {
      --c.skip;
      return false;
    }
    if (++c.uses < 2) return false;
    UffdWatch& w = UffdWatch::get();
    if (c.n_samples == 0) {  // second use: arm the sample (the mapping read fresh: it was not watched until now)
      uintptr_t lo = 0, hi = 0;
      if (!eligible_locked(a, b, &lo, &hi, true) || lo != c.lo || hi != c.hi || !w.watch(c.lo, c.hi)) {
        c.uses = 0;
        c.lo = c.hi = 0;  // stale (the mapping changed while unwatched): the next use starts a new candidate
        return false;
      }
      c.watched = true;
      c.unscanned = 0;
      const uintptr_t pages = (b - a) / kPage;
      const uintptr_t step = std::max<uintptr_t>(1, pages / kSamples);
      for (uintptr_t i = 0; i < pages && c.n_samples < kSamples; i += step) {
        const uintptr_t s = a + i * kPage;
        // Never inside a copy (of another part of this mapping): protecting a page erases the kernel's record of the
        // program's writes to it, which that copy's next scan needs.
        bool in_copy = false;
        for (const Entry& e : entries_) in_copy |= e.live && e.lo <= s && s < e.hi;
        if (!in_copy && w.protect(s, s + kPage, true)) c.samples[c.n_samples++] = s;
      }
      return false;
    }
    // Not before a look found it clean: the first use after arming is looked at, or a query would call a matrix clean
    // that its own GPU call (scan_now) then finds written and stages (a program rewriting its matrix between calls:
    // the policy predicted no upload and the call staged all of it).
    if (!scan_now && !moved && c.clean > 0 && ++c.unscanned < kScanEvery) {
      ++c.clean;
      return true;
    }
  }
  c.unscanned = 0;
  ++stats_.sample_scans;
  const int written = written_samples(c);
  stats_.written_pages += written;
  if (written > 0) {
    back_off_locked(c);
    return false;
  }
  if (!counted) ++c.clean;
  return true;
}

int Residency::entry_for_locked(uintptr_t a, uintptr_t b) {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].live && entries_[i].lo <= a && b <= entries_[i].hi) return int(i);
  return -1;
}

Residency::Entry* Residency::create_locked(uintptr_t a, uintptr_t b, uintptr_t map_lo, uintptr_t map_hi) {
  uintptr_t lo = map_lo, hi = map_hi;
  if (int64_t(map_hi - map_lo) > budget_ / 2) {  // a part of a huge mapping, in steps that keep re-creation rare
    lo = std::max(map_lo, a & ~(kRegionAlign - 1));
    hi = std::min(map_hi, (b + kRegionAlign - 1) & ~(kRegionAlign - 1));
  }
  for (Entry& e : entries_) {
    if (!e.live || e.hi <= lo || hi <= e.lo) continue;
    if (e.refs > 0) return nullptr;
    lo = std::min(lo, e.lo);  // the union: a growing operand replaces its smaller copy
    hi = std::max(hi, e.hi);
    drop_locked(e, false);
  }
  const int64_t size = int64_t(hi - lo);
  if (size > budget_) return nullptr;
  while (stats_.device_bytes + size > budget_) {
    Entry* victim = nullptr;
    for (Entry& e : entries_)
      if (e.live && e.refs == 0 && (!victim || e.last_use < victim->last_use)) victim = &e;
    if (!victim) return nullptr;
    ++stats_.evicted;
    drop_locked(*victim, true);
  }
  if (!UffdWatch::get().watch(map_lo, map_hi)) return nullptr;
  char* dev = static_cast<char*>(ops_.alloc(ops_.ctx, size_t(size)));
  if (!dev) return nullptr;
  Entry* slot = nullptr;
  for (Entry& e : entries_)
    if (!e.live) slot = &e;
  if (!slot) {
    entries_.emplace_back();
    slot = &entries_.back();
  }
  const size_t pages = size_t(size) / kPage;
  slot->lo = lo;
  slot->hi = hi;
  slot->map_lo = map_lo;
  slot->map_hi = map_hi;
  slot->dev = dev;
  slot->valid.assign((pages + 63) / 64, 0);
  slot->ours.assign((pages + 63) / 64, 0);
  slot->live = true;
  stats_.device_bytes += size;
  ++stats_.created;
  return slot;
}

bool Residency::validate_locked(Entry& e, uintptr_t a, uintptr_t b, bool protect, void* stream, bool* rewritten,
                                int64_t* uploaded) {
  const size_t i0 = (a - e.lo) / kPage, i1 = (b - e.lo) / kPage;
  int64_t dirty = 0, ours = 0;
  const int64_t valid_before = count_bits(e.valid, i0, i1);
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t n = UffdWatch::get().scan_written(a, b, protect, [&](uintptr_t lo, uintptr_t hi) {
    for (uintptr_t x = std::max(lo, a); x < std::min(hi, b); x += kPage) {
      const size_t i = (x - e.lo) / kPage;
      dirty += bit(e.valid, i);
      ours += bit(e.ours, i);
      set_bit(e.valid, i, false);
      set_bit(e.ours, i, false);
    }
  });
  ++stats_.scans;
  stats_.scan_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (n < 0) return false;  // nothing known: drop the copy
  // Pages found written that had been protected (valid): each cost the program one write fault. (Pages never
  // protected, such as an output's left unprotected, show as written too, at no cost.)
  stats_.written_pages += dirty;
  // Written pages that were protected again after our write-back: the program rewrites our results; stop protecting
  // them (their faults would buy nothing).
  if (ours > 0 && ++e.rewritten_outputs >= 2) e.protect_outputs = false;
  if (valid_before >= 16) e.strikes = dirty * 4 >= valid_before * 3 ? e.strikes + 1 : 0;
  const bool all_of_much = int64_t(valid_before * kPage) >= (int64_t(64) << 20) && dirty * 20 >= valid_before * 19;
  if (e.strikes >= 2 || all_of_much) {
    *rewritten = true;
    return false;
  }
  std::vector<CopyRun> runs;
  int64_t bytes = 0;
  for (size_t i = i0; i < i1;) {
    if ((i & 63) == 0 && i + 64 <= i1 && e.valid[i >> 6] == ~uint64_t(0)) {
      i += 64;
      continue;
    }
    if (bit(e.valid, i)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < i1 && !bit(e.valid, j)) ++j;
    runs.push_back(CopyRun{e.dev + i * kPage, reinterpret_cast<const void*>(e.lo + i * kPage), (j - i) * kPage});
    bytes += int64_t((j - i) * kPage);
    i = j;
  }
  if (!runs.empty() && !ops_.upload(ops_.ctx, stream, runs.data(), int(runs.size()))) return false;
  set_bits(e.valid, i0, i1);
  stats_.uploaded_bytes += bytes;
  stats_.reuploaded_bytes += dirty * int64_t(kPage);
  *uploaded = bytes;
  return true;
}

Residency::Lease Residency::acquire(const Operand& o, Role role, void* stream, uint64_t use, bool may_copy) {
  Lease l;
  uintptr_t a = 0, b = 0;
  bool dense = false;
  if (!worth_it(o, &a, &b, &dense)) return l;
  std::lock_guard<std::mutex> g(mu_);
  if (!started_ || !tracking_) return l;  // available() starts it
  drain_locked();
  int idx = entry_for_locked(a, b);
  uintptr_t map_lo = 0, map_hi = 0;
  std::chrono::steady_clock::time_point created_at{};  // set when this call makes the copy
  double once_before_us = 0;  // the call's one-time costs then (the upload's first bounce buffer is one)
  if (idx < 0) {
    if (!dense || !eligible_locked(a, b, &map_lo, &map_hi, false)) return l;
    Candidate* c = candidate_locked(map_lo, map_hi, true);
    if (!touch_locked(*c, a, b, use, true) || !may_copy) return l;
    uintptr_t lo = 0, hi = 0;
    if (!eligible_locked(a, b, &lo, &hi, true) || lo != map_lo || hi != map_hi) {
      // The mapping changed shape (grew in place, was split): start a new candidate instead of finding this one again.
      c->uses = 0;
      c->watched = false;
      c->lo = c->hi = 0;
      return l;
    }
    // Memory the program registered inside the operand (each call asks only about its ends): every MiB, once.
    for (uintptr_t x = a; x < b; x += uintptr_t(1) << 20)
      if (ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(x))) return l;
    created_at = std::chrono::steady_clock::now();
    once_before_us = bo::one_time::spent_us();
    Entry* e = create_locked(a, b, map_lo, map_hi);
    if (!e) return l;
    candidates_.erase(candidates_.begin() + (c - candidates_.data()));
    idx = int(e - entries_.data());
  } else {
    Entry& e = entries_[size_t(idx)];
    if (ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(a)) ||
        ops_.pinned_elsewhere(ops_.ctx, reinterpret_cast<const void*>(b - 1))) {
      if (e.refs == 0) {
        ++stats_.dropped_changed;
        drop_locked(e, true);
      }
      return l;
    }
    ++stats_.hits;
  }
  Entry& e = entries_[size_t(idx)];
  bool rewritten = false;
  int64_t uploaded = 0;
  if (!validate_locked(e, a, b, role == Role::kInput || e.protect_outputs, stream, &rewritten, &uploaded)) {
    const uintptr_t lo = e.map_lo, hi = e.map_hi;
    if (e.refs == 0) drop_locked(e, true);
    if (rewritten) {
      ++stats_.dropped_rewritten;
      back_off_locked(*candidate_locked(lo, hi, true));
    }
    return l;
  }
  stats_.saved_bytes += std::max<int64_t>(0, int64_t(o.elem_size) * o.rows * o.cols - uploaded);
  if (created_at != std::chrono::steady_clock::time_point{}) {
    // What later copies cost: without one-time costs met on the way (they are reported with the call and left out of
    // its prediction).
    const double ns = std::max(
        1.0, double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - created_at)
                        .count()) -
                 (bo::one_time::spent_us() - once_before_us) * 1e3);
    const double was = create_ns_per_byte_.load(std::memory_order_relaxed);
    create_ns_per_byte_.store(0.5 * was + 0.5 * ns / double(e.hi - e.lo), std::memory_order_relaxed);
  }
  ++e.refs;
  e.last_use = ++clock_;
  l.entry = idx;
  l.dev = e.dev + (reinterpret_cast<uintptr_t>(o.p) - e.lo);
  return l;
}

void Residency::wrote_back(const Lease& l, const Operand& o, bool dma) {
  if (l.entry < 0 || dma) return;  // DMA leaves the protection as it was, and the copy equals what it wrote
  std::lock_guard<std::mutex> g(mu_);
  Entry& e = entries_[size_t(l.entry)];
  if (!e.live || !e.protect_outputs) return;  // unprotected pages show as written at the next scan
  // Pages our CPU stores covered entirely hold exactly the copy's values: protect them again so that they do not
  // count as the program's writes. Partly covered pages stay as they are (the next scan re-uploads them): another
  // thread may have written their other bytes meanwhile.
  const uintptr_t p = reinterpret_cast<uintptr_t>(o.p);
  const bool contiguous = o.ld == o.rows;
  const int64_t cols = contiguous ? 1 : o.cols;
  const uint64_t es = uint64_t(o.elem_size);
  const uint64_t len = contiguous ? es * uint64_t(o.rows) * uint64_t(o.cols) : es * uint64_t(o.rows);
  UffdWatch& w = UffdWatch::get();
  for (int64_t j = 0; j < cols; ++j) {
    const uintptr_t s = page_up(p + es * uint64_t(j) * uint64_t(o.ld)),
                    t = page_down(p + es * uint64_t(j) * o.ld + len);
    if (s >= t || s < e.lo || t > e.hi) continue;
    if (!w.protect(s, t, true)) continue;
    for (uintptr_t x = s; x < t; x += kPage) {
      set_bit(e.valid, (x - e.lo) / kPage, true);
      set_bit(e.ours, (x - e.lo) / kPage, true);
    }
  }
}

void Residency::release(const Lease& l) {
  if (l.entry < 0) return;
  std::lock_guard<std::mutex> g(mu_);
  --entries_[size_t(l.entry)].refs;
}

void Residency::host_written(const Operand& o) {
  if (!o.p || o.rows <= 0 || o.cols <= 0) return;
  const uintptr_t a = page_down(reinterpret_cast<uintptr_t>(o.p));
  const uintptr_t b = page_up(reinterpret_cast<uintptr_t>(o.p) + span_bytes(o));
  std::lock_guard<std::mutex> g(mu_);
  if (!tracking_) return;
  for (Entry& e : entries_) {
    if (!e.live || e.hi <= a || b <= e.lo) continue;
    for (uintptr_t x = std::max(a, e.lo); x < std::min(b, e.hi); x += kPage)
      set_bit(e.valid, (x - e.lo) / kPage, false);
  }
  // A sample page our stores (or DMA) changed is not the program's write: arm it again.
  UffdWatch& w = UffdWatch::get();
  for (Candidate& c : candidates_)
    for (int i = 0; i < c.n_samples; ++i)
      if (c.samples[i] >= a && c.samples[i] < b) w.protect(c.samples[i], c.samples[i] + kPage, true);
}

int Residency::state(const Operand& o, uint64_t use, int64_t* reuses, int64_t* upload_bytes) {
  *reuses = 0;
  *upload_bytes = 0;
  uintptr_t a = 0, b = 0;
  bool dense = false;
  if (!worth_it(o, &a, &b, &dense)) return 0;
  std::lock_guard<std::mutex> g(mu_);
  if (!started_ || !tracking_) return 0;
  drain_locked();
  const int idx = entry_for_locked(a, b);
  if (idx >= 0) {
    const Entry& e = entries_[size_t(idx)];
    const size_t i0 = (a - e.lo) / kPage, i1 = (b - e.lo) / kPage;
    *upload_bytes = (int64_t(i1 - i0) - count_bits(e.valid, i0, i1)) * int64_t(kPage);
    return 1;
  }
  uintptr_t map_lo = 0, map_hi = 0;
  if (!dense || !eligible_locked(a, b, &map_lo, &map_hi, false)) return 0;
  Candidate* c = candidate_locked(map_lo, map_hi, true);
  if (!touch_locked(*c, a, b, use, false)) return 0;
  *reuses = c->clean;
  *upload_bytes = int64_t(b - a);
  return 2;
}

double Residency::creation_us(int64_t bytes) {
  return double(bytes) * create_ns_per_byte_.load(std::memory_order_relaxed) * 1e-3;
}

ResidencyStats Residency::stats() {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

}  // namespace bom
