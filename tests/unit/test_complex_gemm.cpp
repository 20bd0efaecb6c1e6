// cgemm/zgemm and cgemv/zgemv and their aliases: every transpose (N, T, C), leading dimensions above minimum, both
// signs of increments, complex alpha/beta (purely imaginary ones are not zero or one; beta = 0 never reads the output),
// zero sizes, guard zones, magnitudes near overflow and underflow, NaN/Inf; within the error bound of a wider reference
// and bit-identical to the CPU BLAS called directly unless the GPU may run.
#include "complex_support.h"

namespace bt::cx {
namespace {

template <class T>
std::string str(const T& z) {
  std::ostringstream os;
  os << z;
  return os.str();
}

template <class T>
struct GemmCase {
  char ta, tb;
  blas_int m, n, k, pad;  // pad: extra rows in every leading dimension
  T alpha, beta;
  Real<T> scale = 1;  // A and B are random with parts in [-scale, scale]
};

template <class T>
void run_gemm(typename CApi<T>::gemm* fn, const std::string& fname, const GemmCase<T>& c, std::uint32_t seed) {
  SCOPED_TRACE(fname + " ta=" + c.ta + " tb=" + c.tb + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
               " k=" + std::to_string(c.k) + " pad=" + std::to_string(c.pad) + " alpha=" + str(c.alpha) +
               " beta=" + str(c.beta) + " scale=" + std::to_string(double(c.scale)));
  const bool na = is_notrans_c(c.ta), nb = is_notrans_c(c.tb);
  const blas_int ar = na ? c.m : c.k, ac = na ? c.k : c.m, br = nb ? c.k : c.n, bc = nb ? c.n : c.k;
  const blas_int lda = std::max<blas_int>(1, ar) + c.pad, ldb = std::max<blas_int>(1, br) + c.pad,
                 ldc = std::max<blas_int>(1, c.m) + c.pad;
  auto a = random_cvector<T>(std::size_t(lda) * std::max<blas_int>(ac, 1), seed);
  auto b = random_cvector<T>(std::size_t(ldb) * std::max<blas_int>(bc, 1), seed + 1);
  for (auto& v : a) v *= c.scale;
  for (auto& v : b) v *= c.scale;
  auto c0 = random_cvector<T>(std::size_t(ldc) * std::max<blas_int>(c.n, 1), seed + 2);
  for (blas_int j = 0; j < c.n; ++j)
    for (blas_int i = 0; i < ldc; ++i) {
      if (i >= c.m)
        c0[at(i, j, ldc)] = cpoison<T>();  // guard rows: never written
      else if (c.beta == T(0))
        c0[at(i, j, ldc)] = cnan<T>();  // beta = 0: C must not be read
    }

  auto got = c0, direct = c0;
  fn(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda, b.data(), &ldb, &c.beta, got.data(), &ldc, 1, 1);
  ref_c<T, typename CApi<T>::gemm>("gemm")(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda, b.data(), &ldb,
                                           &c.beta, direct.data(), &ldc, 1, 1);

  // A complex multiply-add errs by at most sqrt(2) gamma_2 (Higham 3.6): 2 (k + 4) eps covers the k + 2 roundings of
  // each entry with room; gradual underflow may lose a denormal in each of its real products.
  const double gamma = 2.0 * (c.k + 4) * ceps<T>();
  const double floor = 8.0 * (c.k + 2) * std::numeric_limits<Real<T>>::denorm_min();
  for (blas_int j = 0; j < c.n; ++j)
    for (blas_int i = 0; i < ldc; ++i) {
      const std::size_t p = at(i, j, ldc);
      if (i >= c.m) {
        ASSERT_TRUE(same_bits(got[p], c0[p])) << "guard row " << i << " col " << j << " written";
        continue;
      }
      W<T> s = 0;
      WR mag = 0;
      for (blas_int l = 0; l < c.k; ++l) {
        const W<T> t = op_at(c.ta, a, i, l, lda) * op_at(c.tb, b, l, j, ldb);
        s += t;
        mag += std::abs(t);
      }
      W<T> want = W<T>(c.alpha) * s;
      mag *= std::abs(W<T>(c.alpha));
      if (c.beta != T(0)) {
        want += W<T>(c.beta) * W<T>(c0[p]);
        mag += std::abs(W<T>(c.beta) * W<T>(c0[p]));
      }
      ASSERT_TRUE(cwithin(got[p], want, double(gamma * mag) + floor)) << "C(" << i << "," << j << ")";
    }
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
}

BT_COMPLEX_SUITE(ComplexGemm);

// Every spelling with every transpose pair; the first spelling also with every shape and scalar pair.
TYPED_TEST(ComplexGemm, AllTransposesShapesAndScalars) {
  using T = TypeParam;
  const char trans[] = {'N', 'T', 'C', 'n', 't', 'c'};
  const blas_int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {17, 1, 9}, {1, 13, 4}, {33, 31, 20}, {2, 3, 0}};
  const T i1(0, 1);
  // (alpha, beta): the identity pair, beta = 0 (C not read), alpha = 0 with beta != 1 (C scaled), alpha = i and
  // beta = i (not zero, not one), beta = 1 + 0.5i (not a quick return), the quick return alpha = 0, beta = 1.
  const T scalars[][2] = {{1, 0},
                          {1, 1},
                          {T(-0.5, 0.25), T(2.25, -1)},
                          {0, T(0.5, 0.5)},
                          {0, 0},
                          {i1, 0},
                          {i1, 1},
                          {T(1.5, 0), -i1},
                          {0, T(1, 0.5)},
                          {0, 1}};
  std::uint32_t seed = 1;
  bool first = true;
  for (const auto& fname : fortran_names<T>("gemm")) {
    auto* fn = ours_c<typename CApi<T>::gemm>(fname);
    ASSERT_NE(fn, nullptr);
    for (char ta : trans)
      for (char tb : trans)
        for (const auto& s : sizes)
          for (const auto& ab : scalars)
            for (blas_int pad : {0, 3}) {
              if (!first && (s[0] > 7 || pad || (ab[0] != T(1) && ab[0] != i1))) continue;
              run_gemm<T>(fn, fname, {ta, tb, s[0], s[1], s[2], pad, ab[0], ab[1]}, seed++);
            }
    first = false;
  }
}

// Products near the overflow threshold and in the subnormal range: no spurious overflow, underflow or loss of the
// exponent range.
TYPED_TEST(ComplexGemm, MagnitudesNearOverflowAndUnderflow) {
  using T = TypeParam;
  using L = std::numeric_limits<Real<T>>;
  const blas_int k = 24;
  const Real<T> big = std::sqrt(L::max() / Real<T>(16 * k)), small = std::sqrt(L::min()) / Real<T>(64);
  auto* fn = ours_c<typename CApi<T>::gemm>(name<T>("gemm_"));
  std::uint32_t seed = 300;
  for (Real<T> scale : {big, small})
    for (char ta : {'N', 'T', 'C'})
      for (char tb : {'N', 'C'})
        for (T beta : {T(0), T(1)}) run_gemm<T>(fn, name<T>("gemm_"), {ta, tb, 9, 7, k, 1, 1, beta, scale}, seed++);
}

TYPED_TEST(ComplexGemm, ZeroSizesAndQuickReturnsTouchNothing) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::gemm>(name<T>("gemm_"));
  std::vector<T> a(16, cnan<T>()), b(16, cnan<T>()), c(16, cpoison<T>());
  const T alpha = T(0, 1), beta0 = 0, beta1 = 1, alpha0 = 0;
  const blas_int zero = 0, four = 4;
  fn("N", "C", &zero, &four, &four, &alpha, a.data(), &four, b.data(), &four, &beta0, c.data(), &four, 1, 1);
  fn("C", "N", &four, &zero, &four, &alpha, a.data(), &four, b.data(), &four, &beta0, c.data(), &four, 1, 1);
  // alpha = 0 or k = 0 with beta = 1: quick return, C unchanged; A and B (NaN) not read.
  fn("N", "N", &four, &four, &zero, &alpha, a.data(), &four, b.data(), &four, &beta1, c.data(), &four, 1, 1);
  fn("T", "C", &four, &four, &four, &alpha0, a.data(), &four, b.data(), &four, &beta1, c.data(), &four, 1, 1);
  for (const T& v : c) ASSERT_TRUE(same_bits(v, cpoison<T>()));
  // k = 0 with beta = 0 clears C (reference semantics), without reading it.
  std::fill(c.begin(), c.end(), cnan<T>());
  fn("N", "N", &four, &four, &zero, &alpha, a.data(), &four, b.data(), &four, &beta0, c.data(), &four, 1, 1);
  for (const T& v : c) ASSERT_TRUE(same_bits(v, T(0)));
}

