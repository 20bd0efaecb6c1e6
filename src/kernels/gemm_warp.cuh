// sgemm / dgemm for sm_80+ (tuned for the H100): a warp-tiled SIMT template on the element type T (FP32 or FP64
// arithmetic, no tensor cores) fed by a cp.async multistage pipeline. The layout notes below are in float terms; for
// double a 16-byte vector holds 2 elements (fragments, copies and epilogue stores are double2) and the transposing
// copies move 8 bytes.
//
// Semantics are those of Gemm (gemm.cuh): column-major C = alpha*op(A)*op(B) + beta*C, any m, n, k (tails are
// zero-filled in shared memory), beta == 0 never reads C, alpha == 0 or k == 0 gives C = beta*C without reading A
// or B, m == 0 or n == 0 does nothing. The arithmetic per element is also Gemm's: acc = 0; acc = fma(a_il, b_lj,
// acc) for l = 0, 1, ..., k-1 (the zero-filled k tail adds exact zeros); c = alpha*acc or fma(beta, c, alpha*acc).
// One thread owns each C element, so results are bitwise reproducible and equal to Gemm's. Error bound per
// element: |c - c_ref| <= (k + 2) * u * (|alpha| sum_l |a_il||b_lj| + |beta||c_ij|), u = 2^-24 (float), 2^-53 (double).
//
// Layout choices (each aimed at a conflict-free shared-memory access pattern):
//  * Both operands live in shared memory k-major (as[k][m], bs[k][n]) so that a thread's fragments are float4 reads.
//  * An operand that is contiguous along m (A, "N") or n (B, "T") is copied global -> shared with 16-byte cp.async.cg
//    in its own order; this needs a 16-byte aligned pointer and leading dimension (can_implement checks it).
//  * An operand that is contiguous along k (A, "T"; B, "N") is transposed on the way in with 4-byte cp.async.ca: the
//    8 lanes of a quarter warp read 32 consecutive bytes of one column (one sector) and a warp covers 4 columns; the
//    shared row pitch is 4 (mod 32) floats, so the 32 lanes write 32 distinct banks. No register staging, so this
//    operand gets the same STAGES-deep pipeline, and no alignment requirement beyond 4 bytes.
//  * Warp tiling: a warp computes WM x WN as a (WM/TM) x (WN/TN) grid of lanes; each quarter warp (8 lanes) is a
//    2 (m) x 4 (n) patch of that grid. A thread's TM rows are TM/4 float4 fragments spaced 4*WM/TM apart (likewise
//    for TN), so a warp's fragment read touches consecutive float4s of one shared row: no bank conflicts, and the
//    lanes that share a fragment get it by broadcast (2 shared wavefronts per LDS.128 measured on the H100).
//  * The epilogue writes C straight from registers: each column of a fragment is 4 contiguous rows, stored as one
//    float4 where C is 16-byte aligned, and 8 lanes cover 128 contiguous bytes of a column.
//  * For small k (rank-k updates, where moving C dominates) each block asks L2 to prefetch its C tile before the main
//    loop, so the beta*C read overlaps the FMAs instead of following them.
//  * Blocks are visited in groups of kGroupM tiles along m so that the blocks resident at one time share A and B panels
//    in L2.
#pragma once
#include <atomic>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/common.cuh"

namespace bok {
namespace gemm_warp_detail {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// src_bytes < 16 zero-fills the rest of the 16 destination bytes (0 reads nothing).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// One element: 4 bytes (float) or 8 (double).
__device__ __forceinline__ void cp_async_elem(uint32_t dst, const float* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_elem(uint32_t dst, const double* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p)); }

constexpr int safe_div(int a, int b) { return b > 0 ? a / b : 0; }

// Row pitch (elements) of a k-major shared tile of BX columns. A transposed tile needs pitch = 4 (mod 32) for the
// conflict-free 8 (k) x 4 (columns) lane pattern of LoadKContig; a tile copied in order needs no padding.
constexpr int smem_ld(int bx, bool kcontig) { return kcontig ? bx + (36 - bx % 32) % 32 : bx; }

// Tile of an operand contiguous along x (m or n): BK rows of BX floats, one 16-byte copy per 4 floats, landing in
// the same order in shared memory. Element (x, l) of the operand is base[x + l * ld].
template <class T, int BX, int BK, int THREADS>
struct LoadXContig {
  static constexpr int kVN = kVecN<T>, kES = int(sizeof(T));
  static constexpr int kVx = BX / kVN;  // 16-byte vectors per k-row
  static constexpr int kRowsPerPass = safe_div(THREADS, kVx);
  static constexpr int kCopies = safe_div(BK, kRowsPerPass);
  static constexpr int kLd = smem_ld(BX, false);
  static constexpr bool ok() {
    return BX % kVN == 0 && kVx > 0 && kVx <= THREADS && THREADS % kVx == 0 && BK % kRowsPerPass == 0;
  }

