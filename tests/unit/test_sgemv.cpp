// sgemv_ and its aliases: N/T/C, increments of both signs, lda > m, special alpha/beta, guard zones.
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

using Fn = blasoffload::sgemv_fortran_t;

void run_case(Fn* fn, const std::string& name, char t, blas_int m, blas_int n, blas_int pad, float alpha, float beta,
              blas_int incx, blas_int incy, std::uint32_t seed) {
  SCOPED_TRACE(name + " t=" + t + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " incx=" + std::to_string(incx) + " incy=" + std::to_string(incy) + " alpha=" + std::to_string(alpha) +
               " beta=" + std::to_string(beta));
  const blas_int lda = std::max<blas_int>(1, m) + pad;
  const blas_int lx = is_notrans(t) ? n : m, ly = is_notrans(t) ? m : n;
  auto a = random_vector(std::size_t(lda) * std::max<blas_int>(n, 1), seed);
  auto x = random_vector(vlen(lx, incx), seed + 1);
  auto y0 = random_vector(vlen(ly, incy), seed + 2);
  // Elements between the strided entries of y are guard zones.
  std::vector<bool> is_y(y0.size(), false);
  for (blas_int i = 0; i < ly; ++i) is_y[vstart(ly, incy) + std::ptrdiff_t(i) * incy] = true;
  for (std::size_t p = 0; p < y0.size(); ++p)
    if (!is_y[p])
      y0[p] = kPoison;
    else if (beta == 0.0f)
      y0[p] = nan();  // must not be read
  std::vector<double> want, mag;
  ref_gemv(t, m, n, alpha, a, lda, x, incx, beta, y0, incy, want, mag);
  auto got = y0, direct = y0;
  fn(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, got.data(), &incy, 1);
  reference_as<Fn>("sgemv_")(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, direct.data(), &incy, 1);
  if (m == 0 || n == 0 || (alpha == 0.0f && beta == 1.0f)) {  // reference quick return: y untouched
    ASSERT_EQ(std::memcmp(got.data(), y0.data(), 4 * y0.size()), 0);
    return;
  }
  const double gamma = (lx + 2) * kEps * 2;
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (!is_y[p]) {
      ASSERT_EQ(got[p], kPoison) << "guard element " << p << " written";
      continue;
    }
    const blas_int i = blas_int((std::ptrdiff_t(p) - std::ptrdiff_t(vstart(ly, incy))) / incy);
    ASSERT_LE(std::fabs(got[p] - want[i]), gamma * mag[i] + 1e-30) << "y(" << i << ")";
    if (!std::getenv("BLASOFFLOAD_TEST_ALLOW_GPU")) ASSERT_EQ(std::memcmp(&got[p], &direct[p], 4), 0);
  }
}

TEST(Sgemv, AllTransposesIncrementsAndScalars) {
  const blas_int shapes[][2] = {{1, 1}, {9, 4}, {4, 9}, {37, 23}, {0, 3}, {3, 0}};
  const float scalars[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.75f, -1.5f}, {0.0f, 2.0f}, {0.0f, 0.0f}};
  const blas_int incs[] = {1, -1, 3, -2};
  std::uint32_t seed = 100;
  for (const auto& name : exported_fortran_names("sgemv")) {
    Fn* fn = ours_as<Fn>(name);
    ASSERT_NE(fn, nullptr);
    for (char t : {'N', 'T', 'C', 'n', 't'})
      for (const auto& s : shapes)
        for (const auto& ab : scalars)
          for (blas_int incx : incs)
            for (blas_int incy : incs)
              for (blas_int pad : {0, 2}) run_case(fn, name, t, s[0], s[1], pad, ab[0], ab[1], incx, incy, seed++);
  }
}

}  // namespace
}  // namespace bt
