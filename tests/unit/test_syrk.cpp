// ssyrk/dsyrk and their aliases: both triangles, every transpose, shapes from empty to n >> k and n << k, leading
// dimensions above minimum, special alpha/beta (beta = 0 never reads C), NaN/Inf; only C's uplo triangle may change
// (the other triangle and all padding stay bit-identical); within GEMM's error bound of a wider reference and
// bit-identical to the CPU BLAS unless the GPU may run.
#include "reference.h"

namespace bt {
namespace {

bool in_triangle(char uplo, blas_int i, blas_int j) { return is_upper(uplo) ? i <= j : i >= j; }

template <class T>
struct Case {
  char uplo, trans;
  blas_int n, k, pad;  // pad: extra rows in both leading dimensions
  T alpha, beta;
};

template <class T>
void run_case(typename Api<T>::syrk* fn, const std::string& fname, const Case<T>& c, std::uint32_t seed) {
  SCOPED_TRACE(fname + " uplo=" + c.uplo + " trans=" + c.trans + " n=" + std::to_string(c.n) +
               " k=" + std::to_string(c.k) + " pad=" + std::to_string(c.pad) + " alpha=" + std::to_string(c.alpha) +
               " beta=" + std::to_string(c.beta));
  const bool nt = is_notrans(c.trans);
  const blas_int ar = nt ? c.n : c.k, ac = nt ? c.k : c.n;
  const blas_int lda = std::max<blas_int>(1, ar) + c.pad, ldc = std::max<blas_int>(1, c.n) + c.pad;
  auto a = random_vector<T>(std::size_t(lda) * std::max<blas_int>(ac, 1), seed);
  for (blas_int j = 0; j < ac; ++j)
    for (blas_int i = ar; i < lda; ++i) a[at(i, j, lda)] = nan<T>();  // A's padding is never read
  // C: random everywhere (the other triangle too: it must come back bit-identical), poison in the padding rows, and
  // NaN in the triangle when beta = 0 (it must not be read).
  auto c0 = random_vector<T>(std::size_t(ldc) * std::max<blas_int>(c.n, 1), seed + 1);
  for (blas_int j = 0; j < c.n; ++j)
    for (blas_int i = 0; i < ldc; ++i) {
      if (i >= c.n)
        c0[at(i, j, ldc)] = kPoison<T>;
      else if (c.beta == T(0) && in_triangle(c.uplo, i, j))
        c0[at(i, j, ldc)] = nan<T>();
    }
  // op(A) op(A)^T = A A^T (trans N, A n x k) or A^T A (A k x n): as a GEMM of op(A) with its transpose.
  std::vector<Acc<T>> want, mag;
  ref_gemm(nt ? 'N' : 'T', nt ? 'T' : 'N', c.n, c.n, c.k, c.alpha, a, lda, a, lda, c.beta, c0, ldc, want, mag);

  auto got = c0, direct = c0;
  fn(&c.uplo, &c.trans, &c.n, &c.k, &c.alpha, a.data(), &lda, &c.beta, got.data(), &ldc, 1, 1);
  reference_as<typename Api<T>::syrk>(name<T>("syrk_"))(&c.uplo, &c.trans, &c.n, &c.k, &c.alpha, a.data(), &lda,
                                                        &c.beta, direct.data(), &ldc, 1, 1);

  const double gamma = (c.k + 2) * eps<T>() * 2;
  for (blas_int j = 0; j < c.n; ++j)
    for (blas_int i = 0; i < ldc; ++i) {
      const std::size_t p = at(i, j, ldc);
      if (i >= c.n || !in_triangle(c.uplo, i, j)) {
        ASSERT_TRUE(same_bits(got[p], c0[p])) << "C(" << i << "," << j << ") outside the triangle written";
        continue;
      }
      const std::size_t q = at(i, j, c.n);
      ASSERT_TRUE(within(got[p], want[q], double(gamma * mag[q]) + tiny<T>())) << "C(" << i << "," << j << ")";
    }
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
}

BT_PRECISION_SUITE(Syrk);

TYPED_TEST(Syrk, BothTrianglesAllTransposesShapesAndScalars) {
  using T = TypeParam;
  const blas_int sizes[][2] = {{0, 3}, {3, 0}, {1, 1}, {7, 5}, {13, 2}, {2, 13}, {31, 4}, {5, 40}};
  const T scalars[][2] = {{1, 0}, {1, 1}, {-0.5, 2.25}, {0, 0.5}, {0, 0}, {0, 1}, {1.5, -1}, {0.75, 0.5}};
  std::uint32_t seed = 11000;
  for (const auto& fname : fortran_names<T>("syrk")) {
    auto* fn = ours_as<typename Api<T>::syrk>(fname);
    ASSERT_NE(fn, nullptr);
    for (char uplo : {'U', 'L', 'u', 'l'})
      for (char trans : {'N', 'T', 'C', 'n', 't', 'c'})
        for (const auto& nk : sizes)
          for (const auto& ab : scalars)
            for (blas_int pad : {0, 2}) run_case<T>(fn, fname, {uplo, trans, nk[0], nk[1], pad, ab[0], ab[1]}, seed++);
  }
}

// Quick returns touch nothing, whatever C holds; alpha = 0 scales C's triangle without reading A (all NaN here).
TYPED_TEST(Syrk, QuickReturnsAndAlphaZeroNeverReadA) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::syrk>(name<T>("syrk_"));
  const blas_int n = 5, k = 3, zero = 0, ld = 6;
  const std::vector<T> a(std::size_t(ld) * 6, nan<T>());
  std::vector<T> c(std::size_t(ld) * n, kPoison<T>);
  const T one = 1, alpha0 = 0, half = 0.5, beta0 = 0;
  fn("U", "N", &zero, &k, &one, a.data(), &ld, &half, c.data(), &ld, 1, 1);  // n = 0
  fn("L", "T", &n, &k, &alpha0, a.data(), &ld, &one, c.data(), &ld, 1, 1);   // alpha = 0, beta = 1
  fn("U", "T", &n, &zero, &one, a.data(), &ld, &one, c.data(), &ld, 1, 1);   // k = 0, beta = 1
  for (T v : c) ASSERT_TRUE(same_bits(v, kPoison<T>));
  for (char uplo : {'U', 'L'}) {
    SCOPED_TRACE(std::string("uplo ") + uplo);
    auto c2 = random_vector<T>(std::size_t(ld) * n, 5);
    const auto c0 = c2;
    fn(&uplo, "N", &n, &k, &alpha0, a.data(), &ld, &half, c2.data(), &ld, 1, 1);  // alpha = 0: C := beta C
    for (blas_int j = 0; j < n; ++j)
      for (blas_int i = 0; i < ld; ++i)
        ASSERT_EQ(c2[at(i, j, ld)], i < n && in_triangle(uplo, i, j) ? half * c0[at(i, j, ld)] : c0[at(i, j, ld)]);
    fn(&uplo, "T", &n, &zero, &one, a.data(), &ld, &beta0, c2.data(), &ld, 1, 1);  // k = 0, beta = 0: zeroed
    for (blas_int j = 0; j < n; ++j)
      for (blas_int i = 0; i < ld; ++i)
        if (i < n && in_triangle(uplo, i, j)) {
          ASSERT_TRUE(same_bits(c2[at(i, j, ld)], T(0)));
        }
  }
}

// A NaN in A spoils its row and column of C's triangle; an Inf gives non-finite entries there too; as the CPU BLAS.
TYPED_TEST(Syrk, NanAndInfPropagate) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::syrk>(name<T>("syrk_"));
  const blas_int n = 6, k = 4, ld = 6;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'})
      for (bool use_inf : {false, true}) {
        SCOPED_TRACE(std::string(1, uplo) + trans + (use_inf ? " Inf" : " NaN"));
        auto a = random_vector<T>(std::size_t(ld) * 6, 21);
        for (T& v : a) v = v < 0 ? v - T(0.5) : v + T(0.5);  // no zeros: reference skips zero entries of A
        const blas_int row = 3, l = 1;                       // op(A)(3, 1)
        a[trans == 'N' ? at(row, l, ld) : at(l, row, ld)] = use_inf ? inf<T>() : nan<T>();
        auto c = random_vector<T>(std::size_t(ld) * n, 22), direct = c;
        const T alpha = 1, beta = 1;
        fn(&uplo, &trans, &n, &k, &alpha, a.data(), &ld, &beta, c.data(), &ld, 1, 1);
        reference_as<typename Api<T>::syrk>(name<T>("syrk_"))(&uplo, &trans, &n, &k, &alpha, a.data(), &ld, &beta,
                                                              direct.data(), &ld, 1, 1);
        for (blas_int j = 0; j < n; ++j)
          for (blas_int i = 0; i < n; ++i) {
            if (!in_triangle(uplo, i, j)) continue;
            const bool touched = i == row || j == row;
            ASSERT_EQ(std::isfinite(c[at(i, j, ld)]), !touched) << "C(" << i << "," << j << ")";
            ASSERT_EQ(std::isfinite(direct[at(i, j, ld)]), !touched) << "reference C(" << i << "," << j << ")";
          }
        if (!allow_gpu()) {
          ASSERT_TRUE(same_bits(c, direct));
        }
      }
}

}  // namespace
}  // namespace bt
