// scnrm2/dznrm2 and their aliases, and cblas_scnrm2/cblas_dznrm2: random data, extreme magnitudes (no spurious
// overflow or underflow), NaN/Inf in either part, zero and negative sizes and increments (the CPU library's own
// answer, bit for bit).
#include "complex_support.h"

namespace bt::cx {
namespace {

// The norm of the n elements (2n real parts), scaled so it stays finite for any input of type T.
template <class T>
WR ref_norm(blas_int n, const std::vector<T>& x, blas_int incx) {
  std::vector<WR> parts;
  for (blas_int i = 0; i < n; ++i) {
    const T& e = x[vstart(n, incx) + std::ptrdiff_t(i) * incx];
    parts.push_back(e.real());
    parts.push_back(e.imag());
  }
  WR scale = 0;
  for (WR v : parts) {
    if (std::isnan(v)) return NAN;
    scale = std::fmax(scale, std::fabs(v));
  }
  if (scale == 0 || !std::isfinite(scale)) return scale;
  WR s = 0;
  for (WR v : parts) s += (v / scale) * (v / scale);
  return scale * std::sqrt(s);
}

template <class T>
void check(typename CApi<T>::nrm2* fn, const std::string& fname, const std::vector<T>& x, blas_int n, blas_int incx) {
  SCOPED_TRACE(fname + " n=" + std::to_string(n) + " incx=" + std::to_string(incx));
  using R = Real<T>;
  const R got = fn(&n, x.data(), &incx);
  const R direct = reference_as<typename CApi<T>::nrm2>(nrm2_name<T>() + "_")(&n, x.data(), &incx);
  // incx <= 0 always goes to the CPU library, GPU mode or not.
  if (!allow_gpu() || incx <= 0) {
    ASSERT_TRUE(same_bits(got, direct)) << "got " << got << ", CPU BLAS " << direct;
  }
  if (n <= 0) {
    ASSERT_TRUE(same_bits(got, R(0)));
    return;
  }
  if (incx <= 0) return;  // libraries differ here; the CPU library's answer (checked above) is the contract
  const WR want = ref_norm(n, x, incx);
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got)) << "got " << got;
  } else if (std::isinf(want) || want > std::numeric_limits<R>::max()) {
    ASSERT_TRUE(std::isinf(got)) << "got " << got;
  } else {
    // A sum of 2n squares errs by up to 2n u relatively (Higham, 3.1), the square root halves it, twice that.
    const double bound = (n + 4) * ceps<T>();
    ASSERT_TRUE(within(got, want, double(bound * want) + std::numeric_limits<R>::denorm_min()));
  }
}

BT_COMPLEX_SUITE(ComplexNrm2);

TYPED_TEST(ComplexNrm2, RandomExtremesAndSpecialValues) {
  using T = TypeParam;
  using R = Real<T>;
  using L = std::numeric_limits<R>;
  // Squares underflow (tiny), inputs subnormal, squares overflow (big), near the top of the range (huge).
  const R scales[] = {std::pow(L::min(), R(0.75)), L::min() / R(1000), std::pow(L::max(), R(0.6)),
                      std::pow(L::max(), R(0.95))};
  for (const auto& fname : exported_fortran_names(nrm2_name<T>())) {
    auto* fn = ours_c<typename CApi<T>::nrm2>(fname);
    ASSERT_NE(fn, nullptr);
    for (blas_int n : {0, -3, 1, 2, 17, 1000})
      for (blas_int incx : {1, 2, -1, -3, 0}) {
        auto x = random_cvector<T>(std::max<std::size_t>(1, vlen(std::max<blas_int>(n, 1), incx == 0 ? 1 : incx)), 7);
        check<T>(fn, fname, x, n, incx);
        for (R scale : scales) {
          auto y = x;
          for (auto& v : y) v *= scale;
          check<T>(fn, fname, y, n, incx);
        }
      }
    const auto x = random_cvector<T>(64, 9);
    const R q = L::quiet_NaN(), inf = L::infinity();
    for (const T bad : {T(q, 0.5), T(0.5, q), T(0.25, -inf), T(inf, 0), T(inf, q)}) {
      auto xb = x;
      xb[10] = bad;
      for (blas_int incx : {1, 2, 0, -1}) check<T>(fn, fname, xb, 21, incx);
    }
    const std::vector<T> big(4, T(L::max() * R(0.9), -L::max() * R(0.9)));  // true norm 2.5 max: overflows to Inf
    check<T>(fn, fname, big, 4, 1);
    const std::vector<T> pure_imaginary(5, T(0, 3));  // only imaginary parts: the norm is 3 sqrt(5)
    check<T>(fn, fname, pure_imaginary, 5, 1);
  }
}

// incx <= 0: the CPU library's answer (the reference: the norm over the |incx| stride from the far end, or sqrt(n)
// |x1| for incx = 0), exactly.
TYPED_TEST(ComplexNrm2, NonPositiveIncrementsAreTheCpuLibrarys) {
  using T = TypeParam;
  using R = Real<T>;
  auto* fn = ours_c<typename CApi<T>::nrm2>(nrm2_name<T>() + "_");
  const std::vector<T> x = {T(3, 4), T(1, 0), T(0, 2), T(5, 12)};
  const blas_int n = 4, zero = 0, minus1 = -1;
  const R direct0 = reference_as<typename CApi<T>::nrm2>(nrm2_name<T>() + "_")(&n, x.data(), &zero);
  EXPECT_TRUE(same_bits(fn(&n, x.data(), &zero), direct0));
  EXPECT_TRUE(same_bits(fn(&n, x.data(), &minus1),
                        reference_as<typename CApi<T>::nrm2>(nrm2_name<T>() + "_")(&n, x.data(), &minus1)));
  EXPECT_NEAR(double(direct0), 10.0, 1e-5) << "reference: sqrt(n) |x1| = 2 * 5";
}

TYPED_TEST(ComplexNrm2, CblasMatchesFortran) {
  using T = TypeParam;
  const auto x = random_cvector<T>(301, 11);
  auto* cb = ours_c<typename CApi<T>::cblas_nrm2>("cblas_" + nrm2_name<T>());
  auto* ref = reference_as<typename CApi<T>::cblas_nrm2>("cblas_" + nrm2_name<T>());
  auto* fortran = ours_c<typename CApi<T>::nrm2>(nrm2_name<T>() + "_");
  for (int inc : {1, 3, -1, 0}) {
    const blas_int n = 100;
    SCOPED_TRACE("incx " + std::to_string(inc));
    const auto got = cb(n, x.data(), inc);
    EXPECT_TRUE(same_bits(got, fortran(&n, x.data(), &inc)));
    if (!allow_gpu() || inc <= 0) EXPECT_TRUE(same_bits(got, ref(n, x.data(), inc)));
    if (inc > 0) EXPECT_TRUE(within(got, ref_norm(n, x, inc), (n + 4) * ceps<T>() * double(ref_norm(n, x, inc))));
  }
}

}  // namespace
}  // namespace bt::cx
