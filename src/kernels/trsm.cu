// STRSM / DTRSM by diagonal-block inversion plus GEMM (trsm.cuh), and the one-right-hand-side case through trsv.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kernels/level3_common.cuh"
#include "kernels/trsm.cuh"

namespace bok {
namespace {

constexpr int kBase = 32;  // diagonal blocks inverted by substitution, one warp each; doubled from there
constexpr size_t kGemvScratch = size_t(8) << 20;
constexpr size_t al(size_t b) { return (b + 255) & ~size_t(255); }

struct Layout {
  int64_t t, nblk, tpad;
  size_t w, tmp, x, flags, gemv;
  size_t total() const { return w + tmp + x + flags + gemv; }
};
Layout layout(char side, int64_t m, int64_t n, int nb, size_t es) {
  Layout l;
  l.t = side == 'L' ? m : n;
  l.nblk = cdiv(l.t, nb);
  l.tpad = l.nblk * nb;
  l.w = al(es * size_t(l.tpad) * size_t(nb));
  l.tmp = nb > kBase ? al(es * size_t(l.tpad) * size_t(nb / 4)) : 0;  // level s holds tpad s / 2 elements, s <= nb / 2
  l.x = al(es * size_t(m) * size_t(n));
  l.flags = al(4 * size_t(l.nblk + 1));
  l.gemv = kGemvScratch;
  return l;
}

// Inverts one 32 x 32 diagonal block per 32-thread CTA into w (big block of order nb, leading dimension nb). Rows
// and columns past the triangle's order t are the identity, so that every block inverts the same way. An upper
// block is inverted as its transpose (lower) and written back transposed.
template <class T>
__global__ void invert_base_kernel(bool upper, bool unit, int64_t t, const T* __restrict__ a, int64_t lda,
                                   T* __restrict__ w, int nb) {
  __shared__ T d[kBase][kBase + 1];
  __shared__ T x[kBase][kBase + 1];
  const int64_t o = int64_t(blockIdx.x) * kBase;
  const int tid = int(threadIdx.x);
  for (int j = 0; j < kBase; ++j) {
    const int i = tid;
    const int64_t gi = o + i, gj = o + j;
    T v = T(0);
    if (i == j)
      v = gi < t ? (unit ? T(1) : a[gi + gi * lda]) : T(1);
    else if (i > j && gi < t)
      v = upper ? a[gj + gi * lda] : a[gi + gj * lda];
    d[i][j] = v;
  }
  __syncthreads();
  const int j = tid;  // each thread solves one column of D X = I
  for (int i = 0; i < kBase; ++i) {
    T v = T(0);
    if (i == j) {
      v = T(1) / d[j][j];
    } else if (i > j) {
      T s = T(0);
      for (int k = j; k < i; ++k) s = bo_fma(d[i][k], x[k][j], s);
      v = -s / d[i][i];
    }
    x[i][j] = v;
  }
  __syncthreads();
  T* wb = w + (o / nb) * int64_t(nb) * nb;
  const int64_t lo = o % nb;
  for (int c = 0; c < kBase; ++c) wb[(lo + tid) + (lo + c) * nb] = upper ? x[c][tid] : x[tid][c];
}

// One doubling level of seed 003: with blocks of order s inverted, each pair [D11 0; D21 D22] (lower) gets
// W21 = -W22 (D21 W11) and [D11 D12; 0 D22] (upper) W12 = -W11 (D12 W22). Phase 0 forms the inner product into
// tmp, phase 1 the outer one into w.
template <class T>
struct InvLevelOp {
  using Elem = T;
  static constexpr bool kXi = true, kYk = true;
  bool upper;
  int phase;
  int64_t t;
  const T* a;
  int64_t lda;
  T* w;
  T* tmp;
  int nb, s;
  int64_t pairs_per_block;
  __device__ bool tile_needed(int, int64_t, int64_t, int) const { return true; }
  __device__ void at(int b, int64_t* o, int64_t* lo, T** wb, T** tp) const {
    const int64_t blk = b / pairs_per_block;
    *lo = (b % pairs_per_block) * 2 * s;
    *o = blk * nb + *lo;
    *wb = w + blk * int64_t(nb) * nb;
    *tp = tmp + int64_t(b) * s * s;
  }
  __device__ T x(int b, int64_t i, int64_t k) const {
    if (i >= s) return T(0);
    int64_t o, lo;
    T *wb, *tp;
    at(b, &o, &lo, &wb, &tp);
    if (phase == 0) {
      const int64_t r = upper ? o + i : o + s + i, c = upper ? o + s + k : o + k;
      return r < t && c < t ? a[r + c * lda] : T(0);
    }
    const int64_t base = upper ? lo : lo + s;
    return wb[(base + i) + (base + k) * nb];
  }
  __device__ T y(int b, int64_t k, int64_t j) const {
    if (j >= s) return T(0);
    int64_t o, lo;
    T *wb, *tp;
    at(b, &o, &lo, &wb, &tp);
    if (phase == 0) {
      const int64_t base = upper ? lo + s : lo;
      return wb[(base + k) + (base + j) * nb];
    }
    return tp[k + j * s];
  }
  __device__ void store(int b, int64_t i, int64_t j, T v) const {
    if (i >= s || j >= s) return;
    int64_t o, lo;
    T *wb, *tp;
    at(b, &o, &lo, &wb, &tp);
    if (phase == 0)
      tp[i + j * s] = v;
    else
      wb[(upper ? lo + i : lo + s + i) + (upper ? lo + s + j : lo + j) * nb] = -v;
  }
};

// flags[blk] = 1 when big block blk may be used inverted: k1 = |D|_1 |W|_1 finite and <= max_cond. A warp per
// column (lanes along it: coalesced).
template <class T>
__global__ void guard_kernel(bool upper, bool unit, int64_t t, const T* __restrict__ a, int64_t lda,
                             const T* __restrict__ w, int nb, double max_cond, int* flags) {
  __shared__ T sd[32], sw[32];
  const int64_t blk = blockIdx.x, o = blk * nb;
  const T* wb = w + blk * int64_t(nb) * nb;
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32), warps = int(blockDim.x / 32);
  T dmax = T(0), wmax = T(0);
  for (int c = warp; c < nb && o + c < t; c += warps) {
    const int64_t gc = o + c;
    T s = T(0), sv = T(0);
    for (int r = lane; r < nb; r += 32) {
      const bool in = (upper ? r <= c : r >= c) && o + r < t;
      if (in) s += r == c && unit ? T(1) : bo_abs(a[(o + r) + gc * lda]);
      sv += bo_abs(wb[r + int64_t(c) * nb]);
    }
    for (int h = 16; h > 0; h /= 2) {
      s += __shfl_xor_sync(0xffffffffu, s, h);
      sv += __shfl_xor_sync(0xffffffffu, sv, h);
    }
    if (!(s <= dmax)) dmax = s;  // NaN sticks
    if (!(sv <= wmax)) wmax = sv;
  }
  if (lane == 0) sd[warp] = dmax, sw[warp] = wmax;
  __syncthreads();
  if (threadIdx.x == 0) {
    T d = T(0), v = T(0);
    for (int i = 0; i < warps; ++i) {
      if (!(sd[i] <= d)) d = sd[i];
      if (!(sw[i] <= v)) v = sw[i];
    }
    const double k1 = double(d) * double(v);
    flags[blk] = k1 <= max_cond ? 1 : 0;  // NaN and Inf fail
  }
}

// C(i, j) = alpha sum_k P(i, k) X(k, j) + beta C(i, j) for few columns j < r <= R (beta == 0: C not read): the
// products of a solve with few right-hand sides, which GEMM tiles serve badly (they are bound by P's bandwidth and
// by the latency of their K loop). Each operand may be stored transposed (pt: P(i, k) = p[k + i ldp]; xt: X(k, j) =
// x[j + k ldx]; ct: C(i, j) = c[j + i ldc]), which is how a right-side solve's transposed problem reads. A CTA takes
// 32 rows; its 4 warps take a quarter of K each, staging 32 x 32 tiles of P through shared memory so that both
// storage orders load coalesced, and their partial sums are added in a fixed order (deterministic).
template <class T, int R>
__global__ void __launch_bounds__(128)
    skinny_kernel(int64_t rows, int r, int64_t kl, T alpha, const T* __restrict__ p, int64_t ldp, bool pt,
                  const T* __restrict__ x, int64_t ldx, bool xt, T beta, T* c, int64_t ldc, bool ct) {
  __shared__ T ps[4][32][33];
  __shared__ T xs[4][32][R];
  __shared__ T red[3][32][R + 1];
  const int lane = int(threadIdx.x % 32), wp = int(threadIdx.x / 32);
  const int64_t i0 = int64_t(blockIdx.x) * 32;
  const int64_t chunks = (kl + 31) / 32, per = (chunks + 3) / 4;
  const int64_t c0 = wp * per, c1 = c0 + per < chunks ? c0 + per : chunks;
  T acc[R];
#pragma unroll
  for (int j = 0; j < R; ++j) acc[j] = T(0);
  for (int64_t ch = c0; ch < c1; ++ch) {
    const int64_t k0 = ch * 32;
#pragma unroll 8
    for (int q = 0; q < 32; ++q) {
      // pt: lanes along k (row q of the tile); else lanes along i (column q).
      const int64_t gi = pt ? i0 + q : i0 + lane, gk = pt ? k0 + lane : k0 + q;
      const T v = gi < rows && gk < kl ? (pt ? p[gk + gi * ldp] : p[gi + gk * ldp]) : T(0);
      if (pt)
        ps[wp][lane][q] = v;  // [k][i]
      else
        ps[wp][q][lane] = v;
    }
    for (int e = lane; e < 32 * R; e += 32) {
      const int kk = xt ? e / R : e % 32, jj = xt ? e % R : e / 32;
      const int64_t gk = k0 + kk;
      xs[wp][kk][jj] = gk < kl && jj < r ? (xt ? x[jj + gk * ldx] : x[gk + jj * ldx]) : T(0);
    }
    __syncwarp();
#pragma unroll 4
    for (int kk = 0; kk < 32; ++kk) {
      const T pv = ps[wp][kk][lane];
#pragma unroll
      for (int j = 0; j < R; ++j) acc[j] = bo_fma(pv, xs[wp][kk][j], acc[j]);
    }
    __syncwarp();
  }
  if (wp > 0)
#pragma unroll
    for (int j = 0; j < R; ++j) red[wp - 1][lane][j] = acc[j];
  __syncthreads();
  const int64_t i = i0 + lane;
  if (wp != 0 || i >= rows) return;
#pragma unroll
  for (int j = 0; j < R; ++j) {
    if (j >= r) break;
    const T sum = ((acc[j] + red[0][lane][j]) + red[1][lane][j]) + red[2][lane][j];
    T* q = ct ? c + j + i * ldc : c + i + j * ldc;
    *q = beta == T(0) ? alpha * sum : bo_fma(beta, *q, alpha * sum);
  }
}

template <class T>
__global__ void nonfinite_kernel(int64_t m, int64_t n, const T* __restrict__ b, int64_t ldb, int* flag) {
  for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += int64_t(gridDim.x) * blockDim.x)
      if (!isfinite(b[i + j * ldb])) *flag = 1;
}

