// cblas_{c,z}gemm / gemv / trsv / trsm / syrk / herk in row- and column-major, every transpose the routine takes
// (row-major ConjTrans of gemv and trsv included, which no column-major call expresses), complex scalars passed by
// pointer: bit-identical to the reference CBLAS unless the GPU may run, and checked on the logical matrices against a
// wider reference (products) or through residuals (solves); only the outputs' own elements change.
#include "complex_support.h"

namespace bt::cx {
namespace {

// A matrix stored in a CBLAS layout, read as the logical matrix (element (i, j)), widened.
template <class T>
struct Stored {
  const std::vector<T>* a;
  bool row;
  int ld;
  std::size_t pos(int i, int j) const { return row ? std::size_t(i) * ld + j : i + std::size_t(j) * ld; }
  W<T> operator()(int i, int j) const { return W<T>((*a)[pos(i, j)]); }
};
// Element (i, j) of op(M).
template <class T>
W<T> op_of(const Stored<T>& s, CBLAS_TRANSPOSE t, int i, int j) {
  if (t == CblasNoTrans) return s(i, j);
  return t == CblasConjTrans ? std::conj(s(j, i)) : s(j, i);
}
// Element (i, j) of op(T), T the uplo triangle of s (unit diagonal: 1).
template <class T>
W<T> op_tri(const Stored<T>& s, CBLAS_UPLO ul, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int i, int j) {
  if (i == j && d == CblasUnit) return 1;
  const int r = t == CblasNoTrans ? i : j, c = t == CblasNoTrans ? j : i;
  if (ul == CblasUpper ? r > c : r < c) return 0;
  return op_of(s, t, i, j);
}

const char* layout_name(CBLAS_LAYOUT l) { return l == CblasRowMajor ? "row" : "col"; }
char letter(CBLAS_TRANSPOSE t) { return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : 'C'; }

// Ours against the reference CBLAS's result: the same bits on the CPU path, else within tol relative.
template <class T>
void expect_as_reference(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (same_bits(got[i], want[i])) continue;  // untouched padding (NaN or not) included
    ASSERT_TRUE(allow_gpu()) << "element " << i << ": " << got[i] << ", the reference CBLAS's " << want[i];
    ASSERT_TRUE(cwithin(got[i], W<T>(want[i]), tol * (1 + std::abs(want[i])))) << "element " << i;
  }
}

BT_COMPLEX_SUITE(ComplexCblas);

TYPED_TEST(ComplexCblas, GemmBothLayoutsEveryTranspose) {
  using T = TypeParam;
  auto* mine = ours_c<typename CApi<T>::cblas_gemm>(name<T>("gemm", "cblas_"));
  auto* ref = reference_as<typename CApi<T>::cblas_gemm>(name<T>("gemm", "cblas_"));
  const T scalars[][2] = {{T(1.25, 0.5), 0}, {T(0, 1), 1}, {T(-0.5, 0), T(0.5, -0.5)}};
  std::uint32_t seed = 900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_TRANSPOSE ta : {CblasNoTrans, CblasTrans, CblasConjTrans})
      for (CBLAS_TRANSPOSE tb : {CblasNoTrans, CblasTrans, CblasConjTrans})
        for (const auto& ab : scalars) {
          const int m = 13, n = 7, k = 9, pad = 2;
          const bool row = lay == CblasRowMajor;
          const T alpha = ab[0], beta = ab[1];
          SCOPED_TRACE(std::string(layout_name(lay)) + " ta=" + letter(ta) + " tb=" + letter(tb));
          // A is m x k (NoTrans) or k x m, B k x n or n x k, stored in the layout's own order.
          const int ar = ta == CblasNoTrans ? m : k, ac = ta == CblasNoTrans ? k : m;
          const int br = tb == CblasNoTrans ? k : n, bc = tb == CblasNoTrans ? n : k;
          const int lda = (row ? ac : ar) + pad, ldb = (row ? bc : br) + pad, ldc = (row ? n : m) + pad;
          const auto a = random_cvector<T>(std::size_t(lda) * (row ? ar : ac), seed++);
          const auto b = random_cvector<T>(std::size_t(ldb) * (row ? br : bc), seed++);
          auto c0 = random_cvector<T>(std::size_t(ldc) * (row ? m : n), seed++);
          if (beta == T(0)) std::fill(c0.begin(), c0.end(), cnan<T>());  // must not be read
          auto c = c0, want = c0;
          mine(lay, ta, tb, m, n, k, &alpha, a.data(), lda, b.data(), ldb, &beta, c.data(), ldc);
          ref(lay, ta, tb, m, n, k, &alpha, a.data(), lda, b.data(), ldb, &beta, want.data(), ldc);
          expect_as_reference(c, want, 8 * (k + 4) * ceps<T>());
          const Stored<T> sa{&a, row, lda}, sb{&b, row, ldb}, sc{&c0, row, ldc};
          std::vector<bool> is_c(c.size(), false);
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
              is_c[sc.pos(i, j)] = true;
              W<T> s = 0;
              WR mag = 0;
              for (int l = 0; l < k; ++l) {
                const W<T> p = op_of(sa, ta, i, l) * op_of(sb, tb, l, j);
                s += p;
                mag += std::abs(p);
              }
              W<T> w = W<T>(alpha) * s;
              if (beta != T(0)) w += W<T>(beta) * sc(i, j);
              mag = mag * std::abs(W<T>(alpha)) + (beta != T(0) ? std::abs(W<T>(beta) * sc(i, j)) : 0);
              ASSERT_TRUE(cwithin(c[sc.pos(i, j)], w, double(2 * (k + 4) * ceps<T>() * mag))) << i << "," << j;
            }
          for (std::size_t p = 0; p < c.size(); ++p)
            if (!is_c[p]) ASSERT_TRUE(same_bits(c[p], c0[p])) << "padding element " << p << " written";
        }
}

