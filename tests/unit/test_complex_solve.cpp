// ctrsv/ztrsv and ctrsm/ztrsm and their aliases: every side/uplo/trans (N, T, C)/diag combination, increments of both
// signs, leading dimensions above minimum, complex alpha (alpha = i is not zero; alpha = 0 zeroes B without reading A),
// unread entries (the other triangle, a unit diagonal, padding) NaN, ill-conditioned triangles held to their backward
// error, NaN/Inf; bit-identical to the CPU BLAS unless the GPU may run.
#include "complex_support.h"

namespace bt::cx {
namespace {

// A t x t triangle in an lda x t array: well conditioned (dominant diagonal; a unit triangle with small entries) or,
// `ill`, a small diagonal under full-size entries (the solution grows geometrically). The other triangle, the padding
// rows and a unit diagonal are NaN: reading them shows.
template <class T>
std::vector<T> triangle(char uplo, char diag, blas_int t, blas_int lda, bool ill, std::uint32_t seed) {
  auto a = random_cvector<T>(std::size_t(lda) * std::max<blas_int>(t, 1), seed);
  for (blas_int j = 0; j < t; ++j)
    for (blas_int i = 0; i < lda; ++i) {
      T& e = a[at(i, j, lda)];
      const bool strict = i < t && (is_upper_c(uplo) ? i < j : i > j);
      if (i == j)
        e = is_unit_c(diag) ? cnan<T>() : ill ? T(0.5, 0.25) + Real<T>(0.1) * e : T(Real<T>(t + 1), 0.5);
      else if (!strict)
        e = cnan<T>();
      else if (!ill)
        e /= Real<T>(t);
    }
  return a;
}

// Element (i, j) of op(T) for the stored triangle: zero outside it, 1 on a unit diagonal.
template <class T>
W<T> op_tri(char uplo, char trans, char diag, const std::vector<T>& a, blas_int lda, blas_int i, blas_int j) {
  if (i == j && is_unit_c(diag)) return 1;
  const blas_int r = is_notrans_c(trans) ? i : j, c = is_notrans_c(trans) ? j : i;  // element of stored A
  if (!in_tri(uplo, r, c)) return 0;
  return op_at(trans, a, i, j, lda);
}

// ---- trsv ----

template <class T>
void run_trsv(typename CApi<T>::trsv* fn, const std::string& fname, char uplo, char trans, char diag, blas_int n,
              blas_int pad, blas_int incx, bool ill, std::uint32_t seed) {
  SCOPED_TRACE(fname + " " + uplo + trans + diag + " n=" + std::to_string(n) + " incx=" + std::to_string(incx) +
               " pad=" + std::to_string(pad) + (ill ? " ill-conditioned" : ""));
  const blas_int lda = std::max<blas_int>(1, n) + pad;
  const auto a = triangle<T>(uplo, diag, n, lda, ill, seed);
  auto x0 = random_cvector<T>(vlen(n, incx), seed + 1);
  std::vector<bool> is_x(x0.size(), false);
  for (blas_int i = 0; i < n; ++i) is_x[vstart(n, incx) + std::ptrdiff_t(i) * incx] = true;
  for (std::size_t p = 0; p < x0.size(); ++p)
    if (!is_x[p]) x0[p] = cpoison<T>();
  auto got = x0, direct = x0;
  fn(&uplo, &trans, &diag, &n, a.data(), &lda, got.data(), &incx, 1, 1, 1);
  ref_c<T, typename CApi<T>::trsv>("trsv")(&uplo, &trans, &diag, &n, a.data(), &lda, direct.data(), &incx, 1, 1, 1);
  for (std::size_t p = 0; p < got.size(); ++p)
    if (!is_x[p]) {
      ASSERT_TRUE(same_bits(got[p], cpoison<T>())) << "guard element " << p << " written";
    }
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
  // Backward error, row-wise: |op(T) x - b| <= c n eps (|op(T)| |x| + |b|), whatever the conditioning.
  const std::size_t s0 = vstart(n, incx);
  auto xv = [&](const std::vector<T>& v, blas_int i) { return W<T>(v[s0 + std::ptrdiff_t(i) * incx]); };
  for (blas_int i = 0; i < n; ++i) {
    W<T> r = 0;
    WR mag = 0;
    for (blas_int j = 0; j < n; ++j) {
      const W<T> p = op_tri(uplo, trans, diag, a, lda, i, j) * xv(got, j);
      r += p;
      mag += std::abs(p);
    }
    const W<T> b = xv(x0, i);
    ASSERT_TRUE(cwithin(r, b, double(8.0 * (n + 1) * ceps<T>() * (mag + std::abs(b))) + ctiny<T>())) << "row " << i;
  }
  if (ill) return;
  // Well conditioned: the forward error is small too (substitution in the wider type).
  std::vector<W<T>> v(n);
  for (blas_int i = 0; i < n; ++i) v[i] = xv(x0, i);
  const bool lower = is_upper_c(uplo) != is_notrans_c(trans);  // op(T) lower: (L, N) or (U, T/C)
  for (blas_int s = 0; s < n; ++s) {
    const blas_int i = lower ? s : n - 1 - s;
    W<T> sum = v[i];
    for (blas_int j = lower ? 0 : i + 1; j < (lower ? i : n); ++j)
      sum -= op_tri(uplo, trans, diag, a, lda, i, j) * v[j];
    v[i] = sum / op_tri(uplo, trans, diag, a, lda, i, i);
  }
  for (blas_int i = 0; i < n; ++i)
    ASSERT_TRUE(
        cwithin(got[s0 + std::ptrdiff_t(i) * incx], v[i], double(16 * (n + 1) * ceps<T>() * (1 + std::abs(v[i])))))
        << "x(" << i << ")";
}

BT_COMPLEX_SUITE(ComplexTrsv);

TYPED_TEST(ComplexTrsv, AllCombinationsIncrementsAndConditioning) {
  using T = TypeParam;
  std::uint32_t seed = 500;
  bool first = true;
  for (const auto& fname : fortran_names<T>("trsv")) {
    auto* fn = ours_c<typename CApi<T>::trsv>(fname);
    ASSERT_NE(fn, nullptr);
    for (char uplo : {'U', 'L', 'l'})
      for (char trans : {'N', 'T', 'C', 't', 'c'})
        for (char diag : {'N', 'U', 'u'})
          for (blas_int n : {0, 1, 2, 7, 40})
            for (blas_int incx : {1, -1, 3, -2})
              for (bool ill : {false, true}) {
                if (!first && (n > 7 || incx == 3)) continue;
                run_trsv<T>(fn, fname, uplo, trans, diag, n, n % 3, incx, ill, seed++);
              }
    first = false;
  }
}

// A NaN or Inf in b reaches the entries of x that depend on it, as in the CPU BLAS.
TYPED_TEST(ComplexTrsv, NanAndInfPropagateAsTheCpuBlas) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::trsv>(name<T>("trsv_"));
  auto* ref = ref_c<T, typename CApi<T>::trsv>("trsv");
  const blas_int n = 6, one = 1;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (bool use_inf : {false, true}) {
        SCOPED_TRACE(std::string(1, uplo) + trans + (use_inf ? " Inf" : " NaN"));
        const auto a = triangle<T>(uplo, 'N', n, n, false, 77);
        auto x = random_cvector<T>(n, 78);
        for (T& v : x) v += T(v.real() < 0 ? -0.5 : 0.5, 0);  // no zeros: the reference skips zero entries
        x[2] = use_inf ? cinf<T>() : T(0.5, std::numeric_limits<Real<T>>::quiet_NaN());
        auto direct = x;
        fn(&uplo, &trans, "N", &n, a.data(), &n, x.data(), &one, 1, 1, 1);
        ref(&uplo, &trans, "N", &n, a.data(), &n, direct.data(), &one, 1, 1, 1);
        expect_nonfinite_as_cpu(x, direct);
      }
}

// ---- trsm ----

// One call: the systems op(A) x = alpha b (side L, one per column of B) or x op(A) = alpha b (side R, one per row).
struct Shape {
  char side, uplo, transa, diag;
  blas_int m, n;
  bool left() const { return side == 'L' || side == 'l'; }
  blas_int t() const { return left() ? m : n; }
  std::string str() const {
    return std::string{side, uplo, transa, diag} + " m=" + std::to_string(m) + " n=" + std::to_string(n);
  }
};

// op(A) X = alpha B or X op(A) = alpha B in the wider type, by substitution; the result laid out like B.
template <class T>
std::vector<W<T>> ref_trsm(const Shape& s, T alpha, const std::vector<T>& a, blas_int lda, const std::vector<T>& b,
                           blas_int ldb) {
  const blas_int t = s.t(), systems = s.left() ? s.n : s.m;
  std::vector<W<T>> out(b.begin(), b.end()), v(t);
  // Side R: x op(A) = c is op(A)^T x^T = c^T, whose matrix M(i, j) = op(A)(j, i).
  auto m_at = [&](blas_int i, blas_int j) {
    return s.left() ? op_tri(s.uplo, s.transa, s.diag, a, lda, i, j) : op_tri(s.uplo, s.transa, s.diag, a, lda, j, i);
  };
  const bool op_lower = is_upper_c(s.uplo) != is_notrans_c(s.transa);
  const bool lower = s.left() ? op_lower : !op_lower;
  for (blas_int sys = 0; sys < systems; ++sys) {
    auto pos = [&](blas_int i) { return s.left() ? at(i, sys, ldb) : at(sys, i, ldb); };
    for (blas_int i = 0; i < t; ++i) v[i] = W<T>(alpha) * W<T>(b[pos(i)]);
    for (blas_int step = 0; step < t; ++step) {
      const blas_int i = lower ? step : t - 1 - step;
      W<T> x = v[i];
      for (blas_int j = lower ? 0 : i + 1; j < (lower ? i : t); ++j) x -= m_at(i, j) * v[j];
      v[i] = x / m_at(i, i);
    }
    for (blas_int i = 0; i < t; ++i) out[pos(i)] = v[i];
  }
  return out;
}

template <class T>
void run_trsm(typename CApi<T>::trsm* fn, const std::string& fname, const Shape& s, blas_int pad, T alpha, bool ill,
              std::uint32_t seed) {
  std::ostringstream al;
  al << alpha;
  SCOPED_TRACE(fname + " " + s.str() + " pad=" + std::to_string(pad) + " alpha=" + al.str() + (ill ? " ill" : ""));
  const blas_int t = s.t(), lda = std::max<blas_int>(1, t) + pad, ldb = std::max<blas_int>(1, s.m) + pad;
  const auto a = triangle<T>(s.uplo, s.diag, t, lda, ill, seed);
  auto b0 = random_cvector<T>(std::size_t(ldb) * std::max<blas_int>(s.n, 1), seed + 1);
  for (blas_int j = 0; j < s.n; ++j)
    for (blas_int i = s.m; i < ldb; ++i) b0[at(i, j, ldb)] = cpoison<T>();  // padding: never written
  const auto a_before = a;
  auto got = b0, direct = b0;
  fn(&s.side, &s.uplo, &s.transa, &s.diag, &s.m, &s.n, &alpha, a.data(), &lda, got.data(), &ldb, 1, 1, 1, 1);
  ref_c<T, typename CApi<T>::trsm>("trsm")(&s.side, &s.uplo, &s.transa, &s.diag, &s.m, &s.n, &alpha, a.data(), &lda,
                                           direct.data(), &ldb, 1, 1, 1, 1);
  ASSERT_TRUE(same_bits(a, a_before)) << "A written";
  for (blas_int j = 0; j < s.n; ++j)
    for (blas_int i = s.m; i < ldb; ++i)
      ASSERT_TRUE(same_bits(got[at(i, j, ldb)], cpoison<T>())) << "padding row " << i << " written";
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
  // Backward error of every system, in the max norm: |op(A) x - alpha b| <= c (|op(A)| |x| + |alpha b|). The GPU may
  // solve with inverted diagonal blocks (condition number up to 1000 each): a looser constant when it may run.
  const double c = 8.0 * ((allow_gpu() ? 1000 : 1) + t) * ceps<T>();
  const blas_int systems = s.left() ? s.n : s.m;
  for (blas_int sys = 0; sys < systems; ++sys) {
    auto pos = [&](blas_int i) { return s.left() ? at(i, sys, ldb) : at(sys, i, ldb); };
    WR worst = 0, scale = 0;
    for (blas_int i = 0; i < t; ++i) {
      const W<T> rhs = W<T>(alpha) * W<T>(b0[pos(i)]);
      W<T> r = -rhs;
      WR mag = std::abs(rhs);
      for (blas_int j = 0; j < t; ++j) {
        const W<T> p = s.left() ? op_tri(s.uplo, s.transa, s.diag, a, lda, i, j) * W<T>(got[pos(j)])
                                : W<T>(got[pos(j)]) * op_tri(s.uplo, s.transa, s.diag, a, lda, j, i);
        r += p;
        mag += std::abs(p);
      }
      worst = std::max<WR>(worst, std::abs(r));
      scale = std::max<WR>(scale, mag);
    }
    ASSERT_TRUE(std::isfinite(worst) && worst <= c * scale + ctiny<T>())
        << "system " << sys << ": residual " << double(worst) << " > " << double(c * scale);
  }
  if (ill) return;
  const auto want = ref_trsm(s, alpha, a, lda, b0, ldb);
  for (blas_int j = 0; j < s.n; ++j)
    for (blas_int i = 0; i < s.m; ++i) {
      const std::size_t p = at(i, j, ldb);
      ASSERT_TRUE(cwithin(got[p], want[p], double(16 * (t + 1) * ceps<T>() * (1 + std::abs(want[p])))))
          << "X(" << i << "," << j << ")";
    }
}

BT_COMPLEX_SUITE(ComplexTrsm);

TYPED_TEST(ComplexTrsm, AllCombinationsShapesAndConditioning) {
  using T = TypeParam;
  const blas_int shapes[][2] = {{0, 4}, {3, 0}, {1, 1}, {7, 5}, {13, 3}, {30, 2}, {2, 27}};
  const T alphas[] = {T(1), T(-0.75, 0.5), T(0, 1)};
  std::uint32_t seed = 7000;
  bool first = true;
  for (const auto& fname : fortran_names<T>("trsm")) {
    auto* fn = ours_c<typename CApi<T>::trsm>(fname);
    ASSERT_NE(fn, nullptr);
    for (char side : {'L', 'R', 'r'})
      for (char uplo : {'U', 'L', 'u'})
        for (char transa : {'N', 'T', 'C', 'c'})
          for (char diag : {'N', 'U', 'u'})
            for (const auto& mn : shapes)
              for (const T& alpha : alphas)
                for (bool ill : {false, true}) {
                  if (!first && (mn[0] > 7 || mn[1] > 5 || alpha != T(1))) continue;
                  run_trsm<T>(fn, fname, {side, uplo, transa, diag, mn[0], mn[1]}, (mn[0] + mn[1]) % 3, alpha, ill,
                              seed++);
                }
    first = false;
  }
}

// alpha = 0: B becomes +0 and A is not read at all (here it is all NaN); empty B touches nothing.
TYPED_TEST(ComplexTrsm, AlphaZeroAndEmptyNeverReadA) {
  using T = TypeParam;
  for (const auto& fname : fortran_names<T>("trsm")) {
    auto* fn = ours_c<typename CApi<T>::trsm>(fname);
    const blas_int shapes[][2] = {{5, 3}, {1, 9}, {0, 4}, {4, 0}};
    for (char side : {'L', 'R'})
      for (char transa : {'N', 'T', 'C'})
        for (const auto& mn : shapes) {
          const blas_int m = mn[0], n = mn[1], t = side == 'L' ? m : n, lda = std::max<blas_int>(1, t) + 1,
                         ldb = std::max<blas_int>(1, m) + 2;
          SCOPED_TRACE(fname + " " + side + transa + " m=" + std::to_string(m) + " n=" + std::to_string(n));
          const std::vector<T> a(std::size_t(lda) * std::max<blas_int>(t, 1), cnan<T>());
          auto b = random_cvector<T>(std::size_t(ldb) * std::max<blas_int>(n, 1), 77);
          for (blas_int j = 0; j < n; ++j)
            for (blas_int i = m; i < ldb; ++i) b[at(i, j, ldb)] = cpoison<T>();
          const auto b0 = b;
          const T zero = 0;
          fn(&side, "U", &transa, "N", &m, &n, &zero, a.data(), &lda, b.data(), &ldb, 1, 1, 1, 1);
          for (std::size_t p = 0; p < b.size(); ++p) {
            const bool in_b = blas_int(p % ldb) < m && blas_int(p / ldb) < n;
            ASSERT_TRUE(same_bits(b[p], in_b ? zero : b0[p])) << "element " << p << " is " << b[p];
          }
        }
  }
}

// alpha = i scales the solution by i (a real-part test would take it for zero and clear B).
TYPED_TEST(ComplexTrsm, ImaginaryAlphaIsNotZero) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::trsm>(name<T>("trsm_"));
  const blas_int m = 4, n = 3;
  const auto a = triangle<T>('L', 'U', m, m, false, 90);
  const auto b0 = random_cvector<T>(std::size_t(m) * n, 91);
  auto b1 = b0, bi = b0;
  const T one = 1, i1(0, 1);
  fn("L", "L", "N", "U", &m, &n, &one, a.data(), &m, b1.data(), &m, 1, 1, 1, 1);
  fn("L", "L", "N", "U", &m, &n, &i1, a.data(), &m, bi.data(), &m, 1, 1, 1, 1);
  for (std::size_t p = 0; p < b0.size(); ++p)
    ASSERT_TRUE(cwithin(bi[p], W<T>(i1) * W<T>(b1[p]), 16 * ceps<T>() * (1 + std::abs(b1[p])))) << "element " << p;
}