// Substitution on one diagonal block for the blocks that must not be used inverted: op(D) y = alpha b for each of
// nrhs vectors (element stride es, vector stride vs), one thread per vector.
template <class T>
__global__ void subst_kernel(bool lower, bool opt, bool unit, int64_t nb, int64_t nrhs, const T* __restrict__ d,
                             int64_t lda, T alpha, const T* __restrict__ b, int64_t bes, int64_t bvs, T* __restrict__ x,
                             int64_t xes, int64_t xvs) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= nrhs) return;
  const T* bv = b + r * bvs;
  T* xv = x + r * xvs;
  auto op_d = [&](int64_t i, int64_t j) { return opt ? d[j + i * lda] : d[i + j * lda]; };
  for (int64_t q = 0; q < nb; ++q) {
    const int64_t i = lower ? q : nb - 1 - q;
    T s = alpha * bv[i * bes];
    if (lower)
      for (int64_t j = 0; j < i; ++j) s -= op_d(i, j) * xv[j * xes];
    else
      for (int64_t j = i + 1; j < nb; ++j) s -= op_d(i, j) * xv[j * xes];
    xv[i * xes] = unit ? s : s / op_d(i, i);
  }
}

// The largest right-hand-side count the skinny products take; above it the solve's products are GEMMs. Double: 8
// (skinny_kernel's static shared memory for R = 16 would pass 48 KB).
template <class T>
inline constexpr int kSkinnyMax = sizeof(T) == 4 ? 32 : 8;
template <class T>
cudaError_t skinny(int64_t rows, int r, int64_t kl, T alpha, const T* p, int64_t ldp, bool pt, const T* x, int64_t ldx,
                   bool xt, T beta, T* c, int64_t ldc, bool ct, cudaStream_t st) {
  if (rows <= 0) return cudaSuccess;
  if (cdiv(rows, 32) > 2147483647) return cudaErrorNotSupported;
  if (r > kSkinnyMax<T>) return cudaErrorNotSupported;
  const unsigned grid = unsigned(cdiv(rows, 32));
  if (r <= 4) {
    skinny_kernel<T, 4><<<grid, 128, 0, st>>>(rows, r, kl, alpha, p, ldp, pt, x, ldx, xt, beta, c, ldc, ct);
  } else if (r <= 8) {
    skinny_kernel<T, 8><<<grid, 128, 0, st>>>(rows, r, kl, alpha, p, ldp, pt, x, ldx, xt, beta, c, ldc, ct);
  } else if constexpr (kSkinnyMax<T> > 8) {
    if (r <= 16)
      skinny_kernel<T, 16><<<grid, 128, 0, st>>>(rows, r, kl, alpha, p, ldp, pt, x, ldx, xt, beta, c, ldc, ct);
    else
      skinny_kernel<T, 32><<<grid, 128, 0, st>>>(rows, r, kl, alpha, p, ldp, pt, x, ldx, xt, beta, c, ldc, ct);
  }
  return cudaGetLastError();
}

