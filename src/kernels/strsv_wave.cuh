// strsv as one persistent "wavefront" kernel: every row block is owned by one resident CTA that streams
// its off-diagonal tiles through registers while the solution front sweeps past, so the solve runs at
// the latency of one published block per step instead of one tile load per step.
//
// All 8 uplo/trans/diag cases map onto a forward solve with a lower-triangular logical matrix L' (index
// reversal i' = n-1-i for the backward cases, transposed addressing for trans = 'T'/'C'), as in
// strsv.cuh. Differences from strsv.cuh, each for the critical path:
//  - Tiles go global -> registers (vector loads, one tile prefetched ahead), never through shared
//    memory; each thread keeps partial sums in registers across all tiles and the CTA reduces once.
//  - The diagonal block is inverted in shared memory at the start (seed 003: 32x32 inversions by one
//    warp each, then recursive doubling X21 = -X22 D21 X11), overlapping the wait for earlier blocks;
//    the step on the critical path is then one NB x NB matrix-vector product.
//  - A finished block publishes each x_i as a 64-bit (tag, value) pair: a consumer polls the values
//    themselves, one L2 round trip instead of flag-then-data.
// Tickets (atomicAdd at CTA start) give row blocks in scheduling order, so a CTA only waits on CTAs
// already running: no deadlock whatever the residency. Each x_i is a fixed-order sum (per-thread
// chains, then a fixed reduction tree): deterministic.
// Numerics: inverting NB x NB diagonal blocks replaces substitution within a block by a product with
// the computed inverse; the error grows with the blocks' condition numbers (Higham, "Accuracy and
// Stability", ch. 14: |x - x_ref| <= c(n) eps cond(D) |x| per block); within the reference suites'
// thresholds for the well-conditioned triangles BLAS tests use. strsv.cuh's substitution kernel stays
// available for the tuner.
// The vector path needs 16-byte (NB = 128) / 8-byte (NB = 64) aligned columns (can_implement checks);
// strsv.cuh handles everything else.
#pragma once
#include "kernels/common.cuh"
#include "kernels/strsv.cuh"

