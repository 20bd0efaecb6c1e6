// Shared helpers for the unit tests: our entry points and the reference library's, looked up by name from
// abi/routines.def; a recorder for XERBLA / cblas_xerbla; random data; a double-precision reference.
#pragma once

#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi/signatures.h"

namespace bt {

using blasoffload::blas_int;

// Every exported Fortran spelling of a routine, resolved in libblasoffload.so.
struct Names {
  std::string lower, upper;
};
std::vector<Names> routine_names();                                         // from abi/routines.def
std::vector<std::string> exported_fortran_names(const std::string& lower);  // lower_, lower, UPPER, UPPER_

void* ours(const std::string& symbol);       // dlsym in libblasoffload.so; fails the test if missing
void* reference(const std::string& symbol);  // dlsym in the reference libblas.so.3 the test links

template <class F>
F* ours_as(const std::string& s) {
  return reinterpret_cast<F*>(ours(s));
}
template <class F>
F* reference_as(const std::string& s) {
  return reinterpret_cast<F*>(reference(s));
}

// What XERBLA (Fortran) and cblas_xerbla saw since the last clear().
struct ErrorRecord {
  std::string routine;
  int info;
  bool operator==(const ErrorRecord& o) const { return routine == o.routine && info == o.info; }
};
std::vector<ErrorRecord>& xerbla_log();
std::vector<ErrorRecord>& cblas_xerbla_log();
void clear_error_logs();

// Random floats in [-1, 1].
std::vector<float> random_vector(std::size_t n, std::uint32_t seed);
constexpr float kPoison = -7.25e30f;  // recognisable, finite, never produced by the tests' arithmetic
inline float nan() { return std::numeric_limits<float>::quiet_NaN(); }
inline float inf() { return std::numeric_limits<float>::infinity(); }
constexpr double kEps = std::numeric_limits<float>::epsilon();

// Element (i, j) index of a column-major matrix.
inline std::size_t at(blas_int i, blas_int j, blas_int ld) { return std::size_t(i) + std::size_t(j) * ld; }
// Start index of a BLAS vector of n elements with increment inc (negative inc starts at the far end).
inline std::size_t vstart(blas_int n, blas_int inc) { return inc < 0 ? std::size_t(-(n - 1) * inc) : 0; }
inline std::size_t vlen(blas_int n, blas_int inc) { return n > 0 ? 1 + std::size_t(n - 1) * std::abs(inc) : 0; }

}  // namespace bt
