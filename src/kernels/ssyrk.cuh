// SSYRK on GEMM (seed 001): the triangle of C is cut into diagonal blocks of order NB, computed together by one
// batched kernel that writes only the triangle, and the off-diagonal rectangles of a recursive halving, each one
// GEMM (the module's tuned choice).
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <string>

namespace bok {

cudaError_t ssyrk_gemm(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                       float beta, float* c, int64_t ldc, int nb, cudaStream_t st);

template <int NB>
struct SsyrkGemm {
  static std::string name() { return "ssyrk_gemm_nb" + std::to_string(NB); }
  static bool can_implement(int64_t n, int64_t k) { return n >= 1 && k >= 1 && cdiv_blocks(n) <= 65535; }
  static int64_t cdiv_blocks(int64_t n) { return (n + NB - 1) / NB; }
  static cudaError_t launch(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                            float beta, float* c, int64_t ldc, cudaStream_t st) {
    return ssyrk_gemm(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, NB, st);
  }
};

}  // namespace bok
