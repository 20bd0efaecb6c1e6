// The tiled gemm engine (either precision: the element size is a parameter, the kernels come from the registry by
// routine) for host operands (see gemm_pipeline.h and tile_plan.h for the schedule).
//
// Per device: three streams (host->device, kernels, device->host), an arena holding the A panels, the B panels
// and the C tiles of the plan, and a ring of pinned chunks. The driver thread of a device packs operand pieces
// into the ring with the staging threads and queues their DMA; kernels wait on events for their panels; results
// come back into ring chunks and are unpacked into C when the chunk is needed again or the call ends, so host
// copies, both DMA directions and kernels of different tiles overlap. A tile is written to C whole, only after
// its copy back succeeded: a failure leaves every tile either complete or untouched, and the untouched ones are
// computed on the CPU.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/registry.h"
#include "offload/module/device.h"
#include "offload/module/gemm_pipeline.h"
#include "offload/module/host_pins.h"
#include "offload/module/staging_pool.h"
#include "offload/module/tile_plan.h"

namespace bok {
const bo_kernel_registry* registry();
}

namespace bom {
namespace {

constexpr int64_t kMiB = int64_t(1) << 20;
int64_t al256(int64_t b) { return (b + 255) / 256 * 256; }
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

char* at(void* p, int64_t elements, int es) { return static_cast<char*>(p) + elements * es; }
const char* at(const void* p, int64_t elements, int es) { return static_cast<const char*>(p) + elements * es; }

// ---- Registrations of the program's memory (host_pins.h). ----
bool cuda_pin(void* base, size_t len) {
  if (cudaHostRegister(base, len, cudaHostRegisterPortable) == cudaSuccess) return true;
  cudaGetLastError();  // not sticky: e.g. already registered by the program, or the locked-memory limit
  return false;
}
void cuda_unpin(void* base, size_t) {
  cudaHostUnregister(base);
  cudaGetLastError();
}
bool cuda_pinned_elsewhere(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return at.type == cudaMemoryTypeHost;
}
HostPins& host_pins() {
  static HostPins* h = [] {
    int64_t budget = int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE)) / 4;
    if (const char* v = config("BLASOFFLOAD_PIN_MAX")) {
      const int64_t b = parse_bytes(v);
      if (b >= 0) budget = b;
    }
    return new HostPins(PinOps{cuda_pin, cuda_unpin, cuda_pinned_elsewhere}, budget);
  }();
  return *h;
}

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
  std::mutex mu;  // one engine call at a time per device
  cudaStream_t st[kStages] = {};
  char* arena = nullptr;
  int64_t arena_cap = 0;
  int64_t free_at_start = -1;  // device memory free (plus the arena) when first asked
  std::vector<Chunk> ring;
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

std::mutex g_devices_mu;
std::vector<Device*>* g_devices = nullptr;  // by ordinal; never freed (the driver reclaims at exit)

Device* device(int ordinal) {
  std::lock_guard<std::mutex> g(g_devices_mu);
  if (!g_devices) g_devices = new std::vector<Device*>();
  if (int(g_devices->size()) <= ordinal) g_devices->resize(ordinal + 1, nullptr);
  Device*& d = (*g_devices)[ordinal];
  if (!d) {
    d = new Device();
    d->ordinal = ordinal;
  }
  return d;
}

// Grow-only resources of a device for a call (current device already set).
cudaError_t prepare(Device& d, int64_t arena_bytes, int64_t ring_bytes, int64_t chunk_bytes, int sync_events) {
  cudaError_t e = cudaSuccess;
  for (auto& s : d.st)
    if (!s && (e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) return e;
  if (arena_bytes > d.arena_cap) {
    if (d.arena) cudaFree(d.arena);
    d.arena = nullptr;
    d.arena_cap = 0;
    if ((e = cudaMalloc(&d.arena, size_t(arena_bytes)))) {
      cudaGetLastError();
      return cudaErrorMemoryAllocation;
    }
    d.arena_cap = arena_bytes;
  }
  const int want = int(std::max<int64_t>(3, ring_bytes / chunk_bytes));
  if (d.chunk_bytes != chunk_bytes || int(d.ring.size()) != want) {
    for (Chunk& c : d.ring) {
      if (c.p) cudaFreeHost(c.p);
      if (c.ev) cudaEventDestroy(c.ev);
    }
    d.ring.assign(want, Chunk{});
    d.chunk_bytes = chunk_bytes;
    d.head = 0;
    for (Chunk& c : d.ring) {
      if ((e = cudaHostAlloc(reinterpret_cast<void**>(&c.p), size_t(chunk_bytes), cudaHostAllocPortable))) {
        cudaGetLastError();
        c.p = nullptr;
        d.ring.clear();
        d.chunk_bytes = 0;
        return cudaErrorMemoryAllocation;
      }
      if ((e = cudaEventCreateWithFlags(&c.ev, cudaEventDisableTiming))) return e;
    }
  }
  while (int(d.sync_events.size()) < sync_events) {
    cudaEvent_t ev = nullptr;
    if ((e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming))) return e;
    d.sync_events.push_back(ev);
  }
  return cudaSuccess;
}