  const T* p;     // this thread's first copy in the next tile
  uint32_t s;     // this thread's first destination in stage 0
  int l0, bytes;  // first k-row; bytes inside the operand of this thread's vector (l0 is huge when 0)

  __device__ __forceinline__ void init(const T* base, int64_t ld, int64_t xdim, int64_t x0, uint32_t s0, int tid) {
    const int iv = tid % kVx;
    const int64_t x = x0 + iv * kVN, rem = xdim - x;
    l0 = tid / kVx;
    bytes = rem >= kVN ? 16 : rem > 0 ? int(rem) * kES : 0;
    p = base + x + l0 * ld;
    s = s0 + (l0 * kLd + iv * kVN) * kES;
    if (bytes == 0) l0 = 1 << 30;
  }
  // Copies the next tile into stage byte offset so; kr = its number of k indices inside the operand (1..BK). base
  // and ld are passed in rather than kept so that the compiler may re-read them from the kernel parameters.
  __device__ __forceinline__ void load(uint32_t so, const T* base, int64_t ld, int kr) {
    const int64_t rstep = kRowsPerPass * ld;
    const T* q = p;
#pragma unroll
    for (int t = 0; t < kCopies; ++t, q += rstep) {
      const bool v = l0 + t * kRowsPerPass < kr;
      // Out-of-range copies read nothing but still get a valid address.
      cp_async16(s + so + t * kRowsPerPass * kLd * kES, v ? q : base, v ? bytes : 0);
    }
    p += kCopies * rstep;  // BK k-rows
  }
};

// Tile of an operand contiguous along k: BX columns of BK elements, transposed into a k-major shared tile with
// one-element (4- or 8-byte) copies. Lanes: kq = lane % 8 along k (32 contiguous bytes of a column), lane / 8 picks one
// of 4 columns; warp w takes k-group w % (BK/8) and column group w / (BK/8); further copies step kColsPerPass columns.
// Element (x, l) of the operand is base[l + x * ld].
template <class T, int BX, int BK, int THREADS>
struct LoadKContig {
  static constexpr int kES = int(sizeof(T));
  static constexpr int kWarps = THREADS / 32;
  static constexpr int kKGroups = BK / 8;
  static constexpr int kColsPerPass = safe_div(4 * kWarps, kKGroups);
  static constexpr int kCopies = safe_div(BX, kColsPerPass);
  static constexpr int kLd = smem_ld(BX, true);
  static constexpr bool ok() {
    return BK % 8 == 0 && kKGroups > 0 && kWarps % kKGroups == 0 && kColsPerPass > 0 && BX % kColsPerPass == 0 &&
           kCopies <= 32;
  }

  const T* p;      // this thread's first copy in the next tile
  uint32_t s;      // this thread's first destination in stage 0
  uint32_t xmask;  // bit t: copy t's column lies inside the operand
  int kl;

