// cblas_?gemm / cblas_?gemv / cblas_?trsv (s and d) in row- and column-major against the reference CBLAS; cblas_?trsm /
// cblas_?syrk against the reference Fortran routine called on the column-major (for row-major: transposed) problem.
#include "reference.h"

namespace bt {
namespace {

// Compares ours with the reference within `tol` relative to the reference's magnitude; in CPU mode the
// forwarded result must be bit-identical.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (same_bits(got[i], want[i])) continue;  // untouched padding (NaN or not) included
    ASSERT_TRUE(allow_gpu()) << "element " << i << ": " << got[i] << ", the CPU BLAS's " << want[i];
    ASSERT_TRUE(within(got[i], want[i], tol * (1 + std::fabs(want[i])))) << "element " << i;
  }
}

// The Fortran option letters of CBLAS arguments; `flip`: in the column-major twin of a row-major call, upper and lower
// (and left and right) swap.
char fortran_trans(CBLAS_TRANSPOSE t) { return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : 'C'; }
char fortran_uplo(CBLAS_UPLO u, bool flip) { return (u == CblasUpper) != flip ? 'U' : 'L'; }
char fortran_side(CBLAS_SIDE s, bool flip) { return (s == CblasLeft) != flip ? 'L' : 'R'; }

BT_PRECISION_SUITE(Cblas);

TYPED_TEST(Cblas, GemmBothLayouts) {
  using T = TypeParam;
  auto* mine = ours_as<typename Api<T>::cblas_gemm>(name<T>("gemm", "cblas_"));
  auto* ref = reference_as<typename Api<T>::cblas_gemm>(name<T>("gemm", "cblas_"));
  std::uint32_t seed = 900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_TRANSPOSE ta : {CblasNoTrans, CblasTrans, CblasConjTrans})
      for (CBLAS_TRANSPOSE tb : {CblasNoTrans, CblasTrans})
        for (T beta : {T(0.0), T(1.0), T(-0.5)}) {
          const int m = 13, n = 7, k = 9, pad = 2;
          const bool row = lay == CblasRowMajor;
          // Stored dimensions of op-less A (m x k or k x m) in the layout's own order.
          const int a_rows = (ta == CblasNoTrans) ? m : k, a_cols = (ta == CblasNoTrans) ? k : m;
          const int b_rows = (tb == CblasNoTrans) ? k : n, b_cols = (tb == CblasNoTrans) ? n : k;
          const int lda = (row ? a_cols : a_rows) + pad, ldb = (row ? b_cols : b_rows) + pad, ldc = (row ? n : m) + pad;
          auto a = random_vector<T>(std::size_t(lda) * (row ? a_rows : a_cols), seed++);
          auto b = random_vector<T>(std::size_t(ldb) * (row ? b_rows : b_cols), seed++);
          auto c = random_vector<T>(std::size_t(ldc) * (row ? m : n), seed++);
          if (beta == T(0)) std::fill(c.begin(), c.end(), nan<T>());  // must not be read
          auto c2 = c;
          mine(lay, ta, tb, m, n, k, T(1.25), a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
          ref(lay, ta, tb, m, n, k, T(1.25), a.data(), lda, b.data(), ldb, beta, c2.data(), ldc);
          SCOPED_TRACE(std::string(row ? "row" : "col") + " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
          expect_close(c, c2, 8 * (k + 2) * eps<T>());
        }
}

TYPED_TEST(Cblas, GemvBothLayouts) {
  using T = TypeParam;
  auto* mine = ours_as<typename Api<T>::cblas_gemv>(name<T>("gemv", "cblas_"));
  auto* ref = reference_as<typename Api<T>::cblas_gemv>(name<T>("gemv", "cblas_"));
  std::uint32_t seed = 1900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
      for (int incx : {1, -2})
        for (int incy : {1, 3}) {
          const int m = 11, n = 6, lda = (lay == CblasRowMajor ? n : m) + 1;
          const int lx = t == CblasNoTrans ? n : m, ly = t == CblasNoTrans ? m : n;
          auto a = random_vector<T>(std::size_t(lda) * (lay == CblasRowMajor ? m : n), seed++);
          auto x = random_vector<T>(vlen(lx, incx), seed++);
          auto y = random_vector<T>(vlen(ly, incy), seed++);
          auto y2 = y;
          mine(lay, t, m, n, T(-0.5), a.data(), lda, x.data(), incx, T(2.0), y.data(), incy);
          ref(lay, t, m, n, T(-0.5), a.data(), lda, x.data(), incx, T(2.0), y2.data(), incy);
          expect_close(y, y2, 8 * (m + n) * eps<T>());
        }
}

TYPED_TEST(Cblas, TrsvBothLayouts) {
  using T = TypeParam;
  auto* mine = ours_as<typename Api<T>::cblas_trsv>(name<T>("trsv", "cblas_"));
  auto* ref = reference_as<typename Api<T>::cblas_trsv>(name<T>("trsv", "cblas_"));
  std::uint32_t seed = 2900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
      for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
        for (CBLAS_DIAG d : {CblasUnit, CblasNonUnit})
          for (int inc : {1, -2}) {
            const int n = 12, lda = n + 3;
            auto a = random_vector<T>(std::size_t(lda) * n, seed++);
            for (int i = 0; i < n; ++i) a[std::size_t(i) * lda + i] = 4;  // well conditioned either layout
            auto x = random_vector<T>(vlen(n, inc), seed++);
            auto x2 = x;
            mine(lay, ul, t, d, n, a.data(), lda, x.data(), inc);
            ref(lay, ul, t, d, n, a.data(), lda, x2.data(), inc);
            expect_close(x, x2, 64 * n * eps<T>());
          }
}

// Row-major B (m x n) is column-major B^T: B op(A)^-1 there is op(A^T)^-1 B^T, the other side with the other triangle
// (A^T as stored) and the same op, with m and n swapped.
TYPED_TEST(Cblas, TrsmBothLayoutsAreTheFortranCallOnTheTransposedProblem) {
  using T = TypeParam;
  auto* mine = ours_as<typename Api<T>::cblas_trsm>(name<T>("trsm", "cblas_"));
  auto* fortran = reference_as<typename Api<T>::trsm>(name<T>("trsm_"));
  std::uint32_t seed = 3900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_SIDE side : {CblasLeft, CblasRight})
      for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
        for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
          for (CBLAS_DIAG d : {CblasUnit, CblasNonUnit}) {
            const bool row = lay == CblasRowMajor;
            const int m = 13, n = 7, pad = 2, tri = side == CblasLeft ? m : n;
            const int lda = tri + pad, ldb = (row ? n : m) + pad;
            auto a = random_vector<T>(std::size_t(lda) * tri, seed++);
            for (int i = 0; i < tri; ++i) a[std::size_t(i) * lda + i] = 4;  // well conditioned either layout
            auto b = random_vector<T>(std::size_t(ldb) * (row ? m : n), seed++);
            auto want = b;
            mine(lay, side, ul, t, d, m, n, T(-1.25), a.data(), lda, b.data(), ldb);
            // The column-major problem the call stands for.
            const char fs = fortran_side(side, row), fu = fortran_uplo(ul, row), ft = fortran_trans(t);
            const char fd = d == CblasUnit ? 'U' : 'N';
            const int fm = row ? n : m, fn = row ? m : n;
            const T alpha = T(-1.25);
            fortran(&fs, &fu, &ft, &fd, &fm, &fn, &alpha, a.data(), &lda, want.data(), &ldb, 1, 1, 1, 1);
            SCOPED_TRACE(std::string(row ? "row" : "col") + " " + fs + fu + ft + fd);
            expect_close(b, want, 64 * tri * eps<T>());
          }
}

