// {c,z}getrf getrs gesv potrf potrs posv trtrs on regular inputs (every option: trans N/T/C, uplo U/L, diag N/U, lower
// case too; leading dimensions above the minimum; rectangular LU; no right-hand sides) within LAPACK's residual bounds,
// bit-identical to the reference LAPACK on the CPU path, writing only their outputs, and where the CPU LAPACK must
// answer (singular, not positive definite, zero on a triangle's diagonal, NaN and Inf) with the reference's INFO and
// outputs.
#include <cctype>

#include "complex_lapack_support.h"

namespace bt::lapack::cplx {
namespace {

// Columns the residuals are formed over: all of them up to 200, else a spread of them.
std::vector<blas_int> sample_cols(blas_int n) {
  std::vector<blas_int> v;
  const blas_int step = n <= 200 ? 1 : n / 40;
  for (blas_int j = 0; j < n; j += step) v.push_back(j);
  if (v.empty() || v.back() != n - 1) v.push_back(n - 1);
  return v;
}

template <class T>
void expect_within_bounds(const Case& c, const std::vector<T>& a0, const Data<T>& in, const Data<T>& got) {
  if (c.n == 0) return;
  const auto cols = sample_cols(c.n);
  if (c.r == R::kGetrf || c.r == R::kGesv) {
    ASSERT_TRUE(valid_pivots(got.ipiv, c.npiv(), c.rows()));
    if (c.rows() > 0) EXPECT_LT(lu_ratio(a0, got.a, c.rows(), c.n, c.lda, got.ipiv, cols), kThresh) << "||P L U - A||";
  }
  if (c.r == R::kPotrf || c.r == R::kPosv)
    EXPECT_LT(chol_ratio(c.uplo, a0, got.a, c.n, c.lda, cols), kThresh) << "||U^H U - A||";
  if (has_b(c.r) && c.nrhs > 0)
    EXPECT_LT(solve_ratio(system_of(c, a0), c.n, in.b, got.b, c.ldb, c.nrhs), kThresh) << "||B - op(A) X||";
}

// One regular case: ours (Fortran spelling `spelling`) against the reference LAPACK on the same operands.
template <class T>
void run_case(const Case& c, std::uint32_t seed, int spelling = 0) {
  SCOPED_TRACE(fortran_names<T>(base(c.r))[spelling] + " " + c.str() + " seed " + std::to_string(seed));
  Data<T> in = make_operands<T>(c, seed);
  const std::vector<T> a0 = in.a;
  if (c.r == R::kGetrs || c.r == R::kPotrs) {
    factor_with_reference(c, &in);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const Data<T> got = after(c, in, ours_fn<T>(c.r, spelling));
  EXPECT_EQ(got.info, 0);
  EXPECT_TRUE(only_outputs_written(c, in, got));
  if (!allow_gpu()) {
    const Data<T> ref = after(c, in, ref_fn<T>(c.r));
    ASSERT_EQ(ref.info, 0) << "the reference failed on the test data";
    EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
  }
  expect_within_bounds(c, a0, in, got);
}

BT_COMPLEX_SUITE(ComplexLapack);

// Ours are not the reference's symbols: the calls below test the library, not the CPU LAPACK alone.
TYPED_TEST(ComplexLapack, OursAreNotTheReferences) {
  for (R r : kAll) EXPECT_NE(ours_fn<TypeParam>(r), ref_fn<TypeParam>(r)) << base(r);
}

TYPED_TEST(ComplexLapack, EveryFortranSpelling) {
  std::uint32_t seed = 100;
  for (R r : kAll)
    for (int spelling = 0; spelling < 4; ++spelling) {
      Case c{r, 6, 5, 3, 7, 6};
      if (r == R::kGetrs || r == R::kTrtrs) c.trans = 'C';
      run_case<TypeParam>(c, seed++, spelling);
    }
}

TYPED_TEST(ComplexLapack, GetrfShapes) {
  const blas_int shapes[][2] = {{1, 1}, {1, 5}, {5, 1}, {4, 4}, {17, 9}, {9, 17}, {33, 33}, {80, 45}, {45, 80}};
  std::uint32_t seed = 1000;
  for (const auto& s : shapes)
    for (blas_int pad : {0, 3}) run_case<TypeParam>({R::kGetrf, s[0], s[1], 0, s[0] + pad, 1}, seed++);
  run_case<TypeParam>({R::kGetrf, 260, 260, 0, 261, 1}, seed++);
}

TYPED_TEST(ComplexLapack, GetrsEveryTrans) {
  std::uint32_t seed = 2000;
  for (char trans : {'N', 'T', 'C', 'n', 't', 'c'})
    for (blas_int n : {1, 7, 65})
      for (blas_int nrhs : {1, 3, 20}) {
        if (std::islower(trans) && n > 7) continue;
        const blas_int pad = (n + nrhs) % 3;
        Case c{R::kGetrs, n, n, nrhs, n + pad, n + 2 - pad};
        c.trans = trans;
        run_case<TypeParam>(c, seed++);
      }
}

// nrhs = 0 still factors A (B, with ldb >= n, untouched).
TYPED_TEST(ComplexLapack, GesvIncludingNoRightHandSides) {
  std::uint32_t seed = 3000;
  for (blas_int n : {1, 8, 70})
    for (blas_int nrhs : {0, 1, 5, 17}) {
      const blas_int pad = (n + nrhs) % 3;
      run_case<TypeParam>({R::kGesv, n, n, nrhs, n + pad, n + 1}, seed++);
    }
}

TYPED_TEST(ComplexLapack, PotrfBothTriangles) {
  std::uint32_t seed = 4000;
  for (char uplo : {'U', 'L', 'u', 'l'})
    for (blas_int n : {1, 2, 9, 64, 150}) {
      if (std::islower(uplo) && n > 9) continue;
      Case c{R::kPotrf, n, n, 0, n + n % 3, 1};
      c.uplo = uplo;
      run_case<TypeParam>(c, seed++);
    }
}

TYPED_TEST(ComplexLapack, PotrsBothTriangles) {
  std::uint32_t seed = 5000;
  for (char uplo : {'U', 'L', 'l'})
    for (blas_int n : {1, 9, 70})
      for (blas_int nrhs : {1, 4, 20}) {
        if (std::islower(uplo) && n > 9) continue;
        Case c{R::kPotrs, n, n, nrhs, n + nrhs % 2, n + 3};
        c.uplo = uplo;
        run_case<TypeParam>(c, seed++);
      }
}

// nrhs = 0 still factors A.
TYPED_TEST(ComplexLapack, PosvIncludingNoRightHandSides) {
  std::uint32_t seed = 6000;
  for (char uplo : {'U', 'L', 'u'})
    for (blas_int n : {1, 9, 70})
      for (blas_int nrhs : {0, 1, 7}) {
        if (std::islower(uplo) && n > 9) continue;
        Case c{R::kPosv, n, n, nrhs, n + 2, n + nrhs % 3};
        c.uplo = uplo;
        run_case<TypeParam>(c, seed++);
      }
}

// A unit diagonal is NaN in the test data: it must not be read.
TYPED_TEST(ComplexLapack, TrtrsEveryOption) {
  std::uint32_t seed = 7000;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (char diag : {'N', 'U'})
        for (blas_int n : {1, 6, 50})
          for (blas_int nrhs : {1, 4, 19}) {
            const blas_int pad = (n + nrhs) % 3;
            Case c{R::kTrtrs, n, n, nrhs, n + pad, n + 1};
            c.uplo = uplo;
            c.trans = trans;
            c.diag = diag;
            run_case<TypeParam>(c, seed++);
          }
  for (const char* o : {"ltu", "unn", "Lcn", "uCU", "lcu"}) {
    Case c{R::kTrtrs, 9, 9, 2, 10, 9};
    c.uplo = o[0];
    c.trans = o[1];
    c.diag = o[2];
    run_case<TypeParam>(c, seed++);
  }
}

// The imaginary parts of a Hermitian matrix's diagonal are not read (the routines take them as zero): garbage there
// changes nothing.
TYPED_TEST(ComplexLapack, HermitianDiagonalImaginaryPartsAreIgnored) {
  using T = TypeParam;
  std::uint32_t seed = 7500;
  for (R r : {R::kPotrf, R::kPosv})
    for (char uplo : {'U', 'L'}) {
      Case c{r, 20, 20, 3, 21, 20};
      c.uplo = uplo;
      SCOPED_TRACE(c.str());
      Data<T> in = make_operands<T>(c, seed++);
      const std::vector<T> a0 = in.a;
      for (blas_int i = 0; i < c.n; ++i) in.a[at(i, i, c.lda)].imag(Real<T>(0.75 + i));
      const Data<T> got = after(c, in, ours_fn<T>(r));
      EXPECT_EQ(got.info, 0);
      if (!allow_gpu()) {
        EXPECT_TRUE(same(got, after(c, in, ref_fn<T>(r)))) << "differs from the reference LAPACK";
      }
      expect_within_bounds(c, a0, in, got);
    }
}

// ---- Where the CPU LAPACK must answer: INFO > 0 and non-finite inputs. ----

// Ours and the reference on the same operands: INFO must be `info`; the same bits wherever the decisions are
// deterministic.
template <class T>
void expect_as_reference(const Case& c, const Data<T>& in, blas_int info) {
  const Data<T> got = after(c, in, ours_fn<T>(c.r));
  const Data<T> ref = after(c, in, ref_fn<T>(c.r));
  EXPECT_EQ(ref.info, info) << "the test's expectation is not the reference's";
  EXPECT_EQ(got.info, info);
  EXPECT_TRUE(only_outputs_written(c, in, got));
  if (!decisions_may_differ()) EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
}

// Column k (1-based) exactly zero: U(k, k) = 0 is the first zero pivot; LAPACK still completes the factorization.
TYPED_TEST(ComplexLapack, SingularLuGivesTheFirstZeroPivot) {
  using T = TypeParam;
  const blas_int cases[][3] = {{6, 6, 1}, {6, 6, 3}, {6, 6, 6}, {30, 20, 20}, {20, 30, 10}, {20, 30, 20}, {90, 90, 47}};
  std::uint32_t seed = 11000;
  for (const auto& mk : cases) {
    const blas_int m = mk[0], n = mk[1], k = mk[2];
    for (R r : {R::kGetrf, R::kGesv})
      for (blas_int nrhs : {0, 3}) {
        if ((r == R::kGesv && m != n) || (r == R::kGetrf && nrhs)) continue;
        const Case c{r, m, n, nrhs, m + 1, n + 2};
        SCOPED_TRACE(c.str() + " zero column " + std::to_string(k));
        Data<T> in = make_operands<T>(c, seed++);
        for (blas_int i = 0; i < m; ++i) in.a[at(i, k - 1, c.lda)] = 0;
        expect_as_reference(c, in, k);
      }
  }
}

// A diagonally dominant Hermitian matrix with a_kk = -1: the leading minors of order < k are positive definite, the one
// of order k is not.
TYPED_TEST(ComplexLapack, NotPositiveDefiniteGivesTheFailingMinor) {
  using T = TypeParam;
  const blas_int cases[][2] = {{8, 1}, {8, 5}, {8, 8}, {100, 77}};
  std::uint32_t seed = 12000;
  for (const auto& nk : cases)
    for (char uplo : {'U', 'L'})
      for (R r : {R::kPotrf, R::kPosv})
        for (blas_int nrhs : {0, 2}) {
          if (r == R::kPotrf && nrhs) continue;
          const blas_int n = nk[0], k = nk[1];
          Case c{r, n, n, nrhs, n + 3, n};
          c.uplo = uplo;
          SCOPED_TRACE(c.str() + " failing minor " + std::to_string(k));
          Data<T> in = make_operands<T>(c, seed++);
          in.a[at(k - 1, k - 1, c.lda)] = T(-1, 0);
          expect_as_reference(c, in, k);
        }
}

// A zero on a non-unit diagonal: INFO = the first one, B untouched (nrhs = 0 included); a unit diagonal is not looked
// at.
TYPED_TEST(ComplexLapack, TrtrsZeroOnTheDiagonal) {
  using T = TypeParam;
  const blas_int kZeros[][2] = {{1, 0}, {7, 3}, {40, 0}};  // 1-based positions of zeros (0: none)
  std::uint32_t seed = 13000;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (blas_int nrhs : {0, 1, 9})
        for (const auto& zeros : kZeros) {
          Case c{R::kTrtrs, 40, 40, nrhs, 41, 40};
          c.uplo = uplo;
          c.trans = trans;
          SCOPED_TRACE(c.str() + " zeros at " + std::to_string(zeros[0]) + ", " + std::to_string(zeros[1]));
          Data<T> in = make_operands<T>(c, seed++);
          for (blas_int z : zeros)
            if (z) in.a[at(z - 1, z - 1, c.lda)] = 0;
          expect_as_reference(c, in, zeros[1] ? std::min(zeros[0], zeros[1]) : zeros[0]);
          c.diag = 'U';
          if (nrhs == 0) {
            expect_as_reference(c, in, 0);
            continue;
          }
          const Data<T> got = after(c, in, ours_fn<T>(c.r));
          EXPECT_EQ(got.info, 0);
          EXPECT_TRUE(only_outputs_written(c, in, got));
          if (!allow_gpu()) {
            EXPECT_TRUE(same(got, after(c, in, ref_fn<T>(c.r)))) << "diag U: differs from the reference LAPACK";
          }
          EXPECT_LT(solve_ratio(system_of(c, in.a), c.n, in.b, got.b, c.ldb, c.nrhs), kThresh);
        }
}

// One non-finite value where a routine reads it: the outputs are the reference's and some output is not finite.
TYPED_TEST(ComplexLapack, NanAndInfInputsGiveTheReferenceOutputs) {
  using T = TypeParam;
  const Real<T> q = std::numeric_limits<Real<T>>::quiet_NaN(), inf = std::numeric_limits<Real<T>>::infinity();
  std::uint32_t seed = 14000;
  for (R r : kAll)
    for (blas_int n : {12, 70})
      for (int what = 0; what < 4; ++what) {  // NaN in A, Inf in A, NaN in B, Inf in B
        if (what >= 2 && !has_b(r)) continue;
        Case c{r, n, n, 3, n + 1, n + 2};
        c.uplo = what % 2 ? 'L' : 'U';
        c.trans = what == 1 ? 'C' : what == 3 ? 'T' : 'N';
        SCOPED_TRACE(c.str() + " case " + std::to_string(what));
        Data<T> in = make_operands<T>(c, seed++);
        if (r == R::kGetrs || r == R::kPotrs) {
          factor_with_reference(c, &in);
          ASSERT_FALSE(::testing::Test::HasFatalFailure());
        }
        const blas_int lo = n / 3, hi = n / 2;  // (lo, hi) upper, (hi, lo) lower: read by every routine
        const T bad = what % 2 ? T(0.5, inf) : T(q, 0.25);
        if (what < 2)
          in.a[c.uplo == 'U' ? at(lo, hi, c.lda) : at(hi, lo, c.lda)] = bad;
        else
          in.b[at(n - 2, 1, c.ldb)] = bad;
        const Data<T> got = after(c, in, ours_fn<T>(r));
        const Data<T> ref = after(c, in, ref_fn<T>(r));
        if (!allow_gpu()) {
          EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
        } else {
          EXPECT_EQ(got.info, ref.info);
        }
        EXPECT_TRUE(only_outputs_written(c, in, got));
        bool nonfinite = false;
        for (std::size_t p = 0; p < got.a.size(); ++p)
          nonfinite |= a_writable(c, blas_int(p % c.lda), blas_int(p / c.lda)) && !cx::finite(got.a[p]);
        for (blas_int j = 0; has_b(r) && j < c.nrhs; ++j)
          for (blas_int i = 0; i < n; ++i) nonfinite |= !cx::finite(got.b[at(i, j, c.ldb)]);
        EXPECT_TRUE(nonfinite) << "a non-finite input left every output finite";
      }
}

}  // namespace
}  // namespace bt::lapack::cplx
