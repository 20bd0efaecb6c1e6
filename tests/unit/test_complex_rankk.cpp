// csyrk/zsyrk (trans N, T; complex alpha, beta) and cherk/zherk (trans N, C; real alpha, beta) and their aliases: both
// triangles, shapes from empty to n >> k and n << k, leading dimensions above minimum, special scalars (beta = 0 never
// reads C; alpha = 0 scales C without reading A), NaN/Inf; only C's uplo triangle may change; herk makes the imaginary
// parts of C's diagonal zero exactly where the reference does (every call but the quick return); within the error bound
// of a wider reference and bit-identical to the CPU BLAS unless the GPU may run.
#include "complex_support.h"

namespace bt::cx {
namespace {

// One template for both routines: S is the scalars' type (T for syrk, Real<T> for herk).
template <class T, bool kHerm>
struct RankK {
  using S = std::conditional_t<kHerm, Real<T>, T>;
  using F = std::conditional_t<kHerm, typename CApi<T>::herk, typename CApi<T>::syrk>;
  static std::string base() { return kHerm ? "herk" : "syrk"; }
};

template <class S>
std::string str(const S& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

template <class T, bool kHerm>
void run_case(typename RankK<T, kHerm>::F* fn, const std::string& fname, char uplo, char trans, blas_int n, blas_int k,
              blas_int pad, typename RankK<T, kHerm>::S alpha, typename RankK<T, kHerm>::S beta, std::uint32_t seed) {
  using S = typename RankK<T, kHerm>::S;
  SCOPED_TRACE(fname + " uplo=" + uplo + " trans=" + trans + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
               " pad=" + std::to_string(pad) + " alpha=" + str(alpha) + " beta=" + str(beta));
  const bool nt = is_notrans_c(trans);
  const blas_int ar = nt ? n : k, ac = nt ? k : n;
  const blas_int lda = std::max<blas_int>(1, ar) + pad, ldc = std::max<blas_int>(1, n) + pad;
  auto a = random_cvector<T>(std::size_t(lda) * std::max<blas_int>(ac, 1), seed);
  for (blas_int j = 0; j < ac; ++j)
    for (blas_int i = ar; i < lda; ++i) a[at(i, j, lda)] = cnan<T>();  // A's padding is never read
  // C: random everywhere (the other triangle must come back bit-identical; the diagonal has imaginary parts), poison in
  // the padding rows, NaN in the triangle when beta = 0 (it must not be read).
  auto c0 = random_cvector<T>(std::size_t(ldc) * std::max<blas_int>(n, 1), seed + 1);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < ldc; ++i) {
      if (i >= n)
        c0[at(i, j, ldc)] = cpoison<T>();
      else if (beta == S(0) && in_tri(uplo, i, j))
        c0[at(i, j, ldc)] = cnan<T>();
    }
  auto got = c0, direct = c0;
  fn(&uplo, &trans, &n, &k, &alpha, a.data(), &lda, &beta, got.data(), &ldc, 1, 1);
  reference_as<typename RankK<T, kHerm>::F>(name<T>(RankK<T, kHerm>::base() + "_"))(
      &uplo, &trans, &n, &k, &alpha, a.data(), &lda, &beta, direct.data(), &ldc, 1, 1);
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
  // The reference's quick return touches nothing (herk's diagonal keeps its imaginary parts too).
  const bool quick = n == 0 || ((alpha == S(0) || k == 0) && beta == S(1));
  const double gamma = 2.0 * (k + 4) * ceps<T>();
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < ldc; ++i) {
      const std::size_t p = at(i, j, ldc);
      if (quick || i >= n || !in_tri(uplo, i, j)) {
        ASSERT_TRUE(same_bits(got[p], c0[p])) << "C(" << i << "," << j << ") written (outside the triangle, or quick)";
        continue;
      }
      // op(A) op(A)^T (syrk) or op(A) op(A)^H (herk), op(A) the n x k matrix.
      W<T> s = 0;
      WR mag = 0;
      for (blas_int l = 0; l < k; ++l) {
        const W<T> ail = op_at(trans, a, i, l, lda), ajl = op_at(trans, a, j, l, lda);
        const W<T> t = ail * (kHerm ? std::conj(ajl) : ajl);
        s += t;
        mag += std::abs(t);
      }
      W<T> want = W<T>(alpha) * s;
      mag *= std::abs(W<T>(alpha));
      if (beta != S(0)) {
        // herk reads only the real part of C's diagonal.
        const W<T> cij = kHerm && i == j ? W<T>(c0[p].real()) : W<T>(c0[p]);
        want += W<T>(beta) * cij;
        mag += std::abs(W<T>(beta) * cij);
      }
      if (kHerm && i == j) {
        ASSERT_EQ(got[p].imag(), 0) << "herk: imaginary part of C(" << i << "," << i << ") not zeroed";
        want = want.real();
      }
      ASSERT_TRUE(cwithin(got[p], want, double(gamma * mag) + ctiny<T>())) << "C(" << i << "," << j << ")";
    }
}

BT_COMPLEX_SUITE(ComplexRankK);

TYPED_TEST(ComplexRankK, SyrkBothTrianglesBothTransposesShapesAndScalars) {
  using T = TypeParam;
  const blas_int sizes[][2] = {{0, 3}, {3, 0}, {1, 1}, {7, 5}, {13, 2}, {2, 13}, {25, 4}, {5, 30}};
  const T i1(0, 1);
  const T scalars[][2] = {
      {1, 0},   {1, 1},        {T(-0.5, 0.25), T(2.25, -1)}, {0, T(0.5, -0.5)}, {0, 0}, {0, 1}, {i1, 1},
      {i1, i1}, {0, T(1, 0.5)}};
  std::uint32_t seed = 11000;
  bool first = true;
  for (const auto& fname : fortran_names<T>("syrk")) {
    auto* fn = ours_c<typename CApi<T>::syrk>(fname);
    ASSERT_NE(fn, nullptr);
    for (char uplo : {'U', 'L', 'u', 'l'})
      for (char trans : {'N', 'T', 'n', 't'})
        for (const auto& nk : sizes)
          for (const auto& ab : scalars)
            for (blas_int pad : {0, 2}) {
              if (!first && (nk[0] > 7 || nk[1] > 5 || pad)) continue;
              run_case<T, false>(fn, fname, uplo, trans, nk[0], nk[1], pad, ab[0], ab[1], seed++);
            }
    first = false;
  }
}

TYPED_TEST(ComplexRankK, HerkBothTrianglesBothTransposesShapesAndScalars) {
  using T = TypeParam;
  using R = Real<T>;
  const blas_int sizes[][2] = {{0, 3}, {3, 0}, {1, 1}, {7, 5}, {13, 2}, {2, 13}, {25, 4}, {5, 30}};
  const R scalars[][2] = {{1, 0}, {1, 1}, {-0.5, 2.25}, {0, 0.5}, {0, 0}, {0, 1}, {1.5, -1}, {0.75, 0.5}};
  std::uint32_t seed = 12000;
  bool first = true;
  for (const auto& fname : fortran_names<T>("herk")) {
    auto* fn = ours_c<typename CApi<T>::herk>(fname);
    ASSERT_NE(fn, nullptr);
    for (char uplo : {'U', 'L', 'u', 'l'})
      for (char trans : {'N', 'C', 'n', 'c'})
        for (const auto& nk : sizes)
          for (const auto& ab : scalars)
            for (blas_int pad : {0, 2}) {
              if (!first && (nk[0] > 7 || nk[1] > 5 || pad)) continue;
              run_case<T, true>(fn, fname, uplo, trans, nk[0], nk[1], pad, ab[0], ab[1], seed++);
            }
    first = false;
  }
}

// Quick returns touch nothing; alpha = 0 (or k = 0) scales C's triangle without reading A (all NaN here): herk also
// zeroes the imaginary parts of the diagonal, and beta = 0 clears the triangle.
TYPED_TEST(ComplexRankK, QuickReturnsAndAlphaZeroNeverReadA) {
  using T = TypeParam;
  using R = Real<T>;
  auto* syrk = ours_c<typename CApi<T>::syrk>(name<T>("syrk_"));
  auto* herk = ours_c<typename CApi<T>::herk>(name<T>("herk_"));
  const blas_int n = 5, k = 3, zero = 0, ld = 6;
  const std::vector<T> a(std::size_t(ld) * 6, cnan<T>());
  std::vector<T> c(std::size_t(ld) * n, cpoison<T>());
  const T one = 1, zc = 0, i1(0, 1);
  const R rone = 1, rzero = 0, rhalf = 0.5;
  syrk("U", "N", &zero, &k, &i1, a.data(), &ld, &i1, c.data(), &ld, 1, 1);       // n = 0
  syrk("L", "T", &n, &k, &zc, a.data(), &ld, &one, c.data(), &ld, 1, 1);         // alpha = 0, beta = 1
  syrk("U", "T", &n, &zero, &i1, a.data(), &ld, &one, c.data(), &ld, 1, 1);      // k = 0, beta = 1
  herk("U", "N", &zero, &k, &rone, a.data(), &ld, &rhalf, c.data(), &ld, 1, 1);  // n = 0
  herk("L", "C", &n, &k, &rzero, a.data(), &ld, &rone, c.data(), &ld, 1, 1);     // alpha = 0, beta = 1
  herk("U", "N", &n, &zero, &rone, a.data(), &ld, &rone, c.data(), &ld, 1, 1);   // k = 0, beta = 1
  for (const T& v : c) ASSERT_TRUE(same_bits(v, cpoison<T>()));
  for (char uplo : {'U', 'L'}) {
    SCOPED_TRACE(std::string("uplo ") + uplo);
    const auto c0 = random_cvector<T>(std::size_t(ld) * n, 5);
    auto cs = c0, ch = c0;
    syrk(&uplo, "N", &n, &k, &zc, a.data(), &ld, &i1, cs.data(), &ld, 1, 1);        // alpha = 0: C := i C
    herk(&uplo, "C", &n, &k, &rzero, a.data(), &ld, &rhalf, ch.data(), &ld, 1, 1);  // alpha = 0: C := C / 2
    for (blas_int j = 0; j < n; ++j)
      for (blas_int i = 0; i < ld; ++i) {
        const std::size_t p = at(i, j, ld);
        const bool tri = i < n && in_tri(uplo, i, j);
        ASSERT_EQ(cs[p], tri ? i1 * c0[p] : c0[p]) << "syrk C(" << i << "," << j << ")";
        ASSERT_EQ(ch[p], !tri     ? c0[p]
                         : i == j ? T(rhalf * c0[p].real(), 0)
                                  : rhalf * c0[p])
            << "herk C(" << i << "," << j << ")";
      }
    syrk(&uplo, "T", &n, &zero, &one, a.data(), &ld, &zc, cs.data(), &ld, 1, 1);      // k = 0, beta = 0: zeroed
    herk(&uplo, "N", &n, &zero, &rone, a.data(), &ld, &rzero, ch.data(), &ld, 1, 1);  // k = 0, beta = 0: zeroed
    for (blas_int j = 0; j < n; ++j)
      for (blas_int i = 0; i < n; ++i)
        if (in_tri(uplo, i, j)) {
          ASSERT_TRUE(same_bits(cs[at(i, j, ld)], T(0))) << "syrk C(" << i << "," << j << ")";
          ASSERT_TRUE(same_bits(ch[at(i, j, ld)], T(0))) << "herk C(" << i << "," << j << ")";
        }
  }
}

// herk with beta = 1 (no scaling) still makes the diagonal real, as the reference does.
TYPED_TEST(ComplexRankK, HerkBetaOneStillZeroesTheDiagonalsImaginaryParts) {
  using T = TypeParam;
  using R = Real<T>;
  auto* herk = ours_c<typename CApi<T>::herk>(name<T>("herk_"));
  const blas_int n = 4, k = 2;
  const R alpha = 1, beta = 1;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'C'}) {
      const auto a = random_cvector<T>(8, 61);
      auto c = random_cvector<T>(16, 62);
      const auto c0 = c;
      herk(&uplo, &trans, &n, &k, &alpha, a.data(), &n, &beta, c.data(), &n, 1, 1);
      for (blas_int i = 0; i < n; ++i) {
        ASSERT_NE(c0[at(i, i, n)].imag(), 0);
        EXPECT_EQ(c[at(i, i, n)].imag(), 0) << uplo << trans << " C(" << i << "," << i << ")";
      }
    }
}

