// strsv/dtrsv and their aliases: all uplo/trans/diag combinations, increments of both signs, lda > n, a unit
// diagonal, the other triangle and the padding that are never read, and an ill-conditioned triangle compared
// through its backward error.
#include "reference.h"

namespace bt {
namespace {

// A triangle with a dominant diagonal (well conditioned) unless `ill` is set, in which case the diagonal is small
// and the solution grows (condition number far above 1/eps of either precision for n = 40 and more).
template <class T>
std::vector<T> triangle(char uplo, char diag, blas_int n, blas_int lda, bool ill, std::uint32_t seed) {
  auto a = random_vector<T>(std::size_t(lda) * std::max<blas_int>(n, 1), seed);
  for (blas_int j = 0; j < n; ++j) {
    for (blas_int i = 0; i < lda; ++i) {
      T& e = a[at(i, j, lda)];
      const bool in_tri = i < n && (is_upper(uplo) ? i < j : i > j);
      if (i == j)
        e = is_unit(diag) ? nan<T>() : (ill ? T(0.5) + T(0.1) * e : T(n) + 1);
      else if (!in_tri)
        e = nan<T>();  // the other triangle and padding must not be read
      else if (!ill)
        e /= T(n);  // keeps a unit triangle well conditioned too
    }
  }
  return a;
}

template <class T>
void run_case(typename Api<T>::trsv* fn, const std::string& fname, char uplo, char trans, char diag, blas_int n,
              blas_int pad, blas_int incx, bool ill, std::uint32_t seed) {
  SCOPED_TRACE(fname + " " + uplo + trans + diag + " n=" + std::to_string(n) + " incx=" + std::to_string(incx) +
               (ill ? " ill-conditioned" : ""));
  const blas_int lda = std::max<blas_int>(1, n) + pad;
  const auto a = triangle<T>(uplo, diag, n, lda, ill, seed);
  auto x0 = random_vector<T>(vlen(n, incx), seed + 1);
  std::vector<bool> is_x(x0.size(), false);
  for (blas_int i = 0; i < n; ++i) is_x[vstart(n, incx) + std::ptrdiff_t(i) * incx] = true;
  for (std::size_t p = 0; p < x0.size(); ++p)
    if (!is_x[p]) x0[p] = kPoison<T>;
  auto got = x0, direct = x0;
  fn(&uplo, &trans, &diag, &n, a.data(), &lda, got.data(), &incx, 1, 1, 1);
  reference_as<typename Api<T>::trsv>(name<T>("trsv_"))(&uplo, &trans, &diag, &n, a.data(), &lda, direct.data(), &incx,
                                                        1, 1, 1);
  for (std::size_t p = 0; p < got.size(); ++p)
    if (!is_x[p]) {
      ASSERT_TRUE(same_bits(got[p], kPoison<T>)) << "guard element " << p << " written";
    }
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
  // Backward error: |op(T) x - b| <= c n eps (|op(T)| |x| + |b|) row-wise, the bound a substitution meets whatever
  // the conditioning (Higham, Thm 8.5). Residuals in the wider type.
  const std::size_t s0 = vstart(n, incx);
  const bool lower = is_upper(uplo) != is_notrans(trans);
  for (blas_int i = 0; i < n; ++i) {
    Acc<T> r = 0, mag = 0;
    for (blas_int j = 0; j < n; ++j) {
      if (lower ? j > i : j < i) continue;
      const Acc<T> t = (i == j && is_unit(diag)) ? 1 : is_notrans(trans) ? a[at(i, j, lda)] : a[at(j, i, lda)];
      const Acc<T> p = t * got[s0 + std::ptrdiff_t(j) * incx];
      r += p;
      mag += std::fabs(p);
    }
    const Acc<T> b = x0[s0 + std::ptrdiff_t(i) * incx];
    ASSERT_TRUE(within(r, b, double(4.0 * (n + 1) * eps<T>() * (mag + std::fabs(b))) + tiny<T>())) << "row " << i;
  }
  if (!ill) {  // well conditioned: forward error small too
    const auto want = ref_trsv(uplo, trans, diag, n, a, lda, x0, incx);
    for (blas_int i = 0; i < n; ++i)
      ASSERT_TRUE(
          within(got[s0 + std::ptrdiff_t(i) * incx], want[i], double(8 * n * eps<T>() * (1 + std::fabs(want[i])))))
          << "x(" << i << ")";
  }
}

BT_PRECISION_SUITE(Trsv);

TYPED_TEST(Trsv, AllCombinationsIncrementsAndConditioning) {
  using T = TypeParam;
  std::uint32_t seed = 500;
  for (const auto& fname : fortran_names<T>("trsv")) {
    auto* fn = ours_as<typename Api<T>::trsv>(fname);
    ASSERT_NE(fn, nullptr);
    for (char uplo : {'U', 'L', 'l'})
      for (char trans : {'N', 'T', 'C', 't'})
        for (char diag : {'N', 'U', 'u'})
          for (blas_int n : {0, 1, 2, 7, 40})
            for (blas_int incx : {1, -1, 3, -2})
              for (bool ill : {false, true}) run_case<T>(fn, fname, uplo, trans, diag, n, n % 3, incx, ill, seed++);
  }
}

// A NaN or Inf in b reaches the entries of x that depend on it, as in the CPU BLAS.
TYPED_TEST(Trsv, NanAndInfPropagate) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::trsv>(name<T>("trsv_"));
  const blas_int n = 6, one = 1;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'})
      for (bool use_inf : {false, true}) {
        SCOPED_TRACE(std::string(1, uplo) + trans + (use_inf ? " Inf" : " NaN"));
        const auto a = triangle<T>(uplo, 'N', n, n, false, 77);
        auto x = random_vector<T>(n, 78);
        for (T& v : x) v = v < 0 ? v - T(0.5) : v + T(0.5);  // no zeros: reference skips zero entries
        x[2] = use_inf ? inf<T>() : nan<T>();
        auto direct = x;
        fn(&uplo, &trans, "N", &n, a.data(), &n, x.data(), &one, 1, 1, 1);
        reference_as<typename Api<T>::trsv>(name<T>("trsv_"))(&uplo, &trans, "N", &n, a.data(), &n, direct.data(), &one,
                                                              1, 1, 1);
        expect_nonfinite_as_cpu(x, direct);
      }
}

}  // namespace
}  // namespace bt
