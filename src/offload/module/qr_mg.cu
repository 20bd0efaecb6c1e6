// QR of one large host matrix over several GPUs, or on one GPU beyond cuSOLVER's 32-bit interface (see qr_mg.h).
//
// A blocked right-looking Householder QR over a 1-D block-cyclic layout of the columns: block b (nb columns, every
// row) lives on lane b mod L. Panel b (block b's first columns, up to min(m, n), from row b nb down) is factored in
// place by its owner with cuSOLVER's geqrf; every other lane copies it (peer to peer, over NVLink where the GPUs have
// it) with its TAU, and each lane applies Q_b^H to its own columns right of the panel with cuSOLVER's ormqr (unmqr).
// Look-ahead: the owner of block b + 1 applies panel b to that block first and factors it at once, before the rest of
// its update, so that the next panel is on its way while the lanes update. Each lane has a host thread, a stream, a
// pinned ring and a cuSOLVER handle of its own; a lane learns that a panel was factored from a host-side signal, set
// once the owner has queued the factorization and an event after it (a stream can wait only on a recorded event).
// As on one GPU: the input and the output are scanned for non-finite values (the CPU LAPACK then answers, nothing
// written), and the program's memory is written only after every lane has finished. For a given shape and lane count
// the result is the same bits every run.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/vendor_cusolver.h"
#include "offload/module/call_plan.h"
#include "offload/module/device.h"
#include "offload/module/lapack_common.cuh"
#include "offload/module/qr_mg.h"
#include "offload/module/resident_copies.h"
#include "offload/module/ring_transfer.h"
#include "routines/all.h"

