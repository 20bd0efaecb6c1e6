// The tiled gemm engine's per-device part (internal to gemm_pipeline.cu and gemm_tiles.cu): a device's grow-only
// resources (three streams, an arena for panels and tiles, a ring of pinned chunks, events), what one engine call
// shares between its device drivers, and the driver that takes work items from the plan and runs them on its device.
// Element size comes with the call (Shared::es): the same code moves floats and doubles.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "offload/module/gemm_pipeline.h"
#include "offload/module/panel_share.h"
#include "offload/module/tile_plan.h"

namespace bom {
namespace tiles {

constexpr int64_t kMiB = int64_t(1) << 20;
inline int64_t al256(int64_t b) { return (b + 255) / 256 * 256; }
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
// The address of element `elements` of an array of es-byte elements.
inline char* at(void* p, int64_t elements, int es) { return static_cast<char*>(p) + elements * es; }
inline const char* at(const void* p, int64_t elements, int es) { return static_cast<const char*>(p) + elements * es; }

// A pinned staging chunk. After an upload it must not be refilled before `ev`; after a download it holds a
// finished tile (`out_tile` >= 0) to unpack into C once `ev` has completed.
struct Chunk {
  char* p = nullptr;
  cudaEvent_t ev = nullptr;
  bool in_use = false;
  int64_t out_tile = -1;
  char* dst = nullptr;  // the tile's place in C
  int64_t rows = 0, cols = 0;
};

enum Stage { kH2D, kKernel, kD2H, kStages };

struct Device {
  int ordinal = 0;
  int share = 0;  // of its GPU
  std::mutex mu;  // one engine call at a time per device
  cudaStream_t st[kStages] = {};
  cudaStream_t peer = nullptr;  // copies of panels from another device (panel_share.h): apart, so uploads never queue
                                // behind a copy waiting for that device's upload
  char* arena = nullptr;
  int64_t arena_cap = 0;
  int64_t free_at_start = -1;  // device memory free (plus the arena) when first asked
  std::vector<Chunk> ring;     // starts at kRingFirst chunks, grows on demand up to ring_max (Driver::acquire)
  int ring_max = 0;
  int64_t chunk_bytes = 0;
  int head = 0;
  std::vector<cudaEvent_t> sync_events, timing_events, out_events;
  size_t timing_used = 0, out_used = 0;

  cudaEvent_t out_event() {
    if (out_used == out_events.size()) {
      cudaEvent_t e = nullptr;
      if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return nullptr;
      out_events.push_back(e);
    }
    return out_events[out_used++];
  }