  __device__ __forceinline__ void init(const T* base, int64_t ld, int64_t xdim, int64_t x0, uint32_t s0, int tid) {
    const int w = tid / 32;
    kl = (w % kKGroups) * 8 + tid % 8;
    const int j0 = (w / kKGroups) * 4 + (tid / 8) % 4;
    xmask = 0;
#pragma unroll
    for (int t = 0; t < kCopies; ++t)
      if (x0 + j0 + t * kColsPerPass < xdim) xmask |= 1u << t;
    p = base + kl + (x0 + j0) * ld;
    s = s0 + (kl * kLd + j0) * kES;
  }
  __device__ __forceinline__ void load(uint32_t so, const T* base, int64_t ld, int kr) {
    const int64_t cstep = kColsPerPass * ld;
    const uint32_t mask = kl < kr ? xmask : 0u;
    const T* q = p;
#pragma unroll
    for (int t = 0; t < kCopies; ++t, q += cstep) {
      const bool v = (mask >> t) & 1u;
      cp_async_elem(s + so + t * kColsPerPass * kES, v ? q : base, v ? kES : 0);
    }
    p += BK;
  }
};

template <class T, int BX, int BK, int THREADS, bool KCONTIG>
using Loader = std::conditional_t<KCONTIG, LoadKContig<T, BX, BK, THREADS>, LoadXContig<T, BX, BK, THREADS>>;

// Derived constants of one configuration; kept out of GemmWarp so that GemmWarp<...>::valid() can be asked of
// any parameter set without instantiating anything ill-formed.
template <class T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool TA, bool TB>
struct Traits {
  using Elem = T;
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN, kStages = STAGES;
  static constexpr int kVN = kVecN<T>;  // elements per 16-byte fragment
  static constexpr int kWarps = safe_div(BM, WM) * safe_div(BN, WN);
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kLanesM = safe_div(WM, TM);  // lanes along m in a warp
  static constexpr int kLanesN = safe_div(WN, TN);
  static constexpr int kFragStepM = kVN * kLanesM;  // distance between a thread's 16-byte fragments along m
  static constexpr int kFragStepN = kVN * kLanesN;
  // Quarter-warp patch of 2 (m) x 4 (n) lanes where the lane grid allows: measured on the H100 (ncu, 256x128 NN),
  // LDS.128 fragment reads then cost 2 shared wavefronts each, against 4 (A) and 2 (B) with 8 x 1 patches; 128x128
  // t8x8 gained ~2%. (kLanesM * kLanesN == 32, both powers of two, so the patch always tiles the grid.)
  static constexpr int kQuarterM = kLanesN >= 4 ? (kLanesM < 2 ? kLanesM : 2) : safe_div(8, kLanesN);
  using LoaderA = Loader<T, BM, BK, kThreads, TA>;
  using LoaderB = Loader<T, BN, BK, kThreads, !TB>;
  static constexpr int kLda = LoaderA::kLd, kLdb = LoaderB::kLd;
  static constexpr int kStageA = BK * kLda, kStageB = BK * kLdb;  // elements per stage
  static constexpr int kSmemBytes = STAGES * (kStageA + kStageB) * int(sizeof(T));
  // Blocks per SM for __launch_bounds__: what a register estimate (accumulators, two sets of fragments, ~32 for
  // addresses and loop state) allows, capped by shared memory and the 2048-thread limit.
  static constexpr int kRegEstimate = (TM * TN + 2 * (TM + TN)) * int(sizeof(T) / 4) + 32;
  static constexpr int kByRegs = safe_div(65536, kThreads* kRegEstimate);
  static constexpr int kBySmem = safe_div(227 * 1024, kSmemBytes + 1024);
  static constexpr int kByThreads = safe_div(2048, kThreads);
  static constexpr int kMinBlocks0 = kByRegs < kBySmem ? kByRegs : kBySmem;
  static constexpr int kMinBlocks1 = kMinBlocks0 < kByThreads ? kMinBlocks0 : kByThreads;
  static constexpr int kMinBlocks = kMinBlocks1 > 0 ? kMinBlocks1 : 1;
  // Block-order grouping along m (L2 reuse; measured +12% for 64x64 at n = 8192 on the H200).
  static constexpr int kGroupM = 16;
  // Prefetch C into L2 only when the main loop is short (m = n = 16384, k = 64 on the H200: +20% for 128x128).
  static constexpr int64_t kPrefetchMaxK = 1024;
};

// The constraints on the parameters, independent of the transposes (every valid family compiles for all four).
template <class T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
constexpr bool valid_params() {
  constexpr int kVN = kVecN<T>, kES = int(sizeof(T));
  if (BM <= 0 || BN <= 0 || BK <= 0 || WM <= 0 || WN <= 0 || TM <= 0 || TN <= 0) return false;
  if (BM % WM != 0 || BN % WN != 0 || WM % TM != 0 || WN % TN != 0) return false;
  if (TM % kVN != 0 || TN % kVN != 0 || TM * TN * (kES / 4) > 128) return false;  // 16-byte fragments; registers
  if ((WM / TM) * (WN / TN) != 32) return false;  // one warp covers its warp tile exactly
  if (STAGES < 2 || STAGES > 8) return false;
  constexpr int kThreads = 32 * safe_div(BM, WM) * safe_div(BN, WN);
  if (kThreads > 1024) return false;
  if (!LoadXContig<T, BM, BK, kThreads>::ok() || !LoadKContig<T, BM, BK, kThreads>::ok()) return false;
  if (!LoadXContig<T, BN, BK, kThreads>::ok() || !LoadKContig<T, BN, BK, kThreads>::ok()) return false;
  const int smem = STAGES * BK * (smem_ld(BM, true) + smem_ld(BN, true)) * kES;  // the larger (padded) layout
  return smem <= 227 * 1024;
}

template <class P>
__global__ void __launch_bounds__(P::kThreads, P::kMinBlocks)
    gemm_warp_kernel(int64_t m, int64_t n, int64_t k, typename P::Elem alpha, const typename P::Elem* __restrict__ a,
                     int64_t lda, const typename P::Elem* __restrict__ b, int64_t ldb, typename P::Elem beta,
                     typename P::Elem* __restrict__ c, int64_t ldc) {
  using T = typename P::Elem;
  using V = vec16_t<T>;
  constexpr int BM = P::kBM, BN = P::kBN, BK = P::kBK, WM = P::kWM, WN = P::kWN, TM = P::kTM, TN = P::kTN;
  constexpr int STAGES = P::kStages, THREADS = P::kThreads, VN = P::kVN, ES = int(sizeof(T));
  constexpr int LDA = P::kLda, LDB = P::kLdb;
  T* smem;  // dynamic shared memory, one declaration per element type (the float one as before templating)
  if constexpr (sizeof(T) == 4) {
    extern __shared__ __align__(16) float smem_f[];
    smem = smem_f;
  } else {
    extern __shared__ __align__(16) double smem_d[];
    smem = smem_d;
  }
  T* const as = smem;
  T* const bs = smem + STAGES * P::kStageA;

  // Grouped block order: consecutive block ids walk kGroupM m-tiles down, then the next n-tile.
  int64_t tile_m, tile_n;
  {
    const int64_t gx = gridDim.x, gy = gridDim.y, pid = int64_t(blockIdx.y) * gx + blockIdx.x;
    const int64_t in_group = int64_t(P::kGroupM) * gy, first_m = pid / in_group * P::kGroupM;
    const int64_t gsize = gx - first_m < P::kGroupM ? gx - first_m : P::kGroupM;
    tile_m = first_m + (pid % in_group) % gsize;
    tile_n = (pid % in_group) / gsize;
  }
  const int64_t m0 = tile_m * BM, n0 = tile_n * BN;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

  if (beta != T(0) && k <= P::kPrefetchMaxK) {
    constexpr int kPer = 128 / ES, kSegs = (BM + kPer - 1) / kPer;  // 128-byte pieces of one column of the C tile
    for (int i = tid; i < BN * kSegs; i += THREADS) {
      const int64_t col = n0 + i / kSegs, row = m0 + (i % kSegs) * kPer;
      if (col < n && row < m) prefetch_l2(c + row + col * ldc);
    }
  }

  typename P::LoaderA la;
  typename P::LoaderB lb;
  la.init(a, lda, m, m0, smem_u32(as), tid);
  lb.init(b, ldb, n, n0, smem_u32(bs), tid);

  // kleft: k minus the first k index of the tile being loaded.
  int64_t kleft = k;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (kleft > 0) {
      const int kr = kleft < BK ? int(kleft) : BK;
      la.load(s * P::kStageA * ES, a, lda, kr);
      lb.load(s * P::kStageB * ES, b, ldb, kr);
    }
    kleft -= BK;
    cp_async_commit();  // empty groups keep the wait count below uniform
  }

