// sgemv/dgemv and their aliases: N/T/C, increments of both signs, lda > m, special alpha/beta (beta = 0 never reads
// y), zero sizes, guard zones, NaN/Inf.
#include "reference.h"

namespace bt {
namespace {

template <class T>
void run_case(typename Api<T>::gemv* fn, const std::string& fname, char t, blas_int m, blas_int n, blas_int pad,
              T alpha, T beta, blas_int incx, blas_int incy, std::uint32_t seed) {
  SCOPED_TRACE(fname + " t=" + t + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " incx=" + std::to_string(incx) + " incy=" + std::to_string(incy) + " alpha=" + std::to_string(alpha) +
               " beta=" + std::to_string(beta));
  const blas_int lda = std::max<blas_int>(1, m) + pad;
  const blas_int lx = is_notrans(t) ? n : m, ly = is_notrans(t) ? m : n;
  auto a = random_vector<T>(std::size_t(lda) * std::max<blas_int>(n, 1), seed);
  auto x = random_vector<T>(vlen(lx, incx), seed + 1);
  auto y0 = random_vector<T>(vlen(ly, incy), seed + 2);
  // Elements between the strided entries of y are guard zones.
  std::vector<bool> is_y(y0.size(), false);
  for (blas_int i = 0; i < ly; ++i) is_y[vstart(ly, incy) + std::ptrdiff_t(i) * incy] = true;
  for (std::size_t p = 0; p < y0.size(); ++p)
    if (!is_y[p])
      y0[p] = kPoison<T>;
    else if (beta == T(0))
      y0[p] = nan<T>();  // must not be read
  std::vector<Acc<T>> want, mag;
  ref_gemv(t, m, n, alpha, a, lda, x, incx, beta, y0, incy, want, mag);
  auto got = y0, direct = y0;
  fn(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, got.data(), &incy, 1);
  reference_as<typename Api<T>::gemv>(name<T>("gemv_"))(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta,
                                                        direct.data(), &incy, 1);
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) {  // reference quick return: y untouched
    ASSERT_TRUE(same_bits(got, y0));
    return;
  }
  const double gamma = (lx + 2) * eps<T>() * 2;
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (!is_y[p]) {
      ASSERT_TRUE(same_bits(got[p], kPoison<T>)) << "guard element " << p << " written";
      continue;
    }
    const blas_int i = blas_int((std::ptrdiff_t(p) - std::ptrdiff_t(vstart(ly, incy))) / incy);
    ASSERT_TRUE(within(got[p], want[i], double(gamma * mag[i]) + tiny<T>())) << "y(" << i << ")";
    if (!allow_gpu()) {
      ASSERT_TRUE(same_bits(got[p], direct[p])) << "differs from the CPU BLAS at y(" << i << ")";
    }
  }
}

BT_PRECISION_SUITE(Gemv);

TYPED_TEST(Gemv, AllTransposesIncrementsAndScalars) {
  using T = TypeParam;
  const blas_int shapes[][2] = {{1, 1}, {9, 4}, {4, 9}, {37, 23}, {0, 3}, {3, 0}};
  const T scalars[][2] = {{1, 0}, {1, 1}, {0.75, -1.5}, {0, 2}, {0, 0}};
  const blas_int incs[] = {1, -1, 3, -2};
  std::uint32_t seed = 100;
  for (const auto& fname : fortran_names<T>("gemv")) {
    auto* fn = ours_as<typename Api<T>::gemv>(fname);
    ASSERT_NE(fn, nullptr);
    for (char t : {'N', 'T', 'C', 'n', 't'})
      for (const auto& s : shapes)
        for (const auto& ab : scalars)
          for (blas_int incx : incs)
            for (blas_int incy : incs)
              for (blas_int pad : {0, 2}) run_case<T>(fn, fname, t, s[0], s[1], pad, ab[0], ab[1], incx, incy, seed++);
  }
}

// A NaN in A spoils its row of A x (or its column of A^T x); an Inf in x the entries whose row has no zero there.
TYPED_TEST(Gemv, NanAndInfPropagate) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::gemv>(name<T>("gemv_"));
  const blas_int m = 5, n = 4, one = 1;
  for (char t : {'N', 'T'}) {
    SCOPED_TRACE(std::string("trans ") + t);
    std::vector<T> a(std::size_t(m) * n, 1), x(std::max(m, n), 1), y(std::max(m, n), 0);
    a[at(2, 1, m)] = nan<T>();
    const T alpha = 1, beta = 0;
    fn(&t, &m, &n, &alpha, a.data(), &m, x.data(), &one, &beta, y.data(), &one, 1);
    const blas_int ly = t == 'N' ? m : n, spoilt = t == 'N' ? 2 : 1;
    for (blas_int i = 0; i < ly; ++i) ASSERT_EQ(std::isnan(y[i]), i == spoilt) << "y(" << i << ")";
    std::fill(a.begin(), a.end(), T(1));
    x[0] = inf<T>();
    fn(&t, &m, &n, &alpha, a.data(), &m, x.data(), &one, &beta, y.data(), &one, 1);
    for (blas_int i = 0; i < ly; ++i) ASSERT_TRUE(std::isinf(y[i])) << "y(" << i << ")";
  }
}

}  // namespace
}  // namespace bt
