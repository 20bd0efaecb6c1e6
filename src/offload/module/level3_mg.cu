// trsm and syrk/herk of large host operands shared among the process's GPUs (see level3_mg.h).
//
// trsm: B's independent systems (its columns for side L, its rows for side R) are cut into one contiguous range per
// GPU; each GPU takes A's triangle whole and its range of B, which goes up in chunks, each solved on a second stream
// while the next is staged. syrk/herk: C's triangle is cut into column ranges of
// about equal area (lane_split.h); each GPU computes its range's diagonal block with syrk/herk and the rest of its
// columns with one gemm, from the rows of op(A) they need. Each GPU has a host thread of its own that moves its
// operands through a pinned ring of its own (ring_transfer.h), so that the GPUs' links and the staging threads work
// at once, and its own cuBLAS handle. The program's memory is written only after every GPU has finished computing.
// What several GPUs need of A (trsm: all of its triangle; syrk: op(A)'s rows below, or above, each range) is staged
// once: each GPU stages its own part (trsm: a column range of the triangle of equal area; syrk: the rows of its own
// range) and copies the others' parts from their GPUs' memory, over NVLink where the GPUs have it, once every part has
// arrived.
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernels/vendor_cublas.h"
#include "offload/module/call_plan.h"
#include "offload/module/device.h"
#include "offload/module/lane_split.h"
#include "offload/module/lapack_common.cuh"
#include "offload/module/level3_mg.h"
#include "offload/module/resident_copies.h"
#include "offload/module/ring_transfer.h"
#include "offload/module/staging_pool.h"
#include "routines/all.h"

namespace bom {
namespace {

constexpr int kMaxLanes = 16;
// Columns (or rows) a GPU takes at the least: narrower shares cost more in fixed costs than they save.
constexpr int64_t kAlign = 256;
// trsm: a GPU's range of B goes up in this many chunks (of kAlign systems at the least), each solved once it has
// arrived while the host stages the next; so B's upload overlaps the solve.
constexpr int64_t kTrsmChunks = 4;

// One GPU's share: its range, its device images, its stream and ring.
struct Lane {
  int dev = 0;
  LaneRange r;
  char* a = nullptr;  // trsm: A's triangle (t x t); syrk: the rows of op(A) the range needs
  char* b = nullptr;  // trsm: its part of B; syrk: its diagonal block of C (a w x w triangle)
  char* c = nullptr;  // syrk: the rest of its columns of C (a rectangle)
  char* pinned = nullptr;
  cudaStream_t st = nullptr;
  cudaStream_t solve = nullptr;  // trsm: the chunks' solves, while st brings the next chunk
  cudaError_t err = cudaSuccess;
  double a_s = 0, up_s = 0, compute_s = 0;  // host time: A shared, its other operands up (trsm: and solved), its
                                            // compute (the debug line)
};

// Every lane's own part of A has arrived on its GPU (or some lane failed): the lanes then copy each other's.
class Rendezvous {
 public:
  explicit Rendezvous(size_t lanes) : arrived_(lanes, 0) {}
  // Lane q's part arrived (ok) or will not (a failure); a second arrival of the lane changes nothing.
  void arrive(size_t q, bool ok) {
    std::lock_guard<std::mutex> g(mu_);
    if (arrived_[q]) return;
    arrived_[q] = 1;
    count_++;
    ok_ = ok_ && ok;
    cv_.notify_all();
  }
  // Whether every part arrived.
  bool wait() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return count_ == arrived_.size() || !ok_; });
    return ok_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t> arrived_;
  size_t count_ = 0;
  bool ok_ = true;
};

// Where one lane's operands lie in the program's memory and on its GPU.
struct Part {
  const void* host;
  Operand o;  // its shape and leading dimension in host memory; its device image has leading dimension o.rows
};

template <class T>
T scalar_of(double re, double im) {
  if constexpr (bo::routines::kIsComplex<T>)
    return T(re, im);
  else
    return T(re);
}

