// sgemm / dgemm (templated on the element type T): register + shared-memory tiled template. Tuning parameters: block
// tile BM x BN, k-step BK, thread tile TM x TN, global-load vector width VEC (16-byte loads, VEC = 4 floats or 2
// doubles, where the address is 16-byte aligned and the vector lies inside the operand, scalar loads otherwise, so any
// lda/ldb/ldc and any tail works). Both operands may be transposed (template flags). Each C element is one thread's
// fixed-order FMA chain over k: deterministic. Error bound per element: |c - c_ref| <= (k + 2) * u (2^-24, 2^-53) *
// (|alpha| sum_l |a_il||b_lj| + |beta||c_ij|). beta == 0 never reads C; alpha == 0 or k == 0 gives
// C = beta*C without reading A or B (as the reference BLAS).
#pragma once
#include "kernels/common.cuh"

namespace bok {

// One k-step of a thread's TM x TN outer product from shared memory: 16-byte fragment loads of its
// slices of the A row (as_k) and B row (bs_k), then the FMAs in a fixed order. Shared by both kernels so
// that they stay bitwise identical.
template <class T, int TM, int TN>
__device__ __forceinline__ void gemm_outer_product(T (&acc)[TM][TN], const T* as_k, const T* bs_k) {
  constexpr int VN = kVecN<T>;
  using V = vec16_t<T>;
  T af[TM], bf[TN];
#pragma unroll
  for (int i = 0; i < TM; i += VN) {
    const V q = *reinterpret_cast<const V*>(as_k + i);
#pragma unroll
    for (int e = 0; e < VN; ++e) af[i + e] = vget(q, e);
  }
#pragma unroll
  for (int j = 0; j < TN; j += VN) {
    const V q = *reinterpret_cast<const V*>(bs_k + j);
#pragma unroll
    for (int e = 0; e < VN; ++e) bf[j + e] = vget(q, e);
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = bo_fma(af[i], bf[j], acc[i][j]);
}

// Loads the ROWS x COLS tile of a column-major operand whose contiguous dimension is ROWS, starting at
// (r0, c0), into smem laid out as dst(row, col) = either s[col][row] (KMAJOR_ROWS=false) or s[row][col].
template <class T, int ROWS, int COLS, int VEC, int THREADS, bool DST_ROW_IS_K, int LD_S>
__device__ inline void gemm_load(T* __restrict__ s, const T* __restrict__ p, int64_t ld, int64_t nrows, int64_t ncols,
                                 int64_t r0, int64_t c0) {
  constexpr int VN = kVecN<T>;
  constexpr int NV = ROWS * COLS / VEC;
  static_assert(NV % THREADS == 0 && ROWS % VEC == 0, "sgemm load shape");
#pragma unroll
  for (int t = 0; t < NV / THREADS; ++t) {
    const int idx = t * THREADS + threadIdx.x;
    const int rv = idx % (ROWS / VEC), cc = idx / (ROWS / VEC);
    const int64_t r = r0 + rv * VEC, c = c0 + cc;
    const T* src = p + r + c * ld;
    T v[VEC];
    if (VEC == VN && c < ncols && r + VEC <= nrows && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
      const vec16_t<T> q = __ldg(reinterpret_cast<const vec16_t<T>*>(src));
#pragma unroll
      for (int e = 0; e < VN; ++e) v[e % VEC] = vget(q, e);
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e) v[e] = (c < ncols && r + e < nrows) ? __ldg(src + e) : T(0);
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

// Two-phase form of gemm_load for the pipelined kernel: fetch() issues the global loads into
// registers (so they are in flight while the previous tile is multiplied), put() stores them to smem.
template <class T, int ROWS, int COLS, int VEC, int THREADS, bool DST_ROW_IS_K, int LD_S>
struct GemmLoader {
  static constexpr int NV = ROWS * COLS / VEC, VN = kVecN<T>;
  static_assert(NV % THREADS == 0 && ROWS % VEC == 0, "gemm load shape");
  T v[NV / THREADS][VEC];
  __device__ void fetch(const T* __restrict__ p, int64_t ld, int64_t nrows, int64_t ncols, int64_t r0, int64_t c0) {
#pragma unroll
    for (int t = 0; t < NV / THREADS; ++t) {
      const int idx = t * THREADS + threadIdx.x;
      const int rv = idx % (ROWS / VEC), cc = idx / (ROWS / VEC);
      const int64_t r = r0 + rv * VEC, c = c0 + cc;
      const T* src = p + r + c * ld;
      if (VEC == VN && c < ncols && r + VEC <= nrows && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
        const vec16_t<T> q = __ldg(reinterpret_cast<const vec16_t<T>*>(src));
#pragma unroll
        for (int e = 0; e < VN; ++e) v[t][e % VEC] = vget(q, e);
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[t][e] = (c < ncols && r + e < nrows) ? __ldg(src + e) : T(0);
      }
    }
  }
  __device__ void put(T* __restrict__ s) const {
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
// gemm_kernel (bitwise identical results).
template <class T, int BM, int BN, int BK, int TM, int TN, int VEC, bool TA, bool TB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2)
    gemm_pipelined_kernel(int64_t m, int64_t n, int64_t k, T alpha, const T* __restrict__ a, int64_t lda,
                          const T* __restrict__ b, int64_t ldb, T beta, T* __restrict__ c, int64_t ldc) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int LDA_S = BM + 4, LDB_S = BN + 4;
  constexpr int VK = VEC <= BK ? VEC : 1;
  __shared__ __align__(16) T as[2][BK * LDA_S];
  __shared__ __align__(16) T bs[2][BK * LDB_S];
  const int64_t m0 = int64_t(blockIdx.x) * BM, n0 = int64_t(blockIdx.y) * BN;
  const int tr = threadIdx.x % (BM / TM), tc = threadIdx.x / (BM / TM);
  using LA = GemmLoader<T, (TA ? BK : BM), (TA ? BM : BK), (TA ? VK : VEC), THREADS, TA, LDA_S>;
  using LB = GemmLoader<T, (TB ? BN : BK), (TB ? BK : BN), (TB ? VEC : VK), THREADS, !TB, LDB_S>;
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
  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
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
      gemm_outer_product<T, TM, TN>(acc, &as[cur][kk * LDA_S + tr * TM], &bs[cur][kk * LDB_S + tc * TN]);
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
        T* p = c + row + col * ldc;
        *p = beta == T(0) ? alpha * acc[i][j] : bo_fma(beta, *p, alpha * acc[i][j]);
      }
    }
  }
}

template <class T, int BM, int BN, int BK, int TM, int TN, int VEC, bool TA, bool TB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    gemm_kernel(int64_t m, int64_t n, int64_t k, T alpha, const T* __restrict__ a, int64_t lda, const T* __restrict__ b,
                int64_t ldb, T beta, T* __restrict__ c, int64_t ldc) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int LDA_S = BM + 4, LDB_S = BN + 4;
  __shared__ __align__(16) T as[BK * LDA_S];  // as[kk][i]
  __shared__ __align__(16) T bs[BK * LDB_S];  // bs[kk][j]
  const int64_t m0 = int64_t(blockIdx.x) * BM, n0 = int64_t(blockIdx.y) * BN;
  const int tr = threadIdx.x % (BM / TM), tc = threadIdx.x / (BM / TM);
  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    // op(A) tile BM x BK into as[kk][i].
    if (!TA)  // A is m x k, contiguous along i
      gemm_load<T, BM, BK, VEC, THREADS, false, LDA_S>(as, a, lda, m, k, m0, k0);
    else  // A is k x m, contiguous along kk
      gemm_load<T, BK, BM, (VEC <= BK ? VEC : 1), THREADS, true, LDA_S>(as, a, lda, k, m, k0, m0);
    // op(B) tile BK x BN into bs[kk][j].
    if (!TB)  // B is k x n, contiguous along kk
      gemm_load<T, BK, BN, (VEC <= BK ? VEC : 1), THREADS, true, LDB_S>(bs, b, ldb, k, n, k0, n0);
    else  // B is n x k, contiguous along j
      gemm_load<T, BN, BK, VEC, THREADS, false, LDB_S>(bs, b, ldb, n, k, n0, k0);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      gemm_outer_product<T, TM, TN>(acc, &as[kk * LDA_S + tr * TM], &bs[kk * LDB_S + tc * TN]);
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
        T* p = c + row + col * ldc;
        *p = beta == T(0) ? alpha * acc[i][j] : bo_fma(beta, *p, alpha * acc[i][j]);
      }
    }
  }
}