// alpha = i with beta = 1 and beta = i with alpha = 0 are not the quick return (a real-part test would make them one).
TYPED_TEST(ComplexGemm, ImaginaryScalarsAreNotZeroOrOne) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::gemm>(name<T>("gemm_"));
  const blas_int n = 3;
  const auto a = random_cvector<T>(9, 31), b = random_cvector<T>(9, 32), c0 = random_cvector<T>(9, 33);
  const T i1(0, 1), one = 1, zero = 0;
  auto c = c0;
  fn("N", "N", &n, &n, &n, &i1, a.data(), &n, b.data(), &n, &one, c.data(), &n, 1, 1);
  for (std::size_t p = 0; p < c.size(); ++p) EXPECT_FALSE(same_bits(c[p], c0[p])) << "alpha = i treated as zero";
  c = c0;
  fn("N", "N", &n, &n, &n, &zero, a.data(), &n, b.data(), &n, &i1, c.data(), &n, 1, 1);
  for (std::size_t p = 0; p < c.size(); ++p) EXPECT_EQ(c[p], i1 * c0[p]) << "beta = i: C := i C";
}

TYPED_TEST(ComplexGemm, NanAndInfPropagateAsTheCpuBlas) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::gemm>(name<T>("gemm_"));
  auto* ref = ref_c<T, typename CApi<T>::gemm>("gemm");
  const blas_int n = 4;
  for (char ta : {'N', 'C'})
    for (int what = 0; what < 3; ++what) {  // NaN real part in A, NaN imaginary part in A, Inf in B
      SCOPED_TRACE(std::string("ta=") + ta + " case " + std::to_string(what));
      auto a = random_cvector<T>(16, 40), b = random_cvector<T>(16, 41);
      const Real<T> q = std::numeric_limits<Real<T>>::quiet_NaN();
      if (what == 0) a[at(1, 2, n)] = T(q, 0.5);
      if (what == 1) a[at(2, 1, n)] = T(0.5, q);
      if (what == 2) b[at(0, 3, n)] = cinf<T>();
      std::vector<T> c(16, T(0)), direct = c;
      const T alpha = T(1, 0.5), beta = 0;
      fn(&ta, "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);
      ref(&ta, "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, direct.data(), &n, 1, 1);
      expect_nonfinite_as_cpu(c, direct);
    }
}

// ---- gemv ----

template <class T>
void run_gemv(typename CApi<T>::gemv* fn, const std::string& fname, char t, blas_int m, blas_int n, blas_int pad,
              T alpha, T beta, blas_int incx, blas_int incy, std::uint32_t seed) {
  SCOPED_TRACE(fname + " t=" + t + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " incx=" + std::to_string(incx) + " incy=" + std::to_string(incy) + " alpha=" + str(alpha) +
               " beta=" + str(beta) + " pad=" + std::to_string(pad));
  const blas_int lda = std::max<blas_int>(1, m) + pad;
  const blas_int lx = is_notrans_c(t) ? n : m, ly = is_notrans_c(t) ? m : n;
  auto a = random_cvector<T>(std::size_t(lda) * std::max<blas_int>(n, 1), seed);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = m; i < lda; ++i) a[at(i, j, lda)] = cnan<T>();  // A's padding is never read
  const auto x = random_cvector<T>(vlen(lx, incx), seed + 1);
  auto y0 = random_cvector<T>(vlen(ly, incy), seed + 2);
  std::vector<bool> is_y(y0.size(), false);
  for (blas_int i = 0; i < ly; ++i) is_y[vstart(ly, incy) + std::ptrdiff_t(i) * incy] = true;
  for (std::size_t p = 0; p < y0.size(); ++p)
    if (!is_y[p])
      y0[p] = cpoison<T>();  // between the strided entries: guard zones
    else if (beta == T(0))
      y0[p] = cnan<T>();  // must not be read
  auto got = y0, direct = y0;
  fn(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, got.data(), &incy, 1);
  ref_c<T, typename CApi<T>::gemv>("gemv")(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, direct.data(),
                                           &incy, 1);
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) {  // reference quick return: y untouched
    ASSERT_TRUE(same_bits(got, y0));
    return;
  }
  const double gamma = 2.0 * (lx + 4) * ceps<T>();
  const std::size_t x0 = vstart(lx, incx);
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (!is_y[p]) {
      ASSERT_TRUE(same_bits(got[p], cpoison<T>())) << "guard element " << p << " written";
      continue;
    }
    const blas_int i = blas_int((std::ptrdiff_t(p) - std::ptrdiff_t(vstart(ly, incy))) / incy);
    W<T> s = 0;
    WR mag = 0;
    for (blas_int l = 0; l < lx; ++l) {
      const W<T> v = op_at(t, a, i, l, lda) * W<T>(x[x0 + std::ptrdiff_t(l) * incx]);
      s += v;
      mag += std::abs(v);
    }
    W<T> want = W<T>(alpha) * s;
    mag *= std::abs(W<T>(alpha));
    if (beta != T(0)) {
      want += W<T>(beta) * W<T>(y0[p]);
      mag += std::abs(W<T>(beta) * W<T>(y0[p]));
    }
    ASSERT_TRUE(cwithin(got[p], want, double(gamma * mag) + ctiny<T>())) << "y(" << i << ")";
  }
}

