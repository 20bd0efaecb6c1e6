// strsm/dtrsm and their aliases: every side/uplo/transa/diag combination, shapes from empty to m >> n and m << n,
// leading dimensions above minimum, alpha = 0 (B zeroed, A never read) and alpha != 1, unread entries poisoned,
// NaN/Inf, and ill-conditioned triangles compared through their residuals; bit-identical to the CPU BLAS unless the GPU
// may run.
#include "reference.h"

namespace bt {
namespace {

// The GPU may solve with inverted diagonal blocks, each inverted only when its 1-norm condition number is at most
// 1000: its backward error is bounded by that condition number rather than by the substitution's small constant.
template <class T>
double backward_bound(blas_int t) {
  return 4.0 * ((allow_gpu() ? 1000 : 1) + t) * eps<T>();
}

// How a t x t triangle is filled.
enum class Kind {
  kWell,     // dominant diagonal (a unit triangle with small entries): forward error small too
  kIll,      // small diagonal, full-size entries: the solution grows geometrically (only for small t)
  kBlockIll  // well conditioned except a stretch with -2 next to the diagonal (condition ~2^15 there): diagonal
             // blocks on either side of the GPU's inversion threshold, in one matrix, without overflow for any t
};

// The triangle in an lda x t array. The other triangle, the padding rows and a unit diagonal are NaN: reading them
// shows. kBlockIll is built lower and stored transposed for uplo U, so both have the same structure.
template <class T>
std::vector<T> triangle(char uplo, char diag, blas_int t, blas_int lda, Kind kind, std::uint32_t seed) {
  auto a = random_vector<T>(std::size_t(lda) * std::max<blas_int>(t, 1), seed);
  const blas_int lo = t / 3, hi = std::min<blas_int>(t, lo + 16);
  for (blas_int j = 0; j < t; ++j)
    for (blas_int i = 0; i < lda; ++i) {
      T& e = a[at(i, j, lda)];
      const bool in_tri = i < t && (is_upper(uplo) ? i < j : i > j);
      if (i == j) {
        e = is_unit(diag)         ? nan<T>()
            : kind == Kind::kIll  ? T(0.5) + T(0.1) * e
            : kind == Kind::kWell ? T(t) + 1
                                  : 1 + e / 4;
      } else if (!in_tri) {
        e = nan<T>();
      } else if (kind != Kind::kIll) {
        const blas_int r = std::max(i, j), c = std::min(i, j);  // position in the lower version
        e = (kind == Kind::kBlockIll && r == c + 1 && r > lo && r < hi) ? T(-2) : e / T(t);
      }
    }
  return a;
}

// The shape of one call. A call is a set of triangular systems T x = alpha b: T = op(A) for side L, one system per
// column of B (op(A) x = alpha b); T = op(A)^T for side R, one per row of B (x^T op(A) = alpha b^T).
struct Shape {
  char side, uplo, transa, diag;
  blas_int m, n;
  bool left() const { return side == 'L' || side == 'l'; }
  blas_int t() const { return left() ? m : n; }  // the triangle's order
  blas_int systems() const { return left() ? n : m; }
  // Whether T reads the stored A transposed, and whether T is lower triangular.
  bool transposed() const { return is_notrans(transa) != left(); }
  bool lower() const { return is_upper(uplo) == transposed(); }
  // Position in B of entry i of system `sys`.
  std::size_t b_pos(blas_int ldb, blas_int sys, blas_int i) const { return left() ? at(i, sys, ldb) : at(sys, i, ldb); }
};

// Element (i, j) of T: zero outside the triangle, 1 on a unit diagonal.
template <class T>
Acc<T> system_matrix(const Shape& s, const std::vector<T>& a, blas_int lda, blas_int i, blas_int j) {
  if (i == j && is_unit(s.diag)) return 1.0;
  const blas_int r = s.transposed() ? j : i, c = s.transposed() ? i : j;  // element of stored A
  if (is_upper(s.uplo) ? r > c : r < c) return 0.0;
  return a[at(r, c, lda)];
}

// Solves every system in the wider type; the result is laid out like B (leading dimension ldb).
template <class T>
std::vector<Acc<T>> ref_trsm(const Shape& s, T alpha, const std::vector<T>& a, blas_int lda, const std::vector<T>& b,
                             blas_int ldb) {
  const blas_int t = s.t();
  std::vector<Acc<T>> out(b.begin(), b.end()), v(t);
  const bool lower = s.lower();
  for (blas_int sys = 0; sys < s.systems(); ++sys) {
    for (blas_int i = 0; i < t; ++i) v[i] = Acc<T>(alpha) * b[s.b_pos(ldb, sys, i)];
    for (blas_int step = 0; step < t; ++step) {
      const blas_int i = lower ? step : t - 1 - step;
      Acc<T> x = v[i];
      for (blas_int j = lower ? 0 : i + 1; j < (lower ? i : t); ++j) x -= system_matrix(s, a, lda, i, j) * v[j];
      v[i] = x / system_matrix(s, a, lda, i, i);
    }
    for (blas_int i = 0; i < t; ++i) out[s.b_pos(ldb, sys, i)] = v[i];
  }
  return out;
}

// Backward error of each system: || T x - alpha b || <= c (|| |T| |x| || + || alpha b ||) in the max norm.
template <class T>
void expect_small_residuals(const Shape& s, T alpha, const std::vector<T>& a, blas_int lda, const std::vector<T>& b0,
                            const std::vector<T>& x, blas_int ldb) {
  const blas_int t = s.t();
  const double c = backward_bound<T>(t);
  for (blas_int sys = 0; sys < s.systems(); ++sys) {
    Acc<T> worst = 0, scale = 0;
    for (blas_int i = 0; i < t; ++i) {
      const Acc<T> rhs = Acc<T>(alpha) * b0[s.b_pos(ldb, sys, i)];
      Acc<T> r = -rhs, mag = std::fabs(rhs);
      for (blas_int j = 0; j < t; ++j) {
        const Acc<T> p = system_matrix(s, a, lda, i, j) * x[s.b_pos(ldb, sys, j)];
        r += p;
        mag += std::fabs(p);
      }
      ASSERT_TRUE(std::isfinite(r)) << "system " << sys << " row " << i;
      worst = std::max(worst, std::fabs(r));
      scale = std::max(scale, mag);
    }
    ASSERT_TRUE(within(worst, 0.0, double(c * scale) + tiny<T>())) << "system " << sys << ", scale " << double(scale);
  }
}

template <class T>
void run_case(typename Api<T>::trsm* fn, const std::string& fname, const Shape& s, blas_int pad, T alpha, Kind kind,
              std::uint32_t seed) {
  SCOPED_TRACE(fname + " " + s.side + s.uplo + s.transa + s.diag + " m=" + std::to_string(s.m) +
               " n=" + std::to_string(s.n) + " pad=" + std::to_string(pad) + " alpha=" + std::to_string(alpha) +
               (kind == Kind::kWell  ? ""
                : kind == Kind::kIll ? " ill-conditioned"
                                     : " ill-conditioned blocks"));
  const blas_int t = s.t(), lda = std::max<blas_int>(1, t) + pad, ldb = std::max<blas_int>(1, s.m) + pad;
  const auto a = triangle<T>(s.uplo, s.diag, t, lda, kind, seed);
  auto b0 = random_vector<T>(std::size_t(ldb) * std::max<blas_int>(s.n, 1), seed + 1);
  for (blas_int j = 0; j < s.n; ++j)
    for (blas_int i = s.m; i < ldb; ++i) b0[at(i, j, ldb)] = kPoison<T>;  // padding: never written
  const auto a_before = a;
  auto got = b0, direct = b0;
  fn(&s.side, &s.uplo, &s.transa, &s.diag, &s.m, &s.n, &alpha, a.data(), &lda, got.data(), &ldb, 1, 1, 1, 1);
  reference_as<typename Api<T>::trsm>(name<T>("trsm_"))(&s.side, &s.uplo, &s.transa, &s.diag, &s.m, &s.n, &alpha,
                                                        a.data(), &lda, direct.data(), &ldb, 1, 1, 1, 1);
  ASSERT_TRUE(same_bits(a, a_before)) << "A written";
  for (blas_int j = 0; j < s.n; ++j)
    for (blas_int i = s.m; i < ldb; ++i)
      ASSERT_TRUE(same_bits(got[at(i, j, ldb)], kPoison<T>)) << "padding row " << i << " written";
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct)) << "differs from the CPU BLAS";
  }
  expect_small_residuals(s, alpha, a, lda, b0, got, ldb);
  if (kind == Kind::kWell) {  // well conditioned: the forward error is small too
    const auto want = ref_trsm(s, alpha, a, lda, b0, ldb);
    for (blas_int sys = 0; sys < s.systems(); ++sys)
      for (blas_int i = 0; i < t; ++i) {
        const std::size_t p = s.b_pos(ldb, sys, i);
        ASSERT_TRUE(within(got[p], want[p], double(16 * (t + 1) * eps<T>() * (1 + std::fabs(want[p])))))
            << "system " << sys << " row " << i;
      }
  }
}

