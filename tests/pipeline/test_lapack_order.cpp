// LAPACK's order after a GPU eigenvalue or SVD call (lapack_order.h): values out of order by a rounding error inside
// a cluster are sorted with their vectors (columns of Z and U, rows of V^T, wherever each job put them), padding and
// other operands untouched, and values already in order leave everything as it was.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "offload/module/lapack_order.h"

namespace bom {
namespace {

// A column-major m x cols matrix with ld > m whose entry (i, j) encodes i and j, so any move shows.
std::vector<double> Tagged(int64_t ld, int64_t cols, double base) {
  std::vector<double> x(static_cast<size_t>(ld * cols));
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < ld; ++i) x[size_t(i + j * ld)] = base + 1000.0 * j + i;
  return x;
}

TEST(LapackOrder, InOrderMovesNothing) {
  std::vector<double> w = {-2, -1, -1, 0, 3};
  std::vector<double> z = Tagged(7, 5, 0), z0 = z;
  bo_call c{};
  c.routine = bo_routine_id(BO_KIND_SYEVD, BO_PREC_D);
  c.op[0] = 'V';
  c.n = 5, c.a = z.data(), c.lda = 7, c.b = w.data();
  EXPECT_FALSE(put_in_lapack_order<double>(c, BO_KIND_SYEVD));
  EXPECT_EQ(z, z0);
  EXPECT_TRUE(order_of(w.data(), 5, true).empty());
  std::vector<double> s = {5, 5, 2, 0};
  EXPECT_TRUE(order_of(s.data(), 4, false).empty());
}

// Random values with clusters, shuffled slightly (neighbours swapped), in random permutations, through permute_lines:
// every line lands where the stable sort says and padding rows keep their tags.
TEST(LapackOrder, RandomNeighbourSwapsSortColumnsAndRows) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 1 + int64_t(rng() % 40), ld = n + int64_t(rng() % 3);
    std::vector<double> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w[size_t(i)] = double(i / 3);  // clusters of three equal values
    for (int64_t i = 0; i + 1 < n; ++i)
      if (rng() % 3 == 0) std::swap(w[size_t(i)], w[size_t(i + 1)]);
    for (int64_t i = 0; i < n; ++i) w[size_t(i)] += 1e-9 * double(rng() % 5);
    const std::vector<double> w0 = w;
    std::vector<double> z = Tagged(ld, n, 0), z0 = z;       // columns go with w
    std::vector<double> vt = Tagged(ld, n, 5e6), vt0 = vt;  // rows go with w
    const std::vector<int64_t> p = order_of(w.data(), n, true);
    const bool moved = put_in_order<double>(w.data(), n, true, {{z.data(), ld, n, false}, {vt.data(), ld, n, true}});
    EXPECT_EQ(moved, !p.empty());
    for (int64_t i = 0; i + 1 < n; ++i) ASSERT_LE(w[size_t(i)], w[size_t(i + 1)]);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t from = p.empty() ? j : p[size_t(j)];
      EXPECT_EQ(w[size_t(j)], w0[size_t(from)]);
      for (int64_t i = 0; i < ld; ++i) {
        // Z: column j is the old column `from`, padding rows included (the whole column moves, within n rows).
        const double zexp = i < n ? z0[size_t(i + from * ld)] : z0[size_t(i + j * ld)];
        ASSERT_EQ(z[size_t(i + j * ld)], zexp) << "trial " << trial;
        // V^T: row j (j < n) is the old row `from`; rows at or past n are padding and stay.
        if (i < n) {
          const int64_t r = i;  // row index
          const int64_t rfrom = p.empty() ? r : p[size_t(r)];
          ASSERT_EQ(vt[size_t(r + j * ld)], vt0[size_t(rfrom + j * ld)]) << "trial " << trial;
        } else {
          ASSERT_EQ(vt[size_t(i + j * ld)], vt0[size_t(i + j * ld)]);
        }
      }
    }
  }
}

TEST(LapackOrder, StableForEqualValues) {
  std::vector<float> w = {1, 0, 1, 0};
  const std::vector<int64_t> p = order_of(w.data(), 4, true);
  EXPECT_EQ(p, (std::vector<int64_t>{1, 3, 0, 2}));
  std::vector<float> s = {0, 1, 0, 1};
  EXPECT_EQ(order_of(s.data(), 4, false), (std::vector<int64_t>{1, 3, 0, 2}));
}

// Each driver's outputs where its jobs put them: syevr's Z in c.c; the SVD's U (columns) and V^T (rows) in c.c/c.d
// or, for job O, in A; only the first min(m, n) of each move.
struct SvdCase {
  bo_routine_kind kind;
  char ju, jv;
  int64_t m, n;
  int u_in;   // 0 none, 1 A, 2 c.c
  int vt_in;  // 0 none, 1 A, 3 c.d
};

