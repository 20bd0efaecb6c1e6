// The process's one userfaultfd: change events of watched mappings (unmapped, remapped, discarded) for every user of
// them (host registrations, the residency cache), and the kernel's own record of CPU writes to them (write-protect
// in asynchronous mode, read and re-armed with the PAGEMAP_SCAN ioctl) for the residency cache. No CUDA here.
//
// A range can be registered with only one userfaultfd, so both users share this one, and nothing is ever
// unregistered: a watched mapping stays registered until the program unmaps it (registration costs nothing while no
// page is write-protected). Events: the kernel holds a thread that unmaps or discards watched memory until the event
// has been read; a reader thread files every event in a ring with a sequence number, and each user applies the events
// past its own sequence number before it uses anything (changes_since), so no call misses a change that happened
// before it started. Write tracking (Linux >= 6.7, UFFD_FEATURE_WP_ASYNC): pages write-protected by a scan fault once
// on the next CPU write, from any thread or inside a system call (read(2) into the buffer); the kernel resolves the
// fault itself and the page shows as written in the next scan. It cannot see DMA into pinned pages, writes through
// another mapping of the same pages, or discarded pages (those come as events): the residency cache's rules.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace bom {

class UffdWatch {
 public:
  using RangeFn = std::function<void(uintptr_t lo, uintptr_t hi)>;
  // The process's instance, started on first use (never at load time).
  static UffdWatch& get();

  // Change events work (userfaultfd with unmap, remove and remap events); why not otherwise.
  bool events(std::string* why);
  // Write tracking works too (UFFD_FEATURE_WP_ASYNC and PAGEMAP_SCAN); why not otherwise.
  bool write_tracking(std::string* why);
  // Registers the whole mapping [lo, hi) (page-aligned, one private anonymous mapping) for events and write-protect;
  // idempotent. False when the kernel refuses.
  bool watch(uintptr_t lo, uintptr_t hi);

  // A new user's starting point in the event sequence.
  uint64_t sequence();
  // Calls fn for each change filed after *seq (in order) and advances *seq; fn(0, UINTPTR_MAX) when some were lost
  // (the ring overflowed). Events the kernel has queued but the reader has not filed yet are filed first.
  void changes_since(uint64_t* seq, const RangeFn& fn);
  // wake(ctx) runs on the reader thread after it filed events (a user that must act at once, not at its next call).
  // At most kMaxWakers; never removed (ctx must live as long as the process).
  void add_waker(void (*wake)(void*), void* ctx);

  // The pages of [lo, hi) (page-aligned, inside watched mappings) written since they were last write-protected:
  // fn(run_lo, run_hi) for each run. With protect, those pages are write-protected again in the same step (a write
  // after the scan shows in the next one). Returns the number of written pages, or -1 when the kernel refused (a
  // range not watched, or not in asynchronous write-protect mode): then nothing is known and everything counts as
  // written. Pages never protected (unpopulated ones included) and pages discarded since (MADV_DONTNEED) show as
  // written too: the safe side; discards also come as REMOVE events.
  int64_t scan_written(uintptr_t lo, uintptr_t hi, bool protect, const RangeFn& fn);
  // Write-protects [lo, hi) (on) or lifts the protection (off: no more write faults; every page then shows as
  // written). False when the kernel refused.
  bool protect(uintptr_t lo, uintptr_t hi, bool on);

  static constexpr int kMaxWakers = 64;
  static constexpr int kRing = 1024;

 private:
  UffdWatch() = default;
  void start_locked();
  void read_events();
  static void* reader_main(void* self);

  std::mutex mu_;  // start-up and registrations
  bool started_ = false;
  int uffd_ = -1, pagemap_ = -1;
  bool wp_async_ = false;
  std::string why_events_, why_writes_;
  // The reader files events here without taking mu_ (a thread holding mu_ may be the one waiting on an event).
  std::mutex ev_mu_;
  std::atomic<int> reading_{0};  // threads between reading events from the kernel and filing them
  std::pair<uintptr_t, uintptr_t> ring_[kRing];
  uint64_t filed_ = 0;  // events filed so far; event i is in ring_[i % kRing]
  std::atomic<int> n_wakers_{0};
  void (*wake_[kMaxWakers])(void*) = {};
  void* wake_ctx_[kMaxWakers] = {};
};

}  // namespace bom
