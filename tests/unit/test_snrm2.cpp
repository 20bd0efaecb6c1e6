// snrm2_ and its aliases, and cblas_snrm2: random data, extreme magnitudes (no spurious overflow or
// underflow), NaN/Inf, zero and negative sizes and increments (the CPU library's own answer).
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

using Fn = blasoffload::snrm2_fortran_t;

void check(Fn* fn, const std::string& name, const std::vector<float>& x, blas_int n, blas_int incx) {
  SCOPED_TRACE(name + " n=" + std::to_string(n) + " incx=" + std::to_string(incx));
  const float got = fn(&n, x.data(), &incx);
  const float direct = reference_as<Fn>("snrm2_")(&n, x.data(), &incx);
  if (!std::getenv("BLASOFFLOAD_TEST_ALLOW_GPU")) ASSERT_EQ(std::memcmp(&got, &direct, 4), 0);
  if (n <= 0) {
    ASSERT_EQ(got, 0.0f);
    return;
  }
  if (incx <= 0) return;  // libraries differ here; the CPU library's answer (checked above) is the contract
  const double want = ref_nrm2(n, x, incx);
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got));
  } else if (std::isinf(want) || want > 3.4028234663852886e38) {
    ASSERT_TRUE(std::isinf(got));
  } else {
    ASSERT_LE(std::fabs(got - want), 4 * kEps * want + 1e-45) << "want " << want;
  }
}

TEST(Snrm2, RandomExtremesAndSpecialValues) {
  for (const auto& name : exported_fortran_names("snrm2")) {
    Fn* fn = ours_as<Fn>(name);
    ASSERT_NE(fn, nullptr);
    for (blas_int n : {0, -3, 1, 2, 17, 1000})
      for (blas_int incx : {1, 2, -1, 0}) {
        auto x = random_vector(std::max<std::size_t>(1, vlen(std::max<blas_int>(n, 1), incx == 0 ? 1 : incx)), 7);
        check(fn, name, x, n, incx);
        for (float scale : {1e-30f, 1e-40f /* subnormal */, 1e25f, 1e35f}) {
          auto y = x;
          for (auto& v : y) v *= scale;
          check(fn, name, y, n, incx);
        }
      }
    std::vector<float> x = random_vector(64, 9);
    auto xn = x;
    xn[10] = nan();
    check(fn, name, xn, 64, 1);
    auto xi = x;
    xi[20] = -inf();
    check(fn, name, xi, 64, 1);
    std::vector<float> big(4, 3.0e38f);  // true norm 6e38 > FLT_MAX: must overflow to Inf
    check(fn, name, big, 4, 1);
  }
}

TEST(Snrm2, CblasMatchesFortran) {
  auto x = random_vector(301, 11);
  auto* cb = ours_as<float(const int, const float*, const int)>("cblas_snrm2");
  for (int inc : {1, 3, -1}) {
    const blas_int n = 100;
    EXPECT_EQ(cb(n, x.data(), inc), ours_as<Fn>("snrm2_")(&n, x.data(), &inc));
  }
}

}  // namespace
}  // namespace bt
