// strsv_ and its aliases: all 8 uplo/trans/diag combinations, increments of both signs, lda > n, a unit
// diagonal that is never read, and an ill-conditioned triangle compared through its residual.
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

using Fn = blasoffload::strsv_fortran_t;

// A triangle with a dominant diagonal (well conditioned) unless `ill` is set, in which case the diagonal
// is small and the solution grows (condition number far above 1/eps for moderate n).
std::vector<float> triangle(char uplo, char diag, blas_int n, blas_int lda, bool ill, std::uint32_t seed) {
  auto a = random_vector(std::size_t(lda) * std::max<blas_int>(n, 1), seed);
  for (blas_int j = 0; j < n; ++j) {
    for (blas_int i = 0; i < lda; ++i) {
      const bool in_tri = i < n && (is_upper(uplo) ? i < j : i > j);
      if (i == j)
        a[at(i, j, lda)] = is_unit(diag) ? nan() : (ill ? 0.5f + 0.1f * a[at(i, j, lda)] : float(n) + 1.0f);
      else if (!in_tri)
        a[at(i, j, lda)] = nan();  // the other triangle and padding must not be read
      else if (!ill)
        a[at(i, j, lda)] /= float(n);  // keeps a unit triangle well conditioned too
    }
  }
  return a;
}

void run_case(Fn* fn, const std::string& name, char uplo, char trans, char diag, blas_int n, blas_int pad,
              blas_int incx, bool ill, std::uint32_t seed) {
  SCOPED_TRACE(name + " " + uplo + trans + diag + " n=" + std::to_string(n) + " incx=" + std::to_string(incx) +
               (ill ? " ill-conditioned" : ""));
  const blas_int lda = std::max<blas_int>(1, n) + pad;
  auto a = triangle(uplo, diag, n, lda, ill, seed);
  auto x0 = random_vector(vlen(n, incx), seed + 1);
  std::vector<bool> is_x(x0.size(), false);
  for (blas_int i = 0; i < n; ++i) is_x[vstart(n, incx) + std::ptrdiff_t(i) * incx] = true;
  for (std::size_t p = 0; p < x0.size(); ++p)
    if (!is_x[p]) x0[p] = kPoison;
  auto got = x0, direct = x0;
  fn(&uplo, &trans, &diag, &n, a.data(), &lda, got.data(), &incx, 1, 1, 1);
  reference_as<Fn>("strsv_")(&uplo, &trans, &diag, &n, a.data(), &lda, direct.data(), &incx, 1, 1, 1);
  for (std::size_t p = 0; p < got.size(); ++p)
    if (!is_x[p]) ASSERT_EQ(got[p], kPoison) << "guard element " << p << " written";
  if (!std::getenv("BLASOFFLOAD_TEST_ALLOW_GPU"))
    ASSERT_EQ(std::memcmp(got.data(), direct.data(), 4 * got.size()), 0) << "differs from the CPU BLAS";
  // Backward error: || op(T) x - b || <= c n eps (|op(T)| |x|) row-wise, the bound a substitution meets
  // whatever the conditioning (Higham, Thm 8.5).
  const std::size_t s0 = vstart(n, incx);
  for (blas_int i = 0; i < n; ++i) {
    double r = 0, mag = 0;
    for (blas_int j = 0; j < n; ++j) {
      const bool lower = is_upper(uplo) != is_notrans(trans);
      if (lower ? j > i : j < i) continue;
      double t = (i == j && is_unit(diag)) ? 1.0 : is_notrans(trans) ? a[at(i, j, lda)] : a[at(j, i, lda)];
      double xv = got[s0 + std::ptrdiff_t(j) * incx];
      r += t * xv;
      mag += std::fabs(t * xv);
    }
    const double b = x0[s0 + std::ptrdiff_t(i) * incx];
    ASSERT_LE(std::fabs(r - b), 4.0 * (n + 1) * kEps * (mag + std::fabs(b)) + 1e-30) << "row " << i;
  }
  if (!ill) {  // well conditioned: forward error small too
    auto want = ref_trsv(uplo, trans, diag, n, a, lda, x0, incx);
    for (blas_int i = 0; i < n; ++i)
      ASSERT_NEAR(got[s0 + std::ptrdiff_t(i) * incx], want[i], 8 * n * kEps * (1 + std::fabs(want[i])));
  }
}

TEST(Strsv, AllCombinationsIncrementsAndConditioning) {
  std::uint32_t seed = 500;
  for (const auto& name : exported_fortran_names("strsv")) {
    Fn* fn = ours_as<Fn>(name);
    ASSERT_NE(fn, nullptr);
    for (char uplo : {'U', 'L', 'l'})
      for (char trans : {'N', 'T', 'C', 't'})
        for (char diag : {'N', 'U', 'u'})
          for (blas_int n : {0, 1, 2, 7, 40})
            for (blas_int incx : {1, -1, 3, -2})
              for (bool ill : {false, true}) run_case(fn, name, uplo, trans, diag, n, n % 3, incx, ill, seed++);
  }
}

}  // namespace
}  // namespace bt
