// What the cuBLAS and cuSOLVER wrappers share about their element types and option letters.
#pragma once
#include <cublas_api.h>

#include <type_traits>

#include "abi/blas_types.h"

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

// Our element type as the vendor libraries' (std::complex has cuComplex's layout), and a pointer to it as theirs.
template <class T>
struct Cu {
  using type = T;
};
template <>
struct Cu<bo_cfloat> {
  using type = cuComplex;
};
template <>
struct Cu<bo_cdouble> {
  using type = cuDoubleComplex;
};
template <class T>
using CuType = typename Cu<T>::type;
template <class T>
const CuType<T>* cu(const T* p) {
  return reinterpret_cast<const CuType<T>*>(p);
}
template <class T>
CuType<T>* cu(T* p) {
  return reinterpret_cast<CuType<T>*>(p);
}

}  // namespace bok::vendor