template <class T, int TILE>
cudaError_t inv_level(InvLevelOp<T> op, int64_t batches, cudaStream_t st) {
  const dim3 grid(unsigned(cdiv(op.s, TILE)), unsigned(cdiv(op.s, TILE)), unsigned(batches));
  batched_tile_product<TILE><<<grid, 256, 0, st>>>(op, op.s);
  return cudaGetLastError();
}

}  // namespace

namespace {
std::atomic<double> g_inv_max_cond{1000.0};
}  // namespace

void set_strsm_inv_max_cond(const char* e) {
  char* end = nullptr;
  const double d = e && *e ? std::strtod(e, &end) : 0.0;
  g_inv_max_cond.store(e && *e && end && *end == 0 && d >= 0 ? d : 1000.0, std::memory_order_relaxed);
}
double strsm_inv_max_cond() { return g_inv_max_cond.load(std::memory_order_relaxed); }

template <class T>
size_t trsm_inv_workspace(char side, int64_t m, int64_t n, int nb) {
  return layout(side, m, n, nb, sizeof(T)).total();
}

template <class T>
cudaError_t trsm_inv(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,
                     int64_t lda, T* b, int64_t ldb, int nb, void* ws, cudaStream_t st) {
  transa = transa == 'N' ? 'N' : 'T';
  const bool left = side == 'L', upper = uplo == 'U', unit = diag == 'U';
  const Layout l = layout(side, m, n, nb, sizeof(T));
  const int64_t t = l.t;
  if (l.tpad / kBase > 2147483647 || l.tpad / 64 > 65535) return cudaErrorNotSupported;
  char* p = static_cast<char*>(ws);
  T* w = reinterpret_cast<T*>(p);
  T* tmp = reinterpret_cast<T*>(p + l.w);
  T* x = reinterpret_cast<T*>(p + l.w + l.tmp);
  int* flags = reinterpret_cast<int*>(p + l.w + l.tmp + l.x);
  void* gws = p + l.w + l.tmp + l.x + l.flags;
  cudaError_t e = cudaMemsetAsync(w, 0, l.w, st);
  if (!e) e = cudaMemsetAsync(flags, 0, l.flags, st);
  if (e) return e;
  invert_base_kernel<T><<<unsigned(l.tpad / kBase), kBase, 0, st>>>(upper, unit, t, a, lda, w, nb);
  if ((e = cudaGetLastError())) return e;
  for (int s = kBase; s < nb; s *= 2) {
    InvLevelOp<T> op{upper, 0, t, a, lda, w, tmp, nb, s, nb / (2 * s)};
    const int64_t batches = l.nblk * op.pairs_per_block;
    for (int phase = 0; phase < 2 && !e; ++phase) {
      op.phase = phase;
      e = s >= 64 ? inv_level<T, 64>(op, batches, st) : inv_level<T, 32>(op, batches, st);
    }
    if (e) return e;
  }
  guard_kernel<T><<<unsigned(l.nblk), 256, 0, st>>>(upper, unit, t, a, lda, w, nb, strsm_inv_max_cond(), flags);
  {
    const int64_t gx = std::min<int64_t>(cdiv(m, 256), 64);
    const dim3 grid(unsigned(gx), unsigned(std::min<int64_t>(n, 1024)));
    nonfinite_kernel<T><<<grid, 256, 0, st>>>(m, n, b, ldb, flags + l.nblk);
  }
  std::vector<int> hf(size_t(l.nblk + 1));
  if ((e = cudaGetLastError()) || (e = cudaMemcpyAsync(hf.data(), flags, 4 * hf.size(), cudaMemcpyDeviceToHost, st)) ||
      (e = cudaStreamSynchronize(st)))
    return e;
  const bool nonfinite_b = hf[size_t(l.nblk)] != 0;
  const bool lower_op = upper == (transa == 'T');  // op(A) is lower triangular
  const bool forward = left ? lower_op : !lower_op;
  const int64_t r_count = left ? n : m;
  const bool skinny_rhs = r_count <= kSkinnyMax<T>;
  for (int64_t step = 0; step < l.nblk && !e; ++step) {
    const int64_t blk = forward ? step : l.nblk - 1 - step;
    const int64_t r0 = blk * nb, bn = std::min<int64_t>(nb, t - r0), r1 = r0 + bn;
    const T ai = step == 0 ? alpha : T(1);  // the first update scales the rest of B by alpha (its beta)
    const T* wb = w + blk * int64_t(nb) * nb;
    const bool inverted = hf[size_t(blk)] && !nonfinite_b;
    const T* d = a + r0 + r0 * lda;
    // The diagonal block: X_b = op(D)^-1 (ai B_b) (left) or (ai B_b) op(D)^-1 (right), into x.
    if (!inverted) {
      const bool opt = left ? transa == 'T' : transa == 'N';  // right: row r of X solves op(D)^T x = ai b
      const int64_t nrhs = left ? n : m;
      subst_kernel<T><<<unsigned(cdiv(nrhs, 128)), 128, 0, st>>>(
          upper == opt, opt, unit, bn, nrhs, d, lda, ai, left ? b + r0 : b + r0 * ldb, left ? 1 : ldb, left ? ldb : 1,
          left ? x + r0 : x + r0 * m, left ? 1 : m, left ? m : 1);
      e = cudaGetLastError();
    } else if (skinny_rhs) {  // the right side's product transposed: X_b^T = op(W)^T (ai B_b^T)
      e = left ? skinny<T>(bn, int(n), bn, ai, wb, nb, transa == 'T', b + r0, ldb, false, T(0), x + r0, m, false, st)
               : skinny<T>(bn, int(m), bn, ai, wb, nb, transa == 'N', b + r0 * ldb, ldb, true, T(0), x + r0 * m, m,
                           true, st);
    } else {
      e = left ? level3_gemm<T>(transa, 'N', bn, n, bn, ai, wb, nb, b + r0, ldb, T(0), x + r0, m, st, gws, l.gemv)
               : level3_gemm<T>('N', transa, m, bn, bn, ai, b + r0 * ldb, ldb, wb, nb, T(0), x + r0 * m, m, st, gws,
                                l.gemv);
    }
    if (e) break;
    // The rest of B (rows or columns after the block in solve order) -= its panel of op(A) times X_b.
    const int64_t rest = forward ? t - r1 : r0;
    if (rest == 0) continue;
    T* c = forward ? (left ? b + r1 : b + r1 * ldb) : b;
    const T* panel;
    char op;  // the panel's op in the GEMM form: C = -op(panel) X_b (left), C = -X_b op(panel) (right)
    if (left) {
      panel = forward ? (upper ? a + r0 + r1 * lda : a + r1 + r0 * lda) : (upper ? a + r0 * lda : a + r0);
      op = forward ? (upper ? 'T' : 'N') : (upper ? 'N' : 'T');
      e = skinny_rhs
              ? skinny<T>(rest, int(n), bn, T(-1), panel, lda, op == 'T', x + r0, m, false, ai, c, ldb, false, st)
              : level3_gemm<T>(op, 'N', rest, n, bn, T(-1), panel, lda, x + r0, m, ai, c, ldb, st, gws, l.gemv);
    } else {
      panel = forward ? (upper ? a + r0 + r1 * lda : a + r1 + r0 * lda) : (upper ? a + r0 * lda : a + r0);
      op = forward ? (upper ? 'N' : 'T') : (upper ? 'T' : 'N');
      // Transposed: C^T = -op(panel)^T X_b^T, and op(panel)^T(i, k) = panel[k + i lda] when op is N.
      e = skinny_rhs
              ? skinny<T>(rest, int(m), bn, T(-1), panel, lda, op == 'N', x + r0 * m, m, true, ai, c, ldb, true, st)
              : level3_gemm<T>('N', op, m, rest, bn, T(-1), x + r0 * m, m, panel, lda, ai, c, ldb, st, gws, l.gemv);
    }
  }
  if (e) return e;
  return cudaMemcpy2DAsync(b, sizeof(T) * size_t(ldb), x, sizeof(T) * size_t(m), sizeof(T) * size_t(m), size_t(n),
                           cudaMemcpyDeviceToDevice, st);
}