// Row-major C is column-major C^T = C with the other triangle stored, and row-major op(A) op(A)^T is, on the stored
// A^T, the other transpose.
TYPED_TEST(Cblas, SyrkBothLayoutsAreTheFortranCallOnTheTransposedProblem) {
  using T = TypeParam;
  auto* mine = ours_as<typename Api<T>::cblas_syrk>(name<T>("syrk", "cblas_"));
  auto* fortran = reference_as<typename Api<T>::syrk>(name<T>("syrk_"));
  std::uint32_t seed = 4900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
      for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
        for (T beta : {T(0.0), T(1.0), T(-0.5)}) {
          const bool row = lay == CblasRowMajor;
          const int n = 11, k = 6, pad = 2;
          // A is n x k (NoTrans) or k x n, in the layout's own order.
          const int a_rows = t == CblasNoTrans ? n : k, a_cols = t == CblasNoTrans ? k : n;
          const int lda = (row ? a_cols : a_rows) + pad, ldc = n + pad;
          const auto a = random_vector<T>(std::size_t(lda) * (row ? a_rows : a_cols), seed++);
          auto c = random_vector<T>(std::size_t(ldc) * n, seed++);
          auto want = c;
          const auto c0 = c;
          mine(lay, ul, t, n, k, T(0.75), a.data(), lda, beta, c.data(), ldc);
          const char fu = fortran_uplo(ul, row);
          const char ft = row ? (t == CblasNoTrans ? 'T' : 'N') : fortran_trans(t);
          const T alpha = T(0.75);
          fortran(&fu, &ft, &n, &k, &alpha, a.data(), &lda, &beta, want.data(), &ldc, 1, 1);
          SCOPED_TRACE(std::string(row ? "row" : "col") + " " + fu + ft + " beta=" + std::to_string(beta));
          expect_close(c, want, 8 * (k + 2) * eps<T>());
          // Only the (column-major) triangle may change.
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < ldc; ++i)
              if (i >= n || (fu == 'U' ? i > j : i < j)) {
                ASSERT_TRUE(same_bits(c[at(i, j, ldc)], c0[at(i, j, ldc)]))
                    << "element (" << i << "," << j << ") outside the triangle written";
              }
        }
}

}  // namespace
}  // namespace bt