template <class T>
class Level3Mg {
 public:
  Level3Mg(const bo_call& c, const int* devs, int nd) : c_(c) {
    const bo_routine_kind kind = bo_routine_kind_of(c.routine);
    trsm_ = kind == BO_KIND_TRSM;
    herk_ = kind == BO_KIND_HERK;
    std::vector<LaneRange> ranges;
    if (trsm_) {
      side_l_ = c.op[0] == 'L';
      t_ = side_l_ ? c.m : c.n;
      ranges = split_even(side_l_ ? c.n : c.m, nd, kAlign);
    } else {
      lower_ = c.op[0] == 'L';
      nt_ = c.op[1] == 'N';
      ranges = split_triangle(c.n, nd, lower_, kAlign);
    }
    lanes_.resize(ranges.size());
    for (size_t q = 0; q < lanes_.size(); ++q) lanes_[q].dev = devs[q], lanes_[q].r = ranges[q];
    // Each lane's own part of A: trsm, a column range of its triangle (of equal areas); syrk, op(A)'s rows of its
    // range.
    if (trsm_) {
      own_ = split_triangle(t_, int(lanes_.size()), c.op[1] == 'L', kAlign);
    } else {
      for (const Lane& l : lanes_) own_.push_back(l.r);
    }
  }
  ~Level3Mg() { cleanup(); }

  int run();

 private:
  static constexpr int es_ = int(sizeof(T));
  char* host_at(const void* base, int64_t elements) const {
    return static_cast<char*>(const_cast<void*>(base)) + size_t(es_) * size_t(elements);
  }
  // The lane's operands: [0] A (or op(A)'s rows), [1] B's range (or C's diagonal block), [2] C's rectangle (syrk;
  // o.rows == 0 when there is none).
  void parts(const Lane& l, Part* p) const;
  // Own part q of A (own_[q]), rows x cols: where it starts in the program's memory (host, at A's leading dimension)
  // and in lane l's image of A (dev_offset elements in, at leading dimension dev_ld).
  struct Piece {
    const char* host;
    int64_t dev_offset, dev_ld, rows, cols;
  };
  Piece own_piece(const Lane& l, size_t q) const;
  // Whether lane l's image of A holds own part q.
  bool needs(const Lane& l, size_t q) const;
  // Stages lane q's own part of A, waits for every lane's, and copies the others' parts it needs from their GPUs.
  cudaError_t share_a(Lane& l, size_t q, const Ring& ring);
  cudaError_t compute(Lane& l) const;
  // trsm: A (its part `a`, unless it was shared: nullptr), then the lane's range of B in chunks, each solved on the
  // lane's second stream as soon as it has arrived; returns once every chunk is solved.
  cudaError_t trsm_in_chunks(Lane& l, const Ring& ring, const Part* a) const;
  void cleanup();
  // Runs body(lane) on one host thread per lane (its device current); the first error.
  template <class F>
  cudaError_t each(F&& body);

  const bo_call& c_;
  bool trsm_ = false, herk_ = false, side_l_ = false, lower_ = false, nt_ = false;
  int64_t t_ = 0;  // trsm: A's order
  std::vector<Lane> lanes_;
  std::vector<LaneRange> own_;      // per lane (trsm: fewer for a small triangle): the part of A it stages
  Rendezvous* rv_ = nullptr;        // while A is shared
  std::atomic<int64_t> copied_{0};  // bytes of A copied between lanes
};

template <class T>
typename Level3Mg<T>::Piece Level3Mg<T>::own_piece(const Lane& l, size_t q) const {
  const int64_t s0 = own_[q].s0, s1 = own_[q].s1, w = s1 - s0;
  const char* a = static_cast<const char*>(c_.a);
  const int64_t lda = c_.lda;
  if (trsm_) {  // the triangle's columns [s0, s1): lower, rows [s0, t); upper, rows [0, s1)
    const int64_t r0 = c_.op[1] == 'L' ? s0 : 0, rows = c_.op[1] == 'L' ? t_ - s0 : s1;
    return {a + size_t(es_) * size_t(r0 + s0 * lda), r0 + s0 * t_, t_, rows, w};
  }
  // op(A)'s rows [s0, s1) in lane l's image, which starts at op(A)'s row r0 (see parts()).
  const int64_t r0 = lower_ ? l.r.s0 : 0, h = lower_ ? c_.n - l.r.s0 : l.r.s1, k = c_.k;
  if (nt_) return {a + size_t(es_) * size_t(s0), s0 - r0, h, w, k};
  return {a + size_t(es_) * size_t(s0 * lda), (s0 - r0) * k, k, k, w};
}

