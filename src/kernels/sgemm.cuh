// sgemm: register + shared-memory tiled template. Tuning parameters: block tile BM x BN, k-step BK,
// thread tile TM x TN, global-load vector width VEC (float4 loads where the address is 16-byte aligned
// and the vector lies inside the operand, scalar loads otherwise, so any lda/ldb/ldc and any tail
// works). Both operands may be transposed (template flags). Each C element is one thread's
// fixed-order FMA chain over k: deterministic. Error bound per element: |c - c_ref| <= (k + 2) * 2^-24 *
// (|alpha| sum_l |a_il||b_lj| + |beta||c_ij|). beta == 0 never reads C; alpha == 0 or k == 0 gives
// C = beta*C without reading A or B (as the reference BLAS).
#pragma once
#include "kernels/common.cuh"

namespace bok {

// One k-step of a thread's TM x TN outer product from shared memory: 16-byte fragment loads of its
// slices of the A row (as_k) and B row (bs_k), then the FMAs in a fixed order. Shared by both kernels so
// that they stay bitwise identical.
template <int TM, int TN>
__device__ __forceinline__ void sgemm_outer_product(float (&acc)[TM][TN], const float* as_k, const float* bs_k) {
  float af[TM], bf[TN];
#pragma unroll
  for (int i = 0; i < TM; i += 4) {
    const float4 q = *reinterpret_cast<const float4*>(as_k + i);
    af[i] = q.x;
    af[i + 1] = q.y;
    af[i + 2] = q.z;
    af[i + 3] = q.w;
  }
#pragma unroll
  for (int j = 0; j < TN; j += 4) {
    const float4 q = *reinterpret_cast<const float4*>(bs_k + j);
    bf[j] = q.x;
    bf[j + 1] = q.y;
    bf[j + 2] = q.z;
    bf[j + 3] = q.w;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
}

// Loads the ROWS x COLS tile of a column-major operand whose contiguous dimension is ROWS, starting at
// (r0, c0), into smem laid out as dst(row, col) = either s[col][row] (KMAJOR_ROWS=false) or s[row][col].
template <int ROWS, int COLS, int VEC, int THREADS, bool DST_ROW_IS_K, int LD_S>
__device__ inline void sgemm_load(float* __restrict__ s, const float* __restrict__ p, int64_t ld, int64_t nrows,
                                  int64_t ncols, int64_t r0, int64_t c0) {
  constexpr int NV = ROWS * COLS / VEC;
  static_assert(NV % THREADS == 0 && ROWS % VEC == 0, "sgemm load shape");
#pragma unroll
  for (int t = 0; t < NV / THREADS; ++t) {
    const int idx = t * THREADS + threadIdx.x;
    const int rv = idx % (ROWS / VEC), cc = idx / (ROWS / VEC);
    const int64_t r = r0 + rv * VEC, c = c0 + cc;
    const float* src = p + r + c * ld;
    float v[VEC];
    if (VEC == 4 && c < ncols && r + VEC <= nrows && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
      const float4 q = __ldg(reinterpret_cast<const float4*>(src));
      v[0] = q.x;
      v[1 % VEC] = q.y;
      v[2 % VEC] = q.z;
      v[3 % VEC] = q.w;
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e) v[e] = (c < ncols && r + e < nrows) ? __ldg(src + e) : 0.0f;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      // Tile coordinates: row index (contiguous) rv*VEC+e, column cc.
      if (DST_ROW_IS_K)
        s[(rv * VEC + e) * LD_S + cc] = v[e];  // contiguous dimension is k
      else
        s[cc * LD_S + rv * VEC + e] = v[e];  // contiguous dimension is m (or n)
    }
  }
}

// Two-phase form of sgemm_load for the pipelined kernel: fetch() issues the global loads into
// registers (so they are in flight while the previous tile is multiplied), put() stores them to smem.
template <int ROWS, int COLS, int VEC, int THREADS, bool DST_ROW_IS_K, int LD_S>
struct SgemmLoader {
  static constexpr int NV = ROWS * COLS / VEC;
  static_assert(NV % THREADS == 0 && ROWS % VEC == 0, "sgemm load shape");
  float v[NV / THREADS][VEC];
  __device__ void fetch(const float* __restrict__ p, int64_t ld, int64_t nrows, int64_t ncols, int64_t r0,
                        int64_t c0) {
#pragma unroll
    for (int t = 0; t < NV / THREADS; ++t) {
      const int idx = t * THREADS + threadIdx.x;
      const int rv = idx % (ROWS / VEC), cc = idx / (ROWS / VEC);
      const int64_t r = r0 + rv * VEC, c = c0 + cc;
      const float* src = p + r + c * ld;
      if (VEC == 4 && c < ncols && r + VEC <= nrows && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(src));
        v[t][0] = q.x;
        v[t][1 % VEC] = q.y;
        v[t][2 % VEC] = q.z;
        v[t][3 % VEC] = q.w;
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[t][e] = (c < ncols && r + e < nrows) ? __ldg(src + e) : 0.0f;
      }
    }
  }
  __device__ void put(float* __restrict__ s) const {
#pragma unroll
    for (int t = 0; t < NV / THREADS; ++t) {
      const int idx = t * THREADS + threadIdx.x;
      const int rv = idx % (ROWS / VEC), cc = idx / (ROWS / VEC);
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        if (DST_ROW_IS_K)
          s[(rv * VEC + e) * LD_S + cc] = v[t][e];
        else
          s[cc * LD_S + rv * VEC + e] = v[t][e];
      }
    }
  }
};

