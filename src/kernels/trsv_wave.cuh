// strsv / dtrsv (templated on the element type T) as one persistent "wavefront" kernel: every row block is owned by one
// resident CTA that streams its off-diagonal tiles through registers while the solution front sweeps past, so the solve
// runs at the latency of one published block per step instead of one tile load per step.
//
// All 8 uplo/trans/diag cases map onto a forward solve with a lower-triangular logical matrix L' (index
// reversal i' = n-1-i for the backward cases, transposed addressing for trans = 'T'/'C'), as in
// trsv.cuh. Differences from trsv.cuh, each for the critical path:
//  - Tiles go global -> registers (vector loads, one tile prefetched ahead), never through shared
//    memory; each thread keeps partial sums in registers across all tiles and the CTA reduces once.
//  - The diagonal block is inverted in shared memory at the start (seed 003: 32x32 inversions by one
//    warp each, then recursive doubling X21 = -X22 D21 X11), overlapping the wait for earlier blocks;
//    the step on the critical path is then one NB x NB matrix-vector product.
//  - A finished block publishes each x_i as a 64-bit word a consumer polls, one L2 round trip instead of
//    flag-then-data: float, a (tag, value) pair; double, the value itself, against a sentinel the workspace is
//    set to (all ones: a NaN no arithmetic produces; a NaN solution is published as the canonical NaN).
// Tickets (atomicAdd at CTA start) give row blocks in scheduling order, so a CTA only waits on CTAs
// already running: no deadlock whatever the residency. Each x_i is a fixed-order sum (per-thread
// chains, then a fixed reduction tree): deterministic.
// Numerics: inverting NB x NB diagonal blocks replaces substitution within a block by a product with
// the computed inverse; the error grows with the blocks' condition numbers (Higham, "Accuracy and
// Stability", ch. 14: |x - x_ref| <= c(n) eps cond(D) |x| per block); within the reference suites'
// thresholds for the well-conditioned triangles BLAS tests use. trsv.cuh's substitution kernel stays
// available for the tuner.
// The vector path needs columns aligned to NB/32 elements (16 bytes for float NB = 128 and double NB = 64, 8 bytes
// for float NB = 64; can_implement checks); trsv.cuh handles everything else. Double: NB = 64 only (shared memory).
#pragma once
#include "kernels/common.cuh"
#include "kernels/trsv.cuh"

