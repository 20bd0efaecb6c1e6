// The residency cache: device copies of host operand ranges kept across calls, valid while the kernel's write record
// (uffd_watch.h) shows their pages unwritten, so that a call on an unchanged host matrix costs only its kernel.
// No CUDA here (device memory and copies are passed in as ResidencyOps), so CI tests it with a host stand-in.
//
// What is cached: private anonymous mappings (malloc's large blocks, the program's own mmaps) that nobody else has
// pinned or registered, never the brk heap, stacks, files or shared memory; operands of at least kMinBytes whose
// elements fill at least half of their pages (a 64-row strip of a large matrix touches every page of it).
// When: a mapping becomes a candidate on its first use; its second use write-protects a sample of kSamples pages;
// each later use checks the sample (microseconds), and a use that finds it unwritten creates the device copy (the
// policy, through state(), charges that upload over the clean reuses seen so far). A sample found written backs off
// (the next 2, 4, 8 ... uses are not considered): a program that rewrites its matrix between calls pays one fault
// per sampled page, not one per page.
// Validity: before each use, one scan returns the operand's pages written since the last use and protects them
// again; only those are uploaded again (or nothing: the call costs only its kernel). Change events (unmap, remap,
// discard) invalidate at once. Outputs are computed in the device copy and written back; pages our write-back fully
// covers are protected again, so our own writes never count as the program's, unless the program keeps rewriting
// them (then they are left unprotected and their write faults are saved). Ranges found rewritten call after call
// are dropped, unprotected (no more faults) and backed off: residency never makes a program much slower than off.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "offload/cuda_module_api.h"

namespace bom {

struct CopyRun {
  void* dev;
  const void* host;
  size_t bytes;
};

struct ResidencyOps {
  void* ctx;
  void* (*alloc)(void* ctx, size_t bytes);              // device memory; nullptr when there is none left
  void (*release)(void* ctx, void* dev, size_t bytes);  // no call uses it any more
  // Host pages to their device copies, queued on `stream` (the call's: its kernel follows them); false on failure.
  bool (*upload)(void* ctx, void* stream, const CopyRun* runs, int n);
  // The program registered or pinned this memory itself: DMA could write it without a trace.
  bool (*pinned_elsewhere)(void* ctx, const void* p);
};

struct ResidencyStats {
  int64_t hits = 0;               // operand uses served from a device copy
  int64_t created = 0;            // device copies made
  int64_t uploaded_bytes = 0;     // pages moved to device copies (first uploads and re-uploads)
  int64_t reuploaded_bytes = 0;   // of those, pages found written since their last upload
  int64_t saved_bytes = 0;        // operand bytes a hit did not move
  int64_t written_pages = 0;      // protected pages found written: each cost the program one write fault
  int64_t dropped_rewritten = 0;  // copies dropped because the program kept rewriting them
  int64_t dropped_changed = 0;    // copies dropped by unmap / remap / discard, or memory pinned by the program
  int64_t evicted = 0;            // copies dropped for room (BLASOFFLOAD_RESIDENCY_MEM)
  int64_t backoffs = 0;           // candidates whose sample was found written
  int64_t sample_scans = 0;       // looks at a candidate's samples (kSpanScanPages: one or 64 system calls)
  int64_t flag_reads = 0;  // reads of /proc/self/smaps for a mapping's flags (milliseconds each in a large process)
  int64_t scans = 0;
  double scan_ms = 0;
  int64_t device_bytes = 0;  // device memory held now
};

class Residency {
 public:
  // A hold on an operand's device copy; dev == nullptr: not resident (stage the operand as usual).
  struct Lease {
    int entry = -1;
    char* dev = nullptr;  // the device address of the operand's first element
  };
  // An operand: rows x cols elements of elem_size bytes, column-major with leading dimension ld (a vector: rows = n,
  // cols = 1; a strided vector: rows = 1, cols = n, ld = |inc|).
  struct Operand {
    const void* p;
    int64_t rows, cols, ld;
    int elem_size;
  };
  enum class Role { kInput, kOutput };

  static constexpr int64_t kMinBytes = BO_RESIDENT_MIN_BYTES;
  static constexpr int kSamples = 64;
  // A model's query (state) looks at a clean candidate's samples at its first use after arming them, then every
  // kScanEvery-th use only. Looking at 64 samples one at a time (before kSpanScanPages): on the development machine a
  // query took 112 us with a look at every use, 8 us with one every 16th; on the lent GPU machine, CPU-routed dgemv
  // n = 1024 calls took 1.67x of the CPU alone with residency on, 0.93x with it off. Writes accumulate in the pages'
  // state until a look, so a back-off is delayed, never missed; a GPU call (acquire) always looks.
  static constexpr int kScanEvery = 16;
  // A look whose samples span at most kSpanScanPages pages is one read-only scan of that span (it reports the pages
  // between the samples, never protected, as written: a sample is written if a reported run holds it), else one scan
  // per sample. On the development machine a scan cost 1.6 us plus 4.5 ns a page: 64 scans 105 us, the span of a
  // 4 MiB matrix 4.7 us, of 64 MiB 58 us, of 512 MiB 418 us.
  static constexpr uintptr_t kSpanScanPages = 16384;

  Residency(ResidencyOps ops, int64_t budget_bytes);
  // False when the kernel cannot track writes (why).
  bool available(std::string* why);

