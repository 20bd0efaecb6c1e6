// Shared helpers for the unit tests, for both precisions: the element type's traits (precision letter, unit
// roundoff, the wider type references accumulate in), our entry points and the reference library's looked up by
// name from the routine list, a recorder for XERBLA / cblas_xerbla, random data, and GoogleTest's typed suites.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi/blas_types.h"
#include "blas_api.h"

namespace bt {

using blasoffload::blas_int;

// What differs between the precisions. Acc: the type references accumulate in, wide enough that its own rounding
// is negligible against the element type's error bounds (double has 29 more bits than float; x86-64's long double
// 11 more than double, so its rounding is 1/2048 of the double bounds).
template <class T>
struct Prec;
template <>
struct Prec<float> {
  using Acc = double;
  static constexpr char letter = 's', LETTER = 'S';
};
template <>
struct Prec<double> {
  using Acc = long double;
  static constexpr char letter = 'd', LETTER = 'D';
};
static_assert(std::numeric_limits<long double>::digits >= 64, "references for double need a wider long double");

template <class T>
using Acc = typename Prec<T>::Acc;

// The element type's machine epsilon (twice the unit roundoff): every error bound is a multiple of it.
template <class T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}
// Absolute slack for results that underflow: the smallest positive normal number.
template <class T>
constexpr double tiny() {
  return std::numeric_limits<T>::min();
}
template <class T>
constexpr T kPoison = T(-7.25e30);  // recognisable, finite in both precisions, never produced by the tests
template <class T>
T nan() {
  return std::numeric_limits<T>::quiet_NaN();
}
template <class T>
T inf() {
  return std::numeric_limits<T>::infinity();
}

// "gemm" -> "sgemm" / "dgemm"; "cblas_", "gemm" -> "cblas_dgemm".
template <class T>
std::string name(const std::string& base, const std::string& prefix = "") {
  return prefix + Prec<T>::letter + base;
}
// "gemm" -> "SGEMM" / "DGEMM", the name XERBLA reports (trailing blanks removed).
std::string upper_name(char letter, const std::string& base);
template <class T>
std::string upper_name(const std::string& base) {
  return upper_name(Prec<T>::LETTER, base);
}

// Every routine and precision in src/routines/routine_list.h, with its Fortran spellings.
struct Names {
  std::string lower, upper;  // "dgemm", "DGEMM"
};
std::vector<Names> routine_names();
std::vector<std::string> exported_fortran_names(const std::string& lower);  // lower_, lower, UPPER, UPPER_
template <class T>
std::vector<std::string> fortran_names(const std::string& base) {
  return exported_fortran_names(name<T>(base));
}

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

// What XERBLA (Fortran) and cblas_xerbla saw since the last clear(). `raw` is the name exactly as passed (with its
// length), so a report of "DGEMM" where the reference passes "DGEMM " shows.
struct ErrorRecord {
  std::string routine;
  int info;
  std::string raw;
  bool operator==(const ErrorRecord& o) const { return routine == o.routine && info == o.info && raw == o.raw; }
};
std::ostream& operator<<(std::ostream& os, const ErrorRecord& r);
std::vector<ErrorRecord>& xerbla_log();
std::vector<ErrorRecord>& cblas_xerbla_log();
void clear_error_logs();

// Random numbers in [-1, 1] with every bit of T's significand random: values with fewer bits (floats widened to
// double) would make products exact and hide a product computed in less than T's precision.
template <class T>
std::vector<T> random_vector(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = T(d(gen));
  return v;
}

// Whether the GPU may run the calls (BLASOFFLOAD_MODE=gpu): results are then held to error bounds, not to the CPU
// BLAS's bits.
inline bool allow_gpu() { return std::getenv("BLASOFFLOAD_TEST_ALLOW_GPU") != nullptr; }

// Whether two runs of the same BLAS call may take different sides: auto mode's adaptive decisions with a GPU allowed
// (measured times steer them, and the bounded exploration tries the other side now and then). Checks that two runs
// give the same bits hold only where this is false: cpu and gpu modes, frozen decisions, no GPU.
inline bool decisions_may_differ() {
  const char* m = std::getenv("BLASOFFLOAD_MODE");
  const char* d = std::getenv("BLASOFFLOAD_DECISIONS");
  const bool auto_mode = !m || !*m || std::strcmp(m, "auto") == 0;
  return allow_gpu() && auto_mode && !(d && std::strcmp(d, "frozen") == 0);
}

// Byte-wise equality (tells -0 from +0 and compares NaNs).
template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(T) * a.size()) == 0;
}

// Element (i, j) index of a column-major matrix.
inline std::size_t at(blas_int i, blas_int j, blas_int ld) { return std::size_t(i) + std::size_t(j) * ld; }
// Start index of a BLAS vector of n elements with increment inc (negative inc starts at the far end).
inline std::size_t vstart(blas_int n, blas_int inc) { return inc < 0 ? std::size_t(-(n - 1) * inc) : 0; }
inline std::size_t vlen(blas_int n, blas_int inc) { return n > 0 ? 1 + std::size_t(n - 1) * std::abs(inc) : 0; }

// The typed suites: every test runs once per precision, named Suite/s.Test and Suite/d.Test.
using Precisions = ::testing::Types<float, double>;
struct PrecisionNames {
  template <class T>
  static std::string GetName(int) {
    return std::string(1, Prec<T>::letter);
  }
};

}  // namespace bt

// Declares a typed suite run for float and double.
#define BT_PRECISION_SUITE(Suite)          \
  template <class T>                       \
  class Suite : public ::testing::Test {}; \
  TYPED_TEST_SUITE(Suite, ::bt::Precisions, ::bt::PrecisionNames)