TYPED_TEST(ComplexCblas, GemvBothLayoutsEveryTransposeIncludingRowMajorConjTrans) {
  using T = TypeParam;
  auto* mine = ours_c<typename CApi<T>::cblas_gemv>(name<T>("gemv", "cblas_"));
  auto* ref = reference_as<typename CApi<T>::cblas_gemv>(name<T>("gemv", "cblas_"));
  std::uint32_t seed = 1900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
      for (int incx : {1, -2})
        for (int incy : {1, 3})
          for (const T beta : {T(0), T(2, -1)}) {
            const int m = 11, n = 6, lda = (lay == CblasRowMajor ? n : m) + 1;
            const int lx = t == CblasNoTrans ? n : m, ly = t == CblasNoTrans ? m : n;
            SCOPED_TRACE(std::string(layout_name(lay)) + " t=" + letter(t) + " incx=" + std::to_string(incx) +
                         " incy=" + std::to_string(incy));
            const auto a = random_cvector<T>(std::size_t(lda) * (lay == CblasRowMajor ? m : n), seed++);
            const auto x = random_cvector<T>(vlen(lx, incx), seed++);
            auto y0 = random_cvector<T>(vlen(ly, incy), seed++);
            if (beta == T(0)) std::fill(y0.begin(), y0.end(), cnan<T>());
            auto y = y0, want = y0;
            const T alpha = T(-0.5, 0.25);
            mine(lay, t, m, n, &alpha, a.data(), lda, x.data(), incx, &beta, y.data(), incy);
            ref(lay, t, m, n, &alpha, a.data(), lda, x.data(), incx, &beta, want.data(), incy);
            expect_as_reference(y, want, 8 * (m + n) * ceps<T>());
            const Stored<T> sa{&a, lay == CblasRowMajor, lda};
            for (int i = 0; i < ly; ++i) {
              const std::size_t py = vstart(ly, incy) + std::ptrdiff_t(i) * incy;
              W<T> s = 0;
              WR mag = 0;
              for (int l = 0; l < lx; ++l) {
                const W<T> p = op_of(sa, t, i, l) * W<T>(x[vstart(lx, incx) + std::ptrdiff_t(l) * incx]);
                s += p;
                mag += std::abs(p);
              }
              W<T> w = W<T>(alpha) * s;
              mag *= std::abs(W<T>(alpha));
              if (beta != T(0)) {
                w += W<T>(beta) * W<T>(y0[py]);
                mag += std::abs(W<T>(beta) * W<T>(y0[py]));
              }
              ASSERT_TRUE(cwithin(y[py], w, double(2 * (lx + 4) * ceps<T>() * mag))) << "y(" << i << ")";
            }
            for (std::size_t p = 0; p < y.size(); ++p)
              if (incy != 1 && p % incy != 0) ASSERT_TRUE(same_bits(y[p], y0[p])) << "guard element " << p;
          }
}

