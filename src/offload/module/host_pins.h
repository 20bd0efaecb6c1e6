// Registrations of the program's own host memory for direct DMA, reused across calls and dropped the moment the
// memory behind them changes identity. No CUDA here (the pin/unpin operations are passed in), so CI tests it.
//
// Why this is safe: a registration pins the pages a virtual range had when it was registered. If the program then
// unmaps, remaps or discards (MADV_DONTNEED) that range, the same addresses show new pages while a DMA through the
// old registration would still use the old ones. So a range is registered only together with a userfaultfd
// registration of its whole mapping that asks the kernel for UNMAP, REMAP and REMOVE events; the kernel holds the
// unmapping thread until the event has been read, every call applies the events read before it starts, and a
// background thread unpins changed ranges at once (the events come from the process's one userfaultfd, uffd_watch.h),
// so no call of ours uses a registration after its memory changed (the program's own CUDA copies could, in the moment
// before the unpinning: the module leaves registrations off in programs that use CUDA themselves unless
// BLASOFFLOAD_PIN_HOST=on). Where userfaultfd is unavailable, nothing is registered. Only unnamed private anonymous
// read-write mappings (malloc's large blocks) are considered; never the brk heap, stacks, files or shared memory. A
// large mapping is registered once staging it has cost what registering it would (rent or buy: set_pin_after, the
// bytes staged from it in multiples of its size; registering costs ~58 ms per GiB and undoing it, once the program
// frees it, 15-20 ms per 256 MiB, against about 14 ms per GiB moved that staging adds on the lent H100), a smaller one
// at its second use; within a byte budget, least recently used first out.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace bom {

struct PinOps {
  bool (*pin)(void* base, size_t len);      // register for DMA; false when refused
  void (*unpin)(void* base, size_t len);    // undo pin
  bool (*pinned_elsewhere)(const void* p);  // the program registered or allocated this page itself
  // Unpinning starts (+1) and ends (-1) on the unpinning thread, beside the program: the core lends it a core of the
  // CPU BLAS's meanwhile (src/policy/lent_core.h). May be null.
  void (*busy)(int delta) = nullptr;
};

struct PinStats {
  // staged_unregistered: uses staged because their mapping's staging had not yet paid for registering it.
  int64_t registrations = 0, dropped_changed = 0, evicted = 0, hits = 0, staged_unregistered = 0;
  int64_t pinned_bytes = 0;
};

class HostPins {
 public:
  // A hold on a range: while held, the range may be used for DMA; direct == false means "stage it".
  struct Lease {
    int entry = -1;  // ours; -1 for the program's own pinned memory or none
    bool direct = false;
  };

  HostPins(PinOps ops, int64_t budget_bytes);
  // [p, p + len): pinned and valid (ours or the program's), else registered now if its staging has paid for it.
  Lease acquire(const void* p, size_t len);
  void release(const Lease& l);
  // A call staged `bytes` more from [p, p + len) than acquire counted (one pass over the range): several GPUs each
  // moving their share of a panel, K passes moving C again. Counts towards the rent like acquire's bytes.
  void credit_staged(const void* p, size_t len, double bytes);
  // What a call on [p, p + len) would find: 1 registered (DMA without staging), 2 not yet, but the call registers it
  // (a private anonymous mapping whose changes can be tracked, and whose staging so far has cost what registering
  // it would), 0 neither (staged). Registers nothing; reads /proc/self/maps only for a mapping not seen before.
  int state(const void* p, size_t len);
  // Rent or buy: a mapping of at least `from_bytes` is registered once calls have staged `times` its size from it (0:
  // at its second use); smaller ones at their second use.
  void set_pin_after(double times, int64_t from_bytes = 0) {
    pin_after_.store(times > 0 ? times : 0, std::memory_order_relaxed);
    rent_from_.store(from_bytes > 0 ? from_bytes : 0, std::memory_order_relaxed);
  }
  PinStats stats();
  // False when userfaultfd is unavailable (then acquire only ever finds the program's own pinned memory); why.
  bool tracking(std::string* why);
  // Tests: consume pending kernel events now.
  void poll_events();
  // Process exit: from now on nothing is unpinned (the CUDA runtime may be gone; the process's end releases all).
  void shutdown() { closing_.store(true); }
  // True while registrations are being undone (under the lock every other member takes, 15-20 ms of the driver's
  // time per 256 MiB, itself holding the driver's lock that pointer queries take): a query that must not wait then
  // answers without asking (the module's policy queries: "not registered, not resident", the conservative answer).
  bool unpinning() const { return unpinning_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    uintptr_t lo = 0, hi = 0;
    int refs = 0;
    bool stale = false, live = false;
    uint64_t last_use = 0;
  };
  struct Seen {
    uintptr_t lo = 0, hi = 0;
    int uses = 0, changes = 0;
    double staged = 0;  // bytes calls staged from it so far
    // The next call registers it: used before (never on a first use), and staging it has cost what registering would.
    bool due(double pin_after) const { return changes < 3 && uses >= 1 && staged >= pin_after * double(hi - lo); }
  };
  void start_tracking();
  void drain_locked();
  void changed_locked(uintptr_t lo, uintptr_t hi);
  void collect_locked();
  bool register_locked(uintptr_t lo, uintptr_t hi);
  static void wake(void* self);
  static void* unpinner_main(void* self);

  PinOps ops_;
  int64_t budget_;
  std::atomic<double> pin_after_{0};
  std::atomic<int64_t> rent_from_{0};
  // The rent rule's multiple for a mapping of `bytes` (0 below rent_from_).
  double pin_after(uintptr_t lo, uintptr_t hi) const {
    return int64_t(hi - lo) >= rent_from_.load(std::memory_order_relaxed) ? pin_after_.load(std::memory_order_relaxed)
                                                                          : 0;
  }
  std::mutex mu_;
  std::atomic<bool> closing_{false};
  std::atomic<bool> unpinning_{false};  // written under mu_ by collect_locked, read without it
  bool events_ = false;                 // the process's userfaultfd delivers change events (uffd_watch.h)
  uint64_t seq_ = 0;                    // events applied so far
  std::mutex unpin_mu_;
  std::condition_variable unpin_cv_;
  bool unpin_due_ = false;
  bool started_ = false;
  std::string why_not_;
  std::vector<Entry> entries_;
  std::vector<Seen> seen_;
  std::vector<std::pair<uintptr_t, uintptr_t>> refused_;  // mappings found ineligible (until they change)
  uint64_t clock_ = 0;
  PinStats stats_;
};

// The private anonymous read-write mapping holding [p, p + len) entirely, from /proc/self/maps; false when there is
// none (file, shared, the main thread's stack, or the range crosses mappings). *guard_below (optional): an
// inaccessible mapping ends where it starts, as below a thread's stack (glibc's guard page).
bool anonymous_mapping(const void* p, size_t len, uintptr_t* lo, uintptr_t* hi, bool* guard_below = nullptr);

}  // namespace bom
