// The tiled gemm engine's per-device part (see gemm_tiles.h): device resources and the driver that streams panels in,
// runs the tiles' kernels and streams results back, all three overlapped.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "kernels/launch.h"
#include "kernels/registry.h"
#include "offload/module/device.h"
#include "offload/module/gemm_tiles.h"
#include "offload/module/staging_pool.h"
#include "offload/one_time_cost.h"

namespace bok {
const bo_kernel_registry* registry();
}

namespace bom {
namespace tiles {

namespace {
std::mutex g_devices_mu;
std::map<std::pair<int, int>, Device*>* g_devices = nullptr;  // by (ordinal, share); never freed (the driver reclaims)

}  // namespace

Device* device(int ordinal, int share) {
  std::lock_guard<std::mutex> g(g_devices_mu);
  if (!g_devices) g_devices = new std::map<std::pair<int, int>, Device*>();
  Device*& d = (*g_devices)[{ordinal, share}];
  if (!d) {
    d = new Device();
    d->ordinal = ordinal;
    d->share = share;
  }
  return d;
}

int64_t arenas_held(int ordinal) {
  std::lock_guard<std::mutex> g(g_devices_mu);
  int64_t sum = 0;
  if (g_devices)
    for (const auto& [key, d] : *g_devices)
      if (key.first == ordinal) sum += d->arena_cap;
  return sum;
}

cudaError_t prepare(Device& d, int64_t arena_bytes, int64_t arena_max, int64_t ring_bytes, int64_t chunk_bytes,
                    int sync_events) {
  const int want = int(std::max<int64_t>(3, ring_bytes / chunk_bytes));  // the ring's most chunks
  bool grows = arena_bytes > d.arena_cap || d.chunk_bytes != chunk_bytes || d.ring_max != want ||
               int(d.sync_events.size()) < sync_events;
  for (auto& s : d.st) grows |= !s;
  grows |= !d.peer;
  bo::one_time::Timer one_time(grows);  // the engine's resources grow once per size reached
  cudaError_t e = cudaSuccess;
  for (auto& s : d.st)
    if (!s && (e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) return e;
  if (!d.peer && (e = cudaStreamCreateWithFlags(&d.peer, cudaStreamNonBlocking))) return e;
  if (arena_bytes > d.arena_cap) {
    const int64_t arena_want =
        std::max(arena_bytes, std::min(std::max(arena_bytes + arena_bytes / 4, 2 * d.arena_cap), arena_max));
    if (d.arena) cudaFree(d.arena);
    d.arena = nullptr;
    d.arena_cap = 0;
    for (int64_t size : {arena_want, arena_bytes}) {  // the headroom is a bet on later calls; the need alone may fit
      if ((e = cudaMalloc(&d.arena, size_t(size))) == cudaSuccess) {
        d.arena_cap = size;
        break;
      }
      cudaGetLastError();
      d.arena = nullptr;
    }
    if (!d.arena) return cudaErrorMemoryAllocation;
  }
  if (d.chunk_bytes != chunk_bytes || d.ring_max != want) {
    for (Chunk& c : d.ring) {
      if (c.p) cudaFreeHost(c.p);
      if (c.ev) cudaEventDestroy(c.ev);
    }
    d.ring.assign(std::min(want, kRingFirst), Chunk{});
    d.ring_max = want;
    d.chunk_bytes = chunk_bytes;
    d.head = 0;
    for (Chunk& c : d.ring) {
      if ((e = cudaHostAlloc(reinterpret_cast<void**>(&c.p), size_t(chunk_bytes), cudaHostAllocPortable))) {
        cudaGetLastError();
        c.p = nullptr;
        d.ring.clear();
        d.chunk_bytes = 0;
        d.ring_max = 0;
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

bool Shared::take_own(int index, int64_t* i0, int64_t* i1, int64_t* j, int* block) {
  if (size_t(index) >= blocks.size()) return false;
  const int64_t w = next_item[size_t(index)].fetch_add(1);
  if (w >= blocks[size_t(index)].items()) return false;
  block_item(plan, blocks[size_t(index)], w, i0, i1, j);
  *block = index;
  return true;
}

bool Shared::take_other(int index, int64_t* i0, int64_t* i1, int64_t* j, int* block) {
  const int nb = int(blocks.size());
  for (int q = 1; q <= nb; ++q) {
    const int b = (index + q) % nb;
    if (b == index) continue;
    const int64_t w = next_item[size_t(b)].fetch_add(1);
    if (w < blocks[size_t(b)].items()) {
      block_item(plan, blocks[size_t(b)], w, i0, i1, j);
      *block = b;
      return true;
    }
  }
  return false;
}

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

bo_call tile_call(const bo_call& g, int64_t rows, int64_t cols, int64_t kc, double beta, double beta_i, const void* a,
                  const void* b, void* c) {
  bo_call t{};
  t.routine = g.routine;
  t.op[0] = g.op[0];
  t.op[1] = g.op[1];
  t.m = rows;
  t.n = cols;
  t.k = kc;
  t.alpha = g.alpha;
  t.alpha_i = g.alpha_i;
  t.beta = beta;
  t.beta_i = beta_i;
  t.a = a;
  t.lda = g.op[0] == 'N' ? rows : kc;
  t.b = b;
  t.ldb = g.op[1] == 'N' ? kc : cols;
  t.c = c;
  t.ldc = rows;
  return t;
}

void Driver::run() {
  started_ = d_.timing_event();
  if (started_) cudaEventRecord(started_, d_.st[kH2D]);
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
  a_slot_.assign(size_t(p.a_slots), nullptr);
  b_slot_.assign(size_t(p.b_slots), nullptr);
  std::vector<char*>& a_slot = a_slot_;
  std::vector<char*>& b_slot = b_slot_;
  std::vector<char*> c_slot(p.c_slots);
  for (auto& q : a_slot) q = take(es * p.mb * kc);
  for (auto& q : b_slot) q = take(es * kc * p.nb);
  for (auto& q : c_slot) q = take(es * p.mb * p.nb);
  void* ws = take(0);
  // Sync events: per A slot, B slot, C slot a "ready" and a "free" event.
  int ev = 0;
  auto next_ev = [&] { return d_.sync_events[ev++]; };
  a_ready_.assign(size_t(p.a_slots), nullptr);
  b_ready_.assign(size_t(p.b_slots), nullptr);
  std::vector<cudaEvent_t>& a_ready = a_ready_;
  std::vector<cudaEvent_t>& b_ready = b_ready_;
  std::vector<cudaEvent_t> a_free(p.a_slots), b_free(p.b_slots), c_ready(p.c_slots), c_free(p.c_slots);
  for (auto* v : {&a_ready, &a_free, &b_ready, &b_free, &c_ready, &c_free})
    for (auto& e : *v) e = next_ev();
  a_holds_.assign(size_t(p.a_slots), -1);
  b_holds_.assign(size_t(p.b_slots), -1);
  std::vector<int64_t>& a_holds = a_holds_;
  std::vector<int64_t>& b_holds = b_holds_;
  std::vector<bool> a_used(p.a_slots, false), b_used(p.b_slots, false), c_used(p.c_slots, false);
  int64_t c_next = 0;
  const bo_kernel_registry* reg = bok::registry();

  for (;;) {
    if (err_) break;
    int64_t i0, i1, j;
    int block = 0;
    if (!s_.take_own(index_, &i0, &i1, &j, &block)) {
      if (!left_own_) {  // nobody waits for this driver to start a panel any more
        left_own_ = true;
        if (s_.share) s_.share->left_own_block(index_);
      }
      // Two H200s, staged dgemm n = 32768: taking others' items behind 5-6 tiles of its own queue, the stealing GPU
      // finished 28-48 ms after the other.
      if (s_.blocks.size() > 1) wait_backlog(s_.steal_depth);
      if (err_ || !s_.take_other(index_, &i0, &i1, &j, &block)) break;
    }
    // The B panel: reuse, or upload into the slot not used by the previous item (whole panels: its own slot).
    int bs = -1;
    if (p.whole) {
      if (b_holds[size_t(j)] == j) bs = int(j);
    } else {
      for (int q = 0; q < p.b_slots; ++q)
        if (b_holds[q] == j) bs = q;
    }
    if (bs < 0) {
      bs = p.whole ? int(j) : int((last_b_ + 1) % p.b_slots);
      const Block blk = b_panel(s_, j, k0, kc);
      if (b_used[bs]) check(cudaStreamWaitEvent(d_.st[kH2D], b_free[bs], 0));
      if (fetch_panel(false, j, blk, b_slot[bs], b_ready[bs], s_.b_direct))
        b_staged_ += double(s_.es) * double(blk.rows) * double(blk.cols);
      b_holds[bs] = err_ ? -1 : j;
      panels_++;
    }
    last_b_ = bs;
    for (int64_t i = i0; i < i1 && !err_; ++i) {
      const int as = int(i % p.a_slots);
      if (a_holds[as] != i) {
        if (a_used[as]) check(cudaStreamWaitEvent(d_.st[kH2D], a_free[as], 0));
        const Block blk = a_panel(s_, i, k0, kc);
        if (fetch_panel(true, i, blk, a_slot[as], a_ready[as], s_.a_direct))
          a_staged_ += double(s_.es) * double(blk.rows) * double(blk.cols);
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
      if (s_.beta_pass != 0.0 || s_.beta_pass_i != 0.0) {
        if (c_used[cs]) check(cudaStreamWaitEvent(d_.st[kH2D], c_free[cs], 0));
        upload({cdst, rows, cols, g.ldc}, c_slot[cs], c_ready[cs], s_.c_direct);
        check(cudaStreamWaitEvent(d_.st[kKernel], c_ready[cs], 0));
      } else if (c_used[cs]) {
        check(cudaStreamWaitEvent(d_.st[kKernel], c_free[cs], 0));
      }
      check(cudaStreamWaitEvent(d_.st[kKernel], a_ready[as], 0));
      check(cudaStreamWaitEvent(d_.st[kKernel], b_ready[bs], 0));
      if (err_) break;
      const bo_call args =
          tile_call(g, rows, cols, kc, s_.beta_pass, s_.beta_pass_i, a_slot[as], b_slot[bs], c_slot[cs]);
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
      check(bok::launch(idx, &args, ws, d_.st[kKernel]));
      if (cudaEvent_t done = timed_end(kKernel, t0)) {
        while (!unfinished_.empty() && cudaEventQuery(unfinished_.front()) == cudaSuccess) unfinished_.pop_front();
        unfinished_.push_back(done);
      }
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
  // Nobody waits for this driver to start a panel any more.
  if (s_.share && !left_own_) s_.share->left_own_block(index_);
  left_own_ = true;
  // Results still in the ring go to C now (or, after a failure, whatever completed).
  for (size_t q = 0; q < d_.ring.size(); ++q) retire(d_.ring[(d_.head + q) % d_.ring.size()], true);
  for (cudaStream_t st : {d_.st[kH2D], d_.st[kKernel], d_.st[kD2H], d_.peer}) {
    const cudaError_t e = cudaStreamSynchronize(st);
    if (e && !err_) err_ = e;
  }
  // Results copied straight into C are there once their copy completed. After a sticky error nothing queued
  // behind it ran, so a tile whose copy did not complete is untouched and is recomputed on the CPU.
  for (const auto& o : direct_out_)
    if (cudaEventQuery(o.first) == cudaSuccess) s_.written[o.second].store(1);
  cudaGetLastError();
  done_ms_ = ms_since(s_.t0);
}

void Driver::stage_ms(double out[kStages]) const {
  for (int q = 0; q < kStages; ++q) out[q] = 0;
  for (const auto& t : timed_) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, t.b, t.e) == cudaSuccess) out[t.stage] += ms;
  }
  cudaGetLastError();
}

void Driver::check(cudaError_t e) {
  if (e && !err_) err_ = e;
}

void Driver::refused(cudaError_t e, const void* p, int64_t rows, int64_t cols, int64_t ld) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    s_.h->log(0, "%s: direct copy of a %lldx%lld block (ld %lld) at %p refused (%s); staged instead",
              bo_routine_name(s_.g.c.routine), (long long)rows, (long long)cols, (long long)ld, p, cudaGetErrorName(e));
}

void Driver::wait_backlog(int depth) {
  if (depth < 0) return;
  while (int(unfinished_.size()) > depth && !err_) {
    retire_arrived();
    const cudaError_t e = cudaEventSynchronize(unfinished_.front());
    if (e) {
      cudaGetLastError();
      check(e);
    }
    unfinished_.pop_front();
  }
}

void Driver::kernel_idle(double* before, double* first_half, double* second_half) const {
  *before = *first_half = *second_half = 0;
  std::vector<const Timed*> k;
  for (const auto& t : timed_)
    if (t.stage == kKernel) k.push_back(&t);
  float ms = 0;
  if (k.empty()) return;
  if (started_ && cudaEventElapsedTime(&ms, started_, k[0]->b) == cudaSuccess) *before = ms;
  for (size_t q = 1; q < k.size(); ++q)
    if (cudaEventElapsedTime(&ms, k[q - 1]->e, k[q]->b) == cudaSuccess && ms > 0)
      *(2 * q < k.size() ? first_half : second_half) += ms;
  cudaGetLastError();
}

cudaEvent_t Driver::timed_begin(int stage) {
  cudaEvent_t e = d_.timing_event();
  if (e) cudaEventRecord(e, d_.st[stage]);
  return e;
}

cudaEvent_t Driver::timed_end(int stage, cudaEvent_t b) {
  cudaEvent_t e = d_.timing_event();
  if (!b || !e) return nullptr;
  cudaEventRecord(e, d_.st[stage]);
  timed_.push_back({stage, b, e});
  return e;
}

void Driver::retire_arrived() {
  for (size_t q = 0; q < d_.ring.size(); ++q) {
    Chunk& c = d_.ring[(d_.head + q) % d_.ring.size()];
    if (c.out_tile < 0) continue;
    if (cudaEventQuery(c.ev) != cudaSuccess) break;
    retire(c, false);
  }
}

Chunk& Driver::acquire() {
  retire_arrived();  // host work the GPU need not wait for
  grow_ring();
  Chunk& c = d_.ring[d_.head];
  d_.head = (d_.head + 1) % int(d_.ring.size());
  retire(c, true);
  return c;
}

void Driver::grow_ring() {
  Chunk& next = d_.ring[d_.head];
  if (!next.in_use || int(d_.ring.size()) >= d_.ring_max || cudaEventQuery(next.ev) != cudaErrorNotReady) return;
  // The next chunk is still in flight: a new one goes before it (the newest place in the ring's order), so that
  // this piece need not wait. Pinned once, kept for the process.
  bo::one_time::Timer one_time;
  Chunk c;
  if (cudaHostAlloc(reinterpret_cast<void**>(&c.p), size_t(d_.chunk_bytes), cudaHostAllocPortable) != cudaSuccess ||
      cudaEventCreateWithFlags(&c.ev, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();  // short of pinned memory: the ring stays as it is
    if (c.p) cudaFreeHost(c.p);
    d_.ring_max = int(d_.ring.size());
    return;
  }
  d_.ring.insert(d_.ring.begin() + d_.head, c);
}

void Driver::retire(Chunk& c, bool wait) {
  if (!c.in_use) return;
  const auto w0 = std::chrono::steady_clock::now();
  cudaError_t e = wait ? cudaEventSynchronize(c.ev) : cudaSuccess;
  if (wait) ring_wait_ms_ += ms_since(w0);
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

void Driver::upload(const Block& blk, char* dst, cudaEvent_t ready, bool direct) {
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

bool Driver::fetch_panel(bool a, int64_t x, const Block& blk, char* dst, cudaEvent_t ready, bool direct) {
  if (err_) return false;
  const bool shared = s_.share && (a ? s_.share_a : s_.share_b);
  if (!shared) {
    upload(blk, dst, ready, direct);
    return !direct;
  }
  const int64_t q = a ? x : s_.plan.mt + x;
  if (!s_.share->ready_for(q, index_)) stage_ahead();
  const auto w0 = std::chrono::steady_clock::now();
  const PanelShare::Source src = s_.share->need(q, index_);
  panel_wait_ms_ += ms_since(w0);
  if (!src.upload && copy_from(*s_.drivers[size_t(src.from)], a, x, dst, ready, int64_t(s_.es) * blk.rows * blk.cols))
    return false;
  upload(blk, dst, ready, direct);
  if (src.upload) s_.share->uploaded(q, index_, !err_);
  return !direct;
}

void Driver::stage_ahead() {
  // A driver without a block of its own (more devices than a small tile grid has blocks) only takes others' items.
  if (left_own_ || err_ || size_t(index_) >= s_.blocks.size()) return;
  const Plan& p = s_.plan;
  const TileBlock& b = s_.blocks[size_t(index_)];
  const int64_t k0 = p.pass_k0(s_.pass), kc = p.pass_k(s_.pass);
  // The coming items of a shell of s tiles reach its other panel within s + 1 items.
  const int64_t next = s_.next_item[size_t(index_)].load(), last = std::min(b.items(), next + 64);
  // Panel x of A (a) or of B into its slot (whole panels: slot x), where it is this driver's turn to stage it.
  auto stage = [&](bool a, int64_t x) {
    int64_t& holds = (a ? a_holds_ : b_holds_)[size_t(x)];
    const int64_t q = a ? x : p.mt + x;
    if (!(a ? s_.share_a : s_.share_b) || holds == x || !s_.share->claim_own(q, index_)) return false;
    const Block blk = a ? a_panel(s_, x, k0, kc) : b_panel(s_, x, k0, kc);
    upload(blk, (a ? a_slot_ : b_slot_)[size_t(x)], (a ? a_ready_ : b_ready_)[size_t(x)], false);
    s_.share->uploaded(q, index_, !err_);
    (a ? a_staged_ : b_staged_) += double(s_.es) * double(blk.rows) * double(blk.cols);
    holds = err_ ? -1 : x;
    panels_++;
    return true;
  };
  for (int64_t w = next; w < last; ++w) {
    int64_t i0 = 0, i1 = 0, j = 0;
    block_item(p, b, w, &i0, &i1, &j);
    if (stage(false, j) || stage(true, i0)) return;  // one panel: about as long as the wait
  }
}

bool Driver::copy_from(const Driver& o, bool a, int64_t x, char* dst, cudaEvent_t ready, int64_t bytes) {
  // In the whole-panel order o's slot x holds panel x for the rest of the call, and o's devices' memory is freed or
  // reused only after every driver of the call has synchronised its streams.
  const char* src = a ? o.a_slot_[size_t(x)] : o.b_slot_[size_t(x)];
  cudaEvent_t src_ready = a ? o.a_ready_[size_t(x)] : o.b_ready_[size_t(x)];
  cudaError_t e = cudaStreamWaitEvent(d_.peer, src_ready, 0);
  if (!e) e = copy_between_gpus(dst, d_.ordinal, bytes, src, o.d_.ordinal, bytes, bytes, 1, 1, d_.peer);
  if (e) {
    cudaGetLastError();  // refused at enqueue, nothing copied: the caller uploads it instead
    return false;
  }
  check(cudaEventRecord(ready, d_.peer));
  peer_bytes_ += double(bytes);
  return true;
}

void Driver::download(const char* src, int64_t rows, int64_t cols, char* cdst, int64_t tile) {
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

}  // namespace tiles
}  // namespace bom