namespace bok {

// RL consecutive elements of T as one vector register: float2 / float4, double2.
template <class T, int N>
struct VecOf;
template <>
struct VecOf<float, 2> {
  using T = float2;
  __device__ static float2 make(const float* e) { return make_float2(e[0], e[1]); }
};
template <>
struct VecOf<float, 4> {
  using T = float4;
  __device__ static float4 make(const float* e) { return make_float4(e[0], e[1], e[2], e[3]); }
};
template <>
struct VecOf<double, 2> {
  using T = double2;
  __device__ static double2 make(const double* e) { return make_double2(e[0], e[1]); }
};

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
inline constexpr unsigned long long kDtrsvUnpublished = ~0ull;
__device__ __forceinline__ unsigned long long dtrsv_poll(const unsigned long long* p) {
  unsigned long long v;
  do {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } while (v == kDtrsvUnpublished);
  return v;
}
__device__ __forceinline__ void dtrsv_publish(unsigned long long* p, double v) {
  const unsigned long long w =
      v != v ? 0x7ff8000000000000ull : static_cast<unsigned long long>(__double_as_longlong(v));
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
// The published x_i at p (waits for it) and publication, per element type.
__device__ __forceinline__ float wave_poll(const unsigned long long* p, float) {
  return __uint_as_float(unsigned(strsv_poll(p)));
}
__device__ __forceinline__ double wave_poll(const unsigned long long* p, double) {
  return __longlong_as_double(static_cast<long long>(dtrsv_poll(p)));
}
__device__ __forceinline__ void wave_publish(unsigned long long* p, float v) { strsv_publish(p, v); }
__device__ __forceinline__ void wave_publish(unsigned long long* p, double v) { dtrsv_publish(p, v); }

// In-place inverse of the lower-triangular NB x NB matrix in s (row stride LD). unit: the diagonal is
// taken as 1 and never read. tmp holds (NB/2)^2 elements.
template <class T, int NB, int THREADS, int LD>
__device__ void trsv_invert_lower(T* s, T* tmp, bool unit) {
  constexpr int WARPS = THREADS / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // 1. 32 x 32 diagonal blocks: lane c computes column c of the inverse by forward substitution.
  for (int b = warp; b < NB / 32; b += WARPS) {
    T* d = s + b * 32 * LD + b * 32;
    T x[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      T t = i == lane ? T(1) : T(0);
#pragma unroll
      for (int k = 0; k < i; ++k) t = bo_fma(-d[i * LD + k], x[k], t);
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
      T* x11 = s + o * LD + o;
      T* d21 = s + (o + h) * LD + o;
      T* x22 = s + (o + h) * LD + o + h;
      // T = D21 X11 (X11 lower: column c needs rows >= c).
      for (int e = threadIdx.x; e < h * h; e += THREADS) {
        const int r = e / h, c = e % h;
        T t = T(0);
        for (int k = c; k < h; ++k) t = bo_fma(d21[r * LD + k], x11[k * LD + c], t);
        tmp[r * h + c] = t;
      }
      __syncthreads();
      // X21 = -X22 T (X22 lower: row r needs columns <= r).
      for (int e = threadIdx.x; e < h * h; e += THREADS) {
        const int r = e / h, c = e % h;
        T t = T(0);
        for (int k = 0; k <= r; ++k) t = bo_fma(x22[r * LD + k], tmp[k * h + c], t);
        d21[r * LD + c] = -t;
      }
      __syncthreads();
    }
  }
}

// THREADS = 32 * WARPS. Tile (NB x NB) work split: non-transposed (A's contiguous direction = rows of L'):
// warp w takes NB/WARPS columns, lane takes RL = NB/32 consecutive rows (one vector load per column).
// Transposed (contiguous = columns of L'): warp w takes NB/WARPS rows, lane takes RL consecutive columns.
template <class T, int NB, int THREADS, bool TR, bool REV>
__global__ void __launch_bounds__(THREADS, 1)
    trsv_wave_kernel(int64_t n, const T* __restrict__ a, int64_t lda, int unit, T* x, int64_t incx,
                     unsigned long long* pub, int* ticket) {
  constexpr int WARPS = THREADS / 32, RL = NB / 32, PW = NB / WARPS;  // rows per lane, per-warp lines
  constexpr int LD = NB + 1;
  using VO = VecOf<T, RL>;
  using V = typename VO::T;
  static_assert(NB % WARPS == 0 && (RL == 2 || RL == 4) && PW <= 32, "strsv_wave shape");
  T* smem;  // dynamic shared memory, one declaration per element type (the float one as before templating)
  if constexpr (sizeof(T) == 4) {
    extern __shared__ float smem_f[];
    smem = smem_f;
  } else {
    extern __shared__ __align__(16) double smem_d[];
    smem = smem_d;
  }
  T* dinv = smem;              // NB x LD: the diagonal block, then its inverse D^-1
  T* mlast = dinv + NB * LD;   // NB x LD: M = D^-1 L'(rb, rb-1), the last tile premultiplied
  T* ltile = mlast + NB * LD;  // NB x LD: L'(rb, rb-1) while M is formed
  T* tmp = ltile + NB * LD;    // (NB/2)^2 during the inversion; reductions and small vectors after it
  __shared__ int rb_s;
  const StrsvAddr<NB, THREADS, TR, REV> ad{n, lda, incx};
  if (threadIdx.x == 0) rb_s = atomicAdd(ticket, 1);
  __syncthreads();
  const int64_t rb = rb_s, i0 = rb * NB;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // The right-hand side, now: only this CTA touches these elements, and the load is off the critical path.
  const T b_own = threadIdx.x < NB && i0 + threadIdx.x < n ? x[ad.x(i0 + threadIdx.x)] : T(0);

  // The diagonal block (scalar loads; off the critical path except for the first block).
  for (int e = threadIdx.x; e < NB * NB; e += THREADS) {
    const int li = TR ? e / NB : e % NB, lj = TR ? e % NB : e / NB;  // walk A's contiguous dimension
    const int64_t i = i0 + li, j = i0 + lj;
    T v = T(0);
    if (lj < li && i < n)
      v = __ldg(a + ad.a(i, j));
    else if (lj == li)
      v = (unit || i >= n) ? T(1) : __ldg(a + ad.a(i, i));
    dinv[li * LD + lj] = v;
  }
  __syncthreads();
  trsv_invert_lower<T, NB, THREADS, LD>(dinv, tmp, unit != 0);
  // Rows past n were set to the identity above, so their "inverse" entries are harmless.

  // The last off-diagonal tile, premultiplied: M = D^-1 L'(rb, rb-1). With it the step on the critical
  // path is x_rb = z - M x_(rb-1), where z = D^-1 (b - sum over the other tiles) is formed while the
  // previous block is still being solved: one matrix-vector product and two barriers per step.
  if (rb > 0) {
    const int64_t j0 = i0 - NB;
    for (int e = threadIdx.x; e < NB * NB; e += THREADS) {
      const int li = TR ? e / NB : e % NB, lj = TR ? e % NB : e / NB;  // walk A's contiguous dimension
      const int64_t i = i0 + li;
      ltile[li * LD + lj] = i < n ? __ldg(a + ad.a(i, j0 + lj)) : T(0);
    }
    __syncthreads();
    for (int e = threadIdx.x; e < NB * NB; e += THREADS) {
      const int r = e / NB, c = e % NB;  // a warp shares r: D^-1 row broadcast, L' row conflict-free
      T t = T(0);
      for (int k = 0; k <= r; ++k) t = bo_fma(dinv[r * LD + k], ltile[k * LD + c], t);
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
  auto load_tile = [&](int64_t cb, V(&t)[PW]) {
#pragma unroll
    for (int l = 0; l < PW; ++l) {
      const int64_t row = TR ? i0 + warp * PW + l : i0 + lane * RL;
      if (TR ? row < n : row + RL <= n) {
        t[l] = __ldg(vec_ptr(cb, l));
      } else {  // rows past n (last block only): scalar, guarded
        T e[4] = {T(0), T(0), T(0), T(0)};
        if (!TR)
#pragma unroll
          for (int q = 0; q < RL; ++q)
            if (row + q < n) e[q] = __ldg(a + ad.a(row + q, cb * NB + warp * PW + l));
        t[l] = VO::make(e);
      }
    }
  };
  auto comp = [](const V& v, int q) -> T { return vget(v, REV ? RL - 1 - q : q); };

  T acc[TR ? PW : RL];
#pragma unroll
  for (int r = 0; r < (TR ? PW : RL); ++r) acc[r] = T(0);
  const int64_t others = rb > 0 ? rb - 1 : 0;  // tiles before the last one
  V cur[PW], nxt[PW];
  if (others > 0) load_tile(0, cur);
  for (int64_t cb = 0; cb < others; ++cb) {
    if (cb + 1 < others) load_tile(cb + 1, nxt);
    const int64_t j0 = cb * NB;
    if (!TR) {
      // Lanes 0..PW-1 fetch the warp's PW values of x_cb, then broadcast them.
      T xv = T(0);
      if (lane < PW) xv = wave_poll(pub + j0 + warp * PW + lane, T());
#pragma unroll
      for (int l = 0; l < PW; ++l) {
        const T xl = __shfl_sync(0xffffffffu, xv, l);
#pragma unroll
        for (int q = 0; q < RL; ++q) acc[q] = bo_fma(comp(cur[l], q), xl, acc[q]);
      }
    } else {
      T xv[RL];
#pragma unroll
      for (int q = 0; q < RL; ++q) xv[q] = wave_poll(pub + j0 + lane * RL + q, T());
#pragma unroll
      for (int l = 0; l < PW; ++l)
#pragma unroll
        for (int q = 0; q < RL; ++q) acc[l] = bo_fma(comp(cur[l], q), xv[q], acc[l]);
    }
#pragma unroll
    for (int l = 0; l < PW; ++l) cur[l] = nxt[l];
  }

  // z = D^-1 (b - s), s = this block's sums over the other tiles (fixed order: per thread, then warps).
  constexpr int TPR = THREADS / NB > 0 ? THREADS / NB : 1;
  T* part = tmp;               // WARPS x NB (!TR) or NB (TR)
  T* rhs = part + WARPS * NB;  // NB
  T* zs = rhs + NB;            // NB
  T* xs = zs + NB;             // NB: x_(rb-1)
  T* part2 = xs + NB;          // TPR x NB
  if (!TR) {
#pragma unroll
    for (int q = 0; q < RL; ++q) part[warp * NB + lane * RL + q] = acc[q];
  } else {
#pragma unroll
    for (int l = 0; l < PW; ++l) {
      T v = acc[l];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) part[warp * PW + l] = v;
    }
  }
  __syncthreads();
  if (threadIdx.x < NB) {
    const int r = threadIdx.x;
    T sum = part[r];
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
    T y4[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
    for (int c = 0; c < NB / TPR; ++c)
      if (c0 + c <= r) y4[c & 3] = bo_fma(dinv[r * LD + c0 + c], rhs[c0 + c], y4[c & 3]);
    part2[g * NB + r] = (y4[0] + y4[1]) + (y4[2] + y4[3]);
  }
  __syncthreads();
  if (threadIdx.x < NB) {
    const int r = threadIdx.x;
    T z = part2[r];
#pragma unroll
    for (int g = 1; g < TPR; ++g) z += part2[g * NB + r];
    zs[r] = z;
    // The first block has no predecessor: z is its solution.
    if (rb == 0 && i0 + r < n) {
      wave_publish(pub + i0 + r, z);
      x[ad.x(i0 + r)] = z;
    }
  }
  if (rb == 0) return;

  // The critical step: wait for x_(rb-1), then x_rb = z - M x_(rb-1).
  if (threadIdx.x < NB) xs[threadIdx.x] = wave_poll(pub + i0 - NB + threadIdx.x, T());
  __syncthreads();
  for (int e = threadIdx.x; e < NB * TPR; e += THREADS) {
    const int r = e % NB, g = e / NB, c0 = g * (NB / TPR);
    T y4[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
    for (int c = 0; c < NB / TPR; ++c) y4[c & 3] = bo_fma(mlast[r * LD + c0 + c], xs[c0 + c], y4[c & 3]);
    part2[g * NB + r] = (y4[0] + y4[1]) + (y4[2] + y4[3]);
  }
  __syncthreads();
  if (threadIdx.x < NB) {
    const int r = threadIdx.x;
    T t = part2[r];
#pragma unroll
    for (int g = 1; g < TPR; ++g) t += part2[g * NB + r];
    const T y = zs[r] - t;
    if (i0 + r < n) {
      wave_publish(pub + i0 + r, y);
      x[ad.x(i0 + r)] = y;
    }
  }
}

template <class T, int NB, int THREADS>
struct TrsvWave {
  using Elem = T;
  static constexpr int kLD = NB + 1;
  // D^-1, M and the last tile, then the larger of the inversion's scratch and the vectors of a step.
  static constexpr size_t smem_bytes() {
    const size_t mats = 3 * size_t(NB) * kLD, t1 = size_t(NB / 2) * (NB / 2),
                 t2 = size_t(THREADS / 32) * NB + 3 * size_t(NB) + size_t(THREADS / NB > 0 ? THREADS / NB : 1) * NB;
    return sizeof(T) * (mats + (t1 > t2 ? t1 : t2));
  }
  // Register budget: two tiles of PW vectors of NB/32 elements per thread stay <= 128 32-bit registers.
  static constexpr bool valid() {
    return (NB == 64 || (NB == 128 && sizeof(T) == 4)) && THREADS % 32 == 0 && THREADS <= 1024 && THREADS >= NB &&
           NB % (THREADS / 32) == 0 && NB / (THREADS / 32) <= 32 &&
           2 * (NB / (THREADS / 32)) * (NB / 32) * int(sizeof(T) / 4) <= 128 && smem_bytes() <= 227 * 1024;
  }
  static_assert(valid(), "TrsvWave parameters");
  static std::string name() {
    return std::string(prec_letter<T>()) + "trsv_wave_" + std::to_string(NB) + "_" + std::to_string(THREADS);
  }
  static bool can_implement(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda) {
    const int rl = NB / 32;  // elements per vector
    const bool tr = trans != 'N', rev = (uplo == 'U') == (trans == 'N');
    // Vector loads along A's contiguous dimension: the column start, lda and (backward solves, which
    // address blocks from the end) n must keep every vector aligned.
    (void)tr;
    return (uplo == 'U' || uplo == 'L') && (trans == 'N' || trans == 'T' || trans == 'C') &&
           (diag == 'U' || diag == 'N') && n >= 1 && (reinterpret_cast<uintptr_t>(a) % (sizeof(T) * rl)) == 0 &&
           lda % rl == 0 && (!rev || n % rl == 0) && cdiv(n, NB) < (int64_t(1) << 31);
  }
  static size_t workspace(int64_t n) { return 256 + sizeof(unsigned long long) * size_t(n); }
  template <bool TR, bool REV>
  static cudaError_t go(int64_t n, const T* a, int64_t lda, int unit, T* x, int64_t incx, void* ws, cudaStream_t st) {
    static std::atomic<uint64_t> smem_allowed{0};  // per device (common.cuh)
    if (cudaError_t e = allow_dynamic_smem(trsv_wave_kernel<T, NB, THREADS, TR, REV>, int(smem_bytes()), smem_allowed))
      return e;
    int* ticket = static_cast<int*>(ws);
    auto* pub = reinterpret_cast<unsigned long long*>(static_cast<char*>(ws) + 256);
    trsv_wave_kernel<T, NB, THREADS, TR, REV>
        <<<unsigned(cdiv(n, NB)), THREADS, smem_bytes(), st>>>(n, a, lda, unit, x, incx, pub, ticket);
    return cudaGetLastError();
  }
  static cudaError_t launch(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx,
                            void* ws, cudaStream_t st) {
    if (n == 0) return cudaSuccess;
    // float: ticket and (tag, value) words all zero; double: ticket zero, the values the unpublished sentinel.
    cudaError_t e = sizeof(T) == 4 ? cudaMemsetAsync(ws, 0, workspace(n), st) : cudaMemsetAsync(ws, 0, 256, st);
    if (e == cudaSuccess && sizeof(T) == 8)
      e = cudaMemsetAsync(static_cast<char*>(ws) + 256, 0xff, workspace(n) - 256, st);
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