  // The operand's device copy, brought up to date (written pages uploaded on `stream`), or none. An output's copy is
  // where the kernel computes; after its host write-back call wrote_back.
  // `use`: the call's number (one per BLAS call, unique across threads): a mapping counts one use per call however
  // many of the call's operands lie in it, and whether the policy asked first (state) or not.
  // may_copy false: a clean candidate is not copied (the policy found staging it cheaper for now); its use counts.
  Lease acquire(const Operand& o, Role role, void* stream, uint64_t use, bool may_copy = true);
  // The call wrote the output back to host memory from its device copy (dma: straight from device to the program's
  // registered pages; else by CPU stores from a staging buffer).
  void wrote_back(const Lease& l, const Operand& o, bool dma);
  void release(const Lease& l);
  // Host memory the module wrote without going through a device copy (staged results, the tiled pipeline): device
  // pages of it are dropped.
  void host_written(const Operand& o);
  // The policy's question (no upload): 1 resident (*upload_bytes: its pages not valid at their last use), 2 a clean
  // candidate (*reuses: clean uses seen, the number of calls an upload now is shared over), 0 neither. Counts as
  // the call's use of the mapping (see acquire).
  int state(const Operand& o, uint64_t use, int64_t* reuses, int64_t* upload_bytes);
  // What making a copy of `bytes` takes, its upload included: allocation, the first scan that protects every page,
  // the staged upload. Measured on each copy made (the last ones weigh most); before any, kCreateNsPerByte. The policy
  // shares it over a clean candidate's reuses, so that a copy is made once the reuses have paid for it.
  double creation_us(int64_t bytes);
  ResidencyStats stats();
  // Making a copy, timed inside acquire on the lent H100 (GPU mode): 35 ms for 256 MiB (0.13 ns a byte), 77 ms for
  // 1 GiB (0.07), almost all of it the staged upload; a call's staged transfer runs at about 0.045. Whole first GPU
  // calls that made a copy took 124-420 ms: the rest is the call's own first-use costs, not the copy's.
  static constexpr double kCreateNsPerByte = BO_RESIDENT_COPY_NS_PER_BYTE;

 private:
  struct Entry {
    uintptr_t lo = 0, hi = 0;          // page-aligned host range the copy mirrors
    uintptr_t map_lo = 0, map_hi = 0;  // the mapping it lies in
    char* dev = nullptr;
    std::vector<uint64_t> valid;  // per page: the device copy matches and the page is protected (or unpopulated)
    std::vector<uint64_t> ours;   // per page: protected again after our write-back
    int refs = 0, strikes = 0, rewritten_outputs = 0;
    bool live = false, protect_outputs = true;
    uint64_t last_use = 0;
  };
  struct Candidate {
    uintptr_t lo = 0, hi = 0;  // the mapping
    int uses = 0, clean = 0, skip = 0, backoff = 1;
    int unscanned = 0;         // clean uses counted without a look at the samples (kScanEvery)
    uint64_t last_use = 0;     // the call that last counted
    uintptr_t ra = 0, rb = 0;  // the pages that call used: clean counts reuses of one range only
    bool watched = false;      // registered with the userfaultfd: changes to the mapping come as events
    int n_samples = 0;
    uintptr_t samples[kSamples];
  };
  void drain_locked();
  void changed_locked(uintptr_t lo, uintptr_t hi);
  void drop_locked(Entry& e, bool unprotect);
  bool eligible_locked(uintptr_t a, uintptr_t b, uintptr_t* map_lo, uintptr_t* map_hi, bool fresh);
  Candidate* candidate_locked(uintptr_t map_lo, uintptr_t map_hi, bool create);
  // One use of a candidate mapping on pages [a, b): arms or checks the sample. True when a copy should be made now.
  bool touch_locked(Candidate& c, uintptr_t a, uintptr_t b, uint64_t use, bool scan_now);
  // How many of the candidate's samples were written since they were protected (one at least when the kernel refused).
  static int written_samples(const Candidate& c);
  void back_off_locked(Candidate& c);
  Entry* create_locked(uintptr_t a, uintptr_t b, uintptr_t map_lo, uintptr_t map_hi);
  // Uploads the pages of [a, b) written since their last upload; false (with *rewritten when the program keeps
  // rewriting them) when the copy must be dropped.
  bool validate_locked(Entry& e, uintptr_t a, uintptr_t b, bool protect, void* stream, bool* rewritten,
                       int64_t* uploaded);
  int entry_for_locked(uintptr_t a, uintptr_t b);

  ResidencyOps ops_;
  int64_t budget_;
  std::mutex mu_;
  bool started_ = false, tracking_ = false;
  std::string why_not_;
  uint64_t seq_ = 0, clock_ = 0;
  int refused_age_ = 0;
  std::vector<Entry> entries_;
  std::vector<Candidate> candidates_;
  std::vector<std::pair<uintptr_t, uintptr_t>> refused_;  // mappings found ineligible (until they change)
  // Mappings whose flags said "no stack" (until they change): /proc/self/smaps walks the page tables of every mapping
  // it lists, milliseconds in a process holding gigabytes, so a matrix's is read once, not at each of its first uses.
  std::vector<std::pair<uintptr_t, uintptr_t>> not_stack_;
  ResidencyStats stats_;
  // What making a copy took (creation_us): written under mu_ by acquire, read without it by the policy's query, which
  // has just left mu_ in state() and should not take it again for one number.
  std::atomic<double> create_ns_per_byte_{kCreateNsPerByte};
};

// BLASOFFLOAD_RESIDENCY=auto|off: off, or why auto found it unsafe (an RDMA library in the process); empty when on.
std::string residency_blocked(const char* setting);

}  // namespace bom
