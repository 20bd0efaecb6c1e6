// Shared helpers for the complex unit tests (c and z): the precisions' traits for support.h's naming, complex random
// data and special values, op(A) with conjugation, the routines' complex function types, and the typed suites.
#pragma once

#include <complex>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include "complex_api.h"
#include "reference.h"
#include "support.h"

namespace bt {

// support.h's naming (name, upper_name, fortran_names) and the suites' names need only the precision letter; Acc is
// the complex type the references accumulate in, wider as for the real types.
template <>
struct Prec<bo_cfloat> {
  using Acc = std::complex<double>;
  static constexpr char letter = 'c', LETTER = 'C';
};
template <>
struct Prec<bo_cdouble> {
  using Acc = std::complex<long double>;
  static constexpr char letter = 'z', LETTER = 'Z';
};

namespace cx {

template <class T>
using Real = typename T::value_type;
template <class T>
using W = Acc<T>;        // the wide complex type
using WR = long double;  // magnitudes and bounds

// support.h's eps / nan / kPoison take numeric_limits of T, which is all zeros for std::complex: these are the
// complex ones (eps and tiny of the real type beneath).
template <class T>
constexpr double ceps() {
  return std::numeric_limits<Real<T>>::epsilon();
}
template <class T>
constexpr double ctiny() {
  return std::numeric_limits<Real<T>>::min();
}
template <class T>
T cnan() {
  const Real<T> q = std::numeric_limits<Real<T>>::quiet_NaN();
  return T(q, q);
}
template <class T>
T cinf() {
  return T(std::numeric_limits<Real<T>>::infinity(), 0);
}
// Recognisable and finite in both precisions, both parts non-zero, never produced by the tests.
template <class T>
T cpoison() {
  return T(Real<T>(-7.25e30), Real<T>(3.5e29));
}

// Real and imaginary parts uniform in [-1, 1], every bit of the significands random (see support.h's random_vector).
template <class T>
std::vector<T> random_cvector(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<Real<T>> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) {
    const Real<T> re = d(gen);
    x = T(re, d(gen));
  }
  return v;
}

template <class T>
bool finite(const T& z) {
  return std::isfinite(z.real()) && std::isfinite(z.imag());
}

inline bool is_conj(char t) { return t == 'C' || t == 'c'; }
inline bool is_notrans_c(char t) { return t == 'N' || t == 'n'; }
inline bool is_upper_c(char u) { return u == 'U' || u == 'u'; }
inline bool is_unit_c(char d) { return d == 'U' || d == 'u'; }
inline bool in_tri(char uplo, blas_int i, blas_int j) { return is_upper_c(uplo) ? i <= j : i >= j; }

// Element (i, j) of op(A) for a column-major A: A(i, j), A(j, i) or conj(A(j, i)); widened.
template <class T>
W<T> op_at(char t, const std::vector<T>& a, blas_int i, blas_int j, blas_int ld) {
  if (is_notrans_c(t)) return W<T>(a[at(i, j, ld)]);
  const W<T> v(a[at(j, i, ld)]);
  return is_conj(t) ? std::conj(v) : v;
}

// |got - want| <= bound (the complex modulus), printing both to full precision.
template <class T, class Wt>
::testing::AssertionResult cwithin(const T& got, const Wt& want, double bound) {
  const WR err = std::abs(std::complex<WR>(got) - std::complex<WR>(want));
  if (err <= bound) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << std::setprecision(std::numeric_limits<Real<T>>::max_digits10) << "got " << got << ", want "
     << std::complex<double>(want) << " (error " << double(err) << " > bound " << bound << ")";
  return ::testing::AssertionFailure() << os.str();
}

// Every entry that the CPU BLAS's result `direct` has non-finite is non-finite in ours (and there is one); unless the
// GPU may run, ours is the CPU BLAS's bit for bit.
template <class T>
void expect_nonfinite_as_cpu(const std::vector<T>& got, const std::vector<T>& direct) {
  int nonfinite = 0;
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (finite(direct[p])) continue;
    ++nonfinite;
    ASSERT_FALSE(finite(got[p])) << "element " << p << " should not be finite";
  }
  EXPECT_GT(nonfinite, 0);
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
}

// The complex norms' names: scnrm2, dznrm2.
template <class T>
std::string nrm2_name() {
  return std::is_same_v<T, bo_cfloat> ? "scnrm2" : "dznrm2";
}

// Our Fortran routine `fname` and the reference BLAS's (by its base name: "gemm" -> zgemm_), as type F.
template <class F>
F* ours_c(const std::string& fname) {
  return ours_as<F>(fname);
}
template <class T, class F>
F* ref_c(const std::string& base) {
  return reference_as<F>(name<T>(base + "_"));
}

using ComplexPrecisions = ::testing::Types<bo_cfloat, bo_cdouble>;

}  // namespace cx
}  // namespace bt

// Declares a typed suite run for complex float (c) and complex double (z).
#define BT_COMPLEX_SUITE(Suite)            \
  template <class T>                       \
  class Suite : public ::testing::Test {}; \
  TYPED_TEST_SUITE(Suite, ::bt::cx::ComplexPrecisions, ::bt::PrecisionNames)