BT_PRECISION_SUITE(Trsm);

TYPED_TEST(Trsm, AllCombinationsShapesAndConditioning) {
  using T = TypeParam;
  const blas_int shapes[][2] = {{0, 4}, {3, 0}, {1, 1}, {7, 5}, {13, 3}, {40, 2}, {2, 37}};
  std::uint32_t seed = 7000;
  for (const auto& fname : fortran_names<T>("trsm")) {
    auto* fn = ours_as<typename Api<T>::trsm>(fname);
    ASSERT_NE(fn, nullptr);
    for (char side : {'L', 'R', 'r'})
      for (char uplo : {'U', 'L', 'u'})
        for (char transa : {'N', 'T', 'C', 'n'})
          for (char diag : {'N', 'U', 'u'})
            for (const auto& mn : shapes)
              for (T alpha : {T(1), T(-0.75)})
                for (Kind kind : {Kind::kWell, Kind::kIll})
                  run_case<T>(fn, fname, {side, uplo, transa, diag, mn[0], mn[1]}, (mn[0] + mn[1]) % 3, alpha, kind,
                              seed++);
  }
}

// Larger triangles whose diagonal blocks are well conditioned in places and far from it elsewhere (what decides
// whether the GPU inverts a block): every combination, both ways round, compared through the residuals.
TYPED_TEST(Trsm, IllConditionedBlocksLargerTriangles) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::trsm>(name<T>("trsm_"));
  std::uint32_t seed = 9100;
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char transa : {'N', 'T'})
        for (char diag : {'N', 'U'})
          for (Kind kind : {Kind::kBlockIll, Kind::kWell}) {
            const Shape s =
                side == 'L' ? Shape{side, uplo, transa, diag, 160, 9} : Shape{side, uplo, transa, diag, 9, 160};
            run_case<T>(fn, name<T>("trsm_"), s, 2, T(1.5), kind, seed++);
          }
}

