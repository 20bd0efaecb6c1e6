// sgemv / dgemv, both transposes (templated on the element type T). Deterministic: every y element is a fixed-order sum
// (thread partials, then a fixed shared-memory / shuffle tree, then split-k partials summed in index order by a
// finalize kernel). Error bound (per element): |y - y_ref| <= (len + 2) * 2^-24 * (|alpha| sum|A||x| +
// |beta||y|), len = the reduced dimension (2^-53 for double). beta == 0 never reads y; alpha == 0 gives y = beta*y
// without reading A or x (as the reference BLAS).
#pragma once
#include "kernels/common.cuh"

namespace bok {

constexpr int64_t kGemvTargetBlocks = 528;  // ~4 per SM on a 132-SM H100; a constant so results do not
                                            // depend on the GPU model

// y_i (or partial) over the VR consecutive rows handled by thread (blockIdx.x, threadIdx.x): 16-byte
// loads when VR is the vector width (4 floats, 2 doubles) and A's columns are 16-byte aligned, scalar loads
// otherwise (and on the tail). Columns are split over threadIdx.y and blockIdx.y.
template <class T, int TX, int TY, int UNROLL, int VR>
__global__ void __launch_bounds__(TX* TY)
    gemv_n_kernel(int64_t m, int64_t n, T alpha, const T* __restrict__ a, int64_t lda, const T* __restrict__ x,
                  int64_t incx, T beta, T* __restrict__ y, int64_t incy, T* __restrict__ partial,
                  int64_t cols_per_split) {
  constexpr int VN = kVecN<T>;
  using V = vec16_t<T>;
  static_assert(VR == 1 || VR == VN, "rows per thread");
  __shared__ T sh[TY][TX * VR + 1];
  const int64_t i = (int64_t(blockIdx.x) * TX + threadIdx.x) * VR;
  const int64_t j0 = int64_t(blockIdx.y) * cols_per_split;
  const int64_t j1 = min(n, j0 + cols_per_split);
  T acc[VR];
#pragma unroll
  for (int r = 0; r < VR; ++r) acc[r] = T(0);
  if (i < m) {
    const T* ai = a + i;
    const bool vec = VR == VN && i + VR <= m && (lda & (VN - 1)) == 0 && (reinterpret_cast<uintptr_t>(ai) & 15) == 0;
    int64_t j = j0 + threadIdx.y;
    if (vec) {
      for (; j + int64_t(UNROLL - 1) * TY < j1; j += int64_t(UNROLL) * TY) {
        V av[UNROLL];
        T xv[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          av[u] = __ldg(reinterpret_cast<const V*>(ai + (j + u * TY) * lda));
          xv[u] = __ldg(x + vidx(j + u * TY, n, incx));
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int q = 0; q < VN; ++q) acc[q % VR] = bo_fma(vget(av[u], q), xv[u], acc[q % VR]);
      }
    } else {
      for (; j + int64_t(UNROLL - 1) * TY < j1; j += int64_t(UNROLL) * TY) {
        T av[UNROLL][VR], xv[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
          for (int r = 0; r < VR; ++r) av[u][r] = i + r < m ? __ldg(ai + r + (j + u * TY) * lda) : T(0);
          xv[u] = __ldg(x + vidx(j + u * TY, n, incx));
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int r = 0; r < VR; ++r) acc[r] = bo_fma(av[u][r], xv[u], acc[r]);
      }
    }
    for (; j < j1; j += TY) {
      const T xj = __ldg(x + vidx(j, n, incx));
#pragma unroll
      for (int r = 0; r < VR; ++r)
        if (i + r < m) acc[r] = bo_fma(__ldg(ai + r + j * lda), xj, acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < VR; ++r) sh[threadIdx.y][threadIdx.x * VR + r] = acc[r];
  __syncthreads();
  // Sum over threadIdx.y in a fixed order; the TX*VR rows of the block are spread over all threads.
  for (int t = threadIdx.y * TX + threadIdx.x; t < TX * VR; t += TX * TY) {
    const int64_t row = int64_t(blockIdx.x) * TX * VR + t;
    if (row >= m) continue;
    T s = sh[0][t];
#pragma unroll
    for (int q = 1; q < TY; ++q) s += sh[q][t];
    if (gridDim.y == 1) {
      T* yi = y + vidx(row, m, incy);
      *yi = beta == T(0) ? alpha * s : bo_fma(beta, *yi, alpha * s);
    } else {
      partial[int64_t(blockIdx.y) * m + row] = s;
    }
  }
}

// y_j (or partial) for column j = one warp; rows split over lanes and blockIdx.y.
template <class T, int WARPS, int UNROLL>
__global__ void __launch_bounds__(WARPS * 32)
    gemv_t_kernel(int64_t m, int64_t n, T alpha, const T* __restrict__ a, int64_t lda, const T* __restrict__ x,
                  int64_t incx, T beta, T* __restrict__ y, int64_t incy, T* __restrict__ partial,
                  int64_t rows_per_split) {
  const int lane = threadIdx.x & 31;
  const int64_t j = int64_t(blockIdx.x) * WARPS + (threadIdx.x >> 5);
  if (j >= n) return;
  const int64_t i0 = int64_t(blockIdx.y) * rows_per_split;
  const int64_t i1 = min(m, i0 + rows_per_split);
  const T* aj = a + j * lda;
  T acc = T(0);
  int64_t i = i0 + lane;
  for (; i + int64_t(UNROLL - 1) * 32 < i1; i += int64_t(UNROLL) * 32) {
    T av[UNROLL], xv[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      av[u] = __ldg(aj + i + u * 32);
      xv[u] = __ldg(x + vidx(i + u * 32, m, incx));
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc = bo_fma(av[u], xv[u], acc);
  }
  for (; i < i1; i += 32) acc = bo_fma(__ldg(aj + i), __ldg(x + vidx(i, m, incx)), acc);
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) {
    if (gridDim.y == 1) {
      T* yj = y + vidx(j, n, incy);
      *yj = beta == T(0) ? alpha * acc : bo_fma(beta, *yj, alpha * acc);
    } else {
      partial[int64_t(blockIdx.y) * n + j] = acc;
    }
  }
}

// Number of splits of the reduced dimension: enough blocks to fill the GPU (want), no more than the work
// allows (most), within the grid limit (cap).
inline int64_t gemv_split_count(int64_t want, int64_t most, int64_t cap) {
  const int64_t s = want < most ? want : most;
  return s < 1 ? 1 : (s > cap ? cap : s);
}
// Workspace of a split launch: one partial sum per split and output element; none unsplit.
template <class T>
inline size_t gemv_partial_bytes(int64_t splits, int64_t len) {
  return splits > 1 ? sizeof(T) * size_t(splits) * size_t(len) : 0;
}

// y = alpha * sum_s partial[s] + beta*y, summed in split order.
template <class T>
__global__ void gemv_finalize_kernel(int64_t len, int splits, const T* __restrict__ partial, T alpha, T beta,
                                     T* __restrict__ y, int64_t incy) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= len) return;
  T s = T(0);
  for (int t = 0; t < splits; ++t) s += partial[int64_t(t) * len + i];
  T* p = y + vidx(i, len, incy);
  *p = beta == T(0) ? alpha * s : bo_fma(beta, *p, alpha * s);
}

template <class T, int TX, int TY, int UNROLL, int VR>
struct GemvN {
  using Elem = T;
  static std::string name() {
    return std::string(prec_letter<T>()) + "gemv_n_" + std::to_string(TX) + "x" + std::to_string(TY) + "_u" +
           std::to_string(UNROLL) + "_r" + std::to_string(VR);
  }
  static bool can_implement(char trans, int64_t m, int64_t n) { return trans == 'N' && m >= 0 && n >= 0; }
  static int64_t splits(int64_t m, int64_t n) {
    return gemv_split_count(cdiv(kGemvTargetBlocks, cdiv(m, int64_t(TX) * VR)), cdiv(n, int64_t(TY) * UNROLL * 4),
                            4096);
  }
  static size_t workspace(int64_t m, int64_t n) { return gemv_partial_bytes<T>(splits(m, n), m); }
  static cudaError_t launch(int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
                            T* y, int64_t incy, void* ws, cudaStream_t st) {
    if (m == 0) return cudaSuccess;
    if (alpha == T(0) || n == 0) return scale_vector(m, beta, y, incy, st);
    const int64_t s = splits(m, n);
    const int64_t per = cdiv(n, s);
    const int64_t s_used = cdiv(n, per);
    dim3 grid(unsigned(cdiv(m, int64_t(TX) * VR)), unsigned(s_used));
    T* partial = static_cast<T*>(ws);
    gemv_n_kernel<T, TX, TY, UNROLL, VR>
        <<<grid, dim3(TX, TY), 0, st>>>(m, n, alpha, a, lda, x, incx, beta, y, incy, partial, per);
    if (s_used > 1)
      gemv_finalize_kernel<T><<<unsigned(cdiv(m, 256)), 256, 0, st>>>(m, int(s_used), partial, alpha, beta, y, incy);
    return cudaGetLastError();
  }
};

template <class T, int WARPS, int UNROLL>
struct GemvT {
  using Elem = T;
  static std::string name() {
    return std::string(prec_letter<T>()) + "gemv_t_" + std::to_string(WARPS) + "w_u" + std::to_string(UNROLL);
  }
  static bool can_implement(char trans, int64_t m, int64_t n) {
    return (trans == 'T' || trans == 'C') && m >= 0 && n >= 0;
  }
  static int64_t splits(int64_t m, int64_t n) {
    return gemv_split_count(cdiv(kGemvTargetBlocks, cdiv(n, WARPS)), cdiv(m, int64_t(32) * UNROLL * 4), 65535);
  }
  static size_t workspace(int64_t m, int64_t n) { return gemv_partial_bytes<T>(splits(m, n), n); }
  static cudaError_t launch(int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
                            T* y, int64_t incy, void* ws, cudaStream_t st) {
    if (n == 0) return cudaSuccess;
    if (alpha == T(0) || m == 0) return scale_vector(n, beta, y, incy, st);
    const int64_t s = splits(m, n);
    const int64_t per = cdiv(m, s);
    const int64_t s_used = cdiv(m, per);
    dim3 grid(unsigned(cdiv(n, WARPS)), unsigned(s_used));
    T* partial = static_cast<T*>(ws);
    gemv_t_kernel<T, WARPS, UNROLL>
        <<<grid, WARPS * 32, 0, st>>>(m, n, alpha, a, lda, x, incx, beta, y, incy, partial, per);
    if (s_used > 1)
      gemv_finalize_kernel<T><<<unsigned(cdiv(n, 256)), 256, 0, st>>>(n, int(s_used), partial, alpha, beta, y, incy);
    return cudaGetLastError();
  }
};

// y_j (or partial) for column j = one warp, reading A's column with 16-byte loads (VN = 4 floats or 2
// doubles per lane per load, UNROLL loads in flight) when the column and x are 16-byte aligned; scalar
// otherwise and on the tail.
template <class T, int WARPS, int UNROLL>
__global__ void __launch_bounds__(WARPS * 32)
    gemv_tv_kernel(int64_t m, int64_t n, T alpha, const T* __restrict__ a, int64_t lda, const T* __restrict__ x,
                   int64_t incx, T beta, T* __restrict__ y, int64_t incy, T* __restrict__ partial,
                   int64_t rows_per_split, bool vec) {
  constexpr int VN = kVecN<T>, ROWS = 32 * VN;  // rows per warp load
  using V = vec16_t<T>;
  const int lane = threadIdx.x & 31;
  const int64_t j = int64_t(blockIdx.x) * WARPS + (threadIdx.x >> 5);
  if (j >= n) return;
  const int64_t i0 = int64_t(blockIdx.y) * rows_per_split;  // a multiple of VN when vec
  const int64_t i1 = min(m, i0 + rows_per_split);
  const T* aj = a + j * lda;
  T acc = T(0);
  int64_t i = i0;
  if (vec) {
    T accv[VN];
#pragma unroll
    for (int q = 0; q < VN; ++q) accv[q] = T(0);
    for (; i + int64_t(UNROLL) * ROWS <= i1; i += int64_t(UNROLL) * ROWS) {
      V av[UNROLL], xv[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        av[u] = __ldg(reinterpret_cast<const V*>(aj + i + u * ROWS) + lane);
        xv[u] = __ldg(reinterpret_cast<const V*>(x + i + u * ROWS) + lane);
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int q = 0; q < VN; ++q) accv[q] = bo_fma(vget(av[u], q), vget(xv[u], q), accv[q]);
    }
    if constexpr (VN == 4)
      acc = (accv[0] + accv[1]) + (accv[2] + accv[3]);
    else
      acc = accv[0] + accv[1];
  }
  for (i += lane; i < i1; i += 32) acc = bo_fma(__ldg(aj + i), __ldg(x + vidx(i, m, incx)), acc);
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) {
    if (gridDim.y == 1) {
      T* yj = y + vidx(j, n, incy);
      *yj = beta == T(0) ? alpha * acc : bo_fma(beta, *yj, alpha * acc);
    } else {
      partial[int64_t(blockIdx.y) * n + j] = acc;
    }
  }
}