// Everything one engine call shares between its device drivers.
struct Shared {
  const EngineHost* h;
  GemmCall g;  // the GPU's part of the call
  int es = 4;  // element size
  Plan plan;
  int64_t pass = 0;
  double beta_pass = 0;
  std::atomic<int64_t> next_item{0};
  std::unique_ptr<std::atomic<uint8_t>[]> written;  // per tile of this pass: 1 once its result is in C
  std::atomic<int64_t> issued{0};
  int64_t fail_after = -1;  // test hook
  std::atomic<bool> injected{false};
  std::chrono::steady_clock::time_point t0;
  std::mutex stats_mu;
  bo_gemm_stats* stats;
  bool a_direct = false, b_direct = false, c_direct = false;  // registered host memory: DMA without staging
};

// Host address of op(A)'s panel i (rows i*mb.., K columns k0..k0+kc) and its shape as stored in memory.
struct Block {
  const void* p;
  int64_t rows, cols, ld;
};
Block a_panel(const Shared& s, int64_t i, int64_t k0, int64_t kc) {
  const int64_t r0 = i * s.plan.mb, rows = s.plan.tile_rows(i);
  const bo_call& g = s.g.c;
  if (g.op[0] == 'N') return {at(g.a, r0 + k0 * g.lda, s.es), rows, kc, g.lda};
  return {at(g.a, k0 + r0 * g.lda, s.es), kc, rows, g.lda};  // A^T: the panel is kc x rows of A
}
Block b_panel(const Shared& s, int64_t j, int64_t k0, int64_t kc) {
  const int64_t c0 = j * s.plan.nb, cols = s.plan.tile_cols(j);
  const bo_call& g = s.g.c;
  if (g.op[1] == 'N') return {at(g.b, k0 + c0 * g.ldb, s.es), kc, cols, g.ldb};
  return {at(g.b, c0 + k0 * g.ldb, s.es), cols, kc, g.ldb};  // B^T: the panel is cols x kc of B
}

// The kernel's arguments for one C tile (device panels with leading dimensions of the packed panels).
bo_call tile_call(const bo_call& g, int64_t rows, int64_t cols, int64_t kc, double beta, const void* a, const void* b,
                  void* c) {
  bo_call t{};
  t.routine = g.routine;
  t.op[0] = g.op[0];
  t.op[1] = g.op[1];
  t.m = rows;
  t.n = cols;
  t.k = kc;
  t.alpha = g.alpha;
  t.beta = beta;
  t.a = a;
  t.lda = g.op[0] == 'N' ? rows : kc;
  t.b = b;
  t.ldb = g.op[1] == 'N' ? kc : cols;
  t.c = c;
  t.ldc = rows;
  return t;
}

class Driver {
 public:
  Driver(Shared& s, Device& d) : s_(s), d_(d) {}