template <class T>
size_t trsm_trsv_workspace(char side, char uplo, char transa, char diag, int64_t m, int64_t n) {
  const int64_t t = side == 'L' ? m : n;
  const char tr = (side == 'L') == (transa == 'N') ? 'N' : 'T';
  return level3_trsv_workspace<T>(uplo, tr, diag, t);
}

template <class T>
cudaError_t trsm_trsv(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,
                      int64_t lda, T* b, int64_t ldb, void* ws, cudaStream_t st) {
  const bool left = side == 'L';
  const int64_t t = left ? m : n, inc = left ? 1 : ldb;
  // Right side, one row: x^T op(A) = alpha b^T is op(A)^T x = alpha b.
  const char tr = left == (transa == 'N') ? 'N' : 'T';
  cudaError_t e = scale_vector(t, alpha, b, inc, st);
  if (!e) e = level3_trsv<T>(uplo, tr, diag, t, a, lda, b, inc, ws, st);
  return e;
}

#define BO_TRSM_INSTANTIATE(T)                                                                                       \
  template size_t trsm_inv_workspace<T>(char, int64_t, int64_t, int);                                                \
  template cudaError_t trsm_inv<T>(char, char, char, char, int64_t, int64_t, T, const T*, int64_t, T*, int64_t, int, \
                                   void*, cudaStream_t);                                                             \
  template size_t trsm_trsv_workspace<T>(char, char, char, char, int64_t, int64_t);                                  \
  template cudaError_t trsm_trsv<T>(char, char, char, char, int64_t, int64_t, T, const T*, int64_t, T*, int64_t,     \
                                    void*, cudaStream_t);
BO_TRSM_INSTANTIATE(float)
BO_TRSM_INSTANTIATE(double)
#undef BO_TRSM_INSTANTIATE

}  // namespace bok