namespace bok {

template <int N>
struct VecOf;
template <>
struct VecOf<2> {
  using T = float2;
};
template <>
struct VecOf<4> {
  using T = float4;
};
// Component q of a vector register (q is a compile-time constant after unrolling: no local memory).
__device__ __forceinline__ float vget(const float4& v, int q) { return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w; }
__device__ __forceinline__ float vget(const float2& v, int q) { return q == 0 ? v.x : v.y; }

__device__ __forceinline__ unsigned long long strsv_poll(const unsigned long long* p) {
  unsigned long long v;
  do {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } while ((v >> 32) == 0ull);
  return v;
}
__device__ __forceinline__ void strsv_publish(unsigned long long* p, float v) {
  const unsigned long long w = (1ull << 32) | __float_as_uint(v);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}

// In-place inverse of the lower-triangular NB x NB matrix in s (row stride LD). unit: the diagonal is
// taken as 1 and never read. tmp holds (NB/2)^2 floats.
template <int NB, int THREADS, int LD>
__device__ void strsv_invert_lower(float* s, float* tmp, bool unit) {
  constexpr int WARPS = THREADS / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // 1. 32 x 32 diagonal blocks: lane c computes column c of the inverse by forward substitution.
  for (int b = warp; b < NB / 32; b += WARPS) {
    float* d = s + b * 32 * LD + b * 32;
    float x[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      float t = i == lane ? 1.0f : 0.0f;
#pragma unroll
      for (int k = 0; k < i; ++k) t = fmaf(-d[i * LD + k], x[k], t);
      x[i] = unit ? t : t / d[i * LD + i];
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 32; ++i)
      if (i >= lane) d[i * LD + lane] = x[i];
  }
  __syncthreads();
  // 2. Doubling: for each 2h block, X21 = -X22 (D21 X11), with X11, X22 already inverted.
  for (int h = 32; h < NB; h *= 2) {
    for (int o = 0; o < NB; o += 2 * h) {
      float* x11 = s + o * LD + o;
      float* d21 = s + (o + h) * LD + o;
      float* x22 = s + (o + h) * LD + o + h;
      // T = D21 X11 (X11 lower: column c needs rows >= c).
      for (int e = threadIdx.x; e < h * h; e += THREADS) {
        const int r = e / h, c = e % h;
        float t = 0.0f;
        for (int k = c; k < h; ++k) t = fmaf(d21[r * LD + k], x11[k * LD + c], t);
        tmp[r * h + c] = t;
      }
      __syncthreads();
      // X21 = -X22 T (X22 lower: row r needs columns <= r).
      for (int e = threadIdx.x; e < h * h; e += THREADS) {
        const int r = e / h, c = e % h;
        float t = 0.0f;
        for (int k = 0; k <= r; ++k) t = fmaf(x22[r * LD + k], tmp[k * h + c], t);
        d21[r * LD + c] = -t;
      }
      __syncthreads();
    }
  }
}

// THREADS = 32 * WARPS. Tile (NB x NB) work split: non-transposed (A's contiguous direction = rows of L'):
// warp w takes NB/WARPS columns, lane takes RL = NB/32 consecutive rows (one vector load per column).
// Transposed (contiguous = columns of L'): warp w takes NB/WARPS rows, lane takes RL consecutive columns.
template <int NB, int THREADS, bool TR, bool REV>
__global__ void __launch_bounds__(THREADS, 1)
    strsv_wave_kernel(int64_t n, const float* __restrict__ a, int64_t lda, int unit, float* x, int64_t incx,
                      unsigned long long* pub, int* ticket) {
  constexpr int WARPS = THREADS / 32, RL = NB / 32, PW = NB / WARPS;  // rows per lane, per-warp lines
  constexpr int LD = NB + 1;
  using V = typename VecOf<RL>::T;
  static_assert(NB % WARPS == 0 && (RL == 2 || RL == 4) && PW <= 32, "strsv_wave shape");
  extern __shared__ float smem[];
  float* dinv = smem;             // NB x LD: the diagonal block, then its inverse D^-1
  float* mlast = dinv + NB * LD;  // NB x LD: M = D^-1 L'(rb, rb-1), the last tile premultiplied
  float* ltile = mlast + NB * LD; // NB x LD: L'(rb, rb-1) while M is formed
  float* tmp = ltile + NB * LD;   // (NB/2)^2 during the inversion; reductions and small vectors after it
  __shared__ int rb_s;
  const StrsvAddr<NB, THREADS, TR, REV> ad{n, lda, incx};
  if (threadIdx.x == 0) rb_s = atomicAdd(ticket, 1);
  __syncthreads();
  const int64_t rb = rb_s, i0 = rb * NB;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // The right-hand side, now: only this CTA touches these elements, and the load is off the critical path.
  const float b_own = threadIdx.x < NB && i0 + threadIdx.x < n ? x[ad.x(i0 + threadIdx.x)] : 0.0f;

  // The diagonal block (scalar loads; off the critical path except for the first block).
  for (int e = threadIdx.x; e < NB * NB; e += THREADS) {
    const int li = TR ? e / NB : e % NB, lj = TR ? e % NB : e / NB;  // walk A's contiguous dimension
    const int64_t i = i0 + li, j = i0 + lj;
    float v = 0.0f;
    if (lj < li && i < n)
      v = __ldg(a + ad.a(i, j));
    else if (lj == li)
      v = (unit || i >= n) ? 1.0f : __ldg(a + ad.a(i, i));
    dinv[li * LD + lj] = v;
  }
  __syncthreads();
  strsv_invert_lower<NB, THREADS, LD>(dinv, tmp, unit != 0);
  // Rows past n were set to the identity above, so their "inverse" entries are harmless.

  // The last off-diagonal tile, premultiplied: M = D^-1 L'(rb, rb-1). With it the step on the critical
  // path is x_rb = z - M x_(rb-1), where z = D^-1 (b - sum over the other tiles) is formed while the
  // previous block is still being solved: one matrix-vector product and two barriers per step.
  if (rb > 0) {
    const int64_t j0 = i0 - NB;
    for (int e = threadIdx.x; e < NB * NB; e += THREADS) {
      const int li = TR ? e / NB : e % NB, lj = TR ? e % NB : e / NB;  // walk A's contiguous dimension
      const int64_t i = i0 + li;
      ltile[li * LD + lj] = i < n ? __ldg(a + ad.a(i, j0 + lj)) : 0.0f;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < NB * NB; e += THREADS) {
      const int r = e / NB, c = e % NB;  // a warp shares r: D^-1 row broadcast, L' row conflict-free
      float t = 0.0f;
      for (int k = 0; k <= r; ++k) t = fmaf(dinv[r * LD + k], ltile[k * LD + c], t);
      mlast[r * LD + c] = t;
    }
  }

  // The other off-diagonal tiles, streamed through registers with one tile of prefetch.
  auto vec_ptr = [&](int64_t cb, int l) -> const V* {
    const int64_t j0 = cb * NB;
    int64_t li, lj;
    if (!TR) {
      li = i0 + lane * RL;
      lj = j0 + warp * PW + l;
    } else {
      li = i0 + warp * PW + l;
      lj = j0 + lane * RL;
    }
    // The RL elements run along A's contiguous dimension; for REV they run backwards in memory, so the
    // vector starts at the last one's address.
    const int64_t off = REV ? ad.a(TR ? li : li + RL - 1, TR ? lj + RL - 1 : lj) : ad.a(li, lj);
    return reinterpret_cast<const V*>(a + off);
  };
  auto load_tile = [&](int64_t cb, V (&t)[PW]) {
#pragma unroll
    for (int l = 0; l < PW; ++l) {
      const int64_t row = TR ? i0 + warp * PW + l : i0 + lane * RL;
      if (TR ? row < n : row + RL <= n) {
        t[l] = __ldg(vec_ptr(cb, l));
      } else {  // rows past n (last block only): scalar, guarded
        float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (!TR)
#pragma unroll
          for (int q = 0; q < RL; ++q)
            if (row + q < n) e[q] = __ldg(a + ad.a(row + q, cb * NB + warp * PW + l));
        if constexpr (RL == 4)
          t[l] = make_float4(e[0], e[1], e[2], e[3]);
        else
          t[l] = make_float2(e[0], e[1]);
      }
    }
  };
  auto comp = [](const V& v, int q) -> float { return vget(v, REV ? RL - 1 - q : q); };

  float acc[TR ? PW : RL];
#pragma unroll
  for (int r = 0; r < (TR ? PW : RL); ++r) acc[r] = 0.0f;
  const int64_t others = rb > 0 ? rb - 1 : 0;  // tiles before the last one
  V cur[PW], nxt[PW];
  if (others > 0) load_tile(0, cur);
  for (int64_t cb = 0; cb < others; ++cb) {
    if (cb + 1 < others) load_tile(cb + 1, nxt);
    const int64_t j0 = cb * NB;
    if (!TR) {
      // Lanes 0..PW-1 fetch the warp's PW values of x_cb, then broadcast them.
      float xv = 0.0f;
      if (lane < PW) xv = __uint_as_float(unsigned(strsv_poll(pub + j0 + warp * PW + lane)));
#pragma unroll
      for (int l = 0; l < PW; ++l) {
        const float xl = __shfl_sync(0xffffffffu, xv, l);
#pragma unroll
        for (int q = 0; q < RL; ++q) acc[q] = fmaf(comp(cur[l], q), xl, acc[q]);
      }
    } else {
      float xv[RL];
#pragma unroll
      for (int q = 0; q < RL; ++q) xv[q] = __uint_as_float(unsigned(strsv_poll(pub + j0 + lane * RL + q)));
#pragma unroll
      for (int l = 0; l < PW; ++l)
#pragma unroll
        for (int q = 0; q < RL; ++q) acc[l] = fmaf(comp(cur[l], q), xv[q], acc[l]);
    }
#pragma unroll
    for (int l = 0; l < PW; ++l) cur[l] = nxt[l];
  }

  // z = D^-1 (b - s), s = this block's sums over the other tiles (fixed order: per thread, then warps).
  constexpr int TPR = THREADS / NB > 0 ? THREADS / NB : 1;
  float* part = tmp;                 // WARPS x NB (!TR) or NB (TR)
  float* rhs = part + WARPS * NB;    // NB
  float* zs = rhs + NB;              // NB
  float* xs = zs + NB;               // NB: x_(rb-1)
  float* part2 = xs + NB;            // TPR x NB
  if (!TR) {
#pragma unroll
    for (int q = 0; q < RL; ++q) part[warp * NB + lane * RL + q] = acc[q];
  } else {
#pragma unroll
    for (int l = 0; l < PW; ++l) {
      float v = acc[l];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) part[warp * PW + l] = v;
    }
  }
  __syncthreads();
  if (threadIdx.x < NB) {
    const int r = threadIdx.x;
    float sum = part[r];
    if (!TR)
#pragma unroll
      for (int w = 1; w < WARPS; ++w) sum += part[w * NB + r];
    rhs[r] = b_own - sum;
  }
  __syncthreads();
  // TPR threads per row over contiguous column ranges, four independent chains so the loads pipeline; the
  // triangle bound is a predicate, not a zero product: 0 * Inf would be NaN.
  for (int e = threadIdx.x; e < NB * TPR; e += THREADS) {
    const int r = e % NB, g = e / NB, c0 = g * (NB / TPR);
    float y4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int c = 0; c < NB / TPR; ++c)
      if (c0 + c <= r) y4[c & 3] = fmaf(dinv[r * LD + c0 + c], rhs[c0 + c], y4[c & 3]);
    part2[g * NB + r] = (y4[0] + y4[1]) + (y4[2] + y4[3]);
  }
  __syncthreads();
  if (threadIdx.x < NB) {
    const int r = threadIdx.x;
    float z = part2[r];
#pragma unroll
    for (int g = 1; g < TPR; ++g) z += part2[g * NB + r];
    zs[r] = z;
    // The first block has no predecessor: z is its solution.
    if (rb == 0 && i0 + r < n) {
      strsv_publish(pub + i0 + r, z);
      x[ad.x(i0 + r)] = z;
    }
  }
  if (rb == 0) return;

  // The critical step: wait for x_(rb-1), then x_rb = z - M x_(rb-1).
  if (threadIdx.x < NB) xs[threadIdx.x] = __uint_as_float(unsigned(strsv_poll(pub + i0 - NB + threadIdx.x)));
  __syncthreads();
  for (int e = threadIdx.x; e < NB * TPR; e += THREADS) {
    const int r = e % NB, g = e / NB, c0 = g * (NB / TPR);
    float y4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int c = 0; c < NB / TPR; ++c) y4[c & 3] = fmaf(mlast[r * LD + c0 + c], xs[c0 + c], y4[c & 3]);
    part2[g * NB + r] = (y4[0] + y4[1]) + (y4[2] + y4[3]);
  }
  __syncthreads();
  if (threadIdx.x < NB) {
    const int r = threadIdx.x;
    float t = part2[r];
#pragma unroll
    for (int g = 1; g < TPR; ++g) t += part2[g * NB + r];
    const float y = zs[r] - t;
    if (i0 + r < n) {
      strsv_publish(pub + i0 + r, y);
      x[ad.x(i0 + r)] = y;
    }
  }
}