TYPED_TEST(ComplexCblas, TrsvBothLayoutsEveryOptionIncludingRowMajorConjTrans) {
  using T = TypeParam;
  auto* mine = ours_c<typename CApi<T>::cblas_trsv>(name<T>("trsv", "cblas_"));
  auto* ref = reference_as<typename CApi<T>::cblas_trsv>(name<T>("trsv", "cblas_"));
  std::uint32_t seed = 2900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
      for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
        for (CBLAS_DIAG d : {CblasUnit, CblasNonUnit})
          for (int inc : {1, -2}) {
            const int n = 12, lda = n + 3;
            SCOPED_TRACE(std::string(layout_name(lay)) + (ul == CblasUpper ? " U" : " L") + letter(t) +
                         (d == CblasUnit ? "U" : "N") + " inc=" + std::to_string(inc));
            auto a = random_cvector<T>(std::size_t(lda) * n, seed++);
            for (int i = 0; i < n; ++i) a[std::size_t(i) * lda + i] = T(4, 1);  // well conditioned either layout
            const auto x0 = random_cvector<T>(vlen(n, inc), seed++);
            auto x = x0, want = x0;
            mine(lay, ul, t, d, n, a.data(), lda, x.data(), inc);
            ref(lay, ul, t, d, n, a.data(), lda, want.data(), inc);
            expect_as_reference(x, want, 64 * n * ceps<T>());
            // The backward error: |op(T) x - b| <= c n eps (|op(T)| |x| + |b|) row by row.
            const Stored<T> sa{&a, lay == CblasRowMajor, lda};
            auto xv = [&](const std::vector<T>& v, int i) { return W<T>(v[vstart(n, inc) + std::ptrdiff_t(i) * inc]); };
            for (int i = 0; i < n; ++i) {
              W<T> r = -xv(x0, i);
              WR mag = std::abs(xv(x0, i));
              for (int j = 0; j < n; ++j) {
                const W<T> p = op_tri(sa, ul, t, d, i, j) * xv(x, j);
                r += p;
                mag += std::abs(p);
              }
              ASSERT_LE(double(std::abs(r)), 8.0 * (n + 1) * ceps<T>() * double(mag)) << "row " << i;
            }
          }
}

TYPED_TEST(ComplexCblas, TrsmBothLayoutsEveryOption) {
  using T = TypeParam;
  auto* mine = ours_c<typename CApi<T>::cblas_trsm>(name<T>("trsm", "cblas_"));
  auto* ref = reference_as<typename CApi<T>::cblas_trsm>(name<T>("trsm", "cblas_"));
  std::uint32_t seed = 3900;
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_SIDE side : {CblasLeft, CblasRight})
      for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
        for (CBLAS_TRANSPOSE t : {CblasNoTrans, CblasTrans, CblasConjTrans})
          for (CBLAS_DIAG d : {CblasUnit, CblasNonUnit})
            for (const T alpha : {T(-1.25, 0.5), T(0, 1)}) {
              const bool row = lay == CblasRowMajor, left = side == CblasLeft;
              const int m = 13, n = 7, pad = 2, tri = left ? m : n;
              const int lda = tri + pad, ldb = (row ? n : m) + pad;
              SCOPED_TRACE(std::string(layout_name(lay)) + (left ? " L" : " R") + (ul == CblasUpper ? "U" : "L") +
                           letter(t) + (d == CblasUnit ? "U" : "N"));
              auto a = random_cvector<T>(std::size_t(lda) * tri, seed++);
              for (int i = 0; i < tri; ++i) a[std::size_t(i) * lda + i] = T(4, -1);  // well conditioned
              const auto b0 = random_cvector<T>(std::size_t(ldb) * (row ? m : n), seed++);
              auto b = b0, want = b0;
              mine(lay, side, ul, t, d, m, n, &alpha, a.data(), lda, b.data(), ldb);
              ref(lay, side, ul, t, d, m, n, &alpha, a.data(), lda, want.data(), ldb);
              expect_as_reference(b, want, 64 * tri * ceps<T>());
              // Residuals of op(A) X = alpha B (left) or X op(A) = alpha B (right), B and X m x n logical.
              const Stored<T> sa{&a, row, lda}, sx{&b, row, ldb}, sb{&b0, row, ldb};
              std::vector<bool> is_b(b.size(), false);
              for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                  is_b[sx.pos(i, j)] = true;
                  W<T> r = -W<T>(alpha) * sb(i, j);
                  WR mag = std::abs(r);
                  for (int l = 0; l < tri; ++l) {
                    const W<T> p = left ? op_tri(sa, ul, t, d, i, l) * sx(l, j) : sx(i, l) * op_tri(sa, ul, t, d, l, j);
                    r += p;
                    mag += std::abs(p);
                  }
                  ASSERT_LE(double(std::abs(r)), 8.0 * (tri + 1) * ceps<T>() * double(mag)) << i << "," << j;
                }
              for (std::size_t p = 0; p < b.size(); ++p)
                if (!is_b[p]) ASSERT_TRUE(same_bits(b[p], b0[p])) << "padding element " << p << " written";
            }
}

