// cblas_sgemm / cblas_sgemv / cblas_strsv in row- and column-major against the reference CBLAS; cblas_strsm /
// cblas_ssyrk against the reference Fortran routine called on the column-major (for row-major: transposed) problem.
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

// Row-major B (m x n) is column-major B^T: B op(A)^-1 there is op(A^T)^-1 B^T, the other side with the other triangle
// (A^T as stored) and the same op, with m and n swapped.
TEST(Cblas, StrsmBothLayoutsAreTheFortranCallOnTheTransposedProblem) {
  auto* mine = ours_as<blasoffload::strsm_cblas_t>("cblas_strsm");
  auto* fortran = reference_as<blasoffload::strsm_fortran_t>("strsm_");
  std::uint32_t seed = 3900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_SIDE side : {CblasLeft, CblasRight})
      for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
        for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
          for (CBLAS_DIAG d : {CblasUnit, CblasNonUnit}) {
            const bool row = lay == CblasRowMajor;
            const int m = 13, n = 7, pad = 2, tri = side == CblasLeft ? m : n;
            const int lda = tri + pad, ldb = (row ? n : m) + pad;
            auto a = random_vector(std::size_t(lda) * tri, seed++);
            for (int i = 0; i < tri; ++i) a[std::size_t(i) * lda + i] = 4.0f;  // well conditioned either layout
            auto b = random_vector(std::size_t(ldb) * (row ? m : n), seed++);
            auto want = b;
            mine(lay, side, ul, t, d, m, n, -1.25f, a.data(), lda, b.data(), ldb);
            // The column-major problem the call stands for.
            const bool flip = row;
            const char fs = (side == CblasLeft) != flip ? 'L' : 'R', fu = (ul == CblasUpper) != flip ? 'U' : 'L';
            const char ft = t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : 'C', fd = d == CblasUnit ? 'U' : 'N';
            const int fm = row ? n : m, fn = row ? m : n;
            const float alpha = -1.25f;
            fortran(&fs, &fu, &ft, &fd, &fm, &fn, &alpha, a.data(), &lda, want.data(), &ldb, 1, 1, 1, 1);
            SCOPED_TRACE(std::string(row ? "row" : "col") + " " + fs + fu + ft + fd);
            expect_close(b, want, 64 * tri * kEps);
          }
}

// Row-major C is column-major C^T = C with the other triangle stored, and row-major op(A) op(A)^T is, on the stored
// A^T, the other transpose.
TEST(Cblas, SsyrkBothLayoutsAreTheFortranCallOnTheTransposedProblem) {
  auto* mine = ours_as<blasoffload::ssyrk_cblas_t>("cblas_ssyrk");
  auto* fortran = reference_as<blasoffload::ssyrk_fortran_t>("ssyrk_");
  std::uint32_t seed = 4900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
      for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
        for (float beta : {0.0f, 1.0f, -0.5f}) {
          const bool row = lay == CblasRowMajor;
          const int n = 11, k = 6, pad = 2;
          // A is n x k (NoTrans) or k x n, in the layout's own order.
          const int a_rows = t == CblasNoTrans ? n : k, a_cols = t == CblasNoTrans ? k : n;
          const int lda = (row ? a_cols : a_rows) + pad, ldc = n + pad;
          const auto a = random_vector(std::size_t(lda) * (row ? a_rows : a_cols), seed++);
          auto c = random_vector(std::size_t(ldc) * n, seed++);
          auto want = c;
          const auto c0 = c;
          mine(lay, ul, t, n, k, 0.75f, a.data(), lda, beta, c.data(), ldc);
          const char fu = (ul == CblasUpper) != row ? 'U' : 'L';
          const char ft = row ? (t == CblasNoTrans ? 'T' : 'N')
                              : (t == CblasNoTrans ? 'N'
                                 : t == CblasTrans ? 'T'
                                                   : 'C');
          const float alpha = 0.75f;
          fortran(&fu, &ft, &n, &k, &alpha, a.data(), &lda, &beta, want.data(), &ldc, 1, 1);
          SCOPED_TRACE(std::string(row ? "row" : "col") + " " + fu + ft + " beta=" + std::to_string(beta));
          expect_close(c, want, 8 * (k + 2) * kEps);
          // Only the (column-major) triangle may change.
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < ldc; ++i)
              if (i >= n || (fu == 'U' ? i > j : i < j))
                ASSERT_EQ(std::memcmp(&c[std::size_t(j) * ldc + i], &c0[std::size_t(j) * ldc + i], 4), 0)
                    << "element (" << i << "," << j << ") outside the triangle written";
        }
}

}  // namespace
}  // namespace bt
