// ?getrf ?getrs ?gesv ?potrf ?potrs ?posv ?trtrs on regular inputs, both precisions: every option (trans N/T/C, uplo
// U/L, diag N/U, lower case too), leading dimensions above the minimum, rectangular LU both ways, gesv / posv with no
// right-hand sides (they still factor). On the CPU path the results are the reference LAPACK's bit for bit; always
// they meet LAPACK's own residual bounds and leave every byte that is not an output (padding rows, the other triangle,
// input operands, pivots past min(m, n)) as it was.
#include <limits.h>
#include <link.h>
#include <stdlib.h>

#include <cctype>

#include "test_lapack_support.h"

namespace bt::lapack {
namespace {

// Columns the residuals are formed over: all of them up to 320, else a spread of them (O(n^3) checks stay short).
std::vector<blas_int> sample_cols(blas_int n) {
  std::vector<blas_int> v;
  const blas_int step = n <= 320 ? 1 : n / 48;
  for (blas_int j = 0; j < n; j += step) v.push_back(j);
  if (v.back() != n - 1) v.push_back(n - 1);
  return v;
}

// The accuracy of a call's outputs (INFO 0) against the original operands `in` (a0: A before getrs / potrs factored
// it).
template <class T>
void expect_within_bounds(const Case& c, const std::vector<T>& a0, const Data<T>& in, const Data<T>& got) {
  const auto cols = sample_cols(c.n);
  if (c.r == R::kGetrf || c.r == R::kGesv) {
    ASSERT_TRUE(valid_pivots(got.ipiv, c.npiv(), c.rows()));
    EXPECT_LT(lu_ratio(a0, got.a, c.rows(), c.n, c.lda, got.ipiv, cols), kThresh) << "||P L U - A||";
  }
  if (c.r == R::kPotrf || c.r == R::kPosv)
    EXPECT_LT(chol_ratio(c.uplo, a0, got.a, c.n, c.lda, cols), kThresh) << "||F^T F - A||";
  if (has_b(c.r) && c.nrhs > 0)
    EXPECT_LT(solve_ratio(system_matrix(c, a0), c.n, in.b, got.b, c.ldb, c.nrhs), kThresh) << "||B - op(A) X||";
}

// One regular case: ours (Fortran spelling `spelling`) against the reference LAPACK called directly on the same
// operands.
template <class T>
void run_case(const Case& c, std::uint32_t seed, int spelling = 0) {
  SCOPED_TRACE(fortran_names<T>(base(c.r))[spelling] + " " + c.str() + " seed " + std::to_string(seed));
  Data<T> in = make<T>(c, seed);
  const std::vector<T> a0 = in.a;
  if (c.r == R::kGetrs || c.r == R::kPotrs) {
    factor_with_reference(c, &in);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const Data<T> got = after(c, in, ours_fn<T>(c.r, spelling));
  EXPECT_EQ(got.info, 0);
  EXPECT_TRUE(only_outputs_written(c, in, got));
  if (!allow_gpu()) {  // the GPU's results are held to the bounds only (the reference's BLAS calls would run there too)
    const Data<T> ref = after(c, in, ref_fn<T>(c.r));
    ASSERT_EQ(ref.info, 0) << "the reference failed on the test data";
    EXPECT_TRUE(same(got, ref)) << "differs from the reference LAPACK";
  }
  expect_within_bounds(c, a0, in, got);
}

BT_PRECISION_SUITE(Lapack);

// The process's CPU LAPACK, the one the library forwards to, is the reference LAPACK: the only objects that define
// dgetrf_ are the library and Debian's reference liblapack.so.3 (not OpenBLAS's, which Debian's alternatives may
// install under the same name).
int add_definer(struct dl_phdr_info* info, size_t, void* data) {
  auto* found = static_cast<std::vector<std::string>*>(data);
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return 0;
  Dl_info where{};
  if (void* p = dlsym(h, "dgetrf_"); p && dladdr(p, &where) && where.dli_fbase == (void*)info->dlpi_addr) {
    char real[PATH_MAX];
    found->push_back(realpath(info->dlpi_name, real) ? real : info->dlpi_name);
  }
  dlclose(h);
  return 0;
}
TYPED_TEST(Lapack, CpuLapackIsTheReference) {
  ASSERT_NE(reference_lapack_handle(), nullptr) << "the test links liblapack.so.3";
  EXPECT_EQ(dlsym(reference_lapack_handle(), "openblas_get_config"), nullptr)
      << "liblapack.so.3 is OpenBLAS's: put Debian's reference LAPACK directory first in LD_LIBRARY_PATH";
  std::vector<std::string> definers;
  dl_iterate_phdr(add_definer, &definers);
  char ours_real[PATH_MAX];
  ASSERT_NE(realpath(BLASOFFLOAD_LIB_PATH, ours_real), nullptr);
  ASSERT_EQ(definers.size(), 2u) << "objects defining dgetrf_: " << ::testing::PrintToString(definers);
  for (const auto& d : definers)
    EXPECT_TRUE(d == ours_real || d.find("/lapack/liblapack.so.3") != std::string::npos) << d;
  EXPECT_NE(ours_fn<TypeParam>(R::kGetrf), ref_fn<TypeParam>(R::kGetrf));
}

// Every exported spelling (sgetrf_, sgetrf, SGETRF, SGETRF_) of every routine.
TYPED_TEST(Lapack, EveryFortranSpelling) {
  std::uint32_t seed = 100;
  for (R r : kAll)
    for (int spelling = 0; spelling < 4; ++spelling) {
      Case c{r, 6, 5, 3, 7, 6};
      if (r == R::kTrtrs) c.trans = 'T';
      run_case<TypeParam>(c, seed++, spelling);
    }
}

TYPED_TEST(Lapack, GetrfShapes) {
  const blas_int shapes[][2] = {{1, 1},   {1, 5},    {5, 1},    {4, 4},     {17, 9},    {9, 17},   {33, 33},
                                {64, 64}, {130, 70}, {70, 130}, {300, 300}, {600, 200}, {200, 600}};
  std::uint32_t seed = 1000;
  for (const auto& s : shapes)
    for (blas_int pad : {0, 3}) {
      if (pad && s[0] * s[1] > 20000) continue;
      run_case<TypeParam>({R::kGetrf, s[0], s[1], 0, s[0] + pad, 1}, seed++);
    }
  run_case<TypeParam>({R::kGetrf, 600, 600, 0, 601, 1}, seed++);
}

TYPED_TEST(Lapack, GetrsEveryTrans) {
  std::uint32_t seed = 2000;
  for (char trans : {'N', 'T', 'C', 'n', 't', 'c'})
    for (blas_int n : {1, 7, 65, 300})
      for (blas_int nrhs : {1, 3, 40}) {
        if (std::islower(trans) && n > 7) continue;
        const blas_int pad = (n + nrhs) % 3;
        Case c{R::kGetrs, n, n, nrhs, n + pad, n + 2 - pad};
        c.trans = trans;
        run_case<TypeParam>(c, seed++);
      }
}

// nrhs = 0 still factors A (B, with ldb >= n, untouched).
TYPED_TEST(Lapack, GesvIncludingNoRightHandSides) {
  std::uint32_t seed = 3000;
  for (blas_int n : {1, 8, 100, 300})
    for (blas_int nrhs : {0, 1, 5, 33}) {
      const blas_int pad = (n + nrhs) % 3;
      run_case<TypeParam>({R::kGesv, n, n, nrhs, n + pad, n + 1}, seed++);
    }
  run_case<TypeParam>({R::kGesv, 600, 600, 2, 600, 603}, seed++);
}

TYPED_TEST(Lapack, PotrfBothTriangles) {
  std::uint32_t seed = 4000;
  for (char uplo : {'U', 'L', 'u', 'l'})
    for (blas_int n : {1, 2, 9, 64, 200, 300}) {
      if (std::islower(uplo) && n > 9) continue;
      Case c{R::kPotrf, n, n, 0, n + n % 3, 1};
      c.uplo = uplo;
      run_case<TypeParam>(c, seed++);
    }
  Case c{R::kPotrf, 600, 600, 0, 602, 1};
  c.uplo = 'L';
  run_case<TypeParam>(c, seed++);
}

TYPED_TEST(Lapack, PotrsBothTriangles) {
  std::uint32_t seed = 5000;
  for (char uplo : {'U', 'L', 'l'})
    for (blas_int n : {1, 9, 120, 300})
      for (blas_int nrhs : {1, 4, 40}) {
        if (std::islower(uplo) && n > 9) continue;
        Case c{R::kPotrs, n, n, nrhs, n + nrhs % 2, n + 3};
        c.uplo = uplo;
        run_case<TypeParam>(c, seed++);
      }
}

// nrhs = 0 still factors A.
TYPED_TEST(Lapack, PosvIncludingNoRightHandSides) {
  std::uint32_t seed = 6000;
  for (char uplo : {'U', 'L', 'u'})
    for (blas_int n : {1, 9, 120, 300})
      for (blas_int nrhs : {0, 1, 7, 33}) {
        if (std::islower(uplo) && n > 9) continue;
        Case c{R::kPosv, n, n, nrhs, n + 2, n + nrhs % 3};
        c.uplo = uplo;
        run_case<TypeParam>(c, seed++);
      }
}

// A unit diagonal is NaN in the test data: it must not be read.
TYPED_TEST(Lapack, TrtrsEveryOption) {
  std::uint32_t seed = 7000;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (char diag : {'N', 'U'})
        for (blas_int n : {1, 6, 50, 200})
          for (blas_int nrhs : {1, 4, 35}) {
            const blas_int pad = (n + nrhs) % 3;
            Case c{R::kTrtrs, n, n, nrhs, n + pad, n + 1};
            c.uplo = uplo;
            c.trans = trans;
            c.diag = diag;
            run_case<TypeParam>(c, seed++);
          }
  for (const char* o : {"ltu", "unn", "Lcn", "uCU"}) {
    Case c{R::kTrtrs, 9, 9, 2, 10, 9};
    c.uplo = o[0];
    c.trans = o[1];
    c.diag = o[2];
    run_case<TypeParam>(c, seed++);
  }
}

}  // namespace
}  // namespace bt::lapack