  // Takes work items until none is left or the device fails.
  void run() {
    const Plan& p = s_.plan;
    const int64_t k0 = p.pass_k0(s_.pass), kc = p.pass_k(s_.pass);
    // Carve the arena.
    int64_t off = 0;
    const int64_t es = s_.es;
    const bo_call& g = s_.g.c;
    auto take = [&](int64_t bytes) {
      char* q = d_.arena + off;
      off += al256(bytes);
      return q;
    };
    std::vector<char*> a_slot(p.a_slots), b_slot(p.b_slots), c_slot(p.c_slots);
    for (auto& q : a_slot) q = take(es * p.mb * kc);
    for (auto& q : b_slot) q = take(es * kc * p.nb);
    for (auto& q : c_slot) q = take(es * p.mb * p.nb);
    void* ws = take(0);
    // Sync events: per A slot, B slot, C slot a "ready" and a "free" event.
    int ev = 0;
    auto next_ev = [&] { return d_.sync_events[ev++]; };
    std::vector<cudaEvent_t> a_ready(p.a_slots), a_free(p.a_slots), b_ready(p.b_slots), b_free(p.b_slots),
        c_ready(p.c_slots), c_free(p.c_slots);
    for (auto* v : {&a_ready, &a_free, &b_ready, &b_free, &c_ready, &c_free})
      for (auto& e : *v) e = next_ev();
    std::vector<int64_t> a_holds(p.a_slots, -1), b_holds(p.b_slots, -1);
    std::vector<bool> a_used(p.a_slots, false), b_used(p.b_slots, false), c_used(p.c_slots, false);
    int64_t c_next = 0;
    const bo_kernel_registry* reg = bok::registry();

    for (;;) {
      if (err_) break;
      const int64_t w = s_.next_item.fetch_add(1);
      if (w >= p.items()) break;
      int64_t i0, i1, j;
      p.item(w, &i0, &i1, &j);
      // The B panel: reuse, or upload into the slot not used by the previous item.
      int bs = -1;
      for (int q = 0; q < p.b_slots; ++q)
        if (b_holds[q] == j) bs = q;
      if (bs < 0) {
        bs = int((last_b_ + 1) % p.b_slots);
        const Block blk = b_panel(s_, j, k0, kc);
        if (b_used[bs]) check(cudaStreamWaitEvent(d_.st[kH2D], b_free[bs], 0));
        upload(blk, b_slot[bs], b_ready[bs], s_.b_direct);
        b_holds[bs] = err_ ? -1 : j;
        panels_++;
      }
      last_b_ = bs;
      for (int64_t i = i0; i < i1 && !err_; ++i) {
        const int as = int(i % p.a_slots);
        if (a_holds[as] != i) {
          if (a_used[as]) check(cudaStreamWaitEvent(d_.st[kH2D], a_free[as], 0));
          upload(a_panel(s_, i, k0, kc), a_slot[as], a_ready[as], s_.a_direct);
          a_holds[as] = err_ ? -1 : i;
          panels_++;
        }
        const int cs = int(c_next++ % p.c_slots);
        const int64_t rows = p.tile_rows(i), cols = p.tile_cols(j);
        char* cdst = at(g.c, i * p.mb + j * p.nb * g.ldc, s_.es);
        // Test hook: a GPU failure after N tiles.
        if (s_.fail_after >= 0 && s_.issued.fetch_add(1) >= s_.fail_after) {
          s_.injected.store(true);
          err_ = cudaErrorLaunchFailure;
          break;
        }
        if (s_.beta_pass != 0.0) {
          if (c_used[cs]) check(cudaStreamWaitEvent(d_.st[kH2D], c_free[cs], 0));
          upload({cdst, rows, cols, g.ldc}, c_slot[cs], c_ready[cs], s_.c_direct);
          check(cudaStreamWaitEvent(d_.st[kKernel], c_ready[cs], 0));
        } else if (c_used[cs]) {
          check(cudaStreamWaitEvent(d_.st[kKernel], c_free[cs], 0));
        }
        check(cudaStreamWaitEvent(d_.st[kKernel], a_ready[as], 0));
        check(cudaStreamWaitEvent(d_.st[kKernel], b_ready[bs], 0));
        if (err_) break;
        const bo_call args = tile_call(g, rows, cols, kc, s_.beta_pass, a_slot[as], b_slot[bs], c_slot[cs]);
        const int idx = reg->select(g.routine, &args);
        if (idx < 0) {
          err_ = cudaErrorNotSupported;
          break;
        }
        const bo_kernel_entry& ke = reg->entries[idx];
        if (ke.workspace_bytes(&args) > size_t(ws_bytes_)) {
          err_ = cudaErrorNotSupported;  // the plan reserved the workspace of every tile shape
          break;
        }
        cudaEvent_t t0 = timed_begin(kKernel);
        if (!first_kernel_) first_kernel_ = t0;
        check(cudaError_t(ke.launch(&args, ws, d_.st[kKernel])));
        timed_end(kKernel, t0);
        check(cudaEventRecord(a_free[as], d_.st[kKernel]));
        check(cudaEventRecord(b_free[bs], d_.st[kKernel]));
        check(cudaEventRecord(c_ready[cs], d_.st[kKernel]));
        a_used[as] = b_used[bs] = c_used[cs] = true;
        check(cudaStreamWaitEvent(d_.st[kD2H], c_ready[cs], 0));
        download(c_slot[cs], rows, cols, cdst, i * p.nt + j);
        check(cudaEventRecord(c_free[cs], d_.st[kD2H]));
        if (!err_) tiles_++;
      }
    }
    // Results still in the ring go to C now (or, after a failure, whatever completed).
    for (size_t q = 0; q < d_.ring.size(); ++q) retire(d_.ring[(d_.head + q) % d_.ring.size()], true);
    for (auto& st : d_.st) {
      const cudaError_t e = cudaStreamSynchronize(st);
      if (e && !err_) err_ = e;
    }
    // Results copied straight into C are there once their copy completed. After a sticky error nothing queued
    // behind it ran, so a tile whose copy did not complete is untouched and is recomputed on the CPU.
    for (const auto& o : direct_out_)
      if (cudaEventQuery(o.first) == cudaSuccess) s_.written[o.second].store(1);
    cudaGetLastError();
  }

  cudaError_t error() const { return err_; }
  bool real_error() const { return err_ && !s_.injected.load(); }
  int64_t tiles() const { return tiles_; }
  int64_t panels() const { return panels_; }
  double pack_ms() const { return pack_ms_; }
  double unpack_ms() const { return unpack_ms_; }
  cudaEvent_t first_kernel() const { return first_kernel_; }
  void set_workspace(int64_t b) { ws_bytes_ = b; }