// A NaN or Inf in A spoils its row and column of C's triangle, as in the CPU BLAS.
TYPED_TEST(ComplexRankK, NanAndInfPropagateAsTheCpuBlas) {
  using T = TypeParam;
  using R = Real<T>;
  auto* syrk = ours_c<typename CApi<T>::syrk>(name<T>("syrk_"));
  auto* herk = ours_c<typename CApi<T>::herk>(name<T>("herk_"));
  auto* rsyrk = ref_c<T, typename CApi<T>::syrk>("syrk");
  auto* rherk = ref_c<T, typename CApi<T>::herk>("herk");
  const blas_int n = 6, k = 4, ld = 6;
  for (bool herm : {false, true})
    for (char uplo : {'U', 'L'})
      for (char trans : {'N', 'T'})
        for (bool use_inf : {false, true}) {
          const char tr = herm && trans == 'T' ? 'C' : trans;
          SCOPED_TRACE(std::string(herm ? "herk " : "syrk ") + uplo + tr + (use_inf ? " Inf" : " NaN"));
          auto a = random_cvector<T>(std::size_t(ld) * 6, 21);
          for (T& v : a) v += T(v.real() < 0 ? -0.5 : 0.5, 0);  // no zeros: the reference skips zero entries of A
          const blas_int row = 3, l = 1;                        // op(A)(3, 1)
          a[tr == 'N' ? at(row, l, ld) : at(l, row, ld)] =
              use_inf ? cinf<T>() : T(0.5, std::numeric_limits<R>::quiet_NaN());
          auto c = random_cvector<T>(std::size_t(ld) * n, 22), direct = c;
          const T alpha = T(1, 0.5), beta = 1;
          const R ralpha = 0.75, rbeta = 1;
          if (herm) {
            herk(&uplo, &tr, &n, &k, &ralpha, a.data(), &ld, &rbeta, c.data(), &ld, 1, 1);
            rherk(&uplo, &tr, &n, &k, &ralpha, a.data(), &ld, &rbeta, direct.data(), &ld, 1, 1);
          } else {
            syrk(&uplo, &tr, &n, &k, &alpha, a.data(), &ld, &beta, c.data(), &ld, 1, 1);
            rsyrk(&uplo, &tr, &n, &k, &alpha, a.data(), &ld, &beta, direct.data(), &ld, 1, 1);
          }
          expect_nonfinite_as_cpu(c, direct);
          for (blas_int j = 0; j < n; ++j)
            for (blas_int i = 0; i < n; ++i)
              if (in_tri(uplo, i, j)) {
                EXPECT_EQ(finite(c[at(i, j, ld)]), i != row && j != row) << "C(" << i << "," << j << ")";
              }
        }
}

}  // namespace
}  // namespace bt::cx
