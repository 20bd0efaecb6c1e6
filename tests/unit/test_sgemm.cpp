// sgemm_ and its aliases: every transpose, leading dimensions above minimum, special alpha/beta, zero
// sizes, guard zones; results within GEMM's error bound of a double reference and bit-identical to the
// CPU BLAS called directly.
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

using Fn = blasoffload::sgemm_fortran_t;

struct Case {
  char ta, tb;
  blas_int m, n, k, pad;  // pad: extra rows in every leading dimension
  float alpha, beta;
};

void run_case(Fn* fn, const std::string& name, const Case& c, std::uint32_t seed) {
  SCOPED_TRACE(name + " ta=" + c.ta + " tb=" + c.tb + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
               " k=" + std::to_string(c.k) + " pad=" + std::to_string(c.pad) + " alpha=" + std::to_string(c.alpha) +
               " beta=" + std::to_string(c.beta));
  const bool na = is_notrans(c.ta), nb = is_notrans(c.tb);
  const blas_int ar = na ? c.m : c.k, ac = na ? c.k : c.m, br = nb ? c.k : c.n, bc = nb ? c.n : c.k;
  const blas_int lda = std::max<blas_int>(1, ar) + c.pad, ldb = std::max<blas_int>(1, br) + c.pad,
                 ldc = std::max<blas_int>(1, c.m) + c.pad;
  auto a = random_vector(std::size_t(lda) * std::max<blas_int>(ac, 1), seed);
  auto b = random_vector(std::size_t(ldb) * std::max<blas_int>(bc, 1), seed + 1);
  auto c0 = random_vector(std::size_t(ldc) * std::max<blas_int>(c.n, 1), seed + 2);
  // Padding rows of C are guard zones: they must come back untouched.
  for (blas_int j = 0; j < c.n; ++j)
    for (blas_int i = c.m; i < ldc; ++i) c0[at(i, j, ldc)] = kPoison;
  // beta = 0: C must not be read, so NaN in C must not reach the result.
  if (c.beta == 0.0f)
    for (blas_int j = 0; j < c.n; ++j)
      for (blas_int i = 0; i < c.m; ++i) c0[at(i, j, ldc)] = nan();
  std::vector<double> want, mag;
  ref_gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, c0, ldc, want, mag);

  auto got = c0;
  fn(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda, b.data(), &ldb, &c.beta, got.data(), &ldc, 1, 1);
  auto direct = c0;
  reference_as<Fn>("sgemm_")(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda, b.data(), &ldb, &c.beta,
                             direct.data(), &ldc, 1, 1);

  const double gamma = (c.k + 2) * kEps * 2;
  for (blas_int j = 0; j < c.n; ++j) {
    for (blas_int i = 0; i < ldc; ++i) {
      const std::size_t p = at(i, j, ldc);
      if (i >= c.m) {
        ASSERT_EQ(got[p], kPoison) << "guard row " << i << " col " << j << " written";
        continue;
      }
      const std::size_t q = std::size_t(i) + std::size_t(j) * c.m;
      ASSERT_LE(std::fabs(got[p] - want[q]), gamma * mag[q] + 1e-30) << "C(" << i << "," << j << ")";
      // In CPU mode the forwarded call must give the CPU library's exact bits.
      if (!std::getenv("BLASOFFLOAD_TEST_ALLOW_GPU"))
        ASSERT_EQ(std::memcmp(&got[p], &direct[p], sizeof(float)), 0) << "differs from CPU BLAS at " << i << "," << j;
    }
  }
}

TEST(Sgemm, AllTransposesShapesAndScalars) {
  const char trans[] = {'N', 'T', 'C', 'n', 't', 'c'};
  const blas_int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {17, 1, 9}, {1, 13, 4}, {33, 31, 64}, {2, 3, 0}};
  const float scalars[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {-0.5f, 2.25f}, {0.0f, 0.5f}, {0.0f, 0.0f}, {1.5f, -1.0f}};
  std::uint32_t seed = 1;
  for (const auto& name : exported_fortran_names("sgemm")) {
    Fn* fn = ours_as<Fn>(name);
    ASSERT_NE(fn, nullptr);
    for (char ta : trans)
      for (char tb : trans)
        for (const auto& s : sizes)
          for (const auto& ab : scalars)
            for (blas_int pad : {0, 3}) run_case(fn, name, {ta, tb, s[0], s[1], s[2], pad, ab[0], ab[1]}, seed++);
  }
}

TEST(Sgemm, ZeroSizesTouchNothing) {
  Fn* fn = ours_as<Fn>("sgemm_");
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, kPoison);
  const float alpha = 1.0f, beta = 0.0f;
  const blas_int one = 1, zero = 0, four = 4;
  fn("N", "N", &zero, &four, &four, &alpha, a.data(), &four, b.data(), &four, &beta, c.data(), &four, 1, 1);
  fn("N", "N", &four, &zero, &four, &alpha, a.data(), &four, b.data(), &four, &beta, c.data(), &four, 1, 1);
  // alpha = 0 or k = 0 with beta = 1: quick return, C unchanged even though it is "poison".
  const float beta1 = 1.0f, alpha0 = 0.0f;
  fn("N", "N", &four, &four, &zero, &alpha, a.data(), &four, b.data(), &four, &beta1, c.data(), &four, 1, 1);
  fn("N", "N", &four, &four, &four, &alpha0, a.data(), &four, b.data(), &four, &beta1, c.data(), &four, 1, 1);
  for (float v : c) EXPECT_EQ(v, kPoison);
  // k = 0 with beta = 0 clears C (reference semantics).
  fn("N", "N", &four, &four, &zero, &alpha, a.data(), &four, b.data(), &four, &beta, c.data(), &four, 1, 1);
  for (float v : c) EXPECT_EQ(v, 0.0f);
  (void)one;
}

TEST(Sgemm, NanAndInfPropagate) {
  Fn* fn = ours_as<Fn>("sgemm_");
  const blas_int n = 4;
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
  a[at(1, 2, n)] = nan();
  b[at(0, 3, n)] = inf();
  const float alpha = 1.0f, beta = 0.0f;
  fn("N", "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);
  for (blas_int j = 0; j < n; ++j) EXPECT_TRUE(std::isnan(c[at(1, j, n)]));  // row 1 of A has a NaN
  EXPECT_TRUE(std::isinf(c[at(0, 3, n)]));
}

}  // namespace
}  // namespace bt
