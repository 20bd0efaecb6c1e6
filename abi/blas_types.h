// The integer and string-length types of the Fortran BLAS ABI, in one place so an ILP64 build can follow.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

// The complex element types of the symbol list (routine_list.h): Fortran's COMPLEX and COMPLEX*16, two reals each,
// laid out as std::complex is (and as C's float _Complex).
using bo_cfloat = std::complex<float>;
using bo_cdouble = std::complex<double>;

namespace blasoffload {

#ifdef BLASOFFLOAD_ILP64
using blas_int = std::int64_t;  // *_64_ symbols; not built yet
#else
using blas_int = std::int32_t;  // LP64: gfortran's default INTEGER
#endif

// gfortran passes each CHARACTER argument's length as a hidden size_t after the explicit arguments.
// We accept it and pass it on, but never read it: C callers often omit it.
using fortran_strlen = std::size_t;

}  // namespace blasoffload
