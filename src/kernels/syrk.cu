// SSYRK / DSYRK on GEMM (syrk.cuh): the batched diagonal blocks and the recursive off-diagonal GEMMs.
#include <algorithm>
#include <vector>

#include "kernels/level3_common.cuh"
#include "kernels/syrk.cuh"

namespace bok {
namespace {

// Diagonal block b of C (rows and columns [b nb, b nb + nb) clipped at n): alpha op(A)_b op(A)_b^T + beta C, only
// the uplo triangle written (beta == 0: C not read).
template <class T, bool kTransN>
struct DiagOp {
  using Elem = T;
  static constexpr bool kXi = kTransN, kYk = !kTransN;
  bool upper;
  int64_t n;
  const T* a;
  int64_t lda;
  T alpha, beta;
  T* c;
  int64_t ldc;
  int nb;
  __device__ bool tile_needed(int, int64_t i0, int64_t j0, int tile) const {
    return upper ? i0 <= j0 + tile - 1 : j0 <= i0 + tile - 1;
  }
  __device__ T at(int64_t r, int64_t kk) const {  // op(A)(r, kk) with r a row of C
    if (r >= n) return T(0);
    return kTransN ? a[r + kk * lda] : a[kk + r * lda];
  }
  __device__ T x(int b, int64_t i, int64_t kk) const { return i < nb ? at(int64_t(b) * nb + i, kk) : T(0); }
  __device__ T y(int b, int64_t kk, int64_t j) const { return j < nb ? at(int64_t(b) * nb + j, kk) : T(0); }
  __device__ void store(int b, int64_t i, int64_t j, T v) const {
    if (i >= nb || j >= nb) return;
    const int64_t gi = int64_t(b) * nb + i, gj = int64_t(b) * nb + j;
    if (gi >= n || gj >= n || (upper ? gi > gj : gi < gj)) return;
    T* p = c + gi + gj * ldc;
    *p = beta == T(0) ? alpha * v : bo_fma(beta, *p, alpha * v);
  }
};

struct Rect {
  int64_t r0, c0, rows, cols;
};
// The off-diagonal rectangles of the block range [b0, b0 + cnt): the halving's rectangle, then its halves'.
void rectangles(bool upper, int64_t n, int nb, int64_t b0, int64_t cnt, std::vector<Rect>* out) {
  if (cnt <= 1) return;
  const int64_t h = cnt / 2;
  const int64_t lo = b0 * nb, mid = (b0 + h) * nb, hi = std::min(n, (b0 + cnt) * nb);
  if (upper)
    out->push_back({lo, mid, mid - lo, hi - mid});
  else
    out->push_back({mid, lo, hi - mid, mid - lo});
  rectangles(upper, n, nb, b0, h, out);
  rectangles(upper, n, nb, b0 + h, cnt - h, out);
}

}  // namespace

template <class T>
cudaError_t syrk_gemm(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta, T* c,
                      int64_t ldc, int nb, cudaStream_t st) {
  const bool upper = uplo == 'U', tn = trans == 'N';
  const int64_t nblk = cdiv(n, nb);
  std::vector<Rect> rects;
  rectangles(upper, n, nb, 0, nblk, &rects);
  // One stream: the tuned GEMM may be cuBLAS, whose handle (and workspace) is shared by every stream of this thread,
  // so concurrent products on helper streams would race (measured: results differing run to run).
  cudaError_t e = cudaSuccess;
  {
    const dim3 grid(unsigned(cdiv(nb, 64)), unsigned(cdiv(nb, 64)), unsigned(nblk));
    if (tn)
      batched_tile_product<64><<<grid, 256, 0, st>>>(DiagOp<T, true>{upper, n, a, lda, alpha, beta, c, ldc, nb}, k);
    else
      batched_tile_product<64><<<grid, 256, 0, st>>>(DiagOp<T, false>{upper, n, a, lda, alpha, beta, c, ldc, nb}, k);
    e = cudaGetLastError();
  }
  for (size_t i = 0; i < rects.size() && !e; ++i) {
    const Rect& r = rects[i];
    // C(r, c) = alpha op(A)(r, :) op(A)(c, :)^T + beta C(r, c)
    e = tn ? level3_gemm('N', 'T', r.rows, r.cols, k, alpha, a + r.r0, lda, a + r.c0, lda, beta, c + r.r0 + r.c0 * ldc,
                         ldc, st)
           : level3_gemm('T', 'N', r.rows, r.cols, k, alpha, a + r.r0 * lda, lda, a + r.c0 * lda, lda, beta,
                         c + r.r0 + r.c0 * ldc, ldc, st);
  }
  return e;
}

template cudaError_t syrk_gemm<float>(char, char, int64_t, int64_t, float, const float*, int64_t, float, float*,
                                      int64_t, int, cudaStream_t);
template cudaError_t syrk_gemm<double>(char, char, int64_t, int64_t, double, const double*, int64_t, double, double*,
                                       int64_t, int, cudaStream_t);

}  // namespace bok
