// The complex LAPACK routines' argument checks and quick returns ({c,z}getrf getrs gesv potrf potrs posv trtrs, every
// Fortran spelling): each invalid argument gives exactly the reference LAPACK's XERBLA report ("CGETRF", "ZGESV " ...)
// through the program's own XERBLA and INFO = -i, nothing else written; the quick returns write INFO = 0 and nothing
// else, without reading the (NaN) operands.
#include "complex_lapack_support.h"

namespace bt::lapack::cplx {
namespace {

// Operands for a call that must not touch them: NaN matrices (both parts), poisoned pivots.
template <class T>
Data<T> poisoned() {
  Data<T> d;
  d.a.assign(256, cnan<T>());
  d.b.assign(256, cnan<T>());
  d.ipiv.assign(32, kPivPoison);
  return d;
}

template <class T>
void expect_invalid(const Case& c, int info) {
  for (int spelling = 0; spelling < 4; ++spelling) {
    SCOPED_TRACE(fortran_names<T>(base(c.r))[spelling] + " " + c.str() + " expecting INFO " + std::to_string(-info));
    const Data<T> in = poisoned<T>();
    clear_error_logs();
    const Data<T> got = after(c, in, ours_fn<T>(c.r, spelling));
    const auto mine = xerbla_log();
    clear_error_logs();
    const Data<T> ref = after(c, in, ref_fn<T>(c.r));
    ASSERT_EQ(mine.size(), 1u) << "exactly one XERBLA report expected";
    EXPECT_EQ(mine[0].routine, upper_name<T>(base(c.r)));
    EXPECT_EQ(mine[0].info, info);
    EXPECT_EQ(mine, xerbla_log()) << "the reference reports differently";
    EXPECT_TRUE(cblas_xerbla_log().empty());
    EXPECT_EQ(got.info, -info);
    EXPECT_EQ(ref.info, -info) << "the test's expectation is not the reference's";
    Data<T> expect = in;
    expect.info = -info;
    EXPECT_TRUE(same(got, expect)) << "an operand was written despite the error";
  }
}

template <class T>
void expect_quick(const Case& c) {
  for (int spelling = 0; spelling < 4; ++spelling) {
    SCOPED_TRACE(fortran_names<T>(base(c.r))[spelling] + " " + c.str());
    const Data<T> in = poisoned<T>();
    clear_error_logs();
    const Data<T> got = after(c, in, ours_fn<T>(c.r, spelling));
    EXPECT_TRUE(xerbla_log().empty());
    const Data<T> ref = after(c, in, ref_fn<T>(c.r));
    Data<T> expect = in;
    expect.info = 0;
    EXPECT_TRUE(same(ref, expect)) << "the reference is no quick return here";
    EXPECT_TRUE(same(got, expect));
  }
}

// Case with the options given as a string (uplo, trans, diag as the routine takes them).
Case with(R r, const char* opts, blas_int m, blas_int n, blas_int nrhs, blas_int lda, blas_int ldb) {
  Case c{r, m, n, nrhs, lda, ldb};
  if (r == R::kGetrs) c.trans = opts[0];
  if (r == R::kPotrf || r == R::kPotrs || r == R::kPosv) c.uplo = opts[0];
  if (r == R::kTrtrs) {
    c.uplo = opts[0];
    c.trans = opts[1];
    c.diag = opts[2];
  }
  return c;
}

struct Invalid {
  const char* opts;
  blas_int m, n, nrhs, lda, ldb;
  int info;
};

BT_COMPLEX_SUITE(ComplexLapackErrors);

TYPED_TEST(ComplexLapackErrors, GetrfInfoNumbers) {
  const Invalid cases[] = {{"", -1, 2, 0, 2, 0, 1}, {"", 2, -1, 0, 2, 0, 2}, {"", 3, 2, 0, 2, 0, 4},
                           {"", 0, 0, 0, 0, 0, 4},  {"", 0, 5, 0, 0, 0, 4},  {"", -1, -1, 0, 0, 0, 1}};
  for (const auto& k : cases)
    expect_invalid<TypeParam>(with(R::kGetrf, k.opts, k.m, k.n, k.nrhs, k.lda, k.ldb), k.info);
}

TYPED_TEST(ComplexLapackErrors, GetrsInfoNumbers) {
  const Invalid cases[] = {{"X", 0, 2, 1, 2, 2, 1},  {"C", 0, -1, 1, 1, 1, 2},  {"T", 0, 2, -1, 2, 2, 3},
                           {"C", 0, 3, 1, 2, 3, 5},  {"c", 0, 3, 1, 3, 2, 8},   {"N", 0, 0, 0, 0, 1, 5},
                           {"t", 0, 0, 0, 1, 0, 8},  {"X", 0, -1, -1, 0, 0, 1}, {"c", 0, -1, -1, 0, 0, 2},
                           {"C", 0, 2, -1, 1, 1, 3}, {"C", 0, 4, 2, 3, 3, 5}};
  for (const auto& k : cases)
    expect_invalid<TypeParam>(with(R::kGetrs, k.opts, k.m, k.n, k.nrhs, k.lda, k.ldb), k.info);
}

TYPED_TEST(ComplexLapackErrors, GesvInfoNumbers) {
  const Invalid cases[] = {{"", 0, -1, 1, 1, 1, 1}, {"", 0, 2, -1, 2, 2, 2}, {"", 0, 3, 1, 2, 3, 4},
                           {"", 0, 3, 1, 3, 2, 7},  {"", 0, 0, 0, 0, 1, 4},  {"", 0, 0, 0, 1, 0, 7},
                           {"", 0, 3, 0, 3, 2, 7}};
  for (const auto& k : cases) expect_invalid<TypeParam>(with(R::kGesv, k.opts, k.m, k.n, k.nrhs, k.lda, k.ldb), k.info);
}

TYPED_TEST(ComplexLapackErrors, PotrfInfoNumbers) {
  const Invalid cases[] = {{"X", 0, 2, 0, 2, 0, 1},
                           {"U", 0, -1, 0, 1, 0, 2},
                           {"L", 0, 3, 0, 2, 0, 4},
                           {"u", 0, 0, 0, 0, 0, 4},
                           {"C", 0, -1, 0, 0, 0, 1}};
  for (const auto& k : cases)
    expect_invalid<TypeParam>(with(R::kPotrf, k.opts, k.m, k.n, k.nrhs, k.lda, k.ldb), k.info);
}

// potrs and posv check the same arguments in the same order.
TYPED_TEST(ComplexLapackErrors, PotrsAndPosvInfoNumbers) {
  const Invalid cases[] = {{"X", 0, 2, 1, 2, 2, 1}, {"U", 0, -1, 1, 1, 1, 2},  {"L", 0, 2, -1, 2, 2, 3},
                           {"u", 0, 3, 1, 2, 3, 5}, {"l", 0, 3, 1, 3, 2, 7},   {"L", 0, 0, 0, 0, 1, 5},
                           {"U", 0, 0, 0, 1, 0, 7}, {"Q", 0, -1, -1, 0, 0, 1}, {"U", 0, 4, 0, 4, 3, 7}};
  for (R r : {R::kPotrs, R::kPosv})
    for (const auto& k : cases) expect_invalid<TypeParam>(with(r, k.opts, k.m, k.n, k.nrhs, k.lda, k.ldb), k.info);
}

TYPED_TEST(ComplexLapackErrors, TrtrsInfoNumbers) {
  const Invalid cases[] = {{"XNN", 0, 2, 1, 2, 2, 1},   {"UXN", 0, 2, 1, 2, 2, 2},   {"LCX", 0, 2, 1, 2, 2, 3},
                           {"UCN", 0, -1, 1, 1, 1, 4},  {"lcu", 0, 2, -1, 2, 2, 5},  {"UNN", 0, 3, 1, 2, 3, 7},
                           {"LCN", 0, 3, 1, 3, 2, 9},   {"UNN", 0, 0, 0, 0, 1, 7},   {"LTU", 0, 0, 0, 1, 0, 9},
                           {"XYZ", 0, -1, -1, 0, 0, 1}, {"UCZ", 0, -1, -1, 0, 0, 3}, {"UCN", 0, 3, 0, 3, 2, 9}};
  for (const auto& k : cases)
    expect_invalid<TypeParam>(with(R::kTrtrs, k.opts, k.m, k.n, k.nrhs, k.lda, k.ldb), k.info);
}

// The quick returns each routine defines (gesv / posv with nrhs = 0 factor, and trtrs with nrhs = 0 checks the
// diagonal: test_complex_lapack.cpp).
TYPED_TEST(ComplexLapackErrors, QuickReturnsWriteOnlyInfo) {
  using T = TypeParam;
  for (blas_int mn : {0, 3}) {
    expect_quick<T>(with(R::kGetrf, "", 0, mn, 0, 1, 1));
    expect_quick<T>(with(R::kGetrf, "", mn, 0, 0, std::max<blas_int>(mn, 1), 1));
  }
  for (const char* t : {"N", "T", "C", "c"}) {
    expect_quick<T>(with(R::kGetrs, t, 0, 0, 3, 1, 1));
    expect_quick<T>(with(R::kGetrs, t, 0, 4, 0, 4, 5));
  }
  expect_quick<T>(with(R::kGesv, "", 0, 0, 2, 1, 1));
  for (const char* u : {"U", "l"}) {
    expect_quick<T>(with(R::kPotrf, u, 0, 0, 0, 1, 0));
    expect_quick<T>(with(R::kPotrs, u, 0, 0, 2, 1, 1));
    expect_quick<T>(with(R::kPotrs, u, 0, 3, 0, 3, 3));
    expect_quick<T>(with(R::kPosv, u, 0, 0, 3, 1, 1));
  }
  for (const char* o : {"UNN", "LCU", "uCn"}) expect_quick<T>(with(R::kTrtrs, o, 0, 0, 4, 1, 1));
}

}  // namespace
}  // namespace bt::lapack::cplx