  const int wm = warp % (BM / WM), wn = warp / (BM / WM);
  // Lane (lr, lc) of the warp's kLanesM x kLanesN grid; quarter warp qw is a QM x QN patch of it.
  constexpr int QM = P::kQuarterM, QN = 8 / QM;
  const int p8 = lane % 8, qw = lane / 8;
  const int lr = (qw % (P::kLanesM / QM)) * QM + p8 % QM, lc = (qw / (P::kLanesM / QM)) * QN + p8 / QM;
  const int a_off = wm * WM + lr * VN, b_off = wn * WN + lc * VN;

  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

  // Tile kt is computed while tiles kt+1 .. kt+STAGES-1 are in flight; kleft runs STAGES-1 tiles ahead, so the
  // last tile is computed when kleft > -(STAGES-1)*BK no longer holds. Stage rd is read, stage wr = rd-1 written.
  int rd = 0;
  for (; kleft > -(STAGES - 1) * BK; kleft -= BK) {
    const int wr = rd == 0 ? STAGES - 1 : rd - 1;
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt have landed ...
    __syncthreads();              // ... everyone's have, and everyone is done with tile kt-1 (stage wr)
    if (kleft > 0) {
      const int kr = kleft < BK ? int(kleft) : BK;
      la.load(wr * P::kStageA * ES, a, lda, kr);
      lb.load(wr * P::kStageB * ES, b, ldb, kr);
    }
    cp_async_commit();

    const T* ak = as + rd * P::kStageA + a_off;
    const T* bk = bs + rd * P::kStageB + b_off;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T af[TM], bf[TN];
#pragma unroll
      for (int f = 0; f < TM / VN; ++f) {
        const V q = *reinterpret_cast<const V*>(ak + kk * LDA + f * P::kFragStepM);
#pragma unroll
        for (int e = 0; e < VN; ++e) af[VN * f + e] = vget(q, e);
      }
#pragma unroll
      for (int f = 0; f < TN / VN; ++f) {
        const V q = *reinterpret_cast<const V*>(bk + kk * LDB + f * P::kFragStepN);
#pragma unroll
        for (int e = 0; e < VN; ++e) bf[VN * f + e] = vget(q, e);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = bo_fma(af[i], bf[j], acc[i][j]);
    }
    rd = rd + 1 == STAGES ? 0 : rd + 1;
  }
  cp_async_wait<0>();  // only empty groups can be outstanding; leave nothing in flight at exit

