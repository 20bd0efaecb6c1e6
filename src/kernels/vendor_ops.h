// What the cuBLAS and cuSOLVER wrappers share about their element types and option letters.
#pragma once
#include <cublas_api.h>

#include <type_traits>

namespace bok::vendor {

// Whether T is one of the vendor libraries' complex element types.
template <class T>
constexpr bool kCuComplex = std::is_same_v<T, cuComplex> || std::is_same_v<T, cuDoubleComplex>;

// BLAS's and LAPACK's TRANS letter as an operation on T: 'C' is the conjugate transpose of a complex matrix (of a real
// one, the transpose).
template <class T>
cublasOperation_t op(char t) {
  if (t == 'N') return CUBLAS_OP_N;
  return kCuComplex<T> && t == 'C' ? CUBLAS_OP_C : CUBLAS_OP_T;
}

}  // namespace bok::vendor