template <class T>
bool Level3Mg<T>::needs(const Lane& l, size_t q) const {
  if (trsm_) return true;
  return lower_ ? own_[q].s0 >= l.r.s0 : own_[q].s1 <= l.r.s1;
}

template <class T>
cudaError_t Level3Mg<T>::share_a(Lane& l, size_t q, const Ring& ring) {
  cudaError_t e = cudaSuccess;
  if (q < own_.size()) {
    const Piece p = own_piece(l, q);
    const bo_region r{
        const_cast<char*>(p.host), c_.lda, l.a + size_t(es_) * size_t(p.dev_offset), p.dev_ld, p.rows, p.cols};
    e = ring_copy_regions(ring, &r, 1, es_, true, l.st);  // returns once the part is on the GPU
  }
  rv_->arrive(q, !e);
  if (e) return e;
  if (!rv_->wait()) return cudaErrorUnknown;  // another lane failed: the call goes to the CPU BLAS
  for (size_t o = 0; o < own_.size(); ++o) {
    if (o == q || !needs(l, o)) continue;
    const Lane& src = lanes_[o];
    const Piece from = own_piece(src, o), to = own_piece(l, o);
    e = copy_between_gpus(l.a + size_t(es_) * size_t(to.dev_offset), l.dev, to.dev_ld,
                          src.a + size_t(es_) * size_t(from.dev_offset), src.dev, from.dev_ld, to.rows, to.cols, es_,
                          l.st);
    if (e) return e;
    copied_ += int64_t(es_) * to.rows * to.cols;
  }
  return cudaSuccess;
}

template <class T>
void Level3Mg<T>::parts(const Lane& l, Part* p) const {
  const int64_t s0 = l.r.s0, w = l.r.width();
  if (trsm_) {
    const Operand::Shape tri = c_.op[1] == 'L' ? Operand::kLower : Operand::kUpper;
    p[0] = {c_.a, Operand{0, tri, Operand::kIn, t_, t_, c_.lda}};
    p[1] = side_l_ ? Part{host_at(c_.c, s0 * c_.ldc), Operand{2, Operand::kMatrix, Operand::kInOut, c_.m, w, c_.ldc}}
                   : Part{host_at(c_.c, s0), Operand{2, Operand::kMatrix, Operand::kInOut, w, c_.n, c_.ldc}};
    p[2] = {nullptr, Operand{2, Operand::kMatrix, Operand::kInOut, 0, 0, c_.ldc}};
    return;
  }
  const int64_t n = c_.n, k = c_.k, s1 = l.r.s1;
  // Rows of op(A) the range needs: lower [s0, n) (its diagonal block and the rows below), upper [0, s1).
  const int64_t r0 = lower_ ? s0 : 0, h = lower_ ? n - s0 : s1;
  p[0] = nt_ ? Part{host_at(c_.a, r0), Operand{0, Operand::kMatrix, Operand::kIn, h, k, c_.lda}}
             : Part{host_at(c_.a, r0 * c_.lda), Operand{0, Operand::kMatrix, Operand::kIn, k, h, c_.lda}};
  const auto access = bo::routines::beta_is_zero(c_) ? Operand::kOut : Operand::kInOut;
  p[1] = {host_at(c_.c, s0 + s0 * c_.ldc),
          Operand{2, lower_ ? Operand::kLower : Operand::kUpper, access, w, w, c_.ldc}};
  // The rectangle: lower rows [s1, n), upper rows [0, s0), of the range's columns.
  p[2] = lower_ ? Part{host_at(c_.c, s1 + s0 * c_.ldc), Operand{2, Operand::kMatrix, access, n - s1, w, c_.ldc}}
                : Part{host_at(c_.c, s0 * c_.ldc), Operand{2, Operand::kMatrix, access, s0, w, c_.ldc}};
}

