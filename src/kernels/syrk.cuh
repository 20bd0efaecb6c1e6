// SSYRK / DSYRK (templated on the element type T) on GEMM (seed 001): the triangle of C is cut into diagonal blocks of
// order NB, computed together by one batched kernel that writes only the triangle, and the off-diagonal rectangles of a
// recursive halving, each one GEMM (the module's tuned choice).
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <string>
#include <type_traits>

namespace bok {

// Instantiated for float and double (syrk.cu).
template <class T>
cudaError_t syrk_gemm(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta, T* c,
                      int64_t ldc, int nb, cudaStream_t st);

template <class T, int NB>
struct SyrkGemm {
  using Elem = T;
  static std::string name() {
    return std::string(std::is_same_v<T, double> ? "d" : "s") + "syrk_gemm_nb" + std::to_string(NB);
  }
  static bool can_implement(int64_t n, int64_t k) { return n >= 1 && k >= 1 && cdiv_blocks(n) <= 65535; }
  static int64_t cdiv_blocks(int64_t n) { return (n + NB - 1) / NB; }
  static cudaError_t launch(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta, T* c,
                            int64_t ldc, cudaStream_t st) {
    return syrk_gemm<T>(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, NB, st);
  }
};

}  // namespace bok