TEST(LapackOrder, SvdJobsFindTheirVectors) {
  const SvdCase cases[] = {
      {BO_KIND_GESVD, 'A', 'A', 6, 4, 2, 3}, {BO_KIND_GESVD, 'S', 'S', 4, 6, 2, 3},
      {BO_KIND_GESVD, 'O', 'S', 6, 4, 1, 3}, {BO_KIND_GESVD, 'S', 'O', 4, 6, 2, 1},
      {BO_KIND_GESVD, 'N', 'A', 5, 5, 0, 3}, {BO_KIND_GESVD, 'A', 'N', 5, 5, 2, 0},
      {BO_KIND_GESDD, 'O', 'O', 6, 4, 1, 3}, {BO_KIND_GESDD, 'O', 'O', 4, 6, 2, 1},
      {BO_KIND_GESDD, 'N', 'N', 4, 6, 0, 0}, {BO_KIND_GESDD, 'A', 'A', 4, 6, 2, 3},
  };
  for (const SvdCase& t : cases) {
    const int64_t m = t.m, n = t.n, k = std::min(m, n), ld = std::max(m, n) + 1;
    std::vector<double> s(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) s[size_t(i)] = double(k - i);
    std::swap(s[0], s[1]);  // one inversion at the top
    std::vector<double> a = Tagged(ld, ld, 1e6), u = Tagged(ld, ld, 2e6), vt = Tagged(ld, ld, 3e6);
    const std::vector<double> a0 = a, u0 = u, vt0 = vt;
    bo_call c{};
    c.op[0] = t.ju, c.op[1] = t.jv;
    c.m = m, c.n = n, c.a = a.data(), c.lda = ld, c.b = s.data(), c.c = u.data(), c.ldc = ld, c.d = vt.data(),
    c.ldd = ld;
    ASSERT_TRUE(put_in_lapack_order<double>(c, t.kind));
    EXPECT_EQ(s[0], double(k));
    EXPECT_EQ(s[1], double(k - 1));
    std::vector<double> a1 = a0, u1 = u0, vt1 = vt0;  // what each matrix should now be
    auto swap_cols = [&](std::vector<double>& x, int64_t rows) {
      for (int64_t i = 0; i < rows; ++i) std::swap(x[size_t(i)], x[size_t(i + ld)]);
    };
    auto swap_rows = [&](std::vector<double>& x, int64_t cols) {
      for (int64_t j = 0; j < cols; ++j) std::swap(x[size_t(j * ld)], x[size_t(1 + j * ld)]);
    };
    if (t.u_in == 1) swap_cols(a1, m);
    if (t.u_in == 2) swap_cols(u1, m);
    if (t.vt_in == 1) swap_rows(a1, n);
    if (t.vt_in == 3) swap_rows(vt1, n);
    EXPECT_EQ(a, a1) << t.ju << t.jv << " " << m << "x" << n;
    EXPECT_EQ(u, u1) << t.ju << t.jv << " " << m << "x" << n;
    EXPECT_EQ(vt, vt1) << t.ju << t.jv << " " << m << "x" << n;
  }
}

TEST(LapackOrder, SyevrVectorsInZ) {
  std::vector<float> w = {1, 0.5f, 2};
  std::vector<float> a(16, 7.0f), z(16);
  for (int i = 0; i < 16; ++i) z[size_t(i)] = float(i);
  bo_call c{};
  c.op[0] = 'V';
  c.n = 3, c.a = a.data(), c.lda = 4, c.b = w.data(), c.c = z.data(), c.ldc = 4;
  ASSERT_TRUE(put_in_lapack_order<float>(c, BO_KIND_SYEVR));
  EXPECT_EQ(w, (std::vector<float>{0.5f, 1, 2}));
  EXPECT_EQ(z, (std::vector<float>{4, 5, 6, 3, 0, 1, 2, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(a, std::vector<float>(16, 7.0f));
  c.op[0] = 'N';
  w = {1, 0.5f, 2};
  ASSERT_TRUE(put_in_lapack_order<float>(c, BO_KIND_SYEVR));
  EXPECT_EQ(w, (std::vector<float>{0.5f, 1, 2}));
  EXPECT_EQ(z[0], 4.0f);  // jobz N: Z not touched
}

// A complex call (zheevd, zgesvd): real values sorted, complex vectors moved with them, both parts of every element.
TEST(LapackOrder, ComplexVectorsMoveWithRealValues) {
  using Z = std::complex<double>;
  std::vector<double> w = {1, 0.5, 2};
  std::vector<Z> a(4 * 3);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) a[size_t(i + j * 4)] = Z(i + 10.0 * j, -(i + 10.0 * j));
  const std::vector<Z> a0 = a;
  bo_call c{};
  c.routine = bo_routine_id(BO_KIND_HEEVD, BO_PREC_Z);
  c.op[0] = 'V';
  c.m = 3, c.n = 3, c.a = a.data(), c.lda = 4, c.b = w.data();
  EXPECT_TRUE(put_in_lapack_order<Z>(c, BO_KIND_SYEVD));
  EXPECT_EQ(w, (std::vector<double>{0.5, 1, 2}));
  const int from[3] = {1, 0, 2};
  for (int j = 0; j < 3; ++j)  // the n rows move, the padding row stays
    for (int i = 0; i < 4; ++i) EXPECT_EQ(a[size_t(i + j * 4)], a0[size_t(i + (i < 3 ? from[j] : j) * 4)]);
  // The SVD's values descending, U's columns and V^H's rows with them.
  std::vector<double> s = {1, 3};
  std::vector<Z> u = {Z(1, 1), Z(2, 2), Z(3, 3), Z(4, 4)}, vt = {Z(5, -5), Z(6, -6), Z(7, -7), Z(8, -8)};
  bo_call d{};
  d.routine = bo_routine_id(BO_KIND_GESVD, BO_PREC_Z);
  d.op[0] = 'S', d.op[1] = 'S';
  d.m = 2, d.n = 2, d.a = nullptr, d.lda = 2, d.b = s.data(), d.c = u.data(), d.ldc = 2, d.d = vt.data(), d.ldd = 2;
  EXPECT_TRUE(put_in_lapack_order<Z>(d, BO_KIND_GESVD));
  EXPECT_EQ(s, (std::vector<double>{3, 1}));
  EXPECT_EQ(u, (std::vector<Z>{Z(3, 3), Z(4, 4), Z(1, 1), Z(2, 2)}));
  EXPECT_EQ(vt, (std::vector<Z>{Z(6, -6), Z(5, -5), Z(8, -8), Z(7, -7)}));
}

}  // namespace
}  // namespace bom