template <class T>
cudaError_t Level3Mg<T>::compute(Lane& l) const {
  namespace v = bok::vendor;
  const int64_t w = l.r.width();
  const T alpha = scalar_of<T>(c_.alpha, c_.alpha_i);
  const int64_t n = c_.n, k = c_.k, s0 = l.r.s0, s1 = l.r.s1;
  const int64_t h = lower_ ? n - s0 : s1, lda = nt_ ? h : k;
  // op(A)'s rows in the lane's image: its diagonal block's, and the rectangle's (lower: after them; upper: first).
  const int64_t diag_row = lower_ ? 0 : s0, rect_row = lower_ ? w : 0, rect_rows = lower_ ? n - s1 : s0;
  const T* a = reinterpret_cast<const T*>(l.a);
  const T* a_diag = a + (nt_ ? diag_row : diag_row * k);
  const T* a_rect = a + (nt_ ? rect_row : rect_row * k);
  T* cd = reinterpret_cast<T*>(l.b);
  int r;
  if constexpr (bo::routines::kIsComplex<T>) {
    if (herk_) {
      using R = bo::routines::RealOf<T>;
      r = v::cublas_herk(c_.op[0], c_.op[1], w, k, R(c_.alpha), a_diag, lda, R(c_.beta), cd, w, l.st);
    } else {
      r = v::cublas_syrk(c_.op[0], c_.op[1], w, k, alpha, a_diag, lda, scalar_of<T>(c_.beta, c_.beta_i), cd, w, l.st);
    }
  } else {
    r = v::cublas_syrk(c_.op[0], c_.op[1], w, k, alpha, a_diag, lda, T(c_.beta), cd, w, l.st);
  }
  if (r || rect_rows == 0) return cudaError_t(r);
  // The rectangle: op(A)[rect] op(A)[diag]^T (^H for herk), as one gemm; herk's scalars are real.
  const char tr = herk_ ? 'C' : 'T';
  return cudaError_t(v::cublas_gemm(nt_ ? 'N' : tr, nt_ ? tr : 'N', rect_rows, w, k, alpha, a_rect, lda, a_diag, lda,
                                    scalar_of<T>(c_.beta, herk_ ? 0.0 : c_.beta_i), reinterpret_cast<T*>(l.c),
                                    rect_rows, l.st));
}

template <class T>
template <class F>
cudaError_t Level3Mg<T>::each(F&& body) {
  staging_threads_for_gpus(int(lanes_.size()));  // the lanes stage at once
  std::vector<std::thread> th;
  th.reserve(lanes_.size());
  for (Lane& l : lanes_)
    th.emplace_back([this, &body, &l] {
      if (!l.err) l.err = cudaSetDevice(l.dev);
      if (!l.err) l.err = body(l);
      // A lane that stopped before its part of A arrived: the others stop waiting for it.
      if (rv_) rv_->arrive(size_t(&l - lanes_.data()), false);
    });
  for (std::thread& t : th) t.join();
  for (const Lane& l : lanes_)
    if (l.err) return l.err;
  return cudaSuccess;
}