// alpha = 0: B becomes zero and A is not read at all (here it is all NaN); empty B touches nothing.
TYPED_TEST(Trsm, AlphaZeroAndEmptyNeverReadA) {
  using T = TypeParam;
  for (const auto& fname : fortran_names<T>("trsm")) {
    auto* fn = ours_as<typename Api<T>::trsm>(fname);
    const blas_int shapes[][2] = {{5, 3}, {1, 9}, {0, 4}, {4, 0}};
    for (char side : {'L', 'R'})
      for (char transa : {'N', 'T'})
        for (const auto& mn : shapes) {
          const blas_int m = mn[0], n = mn[1], t = side == 'L' ? m : n, lda = std::max<blas_int>(1, t) + 1,
                         ldb = std::max<blas_int>(1, m) + 2;
          SCOPED_TRACE(fname + " " + side + transa + " m=" + std::to_string(m) + " n=" + std::to_string(n));
          const std::vector<T> a(std::size_t(lda) * std::max<blas_int>(t, 1), nan<T>());
          auto b = random_vector<T>(std::size_t(ldb) * std::max<blas_int>(n, 1), 77);
          for (blas_int j = 0; j < n; ++j)
            for (blas_int i = m; i < ldb; ++i) b[at(i, j, ldb)] = kPoison<T>;
          const auto b0 = b;
          const T zero = 0;
          fn(&side, "U", &transa, "N", &m, &n, &zero, a.data(), &lda, b.data(), &ldb, 1, 1, 1, 1);
          for (std::size_t p = 0; p < b.size(); ++p) {
            const bool in_b = blas_int(p % ldb) < m && blas_int(p / ldb) < n;
            if (in_b)
              ASSERT_TRUE(same_bits(b[p], zero)) << "B element " << p << " is " << b[p] << ", not +0";
            else
              ASSERT_TRUE(same_bits(b[p], b0[p])) << "element " << p << " outside B written";
          }
        }
  }
}

// A NaN or an Inf in B or on A's diagonal reaches every entry of the solution that depends on it, as in the CPU BLAS.
TYPED_TEST(Trsm, NanAndInfPropagate) {
  using T = TypeParam;
  auto* fn = ours_as<typename Api<T>::trsm>(name<T>("trsm_"));
  const blas_int m = 6, n = 4, ld = 6;
  std::uint32_t seed = 9900;
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char transa : {'N', 'T'})
        for (int where = 0; where < 3; ++where) {
          SCOPED_TRACE(std::string(1, side) + uplo + transa +
                       (where == 0   ? " NaN in B"
                        : where == 1 ? " Inf in B"
                                     : " NaN on A's diagonal"));
          const blas_int t = side == 'L' ? m : n;
          auto a = triangle<T>(uplo, 'N', t, ld, Kind::kWell, seed++);
          auto b = random_vector<T>(std::size_t(ld) * n, seed++);
          for (T& v : b) v = v < 0 ? v - T(0.5) : v + T(0.5);  // no zeros: reference skips zero entries of B
          if (where == 0) b[at(2, 1, ld)] = nan<T>();
          if (where == 1) b[at(1, 2, ld)] = inf<T>();
          if (where == 2) a[at(2, 2, ld)] = nan<T>();
          auto got = b, direct = b;
          const T alpha = 1;
          fn(&side, &uplo, &transa, "N", &m, &n, &alpha, a.data(), &ld, got.data(), &ld, 1, 1, 1, 1);
          reference_as<typename Api<T>::trsm>(name<T>("trsm_"))(&side, &uplo, &transa, "N", &m, &n, &alpha, a.data(),
                                                                &ld, direct.data(), &ld, 1, 1, 1, 1);
          expect_nonfinite_as_cpu(got, direct);
        }
}

}  // namespace
}  // namespace bt
