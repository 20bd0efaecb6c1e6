// LU and Cholesky of one host matrix over several GPUs (see lapack_mg.h).
//
// The matrix's columns go to the GPUs in blocks of 256, dealt round-robin (cuSOLVERMg's 1-D block-cyclic layout);
// one host thread per GPU moves its blocks through a pinned ring of its own (ring_transfer.h), so the GPUs' links and
// the staging threads work at once. As on one GPU: inputs and outputs are scanned for non-finite values, INFO > 0 or
// a non-finite value leaves the call to the CPU LAPACK with nothing written, and the program's memory is written
// only after every step succeeded. Cholesky writes back whole column blocks, so the triangle it does not factor is
// checked unchanged on the GPUs first (a checksum of its bits before and after); were it changed, the call goes to the
// one-GPU path instead. cuSOLVERMg's Cholesky is used for the lower triangle only (on two H200s no upper call
// completed: each went on to one GPU), so an upper one factors A^T (A^H) = U^T U (U^H U) as its lower triangle: each
// GPU takes row blocks of A and transposes them on the way up and down.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/vendor_cusolvermg.h"
#include "offload/module/call_plan.h"
#include "offload/module/device.h"
#include "offload/module/lapack_common.cuh"
#include "offload/module/lapack_mg.h"
#include "offload/module/mg_layout.h"
#include "offload/module/resident_copies.h"
#include "offload/module/ring_transfer.h"
#include "routines/all.h"