template <class T>
cudaError_t Level3Mg<T>::trsm_in_chunks(Lane& l, const Ring& ring, const Part* a) const {
  if (a)
    if (cudaError_t e = ring_upload(ring, l.a, a->host, a->o, es_, l.st)) return e;
  const int64_t w = l.r.width(), s0 = l.r.s0, m = c_.m, n = c_.n, ldc = c_.ldc;
  const int64_t chunk = std::max<int64_t>(kAlign, (w + kTrsmChunks - 1) / kTrsmChunks);
  const T alpha = scalar_of<T>(c_.alpha, c_.alpha_i);
  for (int64_t j0 = 0; j0 < w; j0 += chunk) {
    const int64_t cw = std::min(chunk, w - j0);
    // Side L: columns [s0 + j0, + cw) of B, its image at leading dimension m; side R: those rows, at leading dimension
    // w. Returns once the chunk (and A, queued before it on the same stream) is on the GPU.
    char* dev = l.b + size_t(es_) * size_t(side_l_ ? j0 * m : j0);
    const bo_region r = side_l_ ? bo_region{host_at(c_.c, (s0 + j0) * ldc), ldc, dev, m, m, cw}
                                : bo_region{host_at(c_.c, s0 + j0), ldc, dev, w, cw, n};
    if (cudaError_t e = ring_copy_regions(ring, &r, 1, es_, true, l.st)) return e;
    if (int e = bok::vendor::cublas_trsm(c_.op[0], c_.op[1], c_.op[2], c_.op[3], side_l_ ? m : cw, side_l_ ? cw : n,
                                         alpha, reinterpret_cast<const T*>(l.a), t_, reinterpret_cast<T*>(dev),
                                         side_l_ ? m : w, l.solve))
      return cudaError_t(e);
  }
  return cudaStreamSynchronize(l.solve);
}

template <class T>
void Level3Mg<T>::cleanup() {
  int old = -1;
  cudaGetDevice(&old);
  for (Lane& l : lanes_) {
    cudaSetDevice(l.dev);
    if (l.st) cudaStreamSynchronize(l.st), cudaStreamDestroy(l.st);
    if (l.solve) cudaStreamSynchronize(l.solve), cudaStreamDestroy(l.solve);
    cudaFree(l.a), cudaFree(l.b), cudaFree(l.c), return_ring(l.pinned);
    l = Lane{l.dev, l.r};
  }
  if (old >= 0) cudaSetDevice(old);
  cudaGetLastError();
}

