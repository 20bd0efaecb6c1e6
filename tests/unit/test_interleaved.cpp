// Operands that are interleaved pieces of one array, as LAPACK passes them: A, B and C as row blocks of
// one column-major workspace sharing its leading dimension, x and y as alternate elements of one vector.
// Writing the output must not disturb a single byte of the inputs around it. Both precisions.
#include "reference.h"

namespace bt {
namespace {

BT_PRECISION_SUITE(Interleaved);

TYPED_TEST(Interleaved, GemmRowBlocksOfOneArray) {
  using T = TypeParam;
  const blas_int m = 37, n = 29, k = 31, ld = m + k + m + 3;  // rows: A (m x k... as k cols), B, C, padding
  // Column j of the workspace holds A(:, j) in rows [0, m), B(:, j) in rows [m, m + k), C(:, j) in rows
  // [m + k, 2m + k), and a guard row band below.
  const blas_int cols = std::max(k, n);
  auto w = random_vector<T>(std::size_t(ld) * cols, 77);
  const T* a = w.data();
  const T* b = w.data() + m;
  T* c = w.data() + m + k;
  std::vector<T> a_copy(std::size_t(m) * k), b_copy(std::size_t(k) * n), c_copy(std::size_t(m) * n);
  for (blas_int j = 0; j < k; ++j)
    for (blas_int i = 0; i < m; ++i) a_copy[i + std::size_t(j) * m] = a[at(i, j, ld)];
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < k; ++i) b_copy[i + std::size_t(j) * k] = b[at(i, j, ld)];
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i) c_copy[i + std::size_t(j) * m] = c[at(i, j, ld)];
  const auto before = w;
  const T alpha = -1, beta = 1;  // LAPACK's trailing update: C -= A B
  ours_as<typename Api<T>::gemm>(name<T>("gemm_"))("N", "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
  std::vector<Acc<T>> want, mag;
  ref_gemm('N', 'N', m, n, k, alpha, a_copy, m, b_copy, k, beta, c_copy, m, want, mag);
  for (blas_int j = 0; j < cols; ++j)
    for (blas_int i = 0; i < ld; ++i) {
      const std::size_t p = at(i, j, ld);
      const bool in_c = i >= m + k && i < 2 * m + k && j < n;
      if (!in_c) {
        ASSERT_TRUE(same_bits(w[p], before[p])) << "input/guard element (" << i << "," << j << ") changed";
        continue;
      }
      const std::size_t q = std::size_t(i - m - k) + std::size_t(j) * m;
      ASSERT_TRUE(within(w[p], want[q], double(2 * (k + 2) * eps<T>() * mag[q]) + tiny<T>()))
          << "C(" << i - m - k << "," << j << ")";
    }
}

TYPED_TEST(Interleaved, GemvAlternateElementsOfOneVector) {
  using T = TypeParam;
  for (char t : {'N', 'T'}) {
    const blas_int m = 41, n = 41, lda = m + 2, two = 2;
    auto a = random_vector<T>(std::size_t(lda) * n, 5);
    auto v = random_vector<T>(2 * std::size_t(m), 6);  // x at even, y at odd positions
    const auto before = v;
    std::vector<T> x(n), y(m);
    for (blas_int i = 0; i < n; ++i) x[i] = v[2 * i];
    for (blas_int i = 0; i < m; ++i) y[i] = v[2 * i + 1];
    const T alpha = 0.5, beta = -2;
    ours_as<typename Api<T>::gemv>(name<T>("gemv_"))(&t, &m, &n, &alpha, a.data(), &lda, v.data(), &two, &beta,
                                                     v.data() + 1, &two, 1);
    std::vector<Acc<T>> want, mag;
    const blas_int one = 1;
    ref_gemv(t, m, n, alpha, a, lda, x, one, beta, y, one, want, mag);
    for (blas_int i = 0; i < m; ++i) {
      ASSERT_TRUE(same_bits(v[2 * i], before[2 * i])) << "x(" << i << ") changed";
      ASSERT_TRUE(within(v[2 * i + 1], want[i], double(2 * (n + 2) * eps<T>() * mag[i]) + tiny<T>()))
          << "y(" << i << ")";
    }
  }
}

TYPED_TEST(Interleaved, TrsvRightHandSideInsideTheMatrixArray) {
  using T = TypeParam;
  // x is row 0 of the strictly unused part of a lower triangle's array (stride lda), as LAPACK solves
  // with a vector stored inside a workspace: only x's elements may change.
  const blas_int n = 33, lda = n + 1;
  auto a = random_vector<T>(std::size_t(lda) * (n + 1), 9);
  for (blas_int i = 0; i < n; ++i) a[at(i, i, lda)] = 4;
  // The triangle occupies columns [0, n); x lives in the extra row n across columns 0..n-1.
  T* x = a.data() + n;
  const auto before = a;
  std::vector<T> xv(n);
  for (blas_int i = 0; i < n; ++i) xv[i] = x[std::size_t(i) * lda];
  ours_as<typename Api<T>::trsv>(name<T>("trsv_"))("L", "N", "N", &n, a.data(), &lda, x, &lda, 1, 1, 1);
  const blas_int one = 1;
  auto want = ref_trsv('L', 'N', 'N', n, before, lda, xv, one);
  for (blas_int j = 0; j < n + 1; ++j)
    for (blas_int i = 0; i < lda; ++i) {
      const std::size_t p = at(i, j, lda);
      if (i == n && j < n) {
        ASSERT_TRUE(within(a[p], want[j], double(16 * n * eps<T>() * (1 + std::fabs(want[j]))))) << "x(" << j << ")";
      } else {
        ASSERT_TRUE(same_bits(a[p], before[p])) << "A(" << i << "," << j << ") changed";
      }
    }
}

}  // namespace
}  // namespace bt