namespace bom {
namespace {

constexpr int kMaxDevices = 16;

// The bits of the elements of column block [j0, j0 + w) (leading dimension n) that the factorization must not change:
// above the diagonal for lower (uplo L), below it for upper, summed as integers (a change of any bit shows).
__global__ void other_triangle_sum(const unsigned* a, int words, int64_t n, int64_t j0, int64_t w, int lower,
                                   unsigned long long* out) {
  unsigned long long s = 0;
  for (int64_t c = blockIdx.x; c < w; c += gridDim.x) {
    const int64_t j = j0 + c;
    const int64_t r0 = lower ? 0 : j + 1, r1 = lower ? j : n;
    for (int64_t i = r0 + threadIdx.x; i < r1; i += blockDim.x)
      for (int p = 0; p < words; ++p) s += (unsigned long long)a[(i + c * n) * words + p] * (2 * (i + j * n) + 1);
  }
  atomicAdd(out, s);
}

// dst (cols x rows, leading dimension dld) = src (rows x cols, leading dimension sld) transposed, each element kP
// values of R; with `conj`, every element off the diagonal (where r + roff == c + coff: its place in the whole matrix)
// is conjugated by flipping its imaginary part's sign, so that twice is the identity bit for bit and the diagonal,
// whose imaginary part LAPACK ignores and the factorization leaves zero, keeps its bits. Blocks of 32 x 8 threads,
// tiles 32^2.
template <class R, int kP>
__global__ void transpose_block(const R* src, int64_t sld, R* dst, int64_t dld, int64_t rows, int64_t cols,
                                int64_t roff, int64_t coff, int conj) {
  __shared__ R t[32][32 * kP + 1];
  const int64_t r0 = int64_t(blockIdx.y) * 32, c0 = int64_t(blockIdx.x) * 32;
  for (int j = threadIdx.y; j < 32; j += 8) {
    const int64_t r = r0 + threadIdx.x, c = c0 + j;
    if (r < rows && c < cols)
      for (int p = 0; p < kP; ++p) t[j][threadIdx.x * kP + p] = src[(r + c * sld) * kP + p];
  }
  __syncthreads();
  for (int j = threadIdx.y; j < 32; j += 8) {
    const int64_t r = r0 + j, c = c0 + threadIdx.x;
    if (r >= rows || c >= cols) continue;
    for (int p = 0; p < kP; ++p) {
      R v = t[threadIdx.x][j * kP + p];
      if (p == 1 && conj && r + roff != c + coff) v = -v;
      dst[(c + r * dld) * kP + p] = v;
    }
  }
}

// One GPU's part: its blocks (global block b = q + t * ndev for its t-th local block), its stream, ring and arrays.
struct GpuShare {
  int dev = 0;
  int64_t blocks = 0;  // local blocks
  char* local = nullptr;
  int* ipiv = nullptr;
  char* rows = nullptr;    // an upper Cholesky's row block of A, as it comes and goes (tile x n)
  int* flag = nullptr;     // [0] non-finite, [1..2] checksum words
  char* pinned = nullptr;  // its ring's pieces
  cudaStream_t st = nullptr;
  cudaError_t err = cudaSuccess;
};

template <class T>
int run(const bo_call& c, const int* devs, int nd) {
  const int es = int(sizeof(T));
  constexpr bool kComplex = bo::routines::kIsComplex<T>;
  const bool lu = bo_routine_kind_of(c.routine) == BO_KIND_GETRF;
  const int64_t n = c.n, lda = c.lda;
  const MgLayout lay = mg_layout(n, nd);
  const int64_t tile = lay.tile;
  const char uplo = lu ? 'N' : c.op[0];
  // An upper Cholesky runs as the lower one of A^T (A^H): on the GPUs everything is lower.
  const bool flip = !lu && (uplo == 'U' || uplo == 'u');
  const bool lower = uplo == 'L' || uplo == 'l' || flip;
  std::vector<GpuShare> parts(static_cast<size_t>(nd));
  for (int q = 0; q < nd; ++q) {
    parts[size_t(q)].dev = devs[q];
    parts[size_t(q)].blocks = lay.local_blocks(q);
  }
  // Pieces no larger than a block: a small matrix (the tests') pins kilobytes a call, not the ring's 64 MiB.
  const Operand col{0, Operand::kMatrix, Operand::kInOut, n, tile, lda};
  const size_t piece = std::min(ring_piece_bytes(col, es), size_t(es) * size_t(n) * size_t(tile));
  int old = -1;
  cudaGetDevice(&old);
  auto cleanup = [&] {
    for (GpuShare& p : parts) {
      cudaSetDevice(p.dev);
      if (p.st) cudaStreamSynchronize(p.st), cudaStreamDestroy(p.st);
      cudaFree(p.local), cudaFree(p.ipiv), cudaFree(p.rows), cudaFree(p.flag), return_ring(p.pinned);
    }
    if (old >= 0) cudaSetDevice(old);
    cudaGetLastError();
  };
  for (GpuShare& p : parts) {
    cudaSetDevice(p.dev);
    const size_t local = size_t(es) * size_t(n) * size_t(p.blocks * tile);
    const size_t row_block = flip ? size_t(es) * size_t(n) * size_t(tile) : 0;
    size_t free_b = 0, total = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total);
    // Its share with room to spare for cuSOLVERMg's workspace (about one block column more).
    if (!e && free_b < local + local / 4 + row_block + (size_t(256) << 20)) e = cudaErrorMemoryAllocation;
    if (!e) e = cudaMalloc(&p.local, local);
    if (!e && flip) e = cudaMalloc(&p.rows, row_block);
    if (!e) e = cudaMalloc(&p.ipiv, sizeof(int) * size_t(p.blocks * tile));
    if (!e) e = cudaMalloc(&p.flag, 4 * sizeof(unsigned long long));
    if (!e) e = lease_ring(size_t(kRingSlots) * piece, &p.pinned);
    if (!e) e = cudaStreamCreateWithFlags(&p.st, cudaStreamNonBlocking);
    if (!e) e = cudaMemsetAsync(p.flag, 0, 4 * sizeof(unsigned long long), p.st);
    if (e) {
      log_line(BO_LOG_DEBUG, "%s n=%lld on %d GPUs: GPU %d cannot hold its share (%s); one GPU instead",
               bo_routine_name(c.routine), (long long)n, nd, p.dev, cudaGetErrorString(e));
      cleanup();
      return BO_CUDA_UNSUPPORTED;
    }
  }
  using R = typename Parts<T>::Real;
  constexpr int kP = Parts<T>::kCount;
  const int words = es / 4;  // 32-bit words of an element
  // Per GPU, on its own thread: its blocks up (scanned), or down; `sum` slot 1 before, 2 after.
  auto each = [&](auto&& body) {
    std::vector<std::thread> th;
    for (int q = 0; q < nd; ++q)
      th.emplace_back([&, q] {
        GpuShare& p = parts[size_t(q)];
        cudaSetDevice(p.dev);
        const Ring ring{p.pinned, piece, kRingSlots};
        for (int64_t t = 0; t < p.blocks && !p.err; ++t) {
          const int64_t b = lay.global_block(q, t), w = lay.block_cols(b);
          p.err = body(p, ring, b, w, p.local + size_t(es) * size_t(n) * size_t(t * tile));
        }
        if (!p.err) p.err = cudaStreamSynchronize(p.st);
      });
    for (auto& t : th) t.join();
    for (GpuShare& p : parts)
      if (p.err) return p.err;
    return cudaSuccess;
  };
  auto scan_block = [&](GpuShare& p, int64_t b, int64_t w, char* d) {
    const int64_t j0 = b * tile;
    const R* a = reinterpret_cast<const R*>(d);
    int* flag = reinterpret_cast<int*>(p.flag);
    if (lu) {
      find_nonfinite<R, kP><<<unsigned(w), 256, 0, p.st>>>(a, n, w, n, Operand::kMatrix, 0, flag);
    } else if (lower) {  // rows j0 .. n of the block: its diagonal block's lower triangle and what is below
      find_nonfinite<R, kP><<<unsigned(w), 256, 0, p.st>>>(a + size_t(j0) * kP, n - j0, w, n, Operand::kLower, 0, flag);
    } else {  // rows 0 .. j0 + w: what is above its diagonal block, and that block's upper triangle
      if (j0 > 0) find_nonfinite<R, kP><<<unsigned(w), 256, 0, p.st>>>(a, j0, w, n, Operand::kMatrix, 0, flag);
      find_nonfinite<R, kP><<<unsigned(w), 256, 0, p.st>>>(a + size_t(j0) * kP, w, w, n, Operand::kUpper, 0, flag);
    }
    return cudaGetLastError();
  };
  auto checksum = [&](GpuShare& p, int64_t b, int64_t w, char* d, int slot) {
    if (lu) return cudaSuccess;
    other_triangle_sum<<<unsigned(w), 256, 0, p.st>>>(reinterpret_cast<const unsigned*>(d), words, n, b * tile, w,
                                                      lower ? 1 : 0,
                                                      reinterpret_cast<unsigned long long*>(p.flag) + slot);
    return cudaGetLastError();
  };
  // Each phase's wall time, for the summary-level line at the end: what bounds a call (staging or cuSOLVERMg).
  using Clock = std::chrono::steady_clock;
  const auto secs = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const Clock::time_point t_up = Clock::now();
  // An upper Cholesky's block b of A^T: rows b * tile .. + w of A, up as a w x n matrix, transposed into place.
  const auto flip_grid = [](int64_t rows, int64_t cols) {
    return dim3(unsigned((cols + 31) / 32), unsigned((rows + 31) / 32));
  };
  const auto rows_of = [&](int64_t b) {
    return static_cast<char*>(const_cast<void*>(c.a)) + size_t(es) * size_t(b * tile);
  };
  cudaError_t e = each([&](GpuShare& p, const Ring& ring, int64_t b, int64_t w, char* d) {
    cudaError_t r;
    if (flip) {
      r = ring_upload(ring, p.rows, rows_of(b), Operand{0, Operand::kMatrix, Operand::kIn, w, n, lda}, es, p.st);
      if (!r) {
        transpose_block<R, kP><<<flip_grid(w, n), dim3(32, 8), 0, p.st>>>(
            reinterpret_cast<const R*>(p.rows), w, reinterpret_cast<R*>(d), n, w, n, b * tile, 0, kComplex ? 1 : 0);
        r = cudaGetLastError();
      }
    } else {
      const Operand o{0, Operand::kMatrix, Operand::kIn, n, w, lda};
      r = ring_upload(ring, d, static_cast<const char*>(c.a) + size_t(es) * size_t(b * tile * lda), o, es, p.st);
    }
    if (!r) r = scan_block(p, b, w, d);
    if (!r) r = checksum(p, b, w, d, 1);
    return r;
  });
  int info = 0;
  const Clock::time_point t_factor = Clock::now();
  if (!e) {
    std::vector<void*> local(static_cast<size_t>(nd));
    std::vector<int*> ipiv(static_cast<size_t>(nd));
    for (int q = 0; q < nd; ++q) local[size_t(q)] = parts[size_t(q)].local, ipiv[size_t(q)] = parts[size_t(q)].ipiv;
    peers_reachable(std::vector<int>(devs, devs + nd));  // each GPU reads the others' panels (where the GPUs can)
    const int r =
        lu ? bok::vendor::cusolvermg_getrf(nd, devs, n, tile, es, kComplex, local.data(), ipiv.data(), &info)
           : bok::vendor::cusolvermg_potrf(nd, devs, flip ? 'L' : uplo, n, tile, es, kComplex, local.data(), &info);
    if (r) {
      log_line(BO_LOG_DEBUG, "%s n=%lld: cuSOLVERMg failed (%d); one GPU instead", bo_routine_name(c.routine),
               (long long)n, r);
      cleanup();
      return BO_CUDA_UNSUPPORTED;
    }
  }
  const Clock::time_point t_scan = Clock::now();
  if (!e)
    e = each([&](GpuShare& p, const Ring&, int64_t b, int64_t w, char* d) {
      cudaError_t r = scan_block(p, b, w, d);
      if (!r) r = checksum(p, b, w, d, 2);
      return r;
    });
  bool bad = false, moved = false;
  for (GpuShare& p : parts) {
    unsigned long long f[3] = {0, 0, 0};
    if (!e) e = cudaMemcpy(f, p.flag, sizeof f, cudaMemcpyDeviceToHost);
    bad |= (f[0] & 0xffffffffull) != 0;
    moved |= f[1] != f[2];
  }
  if (e) {
    cleanup();
    return e == cudaErrorMemoryAllocation ? BO_CUDA_UNSUPPORTED : BO_CUDA_LAUNCH_FAILED;
  }
  if (info < 0 || moved) {
    log_line(BO_LOG_DEBUG, "%s n=%lld on %d GPUs: %s; one GPU instead", bo_routine_name(c.routine), (long long)n, nd,
             moved ? "the unreferenced triangle changed" : "cuSOLVERMg refused an argument");
    cleanup();
    return BO_CUDA_UNSUPPORTED;
  }
  if (info > 0 || bad) {
    log_line(BO_LOG_DEBUG, "%s n=%lld on %d GPUs: INFO = %d%s; the CPU LAPACK answers", bo_routine_name(c.routine),
             (long long)n, nd, info, bad ? " and non-finite values" : "");
    cleanup();
    return BO_CUDA_CPU_ANSWERS;
  }
  // The pivots: local entry l of GPU q is the pivot of the matrix's column lay.global_column(q, l).
  std::vector<int> piv(size_t(lu ? n : 0));
  for (int q = 0; q < nd && lu && !e; ++q) {
    GpuShare& p = parts[size_t(q)];
    std::vector<int> h(size_t(p.blocks * tile));
    cudaSetDevice(p.dev);
    e = cudaMemcpy(h.data(), p.ipiv, sizeof(int) * h.size(), cudaMemcpyDeviceToHost);
    for (int64_t l = 0; l < int64_t(h.size()) && !e; ++l) {
      const int64_t j = lay.global_column(q, l);
      if (j < n) piv[size_t(j)] = h[size_t(l)];
    }
  }
  if (e) {
    cleanup();
    return BO_CUDA_LAUNCH_FAILED;
  }
  // Past the first block written nothing can go back to the CPU LAPACK: a GPU failing now ends the process.
  const Clock::time_point t_down = Clock::now();
  e = each([&](GpuShare& p, const Ring& ring, int64_t b, int64_t w, char* d) {
    bool touched = false;
    cudaError_t r;
    if (flip) {
      transpose_block<R, kP><<<flip_grid(n, w), dim3(32, 8), 0, p.st>>>(
          reinterpret_cast<const R*>(d), n, reinterpret_cast<R*>(p.rows), w, n, w, 0, b * tile, kComplex ? 1 : 0);
      r = cudaGetLastError();
      if (!r)
        r = ring_download(ring, rows_of(b), p.rows, Operand{0, Operand::kMatrix, Operand::kInOut, w, n, lda}, es, p.st,
                          &touched);
    } else {
      const Operand o{0, Operand::kMatrix, Operand::kInOut, n, w, lda};
      r = ring_download(ring, static_cast<char*>(const_cast<void*>(c.a)) + size_t(es) * size_t(b * tile * lda), d, o,
                        es, p.st, &touched);
    }
    if (r && touched) write_back_failed(bo_routine_name(c.routine), r);
    return r;
  });
  if (e) write_back_failed(bo_routine_name(c.routine), e);  // other GPUs' blocks may be written already
  // A device copy of the matrix (residency.h) is stale now: its pages go.
  if (Residency* written = resident_copies(host(), device()))
    written->host_written(resident_view(c.a, Operand{0, Operand::kMatrix, Operand::kInOut, n, n, lda}, es));
  if (lu) copy_pivots_out(c, piv.data(), n);
  set_info_zero(c);
  const Clock::time_point t_end = Clock::now();
  cleanup();
  // At summary level: a call of seconds over several GPUs, and where its time went, is worth a line.
  log_line(BO_LOG_SUMMARY, "%s n=%lld: on %d GPU%s (cuSOLVERMg): up %.3f s, factor %.3f s, checks %.3f s, down %.3f s",
           bo_routine_name(c.routine), (long long)n, nd, nd > 1 ? "s" : "", secs(t_up, t_factor),
           secs(t_factor, t_scan), secs(t_scan, t_down), secs(t_down, t_end));
  return BO_CUDA_OK;
}

}  // namespace