  cudaEvent_t timing_event() {
    if (timing_used == timing_events.size()) {
      cudaEvent_t e = nullptr;
      if (cudaEventCreate(&e) != cudaSuccess) return nullptr;
      timing_events.push_back(e);
    }
    return timing_events[timing_used++];
  }
};

// The engine's state of a device's share (created on first use, never freed: the driver reclaims it at exit). A GPU
// listed twice in BLASOFFLOAD_DEVICES takes two shares, each with its own streams, arena and ring.
Device* device(int ordinal, int share);
// Device memory the engine holds on a GPU, over all its shares (their arenas).
int64_t arenas_held(int ordinal);
// The ring's first chunks. Pinning costs 0.4-1 ms a MiB: the whole ring (then 256 MiB by default) made up front cost
// the process's first pipelined call 100-300 ms on the lent H100, whatever that call moved.
constexpr int kRingFirst = 2;
// Grow-only resources of a device for a call (current device already set). A growing arena takes headroom up to
// arena_max, at least twice its old size: calls that grow step by step (LAPACK's trailing updates) then pay a few
// growths, not one a call.
cudaError_t prepare(Device& d, int64_t arena_bytes, int64_t arena_max, int64_t ring_bytes, int64_t chunk_bytes,
                    int sync_events);

class Driver;

// Everything one engine call shares between its device drivers.
struct Shared {
  const EngineHost* h;
  GemmCall g;  // the GPU's part of the call
  int es = 4;  // element size
  Plan plan;
  int64_t pass = 0;
  double beta_pass = 0, beta_pass_i = 0;              // this K pass's beta (complex: its imaginary part too)
  std::vector<TileBlock> blocks;                      // one per device (split_tiles), set per pass
  std::unique_ptr<std::atomic<int64_t>[]> next_item;  // per block: its next work item
  // Driver `index`'s next item of its own block (none when it has no block), and of the other blocks in turn (its own
  // is exhausted); *block: whose item it is.
  bool take_own(int index, int64_t* i0, int64_t* i1, int64_t* j, int* block);
  bool take_other(int index, int64_t* i0, int64_t* i1, int64_t* j, int* block);
  // A driver takes another block's item only when at most this many of its own tiles wait to run (-1: whenever):
  // an item taken behind a long queue runs later than its block's own device would have run it.
  int steal_depth = 2;
  // Panels several devices need, uploaded by one and copied by the others (whole-panel order, staged operands only:
  // registered ones are DMA'd by each device over its own link, which no other device shares).
  std::unique_ptr<PanelShare> share;
  bool share_a = false, share_b = false;
  std::vector<Driver*> drivers;                     // by index, for the copies' sources
  std::unique_ptr<std::atomic<uint8_t>[]> written;  // per tile of this pass: 1 once its result is in C
  std::atomic<int64_t> issued{0};
  int64_t fail_after = -1;  // test hook
  std::atomic<bool> injected{false};
  std::chrono::steady_clock::time_point t0;
  std::mutex stats_mu;
  bo_gemm_stats* stats;
  bool a_direct = false, b_direct = false, c_direct = false;  // registered host memory: DMA without staging
};

// A host block (a panel of op(A) or op(B), or a C tile): its first element and its shape as stored in memory.
struct Block {
  const void* p;
  int64_t rows, cols, ld;
};
// Host blocks of op(A)'s panel i and op(B)'s panel j over K columns [k0, k0 + kc).
Block a_panel(const Shared& s, int64_t i, int64_t k0, int64_t kc);
Block b_panel(const Shared& s, int64_t j, int64_t k0, int64_t kc);
// The kernel's arguments for one C tile (device panels with leading dimensions of the packed panels).
bo_call tile_call(const bo_call& g, int64_t rows, int64_t cols, int64_t kc, double beta, double beta_i, const void* a,
                  const void* b, void* c);

// One device's share of a pass: takes work items until none is left or the device fails.
class Driver {
 public:
  Driver(Shared& s, Device& d, int index) : s_(s), d_(d), index_(index) {}

  // Takes work items until none is left or the device fails.
  void run();

  cudaError_t error() const { return err_; }
  bool real_error() const { return err_ && !s_.injected.load(); }
  int64_t tiles() const { return tiles_; }
  int64_t panels() const { return panels_; }
  // Bytes of A's and of B's panels this driver staged (not DMA'd from registered memory).
  double a_staged() const { return a_staged_; }
  double b_staged() const { return b_staged_; }
  double peer_bytes() const { return peer_bytes_; }
  // Host time spent waiting for another device to start or queue a shared panel, and for ring chunks' copies; when the
  // driver finished (ms since the call began), for the debug log.
  double panel_wait_ms() const { return panel_wait_ms_; }
  double ring_wait_ms() const { return ring_wait_ms_; }
  double done_ms() const { return done_ms_; }
  double pack_ms() const { return pack_ms_; }
  double unpack_ms() const { return unpack_ms_; }
  cudaEvent_t first_kernel() const { return first_kernel_; }
  cudaEvent_t started() const { return started_; }
  // The kernel stream's idle time (ms): before its first kernel, and between kernels in the first and second half of
  // its tiles (after the streams are synchronised; for the debug log).
  void kernel_idle(double* before, double* first_half, double* second_half) const;
  void set_workspace(int64_t b) { ws_bytes_ = b; }