  // Epilogue. acc[i][j] is C(row, col) with row = m0 + a_off + (i/VN)*kFragStepM + i%VN, likewise col. Bounds are
  // checked against this thread's remaining rows/columns, clipped to int (the tile offsets are far smaller).
  const int64_t row0 = m0 + a_off, col0 = n0 + b_off;
  const int mr = int(m - row0 < (1 << 30) ? m - row0 : (1 << 30));
  const int nr = int(n - col0 < (1 << 30) ? n - col0 : (1 << 30));
  T* const cb = c + row0 + col0 * ldc;
  const bool vec = (reinterpret_cast<uintptr_t>(c) & 15) == 0 && ldc % VN == 0;
  const bool read_c = beta != T(0);
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int cj = (j / VN) * P::kFragStepN + j % VN;
    if (cj >= nr) continue;
    T* const pc = cb + cj * ldc;
#pragma unroll
    for (int f = 0; f < TM / VN; ++f) {
      const int ri = f * P::kFragStepM;
      T v[VN];
#pragma unroll
      for (int e = 0; e < VN; ++e) v[e] = alpha * acc[VN * f + e][j];
      if (vec && ri + VN <= mr) {
        V* const dst = reinterpret_cast<V*>(pc + ri);
        if (read_c) {
          const V o = *dst;
#pragma unroll
          for (int e = 0; e < VN; ++e) v[e] = bo_fma(beta, vget(o, e), v[e]);
        }
        *dst = vmake(v);
      } else {
#pragma unroll
        for (int e = 0; e < VN; ++e) {
          if (ri + e < mr) {
            T* const dst = pc + ri + e;
            *dst = read_c ? bo_fma(beta, *dst, v[e]) : v[e];
          }
        }
      }
    }
  }
}

}  // namespace gemm_warp_detail

template <class T, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool TA, bool TB>
struct GemmWarp {
  using Elem = T;
  static constexpr bool valid() { return gemm_warp_detail::valid_params<T, BM, BN, BK, WM, WN, TM, TN, STAGES>(); }

  static std::string family() {
    auto s = [](int v) { return std::to_string(v); };
    return std::string(prec_letter<T>()) + "gemm_wt_" + s(BM) + "x" + s(BN) + "x" + s(BK) + "_w" + s(WM) + "x" + s(WN) +
           "_t" + s(TM) + "x" + s(TN) + "_s" + s(STAGES);
  }
  static std::string name() { return family() + "_" + (TA ? "t" : "n") + (TB ? "t" : "n"); }