// The same tile computation, software-pipelined: two shared-memory stages, next tile's global loads
// in registers during the current tile's FMAs, one barrier per k-step. Same per-element FMA order as
// sgemm_kernel (bitwise identical results).
template <int BM, int BN, int BK, int TM, int TN, int VEC, bool TA, bool TB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2)
    sgemm_pipelined_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ a, int64_t lda,
                           const float* __restrict__ b, int64_t ldb, float beta, float* __restrict__ c, int64_t ldc) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int LDA_S = BM + 4, LDB_S = BN + 4;
  constexpr int VK = VEC <= BK ? VEC : 1;
  __shared__ __align__(16) float as[2][BK * LDA_S];
  __shared__ __align__(16) float bs[2][BK * LDB_S];
  const int64_t m0 = int64_t(blockIdx.x) * BM, n0 = int64_t(blockIdx.y) * BN;
  const int tr = threadIdx.x % (BM / TM), tc = threadIdx.x / (BM / TM);
  using LA = SgemmLoader<(TA ? BK : BM), (TA ? BM : BK), (TA ? VK : VEC), THREADS, TA, LDA_S>;
  using LB = SgemmLoader<(TB ? BN : BK), (TB ? BK : BN), (TB ? VEC : VK), THREADS, !TB, LDB_S>;
  LA la;
  LB lb;
  auto fetch = [&](int64_t k0) {
    if (!TA)
      la.fetch(a, lda, m, k, m0, k0);
    else
      la.fetch(a, lda, k, m, k0, m0);
    if (!TB)
      lb.fetch(b, ldb, k, n, k0, n0);
    else
      lb.fetch(b, ldb, n, k, n0, k0);
  };
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  fetch(0);
  la.put(as[0]);
  lb.put(bs[0]);
  __syncthreads();
  int cur = 0;
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    const bool more = k0 + BK < k;
    if (more) fetch(k0 + BK);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      sgemm_outer_product<TM, TN>(acc, &as[cur][kk * LDA_S + tr * TM], &bs[cur][kk * LDB_S + tc * TN]);
    }
    if (more) {
      la.put(as[cur ^ 1]);
      lb.put(bs[cur ^ 1]);
    }
    __syncthreads();
    cur ^= 1;
  }
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int64_t col = n0 + tc * TN + j;
    if (col >= n) continue;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t row = m0 + tr * TM + i;
      if (row < m) {
        float* p = c + row + col * ldc;
        *p = beta == 0.0f ? alpha * acc[i][j] : fmaf(beta, *p, alpha * acc[i][j]);
      }
    }
  }
}