// A NaN or an Inf in B or on A's diagonal reaches every entry of the solution that depends on it, as in the CPU BLAS.
TYPED_TEST(ComplexTrsm, NanAndInfPropagateAsTheCpuBlas) {
  using T = TypeParam;
  auto* fn = ours_c<typename CApi<T>::trsm>(name<T>("trsm_"));
  auto* ref = ref_c<T, typename CApi<T>::trsm>("trsm");
  const blas_int m = 6, n = 4, ld = 6;
  std::uint32_t seed = 9900;
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char transa : {'N', 'T', 'C'})
        for (int where = 0; where < 3; ++where) {
          SCOPED_TRACE(std::string(1, side) + uplo + transa +
                       (where == 0   ? " NaN in B"
                        : where == 1 ? " Inf in B"
                                     : " NaN on A's diagonal"));
          const blas_int t = side == 'L' ? m : n;
          auto a = triangle<T>(uplo, 'N', t, ld, false, seed++);
          auto b = random_cvector<T>(std::size_t(ld) * n, seed++);
          for (T& v : b) v += T(v.real() < 0 ? -0.5 : 0.5, 0);  // no zeros: the reference skips zero entries of B
          if (where == 0) b[at(2, 1, ld)] = T(std::numeric_limits<Real<T>>::quiet_NaN(), 1);
          if (where == 1) b[at(1, 2, ld)] = cinf<T>();
          if (where == 2) a[at(2, 2, ld)] = cnan<T>();
          auto got = b, direct = b;
          const T alpha = T(1, -0.5);
          fn(&side, &uplo, &transa, "N", &m, &n, &alpha, a.data(), &ld, got.data(), &ld, 1, 1, 1, 1);
          ref(&side, &uplo, &transa, "N", &m, &n, &alpha, a.data(), &ld, direct.data(), &ld, 1, 1, 1, 1);
          expect_nonfinite_as_cpu(got, direct);
        }
}

}  // namespace
}  // namespace bt::cx