template <class T, int WARPS, int UNROLL>
struct GemvTV {
  using Elem = T;
  static constexpr int kVN = kVecN<T>;
  static std::string name() {
    return std::string(prec_letter<T>()) + "gemv_tv_" + std::to_string(WARPS) + "w_u" + std::to_string(UNROLL);
  }
  static constexpr bool valid() { return WARPS >= 1 && WARPS <= 32 && UNROLL >= 1 && UNROLL <= 8; }
  static bool can_implement(char trans, int64_t m, int64_t n) {
    return (trans == 'T' || trans == 'C') && m >= 0 && n >= 0;
  }
  static int64_t splits(int64_t m, int64_t n) {
    // Few columns (n < a few hundred) leave most SMs idle unless the rows are split finely: down to one
    // 16-byte load per lane per split.
    const int64_t most = cdiv(m, int64_t(32 * kVN) * (n < 512 ? 1 : UNROLL * 2));
    return gemv_split_count(cdiv(kGemvTargetBlocks, cdiv(n, WARPS)), most, 65535);
  }
  static size_t workspace(int64_t m, int64_t n) { return gemv_partial_bytes<T>(splits(m, n), n); }
  static cudaError_t launch(int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
                            T* y, int64_t incy, void* ws, cudaStream_t st) {
    if (n == 0) return cudaSuccess;
    if (alpha == T(0) || m == 0) return scale_vector(n, beta, y, incy, st);
    const bool vec = incx == 1 && (lda & (kVN - 1)) == 0 && (reinterpret_cast<uintptr_t>(a) & 15) == 0 &&
                     (reinterpret_cast<uintptr_t>(x) & 15) == 0;
    const int64_t s = splits(m, n);
    const int64_t per = (cdiv(m, s) + kVN - 1) / kVN * kVN;  // split starts stay 16-byte aligned
    const int64_t s_used = cdiv(m, per);
    dim3 grid(unsigned(cdiv(n, WARPS)), unsigned(s_used));
    T* partial = static_cast<T*>(ws);
    gemv_tv_kernel<T, WARPS, UNROLL>
        <<<grid, WARPS * 32, 0, st>>>(m, n, alpha, a, lda, x, incx, beta, y, incy, partial, per, vec);
    if (s_used > 1)
      gemv_finalize_kernel<T><<<unsigned(cdiv(n, 256)), 256, 0, st>>>(n, int(s_used), partial, alpha, beta, y, incy);
    return cudaGetLastError();
  }
};

}  // namespace bok
