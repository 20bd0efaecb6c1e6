// Operands that are interleaved pieces of one array, as LAPACK passes them: A, B and C as row blocks of
// one column-major workspace sharing its leading dimension, x and y as alternate elements of one vector.
// Writing the output must not disturb a single byte of the inputs around it.
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

TEST(Interleaved, SgemmRowBlocksOfOneArray) {
  const blas_int m = 37, n = 29, k = 31, ld = m + k + m + 3;  // rows: A (m x k... as k cols), B, C, padding
  // Column j of the workspace holds A(:, j) in rows [0, m), B(:, j) in rows [m, m + k), C(:, j) in rows
  // [m + k, 2m + k), and a guard row band below.
  const blas_int cols = std::max(k, n);
  auto w = random_vector(std::size_t(ld) * cols, 77);
  const float* a = w.data();
  const float* b = w.data() + m;
  float* c = w.data() + m + k;
  std::vector<float> a_copy(std::size_t(m) * k), b_copy(std::size_t(k) * n), c_copy(std::size_t(m) * n);
  for (blas_int j = 0; j < k; ++j)
    for (blas_int i = 0; i < m; ++i) a_copy[i + std::size_t(j) * m] = a[at(i, j, ld)];
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < k; ++i) b_copy[i + std::size_t(j) * k] = b[at(i, j, ld)];
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i) c_copy[i + std::size_t(j) * m] = c[at(i, j, ld)];
  const auto before = w;
  const float alpha = -1.0f, beta = 1.0f;  // LAPACK's trailing update: C -= A B
  ours_as<blasoffload::sgemm_fortran_t>("sgemm_")("N", "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
  std::vector<double> want, mag;
  ref_gemm('N', 'N', m, n, k, alpha, a_copy, m, b_copy, k, beta, c_copy, m, want, mag);
  for (blas_int j = 0; j < cols; ++j)
    for (blas_int i = 0; i < ld; ++i) {
      const std::size_t p = at(i, j, ld);
      const bool in_c = i >= m + k && i < 2 * m + k && j < n;
      if (!in_c) {
        ASSERT_EQ(std::memcmp(&w[p], &before[p], 4), 0) << "input/guard element (" << i << "," << j << ") changed";
        continue;
      }
      const std::size_t q = std::size_t(i - m - k) + std::size_t(j) * m;
      ASSERT_LE(std::fabs(w[p] - want[q]), 2 * (k + 2) * kEps * mag[q] + 1e-30) << "C(" << i - m - k << "," << j << ")";
    }
}

TEST(Interleaved, SgemvAlternateElementsOfOneVector) {
  for (char t : {'N', 'T'}) {
    const blas_int m = 41, n = 41, lda = m + 2, two = 2;
    auto a = random_vector(std::size_t(lda) * n, 5);
    auto v = random_vector(2 * std::size_t(m), 6);  // x at even, y at odd positions
    const auto before = v;
    std::vector<float> x(n), y(m);
    for (blas_int i = 0; i < n; ++i) x[i] = v[2 * i];
    for (blas_int i = 0; i < m; ++i) y[i] = v[2 * i + 1];
    const float alpha = 0.5f, beta = -2.0f;
    ours_as<blasoffload::sgemv_fortran_t>("sgemv_")(&t, &m, &n, &alpha, a.data(), &lda, v.data(), &two, &beta,
                                                    v.data() + 1, &two, 1);
    std::vector<double> want, mag;
    const blas_int one = 1;
    ref_gemv(t, m, n, alpha, a, lda, x, one, beta, y, one, want, mag);
    for (blas_int i = 0; i < m; ++i) {
      ASSERT_EQ(std::memcmp(&v[2 * i], &before[2 * i], 4), 0) << "x(" << i << ") changed";
      ASSERT_LE(std::fabs(v[2 * i + 1] - want[i]), 2 * (n + 2) * kEps * mag[i] + 1e-30) << "y(" << i << ")";
    }
  }
}

TEST(Interleaved, StrsvRightHandSideInsideTheMatrixArray) {
  // x is row 0 of the strictly unused part of a lower triangle's array (stride lda), as LAPACK solves
  // with a vector stored inside a workspace: only x's elements may change.
  const blas_int n = 33, lda = n + 1;
  auto a = random_vector(std::size_t(lda) * (n + 1), 9);
  for (blas_int i = 0; i < n; ++i) a[at(i, i, lda)] = 4.0f;
  // The triangle occupies columns [0, n); x lives in the extra row n across columns 0..n-1.
  float* x = a.data() + n;
  const auto before = a;
  std::vector<float> xv(n);
  for (blas_int i = 0; i < n; ++i) xv[i] = x[std::size_t(i) * lda];
  ours_as<blasoffload::strsv_fortran_t>("strsv_")("L", "N", "N", &n, a.data(), &lda, x, &lda, 1, 1, 1);
  const blas_int one = 1;
  auto want = ref_trsv('L', 'N', 'N', n, before, lda, xv, one);
  for (blas_int j = 0; j < n + 1; ++j)
    for (blas_int i = 0; i < lda; ++i) {
      const std::size_t p = at(i, j, lda);
      if (i == n && j < n) {
        ASSERT_NEAR(a[p], want[j], 16 * n * kEps * (1 + std::fabs(want[j]))) << "x(" << j << ")";
      } else {
        ASSERT_EQ(std::memcmp(&a[p], &before[p], 4), 0) << "A(" << i << "," << j << ") changed";
      }
    }
}

}  // namespace
}  // namespace bt