  // Busy time per stage from the timing events (after the streams are synchronised).
  void stage_ms(double out[kStages]) const {
    for (int q = 0; q < kStages; ++q) out[q] = 0;
    for (const auto& t : timed_) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, t.b, t.e) == cudaSuccess) out[t.stage] += ms;
    }
    cudaGetLastError();
  }

 private:
  struct Timed {
    int stage;
    cudaEvent_t b, e;
  };
  void check(cudaError_t e) {
    if (e && !err_) err_ = e;
  }
  // A direct copy the driver refused (the block then goes through the ring): said once per process, with the
  // block's shape, for the debug log.
  void refused(cudaError_t e, const void* p, int64_t rows, int64_t cols, int64_t ld) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      s_.h->log(0, "%s: direct copy of a %lldx%lld block (ld %lld) at %p refused (%s); staged instead",
                bo_routine_name(s_.g.c.routine), (long long)rows, (long long)cols, (long long)ld, p,
                cudaGetErrorName(e));
  }

  cudaEvent_t timed_begin(int stage) {
    cudaEvent_t e = d_.timing_event();
    if (e) cudaEventRecord(e, d_.st[stage]);
    return e;
  }
  void timed_end(int stage, cudaEvent_t b) {
    cudaEvent_t e = d_.timing_event();
    if (!b || !e) return;
    cudaEventRecord(e, d_.st[stage]);
    timed_.push_back({stage, b, e});
  }

  // The next ring chunk, free to fill: waits for its last DMA and unpacks a result it held.
  Chunk& acquire() {
    // Results that are already back are unpacked first, oldest first: host work the GPU need not wait for.
    for (size_t q = 0; q < d_.ring.size(); ++q) {
      Chunk& c = d_.ring[(d_.head + q) % d_.ring.size()];
      if (c.out_tile < 0) continue;
      if (cudaEventQuery(c.ev) != cudaSuccess) break;
      retire(c, false);
    }
    Chunk& c = d_.ring[d_.head];
    d_.head = (d_.head + 1) % int(d_.ring.size());
    retire(c, true);
    return c;
  }
  // Waits for the chunk's DMA; a result it holds is written to C if the copy succeeded.
  void retire(Chunk& c, bool wait) {
    if (!c.in_use) return;
    cudaError_t e = wait ? cudaEventSynchronize(c.ev) : cudaSuccess;
    if (e) {
      cudaGetLastError();
      check(e);
    }
    if (c.out_tile >= 0) {
      if (!e && !err_) {
        const auto t0 = std::chrono::steady_clock::now();
        unpack_block(c.dst, c.p, c.rows, c.cols, s_.g.c.ldc, s_.es);
        unpack_ms_ += ms_since(t0);
        s_.written[c.out_tile].store(1);
      }
      c.out_tile = -1;
    }
    c.in_use = false;
  }

  // Host block -> device (leading dimension = rows), through ring chunks, or straight from registered memory;
  // `ready` fires when all of it is there.
  void upload(const Block& blk, char* dst, cudaEvent_t ready, bool direct) {
    if (err_) return;
    const int64_t es = s_.es;
    if (direct) {
      cudaEvent_t t0 = timed_begin(kH2D);
      const cudaError_t e =
          cudaMemcpy2DAsync(dst, size_t(es * blk.rows), blk.p, size_t(es * blk.ld), size_t(es * blk.rows),
                            size_t(blk.cols), cudaMemcpyHostToDevice, d_.st[kH2D]);
      if (e == cudaSuccess) {
        timed_end(kH2D, t0);
        check(cudaEventRecord(ready, d_.st[kH2D]));
        h2d_bytes_ += double(es) * double(blk.rows) * double(blk.cols);
        return;
      }
      // Refused at enqueue (nothing was copied): stage this block instead.
      cudaGetLastError();
      refused(e, blk.p, blk.rows, blk.cols, blk.ld);
    }
    const int64_t chunk_elems = d_.chunk_bytes / es;
    const int64_t cols_per = blk.rows <= chunk_elems ? std::max<int64_t>(1, chunk_elems / blk.rows) : 0;
    auto piece = [&](const void* src, int64_t rows, int64_t cols, char* to) {
      Chunk& c = acquire();
      if (err_) return;
      const auto h0 = std::chrono::steady_clock::now();
      pack_block(c.p, src, rows, cols, blk.ld, int(es));
      pack_ms_ += ms_since(h0);
      const size_t bytes = size_t(es * rows * cols);
      cudaEvent_t t0 = timed_begin(kH2D);  // per piece: the stream idles while the host packs the next one
      check(cudaMemcpyAsync(to, c.p, bytes, cudaMemcpyHostToDevice, d_.st[kH2D]));
      timed_end(kH2D, t0);
      check(cudaEventRecord(c.ev, d_.st[kH2D]));
      c.in_use = true;
      h2d_bytes_ += double(bytes);
    };
    if (cols_per > 0) {
      for (int64_t j = 0; j < blk.cols && !err_; j += cols_per) {
        const int64_t cols = std::min(cols_per, blk.cols - j);
        piece(at(blk.p, j * blk.ld, int(es)), blk.rows, cols, at(dst, j * blk.rows, int(es)));
      }
    } else {  // a column longer than a chunk: pieces of one column
      for (int64_t j = 0; j < blk.cols && !err_; ++j)
        for (int64_t r = 0; r < blk.rows && !err_; r += chunk_elems) {
          const int64_t rows = std::min(chunk_elems, blk.rows - r);
          piece(at(blk.p, j * blk.ld + r, int(es)), rows, 1, at(dst, j * blk.rows + r, int(es)));
        }
    }
    check(cudaEventRecord(ready, d_.st[kH2D]));
  }

  // Device tile -> a ring chunk, unpacked into C later by retire(); or straight into registered C, element-exact
  // (rows of each column, never the bytes between them).
  void download(const char* src, int64_t rows, int64_t cols, char* cdst, int64_t tile) {
    if (err_) return;
    const int64_t es = s_.es, ldc = s_.g.c.ldc;
    if (s_.c_direct) {
      cudaEvent_t done = d_.out_event();
      if (!done) {
        err_ = cudaErrorMemoryAllocation;
        return;
      }
      cudaEvent_t t0 = timed_begin(kD2H);
      const cudaError_t e = cudaMemcpy2DAsync(cdst, size_t(es * ldc), src, size_t(es * rows), size_t(es * rows),
                                              size_t(cols), cudaMemcpyDeviceToHost, d_.st[kD2H]);
      if (e == cudaSuccess) {
        timed_end(kD2H, t0);
        check(cudaEventRecord(done, d_.st[kD2H]));
        if (!err_) direct_out_.push_back({done, tile});
        d2h_bytes_ += double(es) * double(rows) * double(cols);
        return;
      }
      cudaGetLastError();  // refused at enqueue, nothing written: through a ring chunk instead
      refused(e, cdst, rows, cols, ldc);
    }
    Chunk& c = acquire();
    if (err_) return;
    cudaEvent_t t0 = timed_begin(kD2H);
    const size_t bytes = size_t(es * rows * cols);
    check(cudaMemcpyAsync(c.p, src, bytes, cudaMemcpyDeviceToHost, d_.st[kD2H]));
    timed_end(kD2H, t0);
    check(cudaEventRecord(c.ev, d_.st[kD2H]));
    if (err_) return;
    c.in_use = true;
    c.out_tile = tile;
    c.dst = cdst;
    c.rows = rows;
    c.cols = cols;
    d2h_bytes_ += double(bytes);
  }

 public:
  double h2d_bytes_ = 0, d2h_bytes_ = 0;

 private:
  Shared& s_;
  Device& d_;
  cudaError_t err_ = cudaSuccess;
  int64_t last_b_ = -1;
  int64_t tiles_ = 0, panels_ = 0;
  int64_t ws_bytes_ = 0;
  double pack_ms_ = 0, unpack_ms_ = 0;
  cudaEvent_t first_kernel_ = nullptr;
  std::vector<Timed> timed_;
  std::vector<std::pair<cudaEvent_t, int64_t>> direct_out_;  // copies straight into C, and their tiles
};