  // Busy time per stage from the timing events (after the streams are synchronised).
  void stage_ms(double out[kStages]) const;

 private:
  struct Timed {
    int stage;
    cudaEvent_t b, e;
  };
  void check(cudaError_t e);
  // A direct copy the driver refused (the block then goes through the ring): said once per process, with the
  // block's shape, for the debug log.
  void refused(cudaError_t e, const void* p, int64_t rows, int64_t cols, int64_t ld);

  cudaEvent_t timed_begin(int stage);
  // The end event (null when none could be recorded).
  cudaEvent_t timed_end(int stage, cudaEvent_t b);
  // Waits until at most `depth` of the tiles queued on this device have not finished, unpacking the results that
  // came back meanwhile.
  void wait_backlog(int depth);

  // The next ring chunk, free to fill: waits for its last DMA and unpacks a result it held.
  Chunk& acquire();
  // Adds a chunk to the ring (up to its size) where the next one is still in flight.
  void grow_ring();
  // Waits for the chunk's DMA; a result it holds is written to C if the copy succeeded.
  void retire(Chunk& c, bool wait);
  // Unpacks the results that are back already, oldest first, up to the first still in flight.
  void retire_arrived();

  // Host block -> device (leading dimension = rows), through ring chunks, or straight from registered memory;
  // `ready` fires when all of it is there.
  void upload(const Block& blk, char* dst, cudaEvent_t ready, bool direct);
  // A's (a) or B's panel x into its slot: uploaded, or copied from the device that uploaded it where the panel is
  // shared (panel_share.h). True when this driver staged it from host memory (not a copy, not a direct DMA).
  bool fetch_panel(bool a, int64_t x, const Block& blk, char* dst, cudaEvent_t ready, bool direct);
  // Panel x from driver o's slot once o's upload of it has completed, over NVLink where the GPUs have it; false when
  // the copy could not be queued (nothing was).
  bool copy_from(const Driver& o, bool a, int64_t x, char* dst, cudaEvent_t ready, int64_t bytes);
  // About to wait for another device's shared panel: stages instead the next panel of this device's own coming items
  // that is its to stage (one, about as long as the wait), so that the two devices' hosts stage at once.
  void stage_ahead();

  // Device tile -> a ring chunk, unpacked into C later by retire(); or straight into registered C, element-exact
  // (rows of each column, never the bytes between them).
  void download(const char* src, int64_t rows, int64_t cols, char* cdst, int64_t tile);

 public:
  double h2d_bytes_ = 0, d2h_bytes_ = 0;

 private:
  Shared& s_;
  Device& d_;
  int index_ = 0;  // this driver's block
  cudaError_t err_ = cudaSuccess;
  int64_t last_b_ = -1;
  bool left_own_ = false;  // its own block's items are all taken, or it stopped
  // The slots and their "ready" events, for the drivers that copy panels from this one (whole-panel order: the
  // slot of A's panel i is i, of B's panel j is j, each filled once a call).
  std::vector<char*> a_slot_, b_slot_;
  std::vector<cudaEvent_t> a_ready_, b_ready_;
  std::vector<int64_t> a_holds_, b_holds_;  // per slot: the panel it holds, or -1
  int64_t tiles_ = 0, panels_ = 0;
  double a_staged_ = 0, b_staged_ = 0;
  int64_t ws_bytes_ = 0;
  double pack_ms_ = 0, unpack_ms_ = 0;
  double peer_bytes_ = 0;
  double panel_wait_ms_ = 0, ring_wait_ms_ = 0, done_ms_ = 0;
  cudaEvent_t first_kernel_ = nullptr, started_ = nullptr;
  std::vector<Timed> timed_;
  std::deque<cudaEvent_t> unfinished_;  // the end events of tiles queued, oldest first (finished ones dropped lazily)
  std::vector<std::pair<cudaEvent_t, int64_t>> direct_out_;  // copies straight into C, and their tiles
};

}  // namespace tiles
}  // namespace bom