template <int BM, int BN, int BK, int TM, int TN, int VEC, bool TA, bool TB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* __restrict__ a, int64_t lda,
                 const float* __restrict__ b, int64_t ldb, float beta, float* __restrict__ c, int64_t ldc) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int LDA_S = BM + 4, LDB_S = BN + 4;
  __shared__ __align__(16) float as[BK * LDA_S];  // as[kk][i]
  __shared__ __align__(16) float bs[BK * LDB_S];  // bs[kk][j]
  const int64_t m0 = int64_t(blockIdx.x) * BM, n0 = int64_t(blockIdx.y) * BN;
  const int tr = threadIdx.x % (BM / TM), tc = threadIdx.x / (BM / TM);
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    // op(A) tile BM x BK into as[kk][i].
    if (!TA)  // A is m x k, contiguous along i
      sgemm_load<BM, BK, VEC, THREADS, false, LDA_S>(as, a, lda, m, k, m0, k0);
    else  // A is k x m, contiguous along kk
      sgemm_load<BK, BM, (VEC <= BK ? VEC : 1), THREADS, true, LDA_S>(as, a, lda, k, m, k0, m0);
    // op(B) tile BK x BN into bs[kk][j].
    if (!TB)  // B is k x n, contiguous along kk
      sgemm_load<BK, BN, (VEC <= BK ? VEC : 1), THREADS, true, LDB_S>(bs, b, ldb, k, n, k0, n0);
    else  // B is n x k, contiguous along j
      sgemm_load<BN, BK, VEC, THREADS, false, LDB_S>(bs, b, ldb, n, k, n0, k0);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      sgemm_outer_product<TM, TN>(acc, &as[kk * LDA_S + tr * TM], &bs[kk * LDB_S + tc * TN]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int64_t col = n0 + tc * TN + j;
    if (col >= n) continue;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t row = m0 + tr * TM + i;
      if (row < m) {
        float* p = c + row + col * ldc;
        *p = beta == 0.0f ? alpha * acc[i][j] : fmaf(beta, *p, alpha * acc[i][j]);
      }
    }
  }
}

template <int BM, int BN, int BK, int TM, int TN, int VEC, bool TA, bool TB, int STAGES = 1>
struct Sgemm {
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tile multiple of 4");
  static std::string name() {
    return "sgemm_" + std::to_string(BM) + "x" + std::to_string(BN) + "_" + std::to_string(BK) + "_" +
           std::to_string(TM) + "x" + std::to_string(TN) + "_v" + std::to_string(VEC) + (STAGES == 2 ? "_p2" : "") +
           "_" + (TA ? "t" : "n") + (TB ? "t" : "n");
  }
  static bool can_implement(char ta, char tb, int64_t m, int64_t n, int64_t k) {
    return ((ta != 'N') == TA) && ((tb != 'N') == TB) && m >= 0 && n >= 0 && k >= 0 &&
           (m + BM - 1) / BM < 2147483647 && (n + BN - 1) / BN < 65535;
  }
  static cudaError_t launch(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                            const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t st) {
    if (m == 0 || n == 0) return cudaSuccess;
    if (alpha == 0.0f || k == 0) return scale_matrix(m, n, beta, c, ldc, st);
    dim3 grid(unsigned(cdiv(m, BM)), unsigned(cdiv(n, BN)));
    if constexpr (STAGES == 2)
      sgemm_pipelined_kernel<BM, BN, BK, TM, TN, VEC, TA, TB>
          <<<grid, (BM / TM) * (BN / TN), 0, st>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else
      sgemm_kernel<BM, BN, BK, TM, TN, VEC, TA, TB>
          <<<grid, (BM / TM) * (BN / TN), 0, st>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return cudaGetLastError();
  }
};

}  // namespace bok