// syrk (NoTrans, Trans; complex scalars) and herk (NoTrans, ConjTrans; real scalars): C's logical uplo triangle gets
// alpha op(A) op(A)^T (^H) + beta C, herk's diagonal real; nothing else changes.
template <class T, bool kHerm>
void rank_k_both_layouts(std::uint32_t seed) {
  using S = std::conditional_t<kHerm, Real<T>, T>;
  using F = std::conditional_t<kHerm, typename CApi<T>::cblas_herk, typename CApi<T>::cblas_syrk>;
  const std::string fname = name<T>(kHerm ? "herk" : "syrk", "cblas_");
  auto* mine = ours_c<F>(fname);
  auto* ref = reference_as<F>(fname);
  // A real scalar for herk, a complex one for syrk.
  auto scalar = [](double re, double im) {
    if constexpr (kHerm)
      return S(re);
    else
      return S(Real<T>(re), Real<T>(im));
  };
  const S alpha = scalar(0.75, -0.25);
  for (CBLAS_LAYOUT lay : {CblasRowMajor, CblasColMajor})
    for (CBLAS_UPLO ul : {CblasUpper, CblasLower})
      for (CBLAS_TRANSPOSE t : {CblasNoTrans, kHerm ? CblasConjTrans : CblasTrans})
        for (const S beta : {scalar(0, 0), scalar(1, 0), scalar(-0.5, 0.5)}) {
          const bool row = lay == CblasRowMajor;
          const int n = 11, k = 6, pad = 2;
          SCOPED_TRACE(fname + " " + layout_name(lay) + (ul == CblasUpper ? " U" : " L") + letter(t));
          // A is n x k (NoTrans) or k x n, in the layout's own order.
          const int ar = t == CblasNoTrans ? n : k, ac = t == CblasNoTrans ? k : n;
          const int lda = (row ? ac : ar) + pad, ldc = n + pad;
          const auto a = random_cvector<T>(std::size_t(lda) * (row ? ar : ac), seed++);
          const Stored<T> sa{&a, row, lda};
          auto c0 = random_cvector<T>(std::size_t(ldc) * n, seed++);
          const Stored<T> sc{&c0, row, ldc};
          auto c = c0, want = c0;
          if constexpr (kHerm) {
            mine(lay, ul, t, n, k, alpha, a.data(), lda, beta, c.data(), ldc);
            ref(lay, ul, t, n, k, alpha, a.data(), lda, beta, want.data(), ldc);
          } else {
            mine(lay, ul, t, n, k, &alpha, a.data(), lda, &beta, c.data(), ldc);
            ref(lay, ul, t, n, k, &alpha, a.data(), lda, &beta, want.data(), ldc);
          }
          expect_as_reference(c, want, 8 * (k + 4) * ceps<T>());
          std::vector<bool> in_triangle(c.size(), false);
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              if (ul == CblasUpper ? i > j : i < j) continue;
              const std::size_t p = sc.pos(i, j);
              in_triangle[p] = true;
              W<T> s = 0;
              WR mag = 0;
              for (int l = 0; l < k; ++l) {
                const W<T> ajl = op_of(sa, t, j, l);
                const W<T> q = op_of(sa, t, i, l) * (kHerm ? std::conj(ajl) : ajl);
                s += q;
                mag += std::abs(q);
              }
              const W<T> cij = kHerm && i == j ? W<T>(c0[p].real()) : W<T>(c0[p]);
              W<T> w = W<T>(alpha) * s + (beta != S(0) ? W<T>(beta) * cij : W<T>(0));
              mag = mag * std::abs(W<T>(alpha)) + std::abs(W<T>(beta) * cij);
              if (kHerm && i == j) {
                ASSERT_EQ(c[p].imag(), 0) << "diagonal " << i << " not real";
                w = w.real();
              }
              ASSERT_TRUE(cwithin(c[p], w, double(2 * (k + 4) * ceps<T>() * mag))) << i << "," << j;
            }
          for (std::size_t p = 0; p < c.size(); ++p)
            if (!in_triangle[p]) ASSERT_TRUE(same_bits(c[p], c0[p])) << "element " << p << " outside the triangle";
        }
}

TYPED_TEST(ComplexCblas, SyrkBothLayouts) { rank_k_both_layouts<TypeParam, false>(4900); }
TYPED_TEST(ComplexCblas, HerkBothLayouts) { rank_k_both_layouts<TypeParam, true>(5900); }

}  // namespace
}  // namespace bt::cx