// Scratch the kernels of every tile shape need (full, last row, last column, corner).
int64_t workspace_for(const Shared& s) {
  const bo_kernel_registry* reg = bok::registry();
  const Plan& p = s.plan;
  // Stands for the arena's 256-byte aligned slots (all can_implement looks at).
  void* fake = reinterpret_cast<void*>(uintptr_t(256));
  int64_t ws = 0;
  for (int64_t rows : {p.mb, p.tile_rows(p.mt - 1)})
    for (int64_t cols : {p.nb, p.tile_cols(p.nt - 1)})
      for (int64_t kc : {p.kc, p.pass_k(p.passes - 1)}) {
        const bo_call args = tile_call(s.g.c, rows, cols, kc, s.g.c.beta, fake, fake, fake);
        const int idx = reg->select(args.routine, &args);
        if (idx >= 0) ws = std::max<int64_t>(ws, int64_t(reg->entries[idx].workspace_bytes(&args)));
      }
  return ws;
}

// C[r0.., c0..] (rows x cols) = alpha op(A) op(B) over K range [k0, k0 + kc) + beta C, on the CPU BLAS.
void cpu_block(const EngineHost& h, const bo_call& g, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int64_t k0,
               int64_t kc, double beta) {
  if (rows <= 0 || cols <= 0 || !h.host->cpu_call) return;
  const int es = bo_element_size(bo_routine_precision(g.routine));
  bo_call t = g;
  t.m = rows;
  t.n = cols;
  t.a = g.op[0] == 'N' ? at(g.a, r0 + k0 * g.lda, es) : at(g.a, k0 + r0 * g.lda, es);
  t.b = g.op[1] == 'N' ? at(g.b, k0 + c0 * g.ldb, es) : at(g.b, c0 + k0 * g.ldb, es);
  t.c = at(g.c, r0 + c0 * g.ldc, es);
  t.beta = beta;
  if (kc <= 0) {  // only possible for an empty K range: C = beta C
    t.k = 0;
    t.alpha = 0.0;
    t.lda = std::max<int64_t>(1, g.lda);
    t.ldb = std::max<int64_t>(1, g.ldb);
  } else {
    t.k = kc;
  }
  h.host->cpu_call(&t);
}

}  // namespace