namespace bom {
namespace {

namespace vendor = bok::vendor;

constexpr int kMaxLanes = 16;
// The widest block: each panel is one cuSOLVER geqrf and one ormqr per lane, so wider blocks make fewer, larger calls;
// narrower ones give the look-ahead less to hide. Smaller matrices take narrower blocks, at least four a lane.
constexpr int64_t kMaxBlock = 512, kMinBlock = 32;
// Columns of C one ormqr takes at most (its workspace grows with them).
constexpr int64_t kMaxChunk = 32768;

// Raises *sticky when cuSOLVER's INFO is negative (an argument refused), so that a later call's 0 cannot hide it.
__global__ void fold_info(const int* info, int* sticky) {
  if (*info < 0) *sticky = 1;
}

// The columns' layout: blocks of nb, block b on lane b % lanes as its local block b / lanes (every row, leading
// dimension m); panels over the first k = min(m, n) columns.
struct QrLayout {
  int64_t m, n, k, nb;
  int lanes;
  int64_t blocks() const { return (n + nb - 1) / nb; }
  int64_t panels() const { return (k + nb - 1) / nb; }
  int owner(int64_t b) const { return int(b % lanes); }
  int64_t width(int64_t b) const { return std::min(nb, n - b * nb); }
  int64_t panel_width(int64_t b) const { return std::min(nb, k - b * nb); }
  int64_t local_blocks(int q) const { return blocks() > q ? (blocks() - q + lanes - 1) / lanes : 0; }
  int64_t local_cols(int q) const {  // only the matrix's last block may be narrower, and it is its lane's last
    const int64_t lb = local_blocks(q);
    return lb ? (lb - 1) * nb + width(q + (lb - 1) * lanes) : 0;
  }
  int64_t local_col(int64_t b) const { return (b / lanes) * nb; }  // where block b starts on its lane
  int64_t first_after(int q, int64_t b) const { return b < q ? 0 : (b - q) / lanes + 1; }  // lane q's blocks past b
};

// The panels factored so far: each an event on its owner's stream, posted by the owner's thread once recorded. A lane
// that fails stops the others' waits.
class PanelSignals {
 public:
  explicit PanelSignals(int64_t panels) : ev_(size_t(panels), nullptr), dev_(size_t(panels), 0) {}
  void post(int64_t b, cudaEvent_t e, int dev) {
    std::lock_guard<std::mutex> g(mu_);
    ev_[size_t(b)] = e, dev_[size_t(b)] = dev;
    cv_.notify_all();
  }
  // Panel b's event; nullptr when a lane failed.
  cudaEvent_t wait(int64_t b) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return ev_[size_t(b)] || stopped_; });
    return stopped_ ? nullptr : ev_[size_t(b)];
  }
  void stop() {
    std::lock_guard<std::mutex> g(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  // After every lane's stream is idle.
  void destroy() {
    for (size_t b = 0; b < ev_.size(); ++b)
      if (ev_[b]) cudaSetDevice(dev_[b]), cudaEventDestroy(ev_[b]), ev_[b] = nullptr;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<cudaEvent_t> ev_;
  std::vector<int> dev_;
  bool stopped_ = false;
};

// One lane: its GPU, its columns, a received panel, every panel's TAU, cuSOLVER's workspace, its stream and ring.
struct QrLane {
  int dev = 0;
  char* local = nullptr;  // its blocks: m x local_cols, leading dimension m
  char* panel = nullptr;  // another lane's panel as received: m x nb, leading dimension m
  char* tau = nullptr;    // k elements
  char* work = nullptr;
  int64_t lwork = 0;     // elements
  int* flags = nullptr;  // [0] a non-finite value, [1] an argument refused, [2] cuSOLVER's INFO
  char* pinned = nullptr;
  cudaStream_t st = nullptr;
  cudaError_t err = cudaSuccess;
  bool stopped = false;  // left off because another lane failed
};

template <class T>
class QrMg {
 public:
  QrMg(const bo_call& c, const int* devs, int lanes, int64_t nb)
      : c_(c), lay_{c.m, c.n, std::min(c.m, c.n), nb, lanes}, signals_(lay_.panels()) {
    cudaGetDevice(&caller_dev_);
    lanes_.resize(size_t(lanes));
    for (int q = 0; q < lanes; ++q) lanes_[size_t(q)].dev = devs[q];
  }
  ~QrMg() { cleanup(); }
  int run();

 private:
  static constexpr int es_ = int(sizeof(T));
  static constexpr char kAdjoint = bo::routines::kIsComplex<T> ? 'C' : 'T';
  T* at(const QrLane& l, int64_t row, int64_t local_col) const {
    return reinterpret_cast<T*>(l.local) + row + local_col * lay_.m;
  }
  char* host_block(int64_t b) const {
    return static_cast<char*>(const_cast<void*>(c_.a)) + size_t(es_) * size_t(b * lay_.nb) * size_t(c_.lda);
  }
  cudaError_t allocate(int q, size_t piece);
  cudaError_t lane(int q);
  cudaError_t factor(QrLane& l, int64_t b);
  cudaError_t apply(QrLane& l, int64_t b, const T* v, int64_t c0, int64_t c1);
  template <class F>
  cudaError_t each(F&& body);
  void cleanup();

  const bo_call& c_;
  QrLayout lay_;
  PanelSignals signals_;
  std::vector<QrLane> lanes_;
  int64_t chunk_ = 0;
  size_t piece_ = 0;
  int caller_dev_ = -1;  // current again when the call returns
};

template <class T>
cudaError_t QrMg<T>::allocate(int q, size_t piece) {
  QrLane& l = lanes_[size_t(q)];
  const int64_t m = lay_.m, cols = lay_.local_cols(q);
  const size_t local = size_t(es_) * size_t(m) * size_t(cols);
  const size_t panel = lanes_.size() > 1 ? size_t(es_) * size_t(m) * size_t(lay_.nb) : 0;
  cudaError_t e = cudaSetDevice(l.dev);
  if (!e) e = cudaMalloc(&l.local, local);
  if (!e && panel) e = cudaMalloc(&l.panel, panel);
  if (!e) e = cudaMalloc(&l.tau, size_t(es_) * size_t(lay_.k));
  if (!e) e = cudaMalloc(&l.flags, 3 * sizeof(int));
  if (!e) e = lease_ring(size_t(kRingSlots) * piece, &l.pinned);
  if (!e) e = cudaStreamCreateWithFlags(&l.st, cudaStreamNonBlocking);
  if (!e) e = cudaMemsetAsync(l.flags, 0, 3 * sizeof(int), l.st);
  if (e) return e;
  // cuSOLVER's workspace for the widest panel and the widest piece of an update (its sizes depend on the shapes only).
  int err = 0;
  T* a = reinterpret_cast<T*>(l.local);
  T* tau = reinterpret_cast<T*>(l.tau);
  const int64_t w = std::min(lay_.nb, lay_.k);
  int64_t lwork = vendor::cusolver_geqrf_work(m, w, a, m, l.st, &err);
  const int64_t cols_max = std::min(chunk_, std::max<int64_t>(cols, 1));
  if (!err)
    lwork = std::max(lwork, vendor::cusolver_ormqr_work('L', kAdjoint, m, cols_max, w, a, m, tau, a, m, l.st, &err));
  if (err) return cudaError_t(err);
  l.lwork = std::max<int64_t>(lwork, 1);
  size_t free_b = 0, total = 0;
  e = cudaMemGetInfo(&free_b, &total);
  // Room to spare for cuSOLVER's own allocations and the other users of the GPU.
  if (!e && free_b < size_t(es_) * size_t(l.lwork) + (size_t(256) << 20)) e = cudaErrorMemoryAllocation;
  if (!e) e = cudaMalloc(&l.work, size_t(es_) * size_t(l.lwork));
  return e;
}

template <class T>
cudaError_t QrMg<T>::factor(QrLane& l, int64_t b) {
  const int64_t j0 = b * lay_.nb;
  T* tau = reinterpret_cast<T*>(l.tau) + j0;
  int r = vendor::cusolver_geqrf(lay_.m - j0, lay_.panel_width(b), at(l, j0, lay_.local_col(b)), lay_.m, tau,
                                 reinterpret_cast<T*>(l.work), l.lwork, l.flags + 2, l.st);
  if (r) return cudaError_t(r);
  fold_info<<<1, 1, 0, l.st>>>(l.flags + 2, l.flags + 1);
  cudaEvent_t ev = nullptr;
  cudaError_t e = cudaGetLastError();
  if (!e) e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (!e) e = cudaEventRecord(ev, l.st);
  if (e) {
    if (ev) cudaEventDestroy(ev);
    return e;
  }
  signals_.post(b, ev, l.dev);
  return cudaSuccess;
}

// Q_b^H (panel b's reflectors: V at v, leading dimension m) applied to the lane's local columns [c0, c1), rows b nb
// down, in pieces of at most chunk_ columns (cuSOLVER's 32-bit interface).
template <class T>
cudaError_t QrMg<T>::apply(QrLane& l, int64_t b, const T* v, int64_t c0, int64_t c1) {
  const int64_t j0 = b * lay_.nb;
  const T* tau = reinterpret_cast<const T*>(l.tau) + j0;
  for (int64_t s = c0; s < c1; s += chunk_) {
    const int64_t cols = std::min(chunk_, c1 - s);
    if (int r = vendor::cusolver_ormqr('L', kAdjoint, lay_.m - j0, cols, lay_.panel_width(b), v, lay_.m, tau,
                                       at(l, j0, s), lay_.m, reinterpret_cast<T*>(l.work), l.lwork, l.flags + 2, l.st))
      return cudaError_t(r);
    fold_info<<<1, 1, 0, l.st>>>(l.flags + 2, l.flags + 1);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  return cudaSuccess;
}

// Lane q's whole computation on its thread: its blocks up (scanned), every panel applied (its own factored), the
// output scanned; returns once its stream is idle.
template <class T>
cudaError_t QrMg<T>::lane(int q) {
  QrLane& l = lanes_[size_t(q)];
  const int64_t m = lay_.m, nb = lay_.nb, np = lay_.panels();
  const Ring ring{l.pinned, piece_, kRingSlots};
  int* nonfinite = l.flags;
  for (int64_t t = 0; t < lay_.local_blocks(q); ++t) {
    const int64_t b = q + t * lay_.lanes;
    const Operand o{0, Operand::kMatrix, Operand::kIn, m, lay_.width(b), c_.lda};
    if (cudaError_t e = ring_upload(ring, at(l, 0, t * nb), host_block(b), o, es_, l.st)) return e;
    if (cudaError_t e = scan(at(l, 0, t * nb), o, m, nonfinite, l.st)) return e;
  }
  if (np > 0 && lay_.owner(0) == q)
    if (cudaError_t e = factor(l, 0)) return e;
  for (int64_t b = 0; b < np; ++b) {
    const int owner = lay_.owner(b);
    const int64_t j0 = b * nb, pw = lay_.panel_width(b);
    const T* v = at(l, j0, lay_.local_col(b));
    // Look-ahead: the next panel's block first, then that panel factored, then the rest.
    const bool ahead = b + 1 < np && lay_.owner(b + 1) == q;
    int64_t c0 = owner == q ? lay_.local_col(b) + pw : lay_.first_after(q, b) * nb;
    if (!ahead && c0 >= lay_.local_cols(q)) continue;  // nothing of this lane's right of the panel
    if (owner != q) {                                  // panel b from its owner: its columns (every row) and its TAU
      cudaEvent_t ev = signals_.wait(b);
      if (!ev) {
        l.stopped = true;
        return cudaErrorUnknown;
      }
      const QrLane& o = lanes_[size_t(owner)];
      const size_t off = size_t(es_) * size_t(j0);
      cudaError_t e = cudaStreamWaitEvent(l.st, ev, 0);
      if (!e)
        e = cudaMemcpyPeerAsync(l.panel, l.dev, o.local + size_t(es_) * size_t(m) * size_t(lay_.local_col(b)), o.dev,
                                size_t(es_) * size_t(m) * size_t(pw), l.st);
      if (!e) e = cudaMemcpyPeerAsync(l.tau + off, l.dev, o.tau + off, o.dev, size_t(es_) * size_t(pw), l.st);
      if (e) return e;
      v = reinterpret_cast<const T*>(l.panel) + j0;
    }
    if (ahead) {
      const int64_t next = lay_.local_col(b + 1), w = lay_.width(b + 1);
      if (cudaError_t e = apply(l, b, v, next, next + w)) return e;
      if (cudaError_t e = factor(l, b + 1)) return e;
      c0 = next + w;
    }
    if (cudaError_t e = apply(l, b, v, c0, lay_.local_cols(q))) return e;
  }
  // The output: its blocks, and the TAU of the panels it factored.
  for (int64_t t = 0; t < lay_.local_blocks(q); ++t) {
    const int64_t b = q + t * lay_.lanes;
    if (cudaError_t e = scan(at(l, 0, t * nb), Operand{0, Operand::kMatrix, Operand::kInOut, m, lay_.width(b), m}, m,
                             nonfinite, l.st))
      return e;
    if (b < np) {
      const T* tau = reinterpret_cast<const T*>(l.tau) + b * nb;
      const int64_t pw = lay_.panel_width(b);
      if (cudaError_t e = scan(tau, Operand{1, Operand::kMatrix, Operand::kOut, pw, 1, pw}, pw, nonfinite, l.st))
        return e;
    }
  }
  return cudaStreamSynchronize(l.st);
}

template <class T>
template <class F>
cudaError_t QrMg<T>::each(F&& body) {
  std::vector<std::thread> th;
  th.reserve(lanes_.size());
  for (int q = 0; q < int(lanes_.size()); ++q)
    th.emplace_back([this, &body, q] {
      QrLane& l = lanes_[size_t(q)];
      if (!l.err) l.err = cudaSetDevice(l.dev);
      if (!l.err) l.err = body(q);
      if (l.err) signals_.stop();
    });
  for (std::thread& t : th) t.join();
  for (const QrLane& l : lanes_)  // the failing lane's error, not the ones it stopped
    if (l.err && !l.stopped) return l.err;
  return cudaSuccess;
}

template <class T>
void QrMg<T>::cleanup() {
  // Every stream idle before any memory goes: a lane that stopped early may still be copying another's panel.
  for (QrLane& l : lanes_)
    if (l.st) cudaSetDevice(l.dev), cudaStreamSynchronize(l.st);
  for (QrLane& l : lanes_) {
    cudaSetDevice(l.dev);
    if (l.st) cudaStreamDestroy(l.st);
    cudaFree(l.local), cudaFree(l.panel), cudaFree(l.tau), cudaFree(l.work), cudaFree(l.flags), return_ring(l.pinned);
    l = QrLane{l.dev};
  }
  signals_.destroy();
  if (caller_dev_ >= 0) cudaSetDevice(caller_dev_);
  cudaGetLastError();
}

template <class T>
int QrMg<T>::run() {
  const char* name = bo_routine_name(c_.routine);
  const int64_t m = lay_.m, n = lay_.n;
  chunk_ = std::max<int64_t>(1, std::min<int64_t>(kMaxChunk, INT_MAX / std::max<int64_t>(m, 1)));
  const Operand col{0, Operand::kMatrix, Operand::kIn, m, lay_.nb, c_.lda};
  piece_ = std::min(ring_piece_bytes(col, es_), size_t(es_) * size_t(m) * size_t(lay_.nb));
  // Each lane's memory on the calling thread, up front: a GPU without room for its share sends the call on.
  for (int q = 0; q < int(lanes_.size()); ++q) {
    const QrLane& l = lanes_[size_t(q)];
    cudaError_t e = allocate(q, piece_);
    if (e) {
      log_line(BO_LOG_DEBUG, "%s m=%lld n=%lld on %zu GPUs: GPU %d cannot hold its share (%s)", name, (long long)m,
               (long long)n, lanes_.size(), l.dev, cudaGetErrorString(e));
      cleanup();
      return BO_CUDA_UNSUPPORTED;
    }
  }
  // Each GPU reads the others' panels.
  std::vector<int> devs;
  for (const QrLane& l : lanes_) devs.push_back(l.dev);
  peers_reachable(devs);  // enables peer access where the GPUs have it; without, copies go through the host
  using Clock = std::chrono::steady_clock;
  const auto secs = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const Clock::time_point t_start = Clock::now();
  cudaError_t e = each([this](int q) { return lane(q); });
  int flags[3] = {0, 0, 0};
  bool nonfinite = false, refused = false;
  for (QrLane& l : lanes_) {
    if (e) break;
    e = cudaSetDevice(l.dev);
    if (!e) e = cudaMemcpy(flags, l.flags, sizeof flags, cudaMemcpyDeviceToHost);
    nonfinite |= flags[0] != 0, refused |= flags[1] != 0;
  }
  if (e) {
    log_line(BO_LOG_DEBUG, "%s m=%lld n=%lld on %zu GPUs: %s before anything was written", name, (long long)m,
             (long long)n, lanes_.size(), cudaGetErrorString(e));
    cleanup();
    return e == cudaErrorMemoryAllocation ? BO_CUDA_UNSUPPORTED : BO_CUDA_LAUNCH_FAILED;
  }
  if (refused) {
    log_line(BO_LOG_DEBUG, "%s m=%lld n=%lld: cuSOLVER refused an argument; the CPU LAPACK answers", name, (long long)m,
             (long long)n);
    cleanup();
    return BO_CUDA_UNSUPPORTED;
  }
  if (nonfinite) {
    log_line(BO_LOG_DEBUG, "%s m=%lld n=%lld on %zu GPUs: non-finite values; the CPU LAPACK answers", name,
             (long long)m, (long long)n, lanes_.size());
    cleanup();
    return BO_CUDA_CPU_ANSWERS;
  }
  // Past the first piece written nothing can go back to the CPU LAPACK: a GPU failing now ends the process.
  const Clock::time_point t_down = Clock::now();
  e = each([this](int q) {
    QrLane& l = lanes_[size_t(q)];
    const Ring ring{l.pinned, piece_, kRingSlots};
    for (int64_t t = 0; t < lay_.local_blocks(q); ++t) {
      const int64_t b = q + t * lay_.lanes;
      bool touched = false;
      const Operand o{0, Operand::kMatrix, Operand::kInOut, lay_.m, lay_.width(b), c_.lda};
      if (cudaError_t r = ring_download(ring, host_block(b), at(l, 0, t * lay_.nb), o, es_, l.st, &touched)) return r;
      if (b < lay_.panels()) {
        const size_t off = size_t(es_) * size_t(b * lay_.nb);
        if (cudaError_t r = cudaMemcpy(static_cast<char*>(const_cast<void*>(c_.b)) + off, l.tau + off,
                                       size_t(es_) * size_t(lay_.panel_width(b)), cudaMemcpyDeviceToHost))
          return r;
      }
    }
    return cudaSuccess;
  });
  if (e) write_back_failed(name, e);  // another lane's blocks may be written already
  const Clock::time_point t_end = Clock::now();
  if (Residency* written = resident_copies(host(), device())) {
    written->host_written(resident_view(c_.a, Operand{0, Operand::kMatrix, Operand::kInOut, m, n, c_.lda}, es_));
    written->host_written(resident_view(c_.b, Operand{1, Operand::kMatrix, Operand::kOut, lay_.k, 1, lay_.k}, es_));
  }
  set_info_zero(c_);
  cleanup();
  // At summary level: a call of seconds over several GPUs, and where its time went, is worth a line.
  log_line(BO_LOG_SUMMARY,
           "%s m=%lld n=%lld: on %zu GPU%s (tiled QR, blocks of %lld): up and factor %.3f s, down %.3f s", name,
           (long long)m, (long long)n, lanes_.size(), lanes_.size() > 1 ? "s" : "", (long long)lay_.nb,
           secs(t_start, t_down), secs(t_down, t_end));
  return BO_CUDA_OK;
}

// Narrower blocks for smaller matrices: at least four a lane.
int64_t block_width(int64_t k, int lanes) {
  int64_t nb = kMaxBlock;
  while (nb > kMinBlock && k < nb * 4 * lanes) nb /= 2;
  return nb;
}

}  // namespace

int mg_qr_call(const bo_call& c) {
  if (bo::routines::real_counterpart(bo_routine_kind_of(c.routine)) != BO_KIND_GEQRF) return BO_CUDA_UNSUPPORTED;
  const int64_t m = c.m, n = c.n, k = std::min(m, n);
  // Several GPUs from an order of BLASOFFLOAD_MULTI_GPU_MIN_N (as getrf and potrf); one GPU too where the one-GPU path
  // cannot take the matrix (its cuSOLVER interface indexes it by int).
  const long min_n = config_long("BLASOFFLOAD_MULTI_GPU_MIN_N", 32768);
  const bool large = min_n > 0 && k >= min_n;
  const bool too_large_for_one = double(m) * double(n) > double(INT_MAX);
  if ((!large && !too_large_for_one) || k == 0) return BO_CUDA_UNSUPPORTED;
  if (!fits_int(m) || !fits_int(n) || !fits_int(c.lda) || on_device(c.a) || on_device(c.b)) return BO_CUDA_UNSUPPORTED;
  const bool complex = bo_routine_precision(c.routine) == BO_PREC_C || bo_routine_precision(c.routine) == BO_PREC_Z;
  if (!vendor::cusolver_available() || (complex && !vendor::cusolver_complex_available())) return BO_CUDA_UNSUPPORTED;
  int devs[kMaxLanes];
  const int nd = pipeline_lanes(devs, kMaxLanes);
  int lanes = min_n > 0 && nd >= 2 ? nd : too_large_for_one ? 1 : 0;
  if (lanes == 0) return BO_CUDA_UNSUPPORTED;
  const int64_t nb = block_width(k, lanes);
  lanes = int(std::min<int64_t>(lanes, (n + nb - 1) / nb));
  // The panel's geqrf indexes it by int too.
  if (double(m) * double(nb) > double(INT_MAX)) return BO_CUDA_UNSUPPORTED;
  return by_precision(c, [&](auto t) { return QrMg<decltype(t)>(c, devs, lanes, nb).run(); });
}

}  // namespace bom