BT_COMPLEX_SUITE(ComplexGemv);

TYPED_TEST(ComplexGemv, AllTransposesIncrementsAndScalars) {
  using T = TypeParam;
  const blas_int shapes[][2] = {{1, 1}, {9, 4}, {4, 9}, {37, 23}, {0, 3}, {3, 0}};
  const T i1(0, 1);
  const T scalars[][2] = {{1, 0}, {1, 1}, {T(0.75, -0.25), T(-1.5, 0.5)}, {0, 2}, {0, 0}, {i1, 1}, {0, i1}, {0, 1}};
  const blas_int incs[] = {1, -1, 3, -2};
  std::uint32_t seed = 100;
  bool first = true;
  for (const auto& fname : fortran_names<T>("gemv")) {
    auto* fn = ours_c<typename CApi<T>::gemv>(fname);
    ASSERT_NE(fn, nullptr);
    for (char t : {'N', 'T', 'C', 'n', 't', 'c'})
      for (const auto& s : shapes)
        for (const auto& ab : scalars)
          for (blas_int incx : incs)
            for (blas_int incy : incs)
              for (blas_int pad : {0, 2}) {
                if (!first && (s[0] > 9 || pad || incx != incy)) continue;
                run_gemv<T>(fn, fname, t, s[0], s[1], pad, ab[0], ab[1], incx, incy, seed++);
              }
    first = false;
  }
}

