// STRSM / DTRSM (templated on the element type T) by diagonal-block inversion plus GEMM (seeds 001 and 003): the
// diagonal blocks of the triangle (order NB) are inverted at once (32 x 32 blocks by substitution, then doubling with
// triple products), and the solve becomes one small product by each inverse and one GEMM update of the remaining
// right-hand sides per block.
//
// Numerical behaviour. A product by a computed inverse is not backward stable: its residual grows with the block's
// condition number k1(D) (Du Croz and Higham), where substitution's stays at c t u. So a block is used inverted only
// when k1(D) = |D|_1 |D^-1|_1 <= BLASOFFLOAD_STRSM_INV_MAX_COND (default 1000, measured exactly from the computed
// inverse); any other block, a block with Inf/NaN, and every block when B holds Inf/NaN (a dense product would
// spread them through the structural zeros of the inverse) is solved by substitution. The GEMM updates are those
// of a blocked substitution. Results are deterministic (no atomics; fixed order).
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <string>
#include <type_traits>

namespace bok {

// The largest k1 of a diagonal block used inverted: the module's BLASOFFLOAD_STRSM_INV_MAX_COND setting (both
// precisions), handed over by set_strsm_inv_max_cond at the module's init; 1000 when never set or not a number >= 0.
double strsm_inv_max_cond();
void set_strsm_inv_max_cond(const char* value);

// Workspace (bytes) and the solve itself; nb: the diagonal block order (a multiple of 32). Instantiated for float
// and double (trsm.cu).
template <class T>
size_t trsm_inv_workspace(char side, int64_t m, int64_t n, int nb);
template <class T>
cudaError_t trsm_inv(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,
                     int64_t lda, T* b, int64_t ldb, int nb, void* ws, cudaStream_t st);

// One column (left) or one row (right) of right-hand sides: scaled by alpha, then the module's trsv.
template <class T>
size_t trsm_trsv_workspace(char side, char uplo, char transa, char diag, int64_t m, int64_t n);
template <class T>
cudaError_t trsm_trsv(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,
                      int64_t lda, T* b, int64_t ldb, void* ws, cudaStream_t st);

template <class T, int NB>
struct TrsmInv {
  using Elem = T;
  static std::string name() {
    return std::string(std::is_same_v<T, double> ? "d" : "s") + "trsm_inv_nb" + std::to_string(NB);
  }
  static bool can_implement(char side, int64_t m, int64_t n) {
    return m >= 1 && n >= 1 && (side == 'L' || side == 'R');
  }
  static size_t workspace(char side, int64_t m, int64_t n) { return trsm_inv_workspace<T>(side, m, n, NB); }
  static cudaError_t launch(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,
                            int64_t lda, T* b, int64_t ldb, void* ws, cudaStream_t st) {
    return trsm_inv<T>(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, NB, ws, st);
  }
};

}  // namespace bok
