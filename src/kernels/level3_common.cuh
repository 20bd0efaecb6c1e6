// What the Level 3 kernels built on GEMM share (per element type T): the module's own gemm/gemv/trsv of that
// precision chosen as for a call of that shape (tuned table, may be cuBLAS), a batched tile product for the many small
// blocks GEMM launches would waste the GPU on (seed 003's triple products, SYRK's diagonal blocks).
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/common.cuh"

namespace bok {

// The registry's tuned choice for these shapes, launched on `st` (device pointers, BLAS semantics). A product with
// one column (or row) goes to gemv, whose kernels stream the matrix at bandwidth where a GEMM tile would not, when
// its workspace fits in gemv_ws (gemv_bytes). Instantiated for float and double (registry_level3.cu).
template <class T>
cudaError_t level3_gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                        int64_t ldb, T beta, T* c, int64_t ldc, cudaStream_t st, void* gemv_ws = nullptr,
                        size_t gemv_bytes = 0);
// trsv as the registry would choose it; its workspace must hold level3_trsv_workspace<T>(n) bytes.
template <class T>
cudaError_t level3_trsv(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx,
                        void* ws, cudaStream_t st);
template <class T>
size_t level3_trsv_workspace(char uplo, char trans, char diag, int64_t n);

// C_b (tile by tile) = op.store(acc) where acc = sum_k op.x(b, i, k) * op.y(b, k, j), for every batch b (grid z).
// Op declares which index of its operands is contiguous in memory (kXi: x's i, else its k; kYk: y's k, else its
// j) so that the tile loads coalesce, and may skip tiles it does not need (tile_needed). 256 threads, TILE x TILE.
// The element type is Op::Elem.
template <int TILE, class Op>
__global__ void __launch_bounds__(256) batched_tile_product(Op op, int64_t k_len) {
  using T = typename Op::Elem;
  constexpr int KC = 16, R = TILE / 16;
  __shared__ T xs[KC][TILE + 1];
  __shared__ T ys[KC][TILE + 1];
  const int b = int(blockIdx.z);
  const int64_t i0 = int64_t(blockIdx.x) * TILE, j0 = int64_t(blockIdx.y) * TILE;
  if (!op.tile_needed(b, i0, j0, TILE)) return;
  const int tx = int(threadIdx.x % 16), ty = int(threadIdx.x / 16);
  T acc[R][R] = {};
  for (int64_t k0 = 0; k0 < k_len; k0 += KC) {
    for (int e = int(threadIdx.x); e < TILE * KC; e += 256) {
      const int ii = Op::kXi ? e % TILE : e / KC, kk = Op::kXi ? e / TILE : e % KC;
      xs[kk][ii] = k0 + kk < k_len ? op.x(b, i0 + ii, k0 + kk) : T(0);
      const int jj = Op::kYk ? e / KC : e % TILE, ky = Op::kYk ? e % KC : e / TILE;
      ys[ky][jj] = k0 + ky < k_len ? op.y(b, k0 + ky, j0 + jj) : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < KC; ++kk) {
      T xv[R], yv[R];
#pragma unroll
      for (int r = 0; r < R; ++r) xv[r] = xs[kk][ty + 16 * r];
#pragma unroll
      for (int c = 0; c < R; ++c) yv[c] = ys[kk][tx + 16 * c];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < R; ++c) acc[r][c] = bo_fma(xv[r], yv[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < R; ++c) op.store(b, i0 + ty + 16 * r, j0 + tx + 16 * c, acc[r][c]);
}

}  // namespace bok