// A NaN in A spoils its row of A x (its column for T and C); an Inf in x spoils every entry; as the CPU BLAS.
TYPED_TEST(ComplexGemv, NanAndInfPropagateAsTheCpuBlas) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::gemv>(name<T>("gemv_"));
  auto* ref = ref_c<T, typename CApi<T>::gemv>("gemv");
  const blas_int m = 5, n = 4, one = 1;
  const Real<T> q = std::numeric_limits<Real<T>>::quiet_NaN();
  for (char t : {'N', 'T', 'C'})
    for (bool use_inf : {false, true}) {
      SCOPED_TRACE(std::string("trans ") + t + (use_inf ? " Inf in x" : " NaN in A"));
      auto a = random_cvector<T>(std::size_t(m) * n, 50), x = random_cvector<T>(std::max(m, n), 51);
      if (use_inf)
        x[0] = T(0.25, std::numeric_limits<Real<T>>::infinity());
      else
        a[at(2, 1, m)] = T(q, 0);
      std::vector<T> y(std::max(m, n), T(0)), direct = y;
      const T alpha = T(0.5, -1), beta = 0;
      fn(&t, &m, &n, &alpha, a.data(), &m, x.data(), &one, &beta, y.data(), &one, 1);
      ref(&t, &m, &n, &alpha, a.data(), &m, x.data(), &one, &beta, direct.data(), &one, 1);
      expect_nonfinite_as_cpu(y, direct);
      const blas_int ly = t == 'N' ? m : n, spoilt = t == 'N' ? 2 : 1;
      for (blas_int i = 0; i < ly; ++i) EXPECT_EQ(finite(y[i]), !use_inf && i != spoilt) << "y(" << i << ")";
    }
}

}  // namespace
}  // namespace bt::cx