  // An operand copied with 16-byte cp.async (A not transposed, B transposed) needs a 16-byte aligned pointer and a
  // leading dimension that is a multiple of the vector width; nothing is read when m, n or k is 0.
  static bool can_implement(char ta, char tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                            int64_t ldb, const T* /*c*/, int64_t /*ldc*/) {
    if (((ta != 'N') != TA) || ((tb != 'N') != TB) || m < 0 || n < 0 || k < 0) return false;
    if (cdiv(m, BM) >= 2147483647 || cdiv(n, BN) >= 65535) return false;
    if (m == 0 || n == 0 || k == 0) return true;
    auto aligned = [](const T* p, int64_t ld) {
      return (reinterpret_cast<uintptr_t>(p) & 15) == 0 && ld % kVecN<T> == 0;
    };
    if (!TA && !aligned(a, lda)) return false;
    if (TB && !aligned(b, ldb)) return false;
    return true;
  }

  static cudaError_t launch(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                            T beta, T* c, int64_t ldc, cudaStream_t st) {
    static_assert(valid(), "GemmWarp: invalid parameters (see gemm_warp_detail::valid_params)");
    if (m == 0 || n == 0) return cudaSuccess;
    if (alpha == T(0) || k == 0) return scale_matrix(m, n, beta, c, ldc, st);
    if (cudaError_t e = allow_smem(); e != cudaSuccess) return e;
    const dim3 grid(unsigned(cdiv(m, BM)), unsigned(cdiv(n, BN)));
    gemm_warp_detail::gemm_warp_kernel<P>
        <<<grid, P::kThreads, P::kSmemBytes, st>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return cudaGetLastError();
  }

 private:
  using P = gemm_warp_detail::Traits<T, BM, BN, BK, WM, WN, TM, TN, STAGES, TA, TB>;

  // Above 48 KB of dynamic shared memory a kernel must opt in, once per device (common.cuh).
  static cudaError_t allow_smem() {
    static std::atomic<uint64_t> done{0};
    return allow_dynamic_smem(gemm_warp_detail::gemm_warp_kernel<P>, int(P::kSmemBytes), done);
  }
};

// Instantiation-ready families (each valid for all four transposes; 256 threads unless noted). Measured on the H100
// SXM, NN, TF/s at n = 2048 / 4096 / 8192 square (beta = 0) | m = n = 16384, k = 64 / 256 (beta = 1); cuBLAS FP32:
// 50.0 / 51.6 / 51.7 | 28.8 / 40.4 (the old sgemm_128x128_8_8x8_v4_p2: 35.0 / 37.2 / 37.9 | 12.2 / 31.0).
//   256x128x16 w64x64 t8x16 s3               47.7 / 49.2 / 49.7 | 21.0 / 35.8   large square (NT 0.96-0.98x cuBLAS)
//   128x256x16 w64x64 t8x16 s3               45.5 / 46.5 / 46.8 | 20.2 / 34.5   large square, TT (0.96-0.98x)
//   128x128x16 w64x32 t8x8  s3               45.2 / 46.2 / 46.6 | 29.3 / 43.2   rank-k updates, mid sizes
//   128x128x8  w64x32 t8x8  s4               43.5 / 44.6 / 45.0 | 29.3 / 42.2
//   128x64x16  w64x32 t8x8  s3, 128 threads  43.4 / 44.7 / 45.8 | 30.4 / 43.6   n = 3000 (0.97x), rank-k updates
//   64x64x16   w32x32 t4x8  s3, 128 threads  38.1 / 39.2 / 40.2 | 30.5 / 38.0   small problems (n = 1024: 0.96x)
// TN (both operands through the 4-byte path) is slower: 0.86-0.89x cuBLAS at n >= 2048 for the large families.
template <bool TA, bool TB>
using SgemmWarpConfigs = std::tuple<
    GemmWarp<float, 256, 128, 16, 64, 64, 8, 16, 3, TA, TB>, GemmWarp<float, 128, 256, 16, 64, 64, 8, 16, 3, TA, TB>,
    GemmWarp<float, 128, 128, 16, 64, 32, 8, 8, 3, TA, TB>, GemmWarp<float, 128, 128, 8, 64, 32, 8, 8, 4, TA, TB>,
    GemmWarp<float, 128, 64, 16, 64, 32, 8, 8, 3, TA, TB>, GemmWarp<float, 64, 64, 16, 32, 32, 4, 8, 3, TA, TB>>;

}  // namespace bok