template <class T, int BM, int BN, int BK, int TM, int TN, int VEC, bool TA, bool TB, int STAGES = 1>
struct Gemm {
  using Elem = T;
  static_assert(TM % kVecN<T> == 0 && TN % kVecN<T> == 0, "thread tile a multiple of the vector width");
  static_assert(VEC == 1 || VEC == kVecN<T>, "VEC: scalar or 16-byte loads");
  static std::string name() {
    return std::string(prec_letter<T>()) + "gemm_" + std::to_string(BM) + "x" + std::to_string(BN) + "_" +
           std::to_string(BK) + "_" + std::to_string(TM) + "x" + std::to_string(TN) + "_v" + std::to_string(VEC) +
           (STAGES == 2 ? "_p2" : "") + "_" + (TA ? "t" : "n") + (TB ? "t" : "n");
  }
  static bool can_implement(char ta, char tb, int64_t m, int64_t n, int64_t k) {
    return ((ta != 'N') == TA) && ((tb != 'N') == TB) && m >= 0 && n >= 0 && k >= 0 && (m + BM - 1) / BM < 2147483647 &&
           (n + BN - 1) / BN < 65535;
  }
  static cudaError_t launch(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                            T beta, T* c, int64_t ldc, cudaStream_t st) {
    if (m == 0 || n == 0) return cudaSuccess;
    if (alpha == T(0) || k == 0) return scale_matrix(m, n, beta, c, ldc, st);
    dim3 grid(unsigned(cdiv(m, BM)), unsigned(cdiv(n, BN)));
    if constexpr (STAGES == 2)
      gemm_pipelined_kernel<T, BM, BN, BK, TM, TN, VEC, TA, TB>
          <<<grid, (BM / TM) * (BN / TN), 0, st>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else
      gemm_kernel<T, BM, BN, BK, TM, TN, VEC, TA, TB>
          <<<grid, (BM / TM) * (BN / TN), 0, st>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return cudaGetLastError();
  }
};

}  // namespace bok