int pipeline_gemm(const EngineHost& h, const GemmCall& call, bo_gemm_stats* stats) {
  const auto wall0 = std::chrono::steady_clock::now();
  *stats = bo_gemm_stats{};
  stats->path = 1;
  if (h.device_count < 1) return BO_CUDA_NO_DEVICE;
  const bo_cuda_host_services* hs = h.host;
  // The hybrid split: the CPU takes the trailing columns (rows when C is tall).
  double share = std::min(std::max(call.cpu_share, 0.0), 1.0);
  if (!hs->cpu_call) share = 0;
  const bo_call& c = call.c;
  const int es = bo_element_size(bo_routine_precision(c.routine));
  const char* name = bo_routine_name(c.routine);
  const bool by_cols = c.n >= c.m;
  const int64_t extent = by_cols ? c.n : c.m;
  int64_t cpu_part = int64_t(share * double(extent) + 0.5);
  if (cpu_part > 0 && cpu_part < extent) cpu_part = std::min(extent, (cpu_part + 31) / 32 * 32);  // whole panels
  GemmCall gpu_call = call;
  bo_call& gpu = gpu_call.c;
  if (by_cols) {
    gpu.n = c.n - cpu_part;
    stats->n_cpu_cols = cpu_part;
  } else {
    gpu.m = c.m - cpu_part;
    stats->m_cpu_rows = cpu_part;
  }
  std::function<void()> cpu_task = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    if (by_cols)
      cpu_block(h, c, 0, c.m, gpu.n, cpu_part, 0, c.k, c.beta);
    else
      cpu_block(h, c, gpu.m, cpu_part, 0, c.n, 0, c.k, c.beta);
    stats->cpu_part_ms = ms_since(t0);
  };
  if (gpu.m == 0 || gpu.n == 0) {  // everything on the CPU
    cpu_task();
    stats->wall_ms = ms_since(wall0);
    return BO_CUDA_OK;
  }

  Shared s;
  s.h = &h;
  s.g = gpu_call;
  s.es = es;
  s.stats = stats;
  s.fail_after = config_long("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", -1);
  const int64_t ring_bytes = std::max<long>(3, config_long("BLASOFFLOAD_PINNED_MB", 256)) * kMiB;
  PlanInput in;
  in.m = gpu.m;
  in.n = gpu.n;
  in.k = gpu.k;
  in.reads_c = gpu.beta != 0.0;
  in.elem_size = es;
  in.tile = std::max<long>(1, config_long("BLASOFFLOAD_TILE", 2048));
  in.chunk_bytes = std::max<int64_t>(kMiB, std::min<int64_t>(32 * kMiB, ring_bytes / 4));
  // The smallest budget over the devices, so one plan serves all.
  int64_t budget = INT64_MAX;
  const char* limit_s = hs->config ? hs->config("BLASOFFLOAD_DEVICE_MEMORY_LIMIT") : nullptr;
  const int64_t limit = parse_bytes(limit_s);
  if (limit_s && *limit_s && limit < 0) h.log(0, "BLASOFFLOAD_DEVICE_MEMORY_LIMIT=%s is not a size; ignored", limit_s);
  int old_dev = -1;
  cudaGetDevice(&old_dev);
  for (int q = 0; q < h.device_count; ++q) {
    Device* d = device(h.devices[q]);
    if (cudaSetDevice(d->ordinal)) {
      cudaGetLastError();
      if (old_dev >= 0) cudaSetDevice(old_dev);
      return BO_CUDA_NO_DEVICE;
    }
    // What was free at the first call plus what the engine held then, less a reserve for cuBLAS and the program's
    // own use. Asked once (cudaMemGetInfo costs as much as a small call); again after an allocation failed.
    if (d->free_at_start < 0) {
      size_t free_b = 0, total_b = 0;
      if (cudaMemGetInfo(&free_b, &total_b)) {
        cudaGetLastError();
        if (old_dev >= 0) cudaSetDevice(old_dev);
        return BO_CUDA_NO_DEVICE;
      }
      d->free_at_start = int64_t(free_b) + d->arena_cap;
    }
    int64_t avail = int64_t(double(d->free_at_start) * 0.9) - 256 * kMiB;
    if (limit > 0) avail = std::min(avail, limit);
    budget = std::min(budget, avail);
  }
  in.budget_bytes = std::max<int64_t>(0, budget);
  // The workspace depends on the tiles, the tiles on the budget left after it: plan, measure, plan again.
  s.plan = make_plan(in);
  int64_t ws = s.plan.ok ? workspace_for(s) : 0;
  if (ws > 0) {
    in.workspace_bytes = ws;
    s.plan = make_plan(in);
    if (s.plan.ok) ws = std::max(ws, workspace_for(s));
  }
  if (!s.plan.ok) {
    h.log(BO_LOG_DEBUG, "%s pipeline: %s (budget %lld MiB)", name, s.plan.why.c_str(), (long long)(budget / kMiB));
    if (old_dev >= 0) cudaSetDevice(old_dev);
    return BO_CUDA_OUT_OF_MEMORY;
  }
  const Plan& p = s.plan;
  const int64_t arena = p.bytes_needed + al256(ws) + 1024;
  // Take every device's lock (in ordinal order: no deadlock between concurrent calls) and its resources before
  // anything is written, so that a call that cannot start leaves C untouched.
  std::vector<Device*> devs;
  std::vector<std::unique_lock<std::mutex>> locks;
  for (int q = 0; q < h.device_count; ++q) devs.push_back(device(h.devices[q]));
  std::vector<Device*> order = devs;
  std::sort(order.begin(), order.end(), [](Device* x, Device* y) { return x->ordinal < y->ordinal; });
  for (Device* d : order) locks.emplace_back(d->mu);
  const int n_sync = int(2 * (p.a_slots + p.b_slots + p.c_slots));
  for (Device* d : devs) {
    cudaSetDevice(d->ordinal);
    d->timing_used = 0;
    if (cudaError_t e = prepare(*d, arena, ring_bytes, in.chunk_bytes, n_sync)) {
      d->free_at_start = -1;  // ask again next time: the program may hold more device memory now
      if (old_dev >= 0) cudaSetDevice(old_dev);
      if (e != cudaErrorMemoryAllocation) h.on_cuda_error(e);
      h.log(BO_LOG_DEBUG, "%s pipeline: cannot reserve %lld MiB on GPU %d (%s)", name, (long long)(arena / kMiB),
            d->ordinal, cudaGetErrorName(e));
      return e == cudaErrorMemoryAllocation ? BO_CUDA_OUT_OF_MEMORY : BO_CUDA_LAUNCH_FAILED;
    }
  }
  // Registered host memory moves without staging copies (BLASOFFLOAD_PIN_HOST=off: always staged).
  HostPins::Lease la, lb, lc;
  if (!call.stage_only && pinning_enabled(hs)) {
    // Exactly the bytes the call may touch: a sub-block of a larger array (LAPACK's trailing matrix) ends well before
    // cols * ld. A 2D copy the driver still refuses (it may check the whole last pitch) is staged instead.
    auto span = [es](const void*, int64_t rows, int64_t cols, int64_t ld) {
      return size_t(es) * size_t((cols - 1) * ld + rows);
    };
    HostPins& pins = host_pins();
    const int64_t ar = gpu.op[0] == 'N' ? gpu.m : gpu.k, ac = gpu.op[0] == 'N' ? gpu.k : gpu.m;
    const int64_t br = gpu.op[1] == 'N' ? gpu.k : gpu.n, bc = gpu.op[1] == 'N' ? gpu.n : gpu.k;
    la = pins.acquire(gpu.a, span(gpu.a, ar, ac, gpu.lda));
    lb = pins.acquire(gpu.b, span(gpu.b, br, bc, gpu.ldb));
    lc = pins.acquire(gpu.c, span(gpu.c, gpu.m, gpu.n, gpu.ldc));
    s.a_direct = la.direct;
    s.b_direct = lb.direct;
    s.c_direct = lc.direct;
    stats->pinned_operands = int(la.direct) + int(lb.direct) + int(lc.direct);
  }
  struct Release {
    HostPins::Lease* l[3];
    ~Release() {
      for (auto* x : l)
        if (x->entry >= 0) host_pins().release(*x);
    }
  } release{{&la, &lb, &lc}};
  stats->devices = int(devs.size());
  stats->tile_m = p.mb;
  stats->tile_n = p.nb;
  stats->k_passes = p.passes;
  s.written.reset(new std::atomic<uint8_t>[size_t(p.mt * p.nt)]);

  bool gpu_failed = false;
  double stage_sum[kStages] = {0, 0, 0};
  for (int64_t pass = 0; pass < p.passes && !gpu_failed; ++pass) {
    s.pass = pass;
    s.beta_pass = pass == 0 ? gpu.beta : 1.0;
    s.next_item.store(0);
    for (int64_t t = 0; t < p.mt * p.nt; ++t) s.written[t].store(0);
    std::vector<std::unique_ptr<Driver>> drivers;
    std::vector<std::function<void()>> tasks;
    for (Device* d : devs) {
      d->out_used = 0;
      drivers.emplace_back(new Driver(s, *d));
      Driver* dr = drivers.back().get();
      dr->set_workspace(ws);
      tasks.push_back([dr, d, &s] {
        int prev = -1;
        cudaGetDevice(&prev);
        cudaSetDevice(d->ordinal);
        cudaEvent_t start = d->timing_event();
        if (start) cudaEventRecord(start, d->st[kH2D]);
        dr->run();
        if (start && dr->first_kernel() && !dr->error()) {
          float ms = 0;
          if (cudaEventElapsedTime(&ms, start, dr->first_kernel()) == cudaSuccess) {
            std::lock_guard<std::mutex> g(s.stats_mu);
            if (s.stats->first_kernel_ms == 0) s.stats->first_kernel_ms = ms;
          }
          cudaGetLastError();
        }
        if (prev >= 0 && prev != d->ordinal) cudaSetDevice(prev);
      });
    }
    if (pass == 0 && cpu_part > 0) tasks.push_back(cpu_task);
    run_concurrently(tasks.data(), int(tasks.size()));
    for (size_t q = 0; q < drivers.size(); ++q) {
      Driver& dr = *drivers[q];
      stats->tiles += dr.tiles();
      stats->panel_uploads += dr.panels();
      stats->bytes_h2d += dr.h2d_bytes_;
      stats->bytes_d2h += dr.d2h_bytes_;
      stats->pack_ms += dr.pack_ms();
      stats->unpack_ms += dr.unpack_ms();
      if (dr.error()) {
        gpu_failed = true;
        if (dr.real_error()) {
          // Only an error that persists (a sticky one) takes the device out of service.
          cudaSetDevice(devs[q]->ordinal);
          cudaGetLastError();
          if (cudaDeviceSynchronize() != cudaSuccess) h.on_cuda_error(dr.error());
          h.log(0, "%s: GPU %d failed midway (%s); its unfinished tiles run on the CPU BLAS", name, devs[q]->ordinal,
                cudaGetErrorName(dr.error()));
        }
      } else {
        double st[kStages];
        dr.stage_ms(st);
        for (int q2 = 0; q2 < kStages; ++q2) stage_sum[q2] += st[q2];
      }
    }
    if (gpu_failed) {
      // Tiles of this pass not written back: on the CPU with this pass's K range; then the remaining passes.
      for (int64_t i = 0; i < p.mt; ++i)
        for (int64_t j = 0; j < p.nt; ++j) {
          if (s.written[i * p.nt + j].load()) continue;
          cpu_block(h, gpu, i * p.mb, p.tile_rows(i), j * p.nb, p.tile_cols(j), p.pass_k0(pass), p.pass_k(pass),
                    s.beta_pass);
          stats->tiles_cpu++;
        }
      if (pass + 1 < p.passes) {
        const int64_t k0 = p.pass_k0(pass + 1);
        cpu_block(h, gpu, 0, gpu.m, 0, gpu.n, k0, gpu.k - k0, 1.0);
      }
    }
  }
  if (old_dev >= 0) cudaSetDevice(old_dev);
  // Without a CPU BLAS (blasoffload-calibrate) a failure cannot be repaired: say so (C holds partial results).
  if (gpu_failed && !hs->cpu_call) return BO_CUDA_LAUNCH_FAILED;
  stats->h2d_busy_ms = stage_sum[kH2D];
  stats->kernel_busy_ms = stage_sum[kKernel];
  stats->d2h_busy_ms = stage_sum[kD2H];
  stats->wall_ms = ms_since(wall0);
  h.log(BO_LOG_DEBUG,
        "%s pipeline: %dx GPU, tiles %lldx%lld (%lld on GPU, %lld on CPU after failure), %lld K pass(es), %lld "
        "panel uploads, CPU share %lld cols %lld rows; in %.0f MB (h2d busy %.2f ms), out %.0f MB (d2h busy %.2f "
        "ms), kernels %.2f ms, pack %.2f ms, unpack %.2f ms, first kernel at %.2f ms, wall %.2f ms",
        name, stats->devices, (long long)p.mb, (long long)p.nb, (long long)stats->tiles, (long long)stats->tiles_cpu,
        (long long)p.passes, (long long)stats->panel_uploads, (long long)stats->n_cpu_cols,
        (long long)stats->m_cpu_rows, stats->bytes_h2d / 1e6, stats->h2d_busy_ms, stats->bytes_d2h / 1e6,
        stats->d2h_busy_ms, stats->kernel_busy_ms, stats->pack_ms, stats->unpack_ms, stats->first_kernel_ms,
        stats->wall_ms);
  return BO_CUDA_OK;
}

