// Ring transfers of host operands (see ring_transfer.h).
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "offload/module/ring_transfer.h"
#include "offload/module/staging_pool.h"
#include "offload/one_time_cost.h"

namespace bom {
namespace {

using bo::routines::Operand;

// One piece: columns [j, j + w), rows [r0, r1) of each (a triangle's trapezoid: its part of those columns).
struct Span {
  int64_t j, w, r0, r1;
};

std::vector<Span> spans(const Operand& o, int es, size_t piece_bytes) {
  std::vector<Span> out;
  const bool tri = o.shape != Operand::kMatrix;
  const int64_t rows = o.rows, cols = tri ? o.rows : o.cols;
  const int64_t w = std::max<int64_t>(1, int64_t(piece_bytes) / (int64_t(es) * std::max<int64_t>(rows, 1)));
  for (int64_t j = 0; j < cols; j += w) {
    const int64_t cw = std::min(w, cols - j);
    int64_t r0 = 0, r1 = rows;
    if (o.shape == Operand::kLower) r0 = j;
    if (o.shape == Operand::kUpper) r1 = std::min(rows, j + cw);
    out.push_back({j, cw, r0, r1});
  }
  return out;
}

// Per thread: the ring's events (one per slot), created once, on the device current then: the several-GPU paths
// (lapack_mg.cu, level3_mg.cu) move each GPU's operands on a thread of its own that lives for one call, and its events
// go with it. The process's main thread keeps its own to the end (destroying them from exit handlers could meet a
// CUDA already shut down).
struct ThreadEvents {
  std::vector<cudaEvent_t> ev;
  ~ThreadEvents() {
    if (gettid() == getpid()) return;
    for (cudaEvent_t e : ev) cudaEventDestroy(e);
  }
};
cudaEvent_t* ring_events(int slots) {
  thread_local ThreadEvents t;
  std::vector<cudaEvent_t>& ev = t.ev;
  while (int(ev.size()) < slots) {
    cudaEvent_t e = nullptr;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return nullptr;
    ev.push_back(e);
  }
  return ev.data();
}

char* at(const void* base, int64_t elems, int es) {
  return static_cast<char*>(const_cast<void*>(base)) + size_t(es) * size_t(elems);
}

// The triangle's rows of the span's columns from the packed piece (leading dimension r1 - r0) to the host.
void unpack_trapezoid(void* host, const char* piece, const Span& s, const Operand& o, int es) {
  const int64_t h = s.r1 - s.r0;
  parallel_for(s.w, [&](int64_t c) {
    const int64_t col = s.j + c;
    const int64_t a = o.shape == Operand::kLower ? col : 0, b = o.shape == Operand::kLower ? o.rows : col + 1;
    std::memcpy(at(host, a + col * o.ld, es), piece + size_t(es) * size_t((a - s.r0) + c * h),
                size_t(es) * size_t(b - a));
  });
}

}  // namespace

size_t ring_piece_bytes(const Operand& o, int es) {
  return std::max(kRingPieceBytes, size_t(es) * size_t(std::max<int64_t>(o.rows, 1)));
}

cudaError_t ring_upload(const Ring& r, void* dev, const void* host, const Operand& o, int es, cudaStream_t st) {
  cudaEvent_t* ev = ring_events(r.slots);
  if (!ev) return cudaErrorMemoryAllocation;
  const int64_t ldd = std::max<int64_t>(o.rows, 1);
  const std::vector<Span> sp = spans(o, es, r.piece_bytes);
  for (size_t p = 0; p < sp.size(); ++p) {
    const Span& s = sp[p];
    const int slot = int(p % size_t(r.slots));
    char* piece = r.pinned + size_t(slot) * r.piece_bytes;
    // That slot's earlier DMA (of this operand, or of the call's previous one) is done.
    if (cudaError_t e = cudaEventSynchronize(ev[slot])) return e;
    const int64_t h = s.r1 - s.r0;
    pack_block(piece, at(host, s.r0 + s.j * o.ld, es), h, s.w, o.ld, es);
    const cudaError_t e =
        h == ldd
            ? cudaMemcpyAsync(at(dev, s.j * ldd, es), piece, size_t(es) * size_t(h * s.w), cudaMemcpyHostToDevice, st)
            : cudaMemcpy2DAsync(at(dev, s.r0 + s.j * ldd, es), size_t(es) * size_t(ldd), piece, size_t(es) * size_t(h),
                                size_t(es) * size_t(h), size_t(s.w), cudaMemcpyHostToDevice, st);
    if (e) return e;
    if (cudaError_t e2 = cudaEventRecord(ev[slot], st)) return e2;
  }
  return cudaSuccess;
}

cudaError_t ring_download(const Ring& r, void* host, const void* dev, const Operand& o, int es, cudaStream_t st,
                          bool* host_written) {
  *host_written = false;
  cudaEvent_t* ev = ring_events(r.slots);
  if (!ev) return cudaErrorMemoryAllocation;
  const int64_t ldd = std::max<int64_t>(o.rows, 1);
  const std::vector<Span> sp = spans(o, es, r.piece_bytes);
  auto queue = [&](size_t p) -> cudaError_t {
    const Span& s = sp[p];
    const int slot = int(p % size_t(r.slots));
    char* piece = r.pinned + size_t(slot) * r.piece_bytes;
    const int64_t h = s.r1 - s.r0;
    const cudaError_t e =
        h == ldd
            ? cudaMemcpyAsync(piece, at(dev, s.j * ldd, es), size_t(es) * size_t(h * s.w), cudaMemcpyDeviceToHost, st)
            : cudaMemcpy2DAsync(piece, size_t(es) * size_t(h), at(dev, s.r0 + s.j * ldd, es), size_t(es) * size_t(ldd),
                                size_t(es) * size_t(h), size_t(s.w), cudaMemcpyDeviceToHost, st);
    return e ? e : cudaEventRecord(ev[slot], st);
  };
  for (size_t p = 0; p < sp.size() && p < size_t(r.slots); ++p)
    if (cudaError_t e = queue(p)) return e;
  for (size_t p = 0; p < sp.size(); ++p) {
    const Span& s = sp[p];
    const int slot = int(p % size_t(r.slots));
    if (cudaError_t e = cudaEventSynchronize(ev[slot])) return e;
    const char* piece = r.pinned + size_t(slot) * r.piece_bytes;
    *host_written = true;
    if (o.shape == Operand::kMatrix)
      unpack_block(at(host, s.j * o.ld, es), piece, o.rows, s.w, o.ld, es);
    else
      unpack_trapezoid(host, piece, s, o, es);
    if (p + size_t(r.slots) < sp.size())
      if (cudaError_t e = queue(p + size_t(r.slots))) return e;
  }
  return cudaSuccess;
}

cudaError_t ring_copy_regions(const Ring& r, const bo_region* regs, size_t count, int es, bool to_device,
                              cudaStream_t st) {
  cudaEvent_t* ev = ring_events(r.slots);
  if (!ev) return cudaErrorMemoryAllocation;
  struct Piece {
    const bo_region* g;
    int64_t j, w;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < count; ++i) {
    const bo_region& g = regs[i];
    if (g.rows <= 0 || g.cols <= 0) continue;
    const int64_t w = std::max<int64_t>(1, int64_t(r.piece_bytes) / (int64_t(es) * g.rows));
    for (int64_t j = 0; j < g.cols; j += w) pieces.push_back({&g, j, std::min(w, g.cols - j)});
  }
  auto slot_of = [&](size_t p) { return r.pinned + (p % size_t(r.slots)) * r.piece_bytes; };
  // Queues piece p's DMA between its slot (packed: leading dimension rows) and its place on the device.
  auto dma = [&](size_t p) -> cudaError_t {
    const Piece& q = pieces[p];
    char* dev = at(q.g->dev, q.j * q.g->dev_ld, es);
    const size_t dpitch = size_t(es) * size_t(q.g->dev_ld), width = size_t(es) * size_t(q.g->rows);
    const cudaError_t e =
        to_device ? cudaMemcpy2DAsync(dev, dpitch, slot_of(p), width, width, size_t(q.w), cudaMemcpyHostToDevice, st)
                  : cudaMemcpy2DAsync(slot_of(p), width, dev, dpitch, width, size_t(q.w), cudaMemcpyDeviceToHost, st);
    return e ? e : cudaEventRecord(ev[p % size_t(r.slots)], st);
  };
  if (to_device) {
    for (size_t p = 0; p < pieces.size(); ++p) {
      const Piece& q = pieces[p];
      // That slot's earlier DMA is done (a piece of this call, or of the thread's previous transfer).
      if (cudaError_t e = cudaEventSynchronize(ev[p % size_t(r.slots)])) return e;
      pack_block(slot_of(p), at(q.g->host, q.j * q.g->host_ld, es), q.g->rows, q.w, q.g->host_ld, es);
      if (cudaError_t e = dma(p)) return e;
    }
    return cudaStreamSynchronize(st);
  }
  for (size_t p = 0; p < pieces.size() && p < size_t(r.slots); ++p)
    if (cudaError_t e = dma(p)) return e;
  for (size_t p = 0; p < pieces.size(); ++p) {
    const Piece& q = pieces[p];
    if (cudaError_t e = cudaEventSynchronize(ev[p % size_t(r.slots)])) return e;
    unpack_block(at(q.g->host, q.j * q.g->host_ld, es), slot_of(p), q.g->rows, q.w, q.g->host_ld, es);
    if (p + size_t(r.slots) < pieces.size())
      if (cudaError_t e = dma(p + size_t(r.slots))) return e;
  }
  return cudaSuccess;
}

namespace {
std::mutex g_rings_mu;
// Every ring pinned so far (never freed: the driver reclaims them at exit), and whether a lane holds it.
struct Kept {
  char* p;
  size_t bytes;
  bool leased;
};
std::vector<Kept>* g_rings = nullptr;
// Beyond this many bytes of rings kept, a ring given back is freed (a process with many GPUs, or rings of long
// columns).
constexpr size_t kRingsKept = size_t(1) << 30;
}  // namespace

cudaError_t lease_ring(size_t bytes, char** p) {
  *p = nullptr;
  {
    std::lock_guard<std::mutex> g(g_rings_mu);
    if (!g_rings) g_rings = new std::vector<Kept>();
    Kept* best = nullptr;  // the smallest free ring that holds it
    for (Kept& k : *g_rings)
      if (!k.leased && k.bytes >= bytes && (!best || k.bytes < best->bytes)) best = &k;
    if (best) {
      best->leased = true;
      *p = best->p;
      return cudaSuccess;
    }
  }
  void* q = nullptr;
  bo::one_time::Timer one_time;  // once a process: not what the call costs from now on
  if (cudaError_t e = cudaHostAlloc(&q, bytes, cudaHostAllocPortable)) {
    cudaGetLastError();
    return e;
  }
  std::lock_guard<std::mutex> g(g_rings_mu);
  g_rings->push_back({static_cast<char*>(q), bytes, true});
  *p = static_cast<char*>(q);
  return cudaSuccess;
}

void return_ring(char* p) {
  if (!p) return;
  std::lock_guard<std::mutex> g(g_rings_mu);
  size_t kept = 0;
  for (const Kept& k : *g_rings) kept += k.bytes;
  for (size_t i = 0; i < g_rings->size(); ++i) {
    if ((*g_rings)[i].p != p) continue;
    if (kept > kRingsKept) {
      cudaFreeHost(p);
      g_rings->erase(g_rings->begin() + long(i));
    } else {
      (*g_rings)[i].leased = false;
    }
    return;
  }
}

}  // namespace bom
