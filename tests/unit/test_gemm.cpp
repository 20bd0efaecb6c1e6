// sgemm/dgemm and their aliases: every transpose, leading dimensions above minimum, special alpha/beta, zero sizes,
// guard zones, magnitudes near overflow and underflow; results within GEMM's error bound of a wider reference and
// bit-identical to the CPU BLAS called directly.
#include "reference.h"

namespace bt {
namespace {

template <class T>
struct Case {
  char ta, tb;
  blas_int m, n, k, pad;  // pad: extra rows in every leading dimension
  T alpha, beta;
  T scale = 1;  // A and B are random in [-scale, scale]
};

template <class T>
void run_case(typename Api<T>::gemm* fn, const std::string& fname, const Case<T>& c, std::uint32_t seed) {
  SCOPED_TRACE(fname + " ta=" + c.ta + " tb=" + c.tb + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
               " k=" + std::to_string(c.k) + " pad=" + std::to_string(c.pad) + " alpha=" + std::to_string(c.alpha) +
               " beta=" + std::to_string(c.beta) + " scale=" + std::to_string(double(c.scale)));
  const bool na = is_notrans(c.ta), nb = is_notrans(c.tb);
  const blas_int ar = na ? c.m : c.k, ac = na ? c.k : c.m, br = nb ? c.k : c.n, bc = nb ? c.n : c.k;
  const blas_int lda = std::max<blas_int>(1, ar) + c.pad, ldb = std::max<blas_int>(1, br) + c.pad,
                 ldc = std::max<blas_int>(1, c.m) + c.pad;
  auto a = random_vector<T>(std::size_t(lda) * std::max<blas_int>(ac, 1), seed);
  auto b = random_vector<T>(std::size_t(ldb) * std::max<blas_int>(bc, 1), seed + 1);
  for (auto& v : a) v *= c.scale;
  for (auto& v : b) v *= c.scale;
  auto c0 = random_vector<T>(std::size_t(ldc) * std::max<blas_int>(c.n, 1), seed + 2);
  // Padding rows of C are guard zones: they must come back untouched.
  for (blas_int j = 0; j < c.n; ++j)
    for (blas_int i = c.m; i < ldc; ++i) c0[at(i, j, ldc)] = kPoison<T>;
  // beta = 0: C must not be read, so NaN in C must not reach the result.
  if (c.beta == T(0))
    for (blas_int j = 0; j < c.n; ++j)
      for (blas_int i = 0; i < c.m; ++i) c0[at(i, j, ldc)] = nan<T>();
  std::vector<Acc<T>> want, mag;
  ref_gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, c0, ldc, want, mag);

  auto got = c0, direct = c0;
  fn(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda, b.data(), &ldb, &c.beta, got.data(), &ldc, 1, 1);
  reference_as<typename Api<T>::gemm>(name<T>("gemm_"))(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda,
                                                        b.data(), &ldb, &c.beta, direct.data(), &ldc, 1, 1);

