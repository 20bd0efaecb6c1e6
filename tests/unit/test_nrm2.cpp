// snrm2/dnrm2 and their aliases, and cblas_snrm2/cblas_dnrm2: random data, extreme magnitudes (no spurious overflow
// or underflow), NaN/Inf, zero and negative sizes and increments (the CPU library's own answer).
#include <type_traits>

#include "reference.h"

namespace bt {
namespace {

template <class T>
void check(typename Api<T>::nrm2* fn, const std::string& fname, const std::vector<T>& x, blas_int n, blas_int incx) {
  SCOPED_TRACE(fname + " n=" + std::to_string(n) + " incx=" + std::to_string(incx));
  const T got = fn(&n, x.data(), &incx);
  const T direct = reference_as<typename Api<T>::nrm2>(name<T>("nrm2_"))(&n, x.data(), &incx);
  // incx <= 0 always goes to the CPU library, GPU mode or not.
  if (!allow_gpu() || incx <= 0) {
    ASSERT_TRUE(same_bits(got, direct)) << "got " << got << ", CPU BLAS " << direct;
  }
  if (n <= 0) {
    ASSERT_EQ(got, T(0));
    return;
  }
  if (incx <= 0) return;  // libraries differ here; the CPU library's answer (checked above) is the contract
  const Acc<T> want = ref_nrm2(n, x, incx);
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got));
  } else if (std::isinf(want) || want > std::numeric_limits<T>::max()) {
    ASSERT_TRUE(std::isinf(got)) << "got " << got;
  } else {
    // Single precision: 4 eps, as since the first snrm2 test (the GPU kernel and the reference accumulate in a wider
    // or scaled form). Double: a sum of n squares has relative error up to n u (Higham, 3.1), the square root halves
    // it, twice that: reference dnrm2 itself exceeds 4 eps at n = 1000, and nothing accumulates wider than double.
    const double bound = std::is_same<T, float>::value ? 4 * eps<T>() : (n / 2.0 + 4) * eps<T>();
    ASSERT_TRUE(within(got, want, double(bound * want) + std::numeric_limits<T>::denorm_min()));
  }
}

BT_PRECISION_SUITE(Nrm2);

TYPED_TEST(Nrm2, RandomExtremesAndSpecialValues) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  // Squares underflow (tiny), inputs subnormal, squares overflow (big), near the top of the range (huge).
  const T scales[] = {std::pow(L::min(), T(0.75)), L::min() / T(1000), std::pow(L::max(), T(0.6)),
                      std::pow(L::max(), T(0.95))};
  for (const auto& fname : fortran_names<T>("nrm2")) {
    auto* fn = ours_as<typename Api<T>::nrm2>(fname);
    ASSERT_NE(fn, nullptr);
    for (blas_int n : {0, -3, 1, 2, 17, 1000})
      for (blas_int incx : {1, 2, -1, 0}) {
        auto x = random_vector<T>(std::max<std::size_t>(1, vlen(std::max<blas_int>(n, 1), incx == 0 ? 1 : incx)), 7);
        check<T>(fn, fname, x, n, incx);
        for (T scale : scales) {
          auto y = x;
          for (auto& v : y) v *= scale;
          check<T>(fn, fname, y, n, incx);
        }
      }
    const auto x = random_vector<T>(64, 9);
    auto xn = x;
    xn[10] = nan<T>();
    check<T>(fn, fname, xn, 64, 1);
    auto xi = x;
    xi[20] = -inf<T>();
    check<T>(fn, fname, xi, 64, 1);
    const std::vector<T> big(4, L::max() * T(0.9));  // true norm 1.8 max: must overflow to Inf
    check<T>(fn, fname, big, 4, 1);
  }
}

TYPED_TEST(Nrm2, CblasMatchesFortran) {
  using T = TypeParam;
  const auto x = random_vector<T>(301, 11);
  auto* cb = ours_as<typename Api<T>::cblas_nrm2>(name<T>("nrm2", "cblas_"));
  auto* ref = reference_as<typename Api<T>::cblas_nrm2>(name<T>("nrm2", "cblas_"));
  for (int inc : {1, 3, -1, 0}) {
    const blas_int n = 100;
    SCOPED_TRACE("incx " + std::to_string(inc));
    const T got = cb(n, x.data(), inc);
    EXPECT_TRUE(same_bits(got, ours_as<typename Api<T>::nrm2>(name<T>("nrm2_"))(&n, x.data(), &inc)));
    if (!allow_gpu() || inc <= 0) EXPECT_TRUE(same_bits(got, ref(n, x.data(), inc)));
  }
}

}  // namespace
}  // namespace bt