int mg_factor_call(const bo_call& c) {
  const bo_routine_kind kind = bo_routine_kind_of(c.routine);
  if (!(kind == BO_KIND_GETRF && c.m == c.n) && kind != BO_KIND_POTRF) return BO_CUDA_UNSUPPORTED;
  const long min_n = config_long("BLASOFFLOAD_MULTI_GPU_MIN_N", 32768);
  if (min_n <= 0 || c.n < min_n || !fits_int(c.n) || on_device(c.a)) return BO_CUDA_UNSUPPORTED;
  int devs[kMaxDevices];
  const int nd = pipeline_lanes(devs, kMaxDevices);
  // One GPU too where the one-GPU path cannot take the matrix: its cuSOLVER interface indexes a matrix by int (an
  // order above 46340), cuSOLVERMg by 64 bits.
  const bool too_large_for_one = !fits_int(c.n * c.n);
  // Cholesky spreads from twice that order: at 32768 cuSOLVERMg's potrf over two H200s took 0.735 s against cuSOLVER's
  // 0.580 s on one, where getrf gained 1.24x (0.946 s against 1.172); at 65536 potrf gained 1.73x over cuSOLVERMg on
  // one GPU (bench/results/lapack/lapack_multi_gpu-*).
  if (kind == BO_KIND_POTRF && c.n < 2 * int64_t(min_n) && !too_large_for_one) return BO_CUDA_UNSUPPORTED;
  if (nd < (too_large_for_one ? 1 : 2) || !bok::vendor::cusolvermg_available()) return BO_CUDA_UNSUPPORTED;
  // A block of at least 32 columns for every GPU (mg_layout.h), as cuSOLVERMg's examples have: under xlintstd (orders
  // up to 50) its workspace query failed for some of the small orders on the H200s (those calls took one GPU).
  if (c.n < 32 * int64_t(nd)) return BO_CUDA_UNSUPPORTED;
  return by_precision(c, [&](auto t) { return run<decltype(t)>(c, devs, nd); });
}

}  // namespace bom