  // Higham's bound, plus what gradual underflow may lose in each of the k + 2 roundings.
  const double gamma = (c.k + 2) * eps<T>() * 2, floor = (c.k + 2) * std::numeric_limits<T>::denorm_min();
  for (blas_int j = 0; j < c.n; ++j) {
    for (blas_int i = 0; i < ldc; ++i) {
      const std::size_t p = at(i, j, ldc);
      if (i >= c.m) {
        ASSERT_TRUE(same_bits(got[p], kPoison<T>)) << "guard row " << i << " col " << j << " written";
        continue;
      }
      const std::size_t q = at(i, j, c.m);
      ASSERT_TRUE(within(got[p], want[q], double(gamma * mag[q]) + floor)) << "C(" << i << "," << j << ")";
      // Unless the GPU may run, the forwarded call must give the CPU library's exact bits.
      if (!allow_gpu()) {
        ASSERT_TRUE(same_bits(got[p], direct[p])) << "differs from CPU BLAS at " << i << "," << j;
      }
    }
  }
}

BT_PRECISION_SUITE(Gemm);

TYPED_TEST(Gemm, AllTransposesShapesAndScalars) {
  using T = TypeParam;
  const char trans[] = {'N', 'T', 'C', 'n', 't', 'c'};
  const blas_int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {17, 1, 9}, {1, 13, 4}, {33, 31, 64}, {2, 3, 0}};
  const T scalars[][2] = {{1, 0}, {1, 1}, {-0.5, 2.25}, {0, 0.5}, {0, 0}, {1.5, -1}};
  std::uint32_t seed = 1;
  for (const auto& fname : fortran_names<T>("gemm")) {
    auto* fn = ours_as<typename Api<T>::gemm>(fname);
    ASSERT_NE(fn, nullptr);
    for (char ta : trans)
      for (char tb : trans)
        for (const auto& s : sizes)
          for (const auto& ab : scalars)
            for (blas_int pad : {0, 3}) run_case<T>(fn, fname, {ta, tb, s[0], s[1], s[2], pad, ab[0], ab[1]}, seed++);
  }
}

// Products near the overflow threshold (sums stay finite) and in the subnormal range: no spurious overflow,
// underflow or loss of the exponent range (a product computed in a narrower format would show).
TYPED_TEST(Gemm, MagnitudesNearOverflowAndUnderflow) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  const blas_int k = 24;
  const T big = std::sqrt(L::max() / T(4 * k)), small = std::sqrt(L::min()) / T(64);
  auto* fn = ours_as<typename Api<T>::gemm>(name<T>("gemm_"));
  std::uint32_t seed = 300;
  for (T scale : {big, small})
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'})
        for (T beta : {T(0), T(1)}) run_case<T>(fn, name<T>("gemm_"), {ta, tb, 9, 7, k, 1, 1, beta, scale}, seed++);
}

TYPED_TEST(Gemm, ZeroSizesAndQuickReturnsTouchNothing) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::gemm>(name<T>("gemm_"));
  std::vector<T> a(16, 1), b(16, 1), c(16, kPoison<T>);
  const T alpha = 1, beta = 0, beta1 = 1, alpha0 = 0;
  const blas_int zero = 0, four = 4;
  fn("N", "N", &zero, &four, &four, &alpha, a.data(), &four, b.data(), &four, &beta, c.data(), &four, 1, 1);
  fn("N", "N", &four, &zero, &four, &alpha, a.data(), &four, b.data(), &four, &beta, c.data(), &four, 1, 1);
  // alpha = 0 or k = 0 with beta = 1: quick return, C unchanged even though it is "poison".
  fn("N", "N", &four, &four, &zero, &alpha, a.data(), &four, b.data(), &four, &beta1, c.data(), &four, 1, 1);
  fn("N", "N", &four, &four, &four, &alpha0, a.data(), &four, b.data(), &four, &beta1, c.data(), &four, 1, 1);
  for (T v : c) EXPECT_TRUE(same_bits(v, kPoison<T>));
  // k = 0 with beta = 0 clears C (reference semantics).
  fn("N", "N", &four, &four, &zero, &alpha, a.data(), &four, b.data(), &four, &beta, c.data(), &four, 1, 1);
  for (T v : c) EXPECT_EQ(v, T(0));
}

TYPED_TEST(Gemm, NanAndInfPropagate) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::gemm>(name<T>("gemm_"));
  const blas_int n = 4;
  std::vector<T> a(16, 1), b(16, 1), c(16, 0);
  a[at(1, 2, n)] = nan<T>();
  b[at(0, 3, n)] = inf<T>();
  const T alpha = 1, beta = 0;
  fn("N", "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);
  for (blas_int j = 0; j < n; ++j) EXPECT_TRUE(std::isnan(c[at(1, j, n)]));  // row 1 of A has a NaN
  EXPECT_TRUE(std::isinf(c[at(0, 3, n)]));
}

}  // namespace
}  // namespace bt
