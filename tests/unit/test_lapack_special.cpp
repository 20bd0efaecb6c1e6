// The LAPACK routines where the CPU LAPACK must answer, both precisions: an exactly singular matrix (getrf / gesv:
// INFO = the first zero pivot), a matrix that is not positive definite (potrf / posv: INFO = the first failing minor),
// a zero on a triangle's diagonal (trtrs: INFO = its index, nothing solved, also with nrhs = 0), NaN and Inf inputs.
// Their outputs are the reference LAPACK's bit for bit in every mode (the GPU path hands such calls to the CPU LAPACK).
// Also: the same call twice gives the same bits, and, with a GPU present and BLASOFFLOAD_TEST_ALLOW_GPU set, sizes
// where the GPU path runs in earnest (n = 2000-4000), checked against LAPACK's residual bounds.
#include "test_lapack_support.h"

namespace bt::lapack {
namespace {

// Ours and the reference on the same operands: identical bits (outputs, INFO, everything else untouched) wherever the
// decisions are deterministic; INFO must be `info`. In auto mode with a GPU, the CPU LAPACK answers, but its BLAS calls
// and the reference's (which runs in this process, through our exports) are decided apart and may take different
// sides (decisions_may_differ): their INFO and what they write, not their bits.
template <class T>
void expect_as_reference(const Case& c, const Data<T>& in, blas_int info) {
  const Data<T> got = after(c, in, ours_fn<T>(c.r));
  const Data<T> ref = after(c, in, ref_fn<T>(c.r));
  EXPECT_EQ(ref.info, info) << "the test's expectation is not the reference's";
  EXPECT_EQ(got.info, info);
  EXPECT_TRUE(only_outputs_written(c, in, got));
  if (!decisions_may_differ()) EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
}

BT_PRECISION_SUITE(LapackSpecial);

// Column k (1-based) exactly zero: every elimination step leaves it zero, so U(k, k) = 0 is the first zero pivot.
// LAPACK still completes the factorization.
TYPED_TEST(LapackSpecial, SingularLuGivesTheFirstZeroPivot) {
  using T = TypeParam;
  const blas_int cases[][3] = {{6, 6, 1},    {6, 6, 3},    {6, 6, 6},     {40, 25, 25},
                               {25, 40, 10}, {25, 40, 25}, {200, 200, 97}};
  std::uint32_t seed = 11000;
  for (const auto& mk : cases) {
    const blas_int m = mk[0], n = mk[1], k = mk[2];
    for (R r : {R::kGetrf, R::kGesv}) {
      if (r == R::kGesv && m != n) continue;
      for (blas_int nrhs : {0, 3}) {
        if (r == R::kGetrf && nrhs) continue;
        const Case c{r, m, n, nrhs, m + 1, n + 2};
        SCOPED_TRACE(c.str() + " zero column " + std::to_string(k));
        Data<T> in = make<T>(c, seed++);
        for (blas_int i = 0; i < m; ++i) in.a[at(i, k - 1, c.lda)] = 0;
        expect_as_reference(c, in, k);
      }
    }
  }
}

// A diagonally dominant SPD matrix with a_kk = -1: the leading minors of order < k are positive definite, the one of
// order k is not.
TYPED_TEST(LapackSpecial, NotPositiveDefiniteGivesTheFailingMinor) {
  using T = TypeParam;
  const blas_int cases[][2] = {{8, 1}, {8, 5}, {8, 8}, {120, 77}, {300, 300}};
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
          Data<T> in = make<T>(c, seed++);
          in.a[at(k - 1, k - 1, c.lda)] = -1;
          expect_as_reference(c, in, k);
        }
}

// A zero on a non-unit diagonal: INFO = the first one, B untouched (also with nrhs = 0, where only that check runs;
// without zeros it then returns INFO = 0 having written nothing). With a unit diagonal the stored diagonal (zero here)
// is not looked at.
TYPED_TEST(LapackSpecial, TrtrsZeroOnTheDiagonal) {
  using T = TypeParam;
  const blas_int kZeros[][2] = {{1, 0}, {7, 3}, {80, 0}};  // 1-based positions of zeros (0: none)
  std::uint32_t seed = 13000;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (blas_int nrhs : {0, 1, 40})
        for (const auto& zeros : kZeros) {
          Case c{R::kTrtrs, 80, 80, nrhs, 81, 80};
          c.uplo = uplo;
          c.trans = trans;
          SCOPED_TRACE(c.str() + " zeros at " + std::to_string(zeros[0]) + ", " + std::to_string(zeros[1]));
          Data<T> in = make<T>(c, seed++);
          for (blas_int z : zeros)
            if (z) in.a[at(z - 1, z - 1, c.lda)] = 0;
          expect_as_reference(c, in, zeros[1] ? std::min(zeros[0], zeros[1]) : zeros[0]);
          if (nrhs == 0) {  // no right-hand sides and nothing to find: INFO = 0, nothing written
            Data<T> regular = make<T>(c, seed++);
            expect_as_reference(c, regular, 0);
            c.diag = 'U';
            expect_as_reference(c, in, 0);
            continue;
          }
          // A unit diagonal: a regular solve, on the GPU in gpu mode.
          c.diag = 'U';
          SCOPED_TRACE("diag U");
          const Data<T> got = after(c, in, ours_fn<T>(c.r)), ref = after(c, in, ref_fn<T>(c.r));
          EXPECT_EQ(got.info, 0);
          EXPECT_TRUE(only_outputs_written(c, in, got));
          if (!allow_gpu()) {
            EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
          }
          EXPECT_LT(solve_ratio(system_matrix(c, in.a), c.n, in.b, got.b, c.ldb, c.nrhs), kThresh);
        }
}

// One non-finite value where a routine reads it: the outputs (NaN and Inf where the reference puts them, its INFO)
// are the reference's, and some output is not finite.
TYPED_TEST(LapackSpecial, NanAndInfInputsGiveTheReferenceOutputs) {
  using T = TypeParam;
  std::uint32_t seed = 14000;
  for (R r : kAll)
    for (blas_int n : {12, 150})
      for (int what = 0; what < 4; ++what) {  // NaN in A, Inf in A, NaN in B, Inf in B
        if (what >= 2 && !has_b(r)) continue;
        Case c{r, n, n, 3, n + 1, n + 2};
        c.uplo = what % 2 ? 'L' : 'U';
        c.trans = what == 1 ? 'T' : 'N';
        SCOPED_TRACE(c.str() + (what == 0   ? " NaN in A"
                                : what == 1 ? " Inf in A"
                                : what == 2 ? " NaN in B"
                                            : " Inf in B"));
        Data<T> in = make<T>(c, seed++);
        if (r == R::kGetrs || r == R::kPotrs) {
          factor_with_reference(c, &in);
          ASSERT_FALSE(::testing::Test::HasFatalFailure());
        }
        // (lo, hi) is in the upper triangle, (hi, lo) in the lower: a position every routine reads.
        const blas_int lo = n / 3, hi = n / 2;
        const T bad = what % 2 ? inf<T>() : nan<T>();
        if (what < 2)
          in.a[c.uplo == 'U' ? at(lo, hi, c.lda) : at(hi, lo, c.lda)] = bad;
        else
          in.b[at(n - 2, 1, c.ldb)] = bad;
        const Data<T> got = after(c, in, ours_fn<T>(r));
        const Data<T> ref = after(c, in, ref_fn<T>(r));
        if (!allow_gpu()) {
          EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
        } else {
          // The CPU LAPACK answers, but in gpu mode the BLAS calls it makes (a driver's getrf and getrs, their trsm and
          // gemm) run on the GPU, and so do the reference's own (it runs in this process, through our exports) along
          // a different path: its INFO, not its bits.
          EXPECT_EQ(got.info, ref.info);
        }
        EXPECT_TRUE(only_outputs_written(c, in, got));
        bool nonfinite = false;
        for (std::size_t p = 0; p < got.a.size(); ++p)
          nonfinite |= a_writable(c, blas_int(p % c.lda), blas_int(p / c.lda)) && !std::isfinite(got.a[p]);
        for (blas_int q = 0; has_b(r) && q < c.nrhs; ++q)
          for (blas_int k = 0; k < n; ++k) nonfinite |= !std::isfinite(got.b[at(k, q, c.ldb)]);
        EXPECT_TRUE(nonfinite) << "a non-finite input left every output finite";
      }
}

// The same call on the same operands twice: the same bits (GPU path included), wherever the decisions are
// deterministic (decisions_may_differ: auto mode's adaptive decisions may run the two on different sides).
TYPED_TEST(LapackSpecial, SameCallSameBits) {
  if (decisions_may_differ()) GTEST_SKIP() << "auto mode, adaptive, GPU allowed: two runs may take different sides";
  using T = TypeParam;
  std::uint32_t seed = 15000;
  for (R r : kAll)
    for (blas_int n : {50, 260}) {
      Case c{r, n + 7, n, 4, n + 9, n + 1};
      c.uplo = 'L';
      c.trans = 'T';
      SCOPED_TRACE(c.str());
      Data<T> in = make<T>(c, seed++);
      if (r == R::kGetrs || r == R::kPotrs) {
        factor_with_reference(c, &in);
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
      }
      const Data<T> first = after(c, in, ours_fn<T>(r)), second = after(c, in, ours_fn<T>(r));
      EXPECT_EQ(first.info, 0);
      EXPECT_TRUE(same(first, second)) << "two runs differ";
    }
}

// Columns 0, n-1 and a few between: the large cases' residuals over them (each an O(n^2) product).
std::vector<blas_int> few_cols(blas_int n) { return {0, n / 5, n / 2, (4 * n) / 5, n - 1}; }

// Sizes where the policy in gpu mode runs the call on the GPU in earnest. getrs and potrs solve with our own factors.
TYPED_TEST(LapackSpecial, LargeOnTheGpu) {
  using T = TypeParam;
  if (!gpu_present()) GTEST_SKIP() << "needs a GPU and BLASOFFLOAD_TEST_ALLOW_GPU";
  std::vector<Case> cases = {{R::kGetrf, 3000, 3000, 0, 3001, 1},     {R::kGetrf, 4000, 2500, 0, 4000, 1},
                             {R::kGetrf, 2000, 3500, 0, 2003, 1},     {R::kGesv, 2500, 2500, 8, 2500, 2501},
                             {R::kGetrs, 3000, 3000, 1, 3000, 3000},  {R::kGetrs, 3000, 3000, 40, 3002, 3000},
                             {R::kPotrf, 4000, 4000, 0, 4001, 1},     {R::kPosv, 3000, 3000, 8, 3000, 3003},
                             {R::kPotrs, 3000, 3000, 40, 3000, 3001}, {R::kTrtrs, 3000, 3000, 40, 3001, 3000},
                             {R::kTrtrs, 2000, 2000, 1, 2000, 2000}};
  cases[5].trans = 'T';
  cases[6].uplo = 'L';
  cases[8].uplo = 'L';
  cases[9].trans = 'T';
  cases[10].uplo = 'L';
  std::uint32_t seed = 16000;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.str());
    Data<T> in = make<T>(c, seed++);
    const std::vector<T> a0 = in.a;
    if (c.r == R::kGetrs || c.r == R::kPotrs) {  // factored by ours (the GPU), checked like getrf / potrf
      const Case f = [&] {
        Case fc = c;
        fc.r = c.r == R::kGetrs ? R::kGetrf : R::kPotrf;
        fc.m = c.n;
        return fc;
      }();
      invoke(f, in.a.data(), in.b.data(), in.ipiv.data(), &in.info, ours_fn<T>(f.r));
      ASSERT_EQ(in.info, 0);
    }
    const Data<T> got = after(c, in, ours_fn<T>(c.r));
    EXPECT_EQ(got.info, 0);
    EXPECT_TRUE(only_outputs_written(c, in, got));
    const auto cols = few_cols(c.n);
    if (c.r == R::kGetrf || c.r == R::kGesv || c.r == R::kGetrs) {
      const auto& f = c.r == R::kGetrs ? in : got;
      ASSERT_TRUE(valid_pivots(f.ipiv, c.r == R::kGetrf ? c.npiv() : c.n, c.rows()));
      EXPECT_LT(lu_ratio(a0, f.a, c.rows(), c.n, c.lda, f.ipiv, cols), kThresh);
    }
    if (c.r == R::kPotrf || c.r == R::kPosv || c.r == R::kPotrs)
      EXPECT_LT(chol_ratio(c.uplo, a0, (c.r == R::kPotrs ? in : got).a, c.n, c.lda, cols), kThresh);
    if (has_b(c.r))
      EXPECT_LT(solve_ratio(system_matrix(c, a0), c.n, in.b, got.b, c.ldb, c.nrhs, {0, c.nrhs - 1}), kThresh);
  }
}

}  // namespace
}  // namespace bt::lapack
