// cblas_sgemm / cblas_sgemv / cblas_strsv in row- and column-major against the reference CBLAS.
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

// Compares ours with the reference within `tol` relative to the reference's magnitude; in CPU mode the
// forwarded result must be bit-identical.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  const bool exact = !std::getenv("BLASOFFLOAD_TEST_ALLOW_GPU");
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (exact)
      ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << "element " << i;
    else
      ASSERT_LE(std::fabs(got[i] - want[i]), tol * (1 + std::fabs(want[i]))) << "element " << i;
  }
}

TEST(Cblas, SgemmBothLayouts) {
  auto* mine = ours_as<blasoffload::sgemm_cblas_t>("cblas_sgemm");
  auto* ref = reference_as<blasoffload::sgemm_cblas_t>("cblas_sgemm");
  std::uint32_t seed = 900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_TRANSPOSE ta : {CblasNoTrans, CblasTrans, CblasConjTrans})
      for (CBLAS_TRANSPOSE tb : {CblasNoTrans, CblasTrans})
        for (float beta : {0.0f, 1.0f, -0.5f}) {
          const int m = 13, n = 7, k = 9, pad = 2;
          const bool row = lay == CblasRowMajor;
          // Stored dimensions of op-less A (m x k or k x m) in the layout's own order.
          const int a_rows = (ta == CblasNoTrans) ? m : k, a_cols = (ta == CblasNoTrans) ? k : m;
          const int b_rows = (tb == CblasNoTrans) ? k : n, b_cols = (tb == CblasNoTrans) ? n : k;
          const int lda = (row ? a_cols : a_rows) + pad, ldb = (row ? b_cols : b_rows) + pad, ldc = (row ? n : m) + pad;
          auto a = random_vector(std::size_t(lda) * (row ? a_rows : a_cols), seed++);
          auto b = random_vector(std::size_t(ldb) * (row ? b_rows : b_cols), seed++);
          auto c = random_vector(std::size_t(ldc) * (row ? m : n), seed++);
          auto c2 = c;
          mine(lay, ta, tb, m, n, k, 1.25f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
          ref(lay, ta, tb, m, n, k, 1.25f, a.data(), lda, b.data(), ldb, beta, c2.data(), ldc);
          SCOPED_TRACE(std::string(row ? "row" : "col") + " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
          expect_close(c, c2, 8 * (k + 2) * kEps);
        }
}

TEST(Cblas, SgemvBothLayouts) {
  auto* mine = ours_as<blasoffload::sgemv_cblas_t>("cblas_sgemv");
  auto* ref = reference_as<blasoffload::sgemv_cblas_t>("cblas_sgemv");
  std::uint32_t seed = 1900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
      for (int incx : {1, -2})
        for (int incy : {1, 3}) {
          const int m = 11, n = 6, lda = (lay == CblasRowMajor ? n : m) + 1;
          const int lx = t == CblasNoTrans ? n : m, ly = t == CblasNoTrans ? m : n;
          auto a = random_vector(std::size_t(lda) * (lay == CblasRowMajor ? m : n), seed++);
          auto x = random_vector(vlen(lx, incx), seed++);
          auto y = random_vector(vlen(ly, incy), seed++);
          auto y2 = y;
          mine(lay, t, m, n, -0.5f, a.data(), lda, x.data(), incx, 2.0f, y.data(), incy);
          ref(lay, t, m, n, -0.5f, a.data(), lda, x.data(), incx, 2.0f, y2.data(), incy);
          expect_close(y, y2, 8 * (m + n) * kEps);
        }
}

TEST(Cblas, StrsvBothLayouts) {
  auto* mine = ours_as<blasoffload::strsv_cblas_t>("cblas_strsv");
  auto* ref = reference_as<blasoffload::strsv_cblas_t>("cblas_strsv");
  std::uint32_t seed = 2900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
      for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
        for (CBLAS_DIAG d : {CblasUnit, CblasNonUnit})
          for (int inc : {1, -2}) {
            const int n = 12, lda = n + 3;
            auto a = random_vector(std::size_t(lda) * n, seed++);
            for (int i = 0; i < n; ++i) a[std::size_t(i) * lda + i] = 4.0f;  // well conditioned either layout
            auto x = random_vector(vlen(n, inc), seed++);
            auto x2 = x;
            mine(lay, ul, t, d, n, a.data(), lda, x.data(), inc);
            ref(lay, ul, t, d, n, a.data(), lda, x2.data(), inc);
            expect_close(x, x2, 64 * n * kEps);
          }
}

}  // namespace
}  // namespace bt