namespace {
std::atomic<bool> g_program_uses_cuda{false};
}
void pins_shutdown() { host_pins().shutdown(); }
void set_pinning_default(bool program_uses_cuda) { g_program_uses_cuda.store(program_uses_cuda); }
bool pinning_enabled(const bo_cuda_host_services* h) {
  const char* v = h && h->config ? h->config("BLASOFFLOAD_PIN_HOST") : nullptr;
  if (v && std::strcmp(v, "on") == 0) return true;
  if (v && std::strcmp(v, "off") == 0) return false;
  return !g_program_uses_cuda.load();
}

int host_range_state(const void* p, int64_t bytes) {
  if (bytes <= 0) return 0;
  if (cuda_pinned_elsewhere(p) && cuda_pinned_elsewhere(static_cast<const char*>(p) + bytes - 1)) return 1;
  return host_pins().state(p, size_t(bytes));
}

double measure_staged_gbs(const EngineHost& h, int64_t bytes) {
  // A k = 1 product moves little; time the engine's staged copies directly instead: C in and out of a beta = 1,
  // alpha ~ 0 sgemm is exactly one upload and one download of C through the ring.
  const int64_t n = std::max<int64_t>(1024, int64_t(std::sqrt(double(bytes / 4))));
  std::vector<float> c(size_t(n * n), 1.0f), ab(size_t(n), 0.5f);
  GemmCall g{};
  g.c.routine = BO_R_SGEMM;
  g.c.op[0] = g.c.op[1] = 'N';
  g.c.m = g.c.n = n;
  g.c.k = 1;
  // alpha = 0 would be a quick return in the core, but the engine still computes beta * C through the GPU.
  g.c.alpha = double(1e-30f);
  g.c.a = ab.data();
  g.c.lda = n;
  g.c.b = ab.data();
  g.c.ldb = 1;
  g.c.beta = 1.0;
  g.c.c = c.data();
  g.c.ldc = n;
  g.cpu_share = 0.0;
  g.stage_only = true;
  bo_gemm_stats st{};
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    if (pipeline_gemm(h, g, &st) != BO_CUDA_OK) return 0;
    best = std::max(best, double(2 * 4 * n * n) / (st.wall_ms * 1e-3) / 1e9);  // bytes in plus bytes out
  }
  return best;
}

}  // namespace bom