template <int NB, int THREADS>
struct StrsvWave {
  static constexpr int kLD = NB + 1;
  // D^-1, M and the last tile, then the larger of the inversion's scratch and the vectors of a step.
  static constexpr size_t smem_bytes() {
    const size_t mats = 3 * size_t(NB) * kLD, t1 = size_t(NB / 2) * (NB / 2),
                 t2 = size_t(THREADS / 32) * NB + 3 * size_t(NB) + size_t(THREADS / NB > 0 ? THREADS / NB : 1) * NB;
    return 4 * (mats + (t1 > t2 ? t1 : t2));
  }
  // Register budget: two tiles of PW vectors of NB/32 floats per thread stay <= 128 registers.
  static constexpr bool valid() {
    return (NB == 64 || NB == 128) && THREADS % 32 == 0 && THREADS <= 1024 && THREADS >= NB &&
           NB % (THREADS / 32) == 0 && NB / (THREADS / 32) <= 32 && 2 * (NB / (THREADS / 32)) * (NB / 32) <= 128 &&
           smem_bytes() <= 227 * 1024;
  }
  static_assert(valid(), "StrsvWave parameters");
  static std::string name() { return "strsv_wave_" + std::to_string(NB) + "_" + std::to_string(THREADS); }
  static bool can_implement(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda) {
    const int rl = NB / 32;  // elements per vector
    const bool tr = trans != 'N', rev = (uplo == 'U') == (trans == 'N');
    // Vector loads along A's contiguous dimension: the column start, lda and (backward solves, which
    // address blocks from the end) n must keep every vector aligned.
    (void)tr;
    return (uplo == 'U' || uplo == 'L') && (trans == 'N' || trans == 'T' || trans == 'C') &&
           (diag == 'U' || diag == 'N') && n >= 1 && (reinterpret_cast<uintptr_t>(a) % (4 * rl)) == 0 &&
           lda % rl == 0 && (!rev || n % rl == 0) && cdiv(n, NB) < (int64_t(1) << 31);
  }
  static size_t workspace(int64_t n) { return 256 + sizeof(unsigned long long) * size_t(n); }
  template <bool TR, bool REV>
  static cudaError_t go(int64_t n, const float* a, int64_t lda, int unit, float* x, int64_t incx, void* ws,
                        cudaStream_t st) {
    static bool attr_set = false;  // benign race: every thread sets the same value
    if (!attr_set) {
      cudaError_t e = cudaFuncSetAttribute(strsv_wave_kernel<NB, THREADS, TR, REV>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes()));
      if (e != cudaSuccess) return e;
      attr_set = true;
    }
    int* ticket = static_cast<int*>(ws);
    auto* pub = reinterpret_cast<unsigned long long*>(static_cast<char*>(ws) + 256);
    strsv_wave_kernel<NB, THREADS, TR, REV>
        <<<unsigned(cdiv(n, NB)), THREADS, smem_bytes(), st>>>(n, a, lda, unit, x, incx, pub, ticket);
    return cudaGetLastError();
  }
  static cudaError_t launch(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda, float* x,
                            int64_t incx, void* ws, cudaStream_t st) {
    if (n == 0) return cudaSuccess;
    cudaError_t e = cudaMemsetAsync(ws, 0, workspace(n), st);
    if (e != cudaSuccess) return e;
    const bool tr = trans != 'N', rev = (uplo == 'U') == (trans == 'N');
    const int unit = diag == 'U';
    if (!tr && !rev) return go<false, false>(n, a, lda, unit, x, incx, ws, st);
    if (!tr && rev) return go<false, true>(n, a, lda, unit, x, incx, ws, st);
    if (tr && !rev) return go<true, false>(n, a, lda, unit, x, incx, ws, st);
    return go<true, true>(n, a, lda, unit, x, incx, ws, st);
  }
};

}  // namespace bok