template <class T>
int Level3Mg<T>::run() {
  const char* name = bo_routine_name(c_.routine);
  const size_t piece = kRingPieceBytes;
  // Each GPU's images, allocated up front on the calling thread: a GPU without room for its share sends the call on.
  for (Lane& l : lanes_) {
    Part p[3];
    parts(l, p);
    auto bytes = [&](const Operand& o) { return size_t(es_) * size_t(o.rows) * size_t(o.cols); };
    // cuBLAS's 32-bit interface: device images of fewer than 2^31 elements, as on the LAPACK path.
    for (const Part& x : p)
      if (double(x.o.rows) * double(x.o.cols) > double(INT_MAX)) {
        cleanup();
        return BO_CUDA_UNSUPPORTED;
      }
    cudaError_t e = cudaSetDevice(l.dev);
    size_t free_b = 0, total = 0;
    if (!e) e = cudaMemGetInfo(&free_b, &total);
    const size_t need = bytes(p[0].o) + bytes(p[1].o) + bytes(p[2].o);
    // Room to spare for cuBLAS's workspace and the other users of the GPU.
    if (!e && free_b < need + (size_t(512) << 20)) e = cudaErrorMemoryAllocation;
    if (!e) e = cudaMalloc(&l.a, bytes(p[0].o));
    if (!e) e = cudaMalloc(&l.b, bytes(p[1].o));
    if (!e && p[2].o.rows > 0) e = cudaMalloc(&l.c, bytes(p[2].o));
    if (!e) e = lease_ring(size_t(kRingSlots) * piece, &l.pinned);
    if (!e) e = cudaStreamCreateWithFlags(&l.st, cudaStreamNonBlocking);
    if (!e && trsm_) e = cudaStreamCreateWithFlags(&l.solve, cudaStreamNonBlocking);
    if (e) {
      log_line(BO_LOG_DEBUG, "%s on %zu GPUs: GPU %d cannot hold its share (%s)", name, lanes_.size(), l.dev,
               cudaGetErrorString(e));
      cleanup();
      return BO_CUDA_OUT_OF_MEMORY;
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto secs = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  // A staged once where several GPUs need it and each reads the others' memory.
  std::vector<int> devs;
  for (const Lane& l : lanes_) devs.push_back(l.dev);
  Rendezvous rv(lanes_.size());
  if (share_between(devs)) rv_ = &rv;
  const Clock::time_point t_up = Clock::now();
  // Up and computed; everything finished before any GPU writes the program's memory.
  cudaError_t e = each([&](Lane& l) {
    Part p[3];
    parts(l, p);
    const Ring ring{l.pinned, piece, kRingSlots};
    char* dev[3] = {l.a, l.b, l.c};
    const size_t q = size_t(&l - lanes_.data());
    const Clock::time_point ta = Clock::now();
    if (rv_) {  // its own part of A first, so that the others' are likely there by the time its B or C is
      if (cudaError_t r = share_a(l, q, ring)) return r;
    }
    const Clock::time_point t0 = Clock::now();
    l.a_s = secs(ta, t0);
    if (trsm_) {
      const cudaError_t r = trsm_in_chunks(l, ring, rv_ ? nullptr : &p[0]);
      l.up_s = secs(t0, Clock::now());  // its chunks' uploads and solves, overlapped
      return r;
    }
    for (int i = rv_ ? 1 : 0; i < 3; ++i) {
      if (p[i].o.rows == 0 || p[i].o.access == Operand::kOut) continue;  // kOut: beta = 0, C never read
      if (cudaError_t r = ring_upload(ring, dev[i], p[i].host, p[i].o, es_, l.st)) return r;
    }
    const Clock::time_point t1 = Clock::now();
    if (cudaError_t r = compute(l)) return r;
    const cudaError_t r = cudaStreamSynchronize(l.st);
    l.up_s = secs(t0, t1);
    l.compute_s = secs(t1, Clock::now());
    return r;
  });
  const bool shared = rv_ != nullptr;
  rv_ = nullptr;
  const Clock::time_point t_down = Clock::now();
  if (e) {
    log_line(BO_LOG_DEBUG, "%s on %zu GPUs: %s before anything was written", name, lanes_.size(),
             cudaGetErrorString(e));
    cleanup();
    // A GPU may be unusable now: the device check of the next one-GPU call decides; this call goes to the CPU.
    return e == cudaErrorMemoryAllocation ? BO_CUDA_OUT_OF_MEMORY : BO_CUDA_LAUNCH_FAILED;
  }
  // Past the first piece written nothing can go back to the CPU BLAS: a GPU failing now ends the process.
  e = each([&](Lane& l) {
    Part p[3];
    parts(l, p);
    const Ring ring{l.pinned, piece, kRingSlots};
    char* dev[3] = {nullptr, l.b, l.c};
    for (int i = 1; i < 3; ++i) {
      if (p[i].o.rows == 0) continue;
      bool touched = false;
      if (cudaError_t r = ring_download(ring, const_cast<void*>(p[i].host), dev[i], p[i].o, es_, l.st, &touched))
        return r;
    }
    return cudaSuccess;
  });
  // Whether or not this GPU's share was touched, another's may be written already.
  if (e) write_back_failed(name, e);
  const Clock::time_point t_end = Clock::now();
  // Device copies of the output (residency.h) are stale now.
  if (Residency* written = resident_copies(host(), device())) {
    const Operand out = trsm_ ? Operand{2, Operand::kMatrix, Operand::kInOut, c_.m, c_.n, c_.ldc}
                              : Operand{2, Operand::kMatrix, Operand::kInOut, c_.n, c_.n, c_.ldc};
    written->host_written(resident_view(c_.c, out, es_));
  }
  log_line(
      BO_LOG_DEBUG, "%s %.4s m=%lld n=%lld k=%lld: split over %zu GPU%s (cuBLAS)%s: up and compute %.3f s, down %.3f s",
      name, c_.op, (long long)c_.m, (long long)c_.n, (long long)c_.k, lanes_.size(), lanes_.size() > 1 ? "s" : "",
      shared ? (", A staged once, " + std::to_string(copied_.load() >> 20) + " MiB of it copied between them").c_str()
      : lanes_.size() > 1 ? ", A staged by each"
                          : "",
      secs(t_up, t_down), secs(t_down, t_end));
  for (const Lane& l : lanes_) {
    if (trsm_)
      log_line(BO_LOG_DEBUG, "%s: GPU %d: A shared %.3f s, B's range up and solved in chunks %.3f s", name, l.dev,
               l.a_s, l.up_s);
    else
      log_line(BO_LOG_DEBUG, "%s: GPU %d: A shared %.3f s, its other operands up %.3f s, then its compute %.3f s", name,
               l.dev, l.a_s, l.up_s, l.compute_s);
  }
  return BO_CUDA_OK;
}

// The bytes of the call's whole operands counted in and, for the output, out again (a triangle as its square): more
// than the whole-operand path pins (it stages the output once), so that calls near its limit take the rings too, which
// pack and move at once (dtrsm n = 16384 on an H200: 0.30 s through them; 0.78 s whole with our own kernel).
double whole_operand_pinned(const bo_call& c, int es) {
  const bo_routine_kind kind = bo_routine_kind_of(c.routine);
  if (kind == BO_KIND_TRSM) {
    const double t = c.op[0] == 'L' ? double(c.m) : double(c.n);
    return es * (t * t + 2 * double(c.m) * double(c.n));
  }
  const double a = double(c.n) * double(c.k), cn = double(c.n) * double(c.n);
  return es * (a + cn * (bo::routines::beta_is_zero(c) ? 1 : 2));
}

}  // namespace

int level3_mg_call(const bo_call& c) {
  const bo_routine_kind kind = bo_routine_kind_of(c.routine);
  if (kind != BO_KIND_TRSM && kind != BO_KIND_SYRK && kind != BO_KIND_HERK) return BO_CUDA_UNSUPPORTED;
  const int es = bo_element_size(bo_routine_precision(c.routine));
  // The sizes first (two settings read): every trsm and syrk the policy sends to the GPU passes here, and nearly all
  // leave at this point. Several GPUs for a call whose order and other dimension both reach half of
  // BLASOFFLOAD_MULTI_GPU_MIN_N, where the split gives two GPUs work (each takes kAlign columns at the least: a small
  // call under a lowered BLASOFFLOAD_MULTI_GPU_MIN_N, the test suites', keeps the one-GPU path, which does not pin a
  // ring per call); one GPU when the one-GPU path could not pin the operands whole.
  const long min_n = config_long("BLASOFFLOAD_MULTI_GPU_MIN_N", 32768);
  const int64_t order = kind == BO_KIND_TRSM ? (c.op[0] == 'L' ? c.m : c.n) : c.n;
  const int64_t other = kind == BO_KIND_TRSM ? (c.op[0] == 'L' ? c.n : c.m) : c.k;
  const int64_t split = kind == BO_KIND_TRSM ? other : c.n;
  const bool large_for_several = min_n > 0 && 2 * order >= min_n && 2 * other >= min_n && split >= 2 * kAlign;
  const bool too_large =
      whole_operand_pinned(c, es) > double(config_long("BLASOFFLOAD_PINNED_MAX_MB", 4096)) * double(1 << 20);
  if (!large_for_several && !too_large) return BO_CUDA_UNSUPPORTED;
  const bool complex = bo_routine_precision(c.routine) == BO_PREC_C || bo_routine_precision(c.routine) == BO_PREC_Z;
  if (!(complex ? bok::vendor::cublas_complex_available() : bok::vendor::cublas_available()))
    return BO_CUDA_UNSUPPORTED;
  // cuBLAS's 32-bit interface takes each dimension and leading dimension.
  const int64_t dims[] = {c.m, c.n, c.k, c.lda, c.ldc};
  for (int64_t d : dims)
    if (!fits_int(d)) return BO_CUDA_UNSUPPORTED;
  if (on_device(c.a) || on_device(c.c)) return BO_CUDA_UNSUPPORTED;
  int devs[kMaxLanes];
  const int nd = pipeline_lanes(devs, kMaxLanes);
  const bool several = large_for_several && nd >= 2;
  if (!several && !too_large) return BO_CUDA_UNSUPPORTED;
  const int lanes = several ? nd : 1;
  return by_precision(c, [&](auto t) { return Level3Mg<decltype(t)>(c, devs, lanes).run(); });
}

}  // namespace bom
