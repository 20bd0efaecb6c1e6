// Invalid arguments: our XERBLA reports match the reference BLAS's (routine name and INFO), reach the
// program's own XERBLA, and write nothing; invalid CBLAS calls follow the CPU CBLAS's error protocol.
#include <gtest/gtest.h>

#include "reference.h"

namespace bt {
namespace {

struct GemmArgs {
  char ta, tb;
  blas_int m, n, k, lda, ldb, ldc;
  int info;
};

TEST(Errors, SgemmInfoNumbers) {
  const GemmArgs cases[] = {
      {'X', 'N', 2, 2, 2, 2, 2, 2, 1},  {'N', 'x', 2, 2, 2, 2, 2, 2, 2},  {'N', 'N', -1, 2, 2, 2, 2, 2, 3},
      {'N', 'N', 2, -1, 2, 2, 2, 2, 4}, {'N', 'N', 2, 2, -1, 2, 2, 2, 5}, {'N', 'N', 3, 2, 2, 2, 2, 3, 8},
      {'T', 'N', 2, 2, 3, 2, 3, 2, 8},  {'N', 'N', 2, 2, 3, 2, 2, 2, 10}, {'N', 'T', 2, 3, 2, 2, 2, 2, 10},
      {'N', 'N', 3, 2, 2, 3, 2, 2, 13}, {'N', 'N', 0, 0, 0, 0, 1, 1, 8},  {'X', 'Y', -1, -1, -1, 0, 0, 0, 1}};
  for (const auto& name : exported_fortran_names("sgemm"))
    for (const auto& c : cases) {
      SCOPED_TRACE(name + " expecting INFO " + std::to_string(c.info));
      std::vector<float> a(64, 1.0f), b(64, 1.0f), cc(64, kPoison);
      const float alpha = 1.0f, beta = 0.0f;
      clear_error_logs();
      ours_as<blasoffload::sgemm_fortran_t>(name)(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &c.lda, b.data(),
                                                  &c.ldb, &beta, cc.data(), &c.ldc, 1, 1);
      auto mine = xerbla_log();
      clear_error_logs();
      reference_as<blasoffload::sgemm_fortran_t>("sgemm_")(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &c.lda,
                                                           b.data(), &c.ldb, &beta, cc.data(), &c.ldc, 1, 1);
      auto theirs = xerbla_log();
      ASSERT_EQ(mine.size(), 1u);
      EXPECT_EQ(mine[0].routine, "SGEMM");
      EXPECT_EQ(mine[0].info, c.info);
      EXPECT_EQ(mine, theirs);
      for (float v : cc) ASSERT_EQ(v, kPoison) << "written despite the error";
    }
}

TEST(Errors, SgemvInfoNumbers) {
  struct Case {
    char t;
    blas_int m, n, lda, incx, incy;
    int info;
  } cases[] = {{'Z', 2, 2, 2, 1, 1, 1}, {'N', -1, 2, 2, 1, 1, 2}, {'T', 2, -4, 2, 1, 1, 3}, {'N', 3, 2, 2, 1, 1, 6},
               {'N', 2, 2, 2, 0, 1, 8}, {'T', 2, 2, 2, 1, 0, 11}, {'N', 0, 2, 0, 1, 1, 6}};
  for (const auto& name : exported_fortran_names("sgemv"))
    for (const auto& c : cases) {
      SCOPED_TRACE(name + " expecting INFO " + std::to_string(c.info));
      std::vector<float> a(64, 1.0f), x(16, 1.0f), y(16, kPoison);
      const float alpha = 1.0f, beta = 0.0f;
      clear_error_logs();
      ours_as<blasoffload::sgemv_fortran_t>(name)(&c.t, &c.m, &c.n, &alpha, a.data(), &c.lda, x.data(), &c.incx, &beta,
                                                  y.data(), &c.incy, 1);
      auto mine = xerbla_log();
      clear_error_logs();
      reference_as<blasoffload::sgemv_fortran_t>("sgemv_")(&c.t, &c.m, &c.n, &alpha, a.data(), &c.lda, x.data(),
                                                           &c.incx, &beta, y.data(), &c.incy, 1);
      ASSERT_EQ(mine.size(), 1u);
      EXPECT_EQ(mine[0], (ErrorRecord{"SGEMV", c.info}));
      EXPECT_EQ(mine, xerbla_log());
      for (float v : y) ASSERT_EQ(v, kPoison);
    }
}

TEST(Errors, StrsvInfoNumbers) {
  struct Case {
    char u, t, d;
    blas_int n, lda, incx;
    int info;
  } cases[] = {{'Q', 'N', 'N', 2, 2, 1, 1},  {'U', 'Q', 'N', 2, 2, 1, 2}, {'L', 'N', 'Q', 2, 2, 1, 3},
               {'U', 'N', 'N', -1, 2, 1, 4}, {'U', 'T', 'U', 3, 2, 1, 6}, {'L', 'N', 'N', 2, 2, 0, 8}};
  for (const auto& name : exported_fortran_names("strsv"))
    for (const auto& c : cases) {
      SCOPED_TRACE(name + " expecting INFO " + std::to_string(c.info));
      std::vector<float> a(64, 1.0f), x(16, kPoison);
      clear_error_logs();
      ours_as<blasoffload::strsv_fortran_t>(name)(&c.u, &c.t, &c.d, &c.n, a.data(), &c.lda, x.data(), &c.incx, 1, 1, 1);
      auto mine = xerbla_log();
      clear_error_logs();
      reference_as<blasoffload::strsv_fortran_t>("strsv_")(&c.u, &c.t, &c.d, &c.n, a.data(), &c.lda, x.data(), &c.incx,
                                                           1, 1, 1);
      ASSERT_EQ(mine.size(), 1u);
      EXPECT_EQ(mine[0], (ErrorRecord{"STRSV", c.info}));
      EXPECT_EQ(mine, xerbla_log());
      for (float v : x) ASSERT_EQ(v, kPoison);
    }
}

// The checks in reference order: with several arguments wrong, the first in that order is the one reported.
TEST(Errors, StrsmInfoNumbers) {
  struct Case {
    char side, uplo, transa, diag;
    blas_int m, n, lda, ldb;
    int info;
  } cases[] = {{'X', 'U', 'N', 'N', 2, 2, 2, 2, 1},   {'L', 'X', 'N', 'N', 2, 2, 2, 2, 2},
               {'R', 'L', 'X', 'N', 2, 2, 2, 2, 3},   {'l', 'u', 'n', 'X', 2, 2, 2, 2, 4},
               {'L', 'U', 'N', 'N', -1, 2, 2, 2, 5},  {'R', 'L', 'T', 'U', 2, -1, 2, 2, 6},
               {'L', 'U', 'N', 'N', 3, 2, 2, 3, 9},   {'R', 'U', 'C', 'N', 2, 3, 2, 2, 9},
               {'L', 'U', 'N', 'N', 2, 2, 2, 1, 11},  {'R', 'L', 'C', 'N', 3, 2, 2, 2, 11},
               {'L', 'U', 'N', 'N', 0, 0, 0, 1, 9},   {'R', 'U', 'N', 'N', 0, 0, 1, 0, 11},
               {'X', 'Y', 'Z', 'W', -1, -1, 0, 0, 1}, {'L', 'Y', 'Z', 'W', -1, -1, 0, 0, 2},
               {'L', 'U', 'Z', 'W', -1, -1, 0, 0, 3}, {'L', 'U', 'N', 'W', -1, -1, 0, 0, 4},
               {'r', 'l', 't', 'u', -1, -1, 0, 0, 5}, {'L', 'U', 'N', 'N', 2, -1, 0, 0, 6},
               {'L', 'U', 'N', 'N', 3, 2, 2, 2, 9},   {'R', 'U', 'N', 'N', 3, 4, 3, 2, 9}};
  for (const auto& name : exported_fortran_names("strsm"))
    for (const auto& c : cases) {
      SCOPED_TRACE(name + " expecting INFO " + std::to_string(c.info));
      std::vector<float> a(64, 1.0f), b(64, kPoison);
      const float alpha = 1.0f;
      clear_error_logs();
      ours_as<blasoffload::strsm_fortran_t>(name)(&c.side, &c.uplo, &c.transa, &c.diag, &c.m, &c.n, &alpha, a.data(),
                                                  &c.lda, b.data(), &c.ldb, 1, 1, 1, 1);
      auto mine = xerbla_log();
      clear_error_logs();
      reference_as<blasoffload::strsm_fortran_t>("strsm_")(&c.side, &c.uplo, &c.transa, &c.diag, &c.m, &c.n, &alpha,
                                                           a.data(), &c.lda, b.data(), &c.ldb, 1, 1, 1, 1);
      ASSERT_EQ(mine.size(), 1u);
      EXPECT_EQ(mine[0], (ErrorRecord{"STRSM", c.info}));
      EXPECT_EQ(mine, xerbla_log());
      for (float v : b) ASSERT_EQ(v, kPoison) << "written despite the error";
    }
}

TEST(Errors, SsyrkInfoNumbers) {
  struct Case {
    char uplo, trans;
    blas_int n, k, lda, ldc;
    int info;
  } cases[] = {{'X', 'N', 2, 2, 2, 2, 1},   {'U', 'X', 2, 2, 2, 2, 2},   {'l', 'c', -1, 2, 2, 2, 3},
               {'L', 'T', 2, -1, 2, 2, 4},  {'U', 'N', 3, 2, 2, 3, 7},   {'U', 'T', 2, 3, 2, 2, 7},
               {'L', 'C', 2, 3, 3, 1, 10},  {'U', 'N', 0, 0, 0, 1, 7},   {'U', 'T', 0, 0, 1, 0, 10},
               {'X', 'Y', -1, -1, 0, 0, 1}, {'U', 'Y', -1, -1, 0, 0, 2}, {'L', 'N', -1, -1, 0, 0, 3},
               {'L', 'N', 2, -1, 0, 0, 4},  {'L', 'T', 3, 2, 1, 2, 7},   {'u', 'n', 3, 9, 2, 2, 7}};
  for (const auto& name : exported_fortran_names("ssyrk"))
    for (const auto& c : cases) {
      SCOPED_TRACE(name + " expecting INFO " + std::to_string(c.info));
      std::vector<float> a(64, 1.0f), cc(64, kPoison);
      const float alpha = 1.0f, beta = 0.0f;
      clear_error_logs();
      ours_as<blasoffload::ssyrk_fortran_t>(name)(&c.uplo, &c.trans, &c.n, &c.k, &alpha, a.data(), &c.lda, &beta,
                                                  cc.data(), &c.ldc, 1, 1);
      auto mine = xerbla_log();
      clear_error_logs();
      reference_as<blasoffload::ssyrk_fortran_t>("ssyrk_")(&c.uplo, &c.trans, &c.n, &c.k, &alpha, a.data(), &c.lda,
                                                           &beta, cc.data(), &c.ldc, 1, 1);
      ASSERT_EQ(mine.size(), 1u);
      EXPECT_EQ(mine[0], (ErrorRecord{"SSYRK", c.info}));
      EXPECT_EQ(mine, xerbla_log());
      for (float v : cc) ASSERT_EQ(v, kPoison) << "written despite the error";
    }
}

// Invalid CBLAS calls go unchanged to the CPU CBLAS: the reports (cblas_xerbla and XERBLA) must be exactly
// those of calling the reference CBLAS directly.
TEST(Errors, CblasProtocolIsTheCpuLibrarys) {
  auto* mg = ours_as<blasoffload::sgemm_cblas_t>("cblas_sgemm");
  auto* rg = reference_as<blasoffload::sgemm_cblas_t>("cblas_sgemm");
  auto* mv = ours_as<blasoffload::sgemv_cblas_t>("cblas_sgemv");
  auto* rv = reference_as<blasoffload::sgemv_cblas_t>("cblas_sgemv");
  auto* mt = ours_as<blasoffload::strsv_cblas_t>("cblas_strsv");
  auto* rt = reference_as<blasoffload::strsv_cblas_t>("cblas_strsv");
  auto* mm = ours_as<blasoffload::strsm_cblas_t>("cblas_strsm");
  auto* rm = reference_as<blasoffload::strsm_cblas_t>("cblas_strsm");
  auto* mk = ours_as<blasoffload::ssyrk_cblas_t>("cblas_ssyrk");
  auto* rk = reference_as<blasoffload::ssyrk_cblas_t>("cblas_ssyrk");
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, kPoison);
  const auto bad_layout = static_cast<CBLAS_LAYOUT>(99);
  const auto bad_trans = static_cast<CBLAS_TRANSPOSE>(7);
  const auto bad_uplo = static_cast<CBLAS_UPLO>(7);
  const auto bad_diag = static_cast<CBLAS_DIAG>(7);
  const auto bad_side = static_cast<CBLAS_SIDE>(7);
  using Call = std::function<void(bool ours)>;
  const std::vector<std::pair<std::string, Call>> calls = {
      {"sgemm bad layout",
       [&](bool o) {
         (o ? mg : rg)(bad_layout, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"sgemm bad transa",
       [&](bool o) {
         (o ? mg : rg)(CblasColMajor, bad_trans, CblasNoTrans, 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"sgemm row bad transb",
       [&](bool o) {
         (o ? mg : rg)(CblasRowMajor, CblasNoTrans, bad_trans, 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"sgemm col bad ldc",
       [&](bool o) {
         (o ? mg : rg)(CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 1, a.data(), 3, b.data(), 2, 0, c.data(), 2);
       }},
      {"sgemm row bad lda",
       [&](bool o) {
         (o ? mg : rg)(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"sgemm row negative m",
       [&](bool o) {
         (o ? mg : rg)(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(),
                       2);
       }},
      {"sgemv bad layout",
       [&](bool o) { (o ? mv : rv)(bad_layout, CblasNoTrans, 2, 2, 1, a.data(), 2, b.data(), 1, 0, c.data(), 1); }},
      {"sgemv bad trans",
       [&](bool o) { (o ? mv : rv)(CblasRowMajor, bad_trans, 2, 2, 1, a.data(), 2, b.data(), 1, 0, c.data(), 1); }},
      {"sgemv row bad lda",
       [&](bool o) { (o ? mv : rv)(CblasRowMajor, CblasNoTrans, 2, 3, 1, a.data(), 2, b.data(), 1, 0, c.data(), 1); }},
      {"sgemv col zero incy",
       [&](bool o) { (o ? mv : rv)(CblasColMajor, CblasTrans, 2, 2, 1, a.data(), 2, b.data(), 1, 0, c.data(), 0); }},
      {"strsv bad layout",
       [&](bool o) { (o ? mt : rt)(bad_layout, CblasUpper, CblasNoTrans, CblasNonUnit, 2, a.data(), 2, c.data(), 1); }},
      {"strsv bad uplo",
       [&](bool o) {
         (o ? mt : rt)(CblasColMajor, bad_uplo, CblasNoTrans, CblasNonUnit, 2, a.data(), 2, c.data(), 1);
       }},
      {"strsv row bad trans",
       [&](bool o) { (o ? mt : rt)(CblasRowMajor, CblasLower, bad_trans, CblasNonUnit, 2, a.data(), 2, c.data(), 1); }},
      {"strsv bad diag",
       [&](bool o) { (o ? mt : rt)(CblasRowMajor, CblasLower, CblasNoTrans, bad_diag, 2, a.data(), 2, c.data(), 1); }},
      {"strsv row bad lda",
       [&](bool o) { (o ? mt : rt)(CblasRowMajor, CblasLower, CblasNoTrans, CblasUnit, 3, a.data(), 2, c.data(), 1); }},
      {"strsv zero incx",
       [&](bool o) { (o ? mt : rt)(CblasColMajor, CblasLower, CblasNoTrans, CblasUnit, 2, a.data(), 2, c.data(), 0); }},
      {"strsm bad layout",
       [&](bool o) {
         (o ? mm : rm)(bad_layout, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"strsm bad side",
       [&](bool o) {
         (o ? mm : rm)(CblasColMajor, bad_side, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"strsm row bad side",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, bad_side, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"strsm row bad uplo",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasRight, bad_uplo, CblasTrans, CblasUnit, 2, 2, 1, a.data(), 2, c.data(), 2);
       }},
      {"strsm bad transa",
       [&](bool o) {
         (o ? mm : rm)(CblasColMajor, CblasLeft, CblasLower, bad_trans, CblasUnit, 2, 2, 1, a.data(), 2, c.data(), 2);
       }},
      {"strsm row bad diag",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasLower, CblasConjTrans, bad_diag, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"strsm row bad ldb",  // row-major B is m x n: ldb >= n
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 3, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"strsm col bad lda",
       [&](bool o) {
         (o ? mm : rm)(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 3, 1, a.data(), 2,
                       c.data(), 2);
       }},
      {"strsm row negative m",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, -1, 2, 1, a.data(), 2,
                       c.data(), 2);
       }},
      {"ssyrk bad layout",
       [&](bool o) { (o ? mk : rk)(bad_layout, CblasUpper, CblasNoTrans, 2, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"ssyrk bad uplo",
       [&](bool o) { (o ? mk : rk)(CblasColMajor, bad_uplo, CblasNoTrans, 2, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"ssyrk row bad trans",
       [&](bool o) { (o ? mk : rk)(CblasRowMajor, CblasLower, bad_trans, 2, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"ssyrk row bad lda",  // row-major A is n x k for NoTrans: lda >= k
       [&](bool o) { (o ? mk : rk)(CblasRowMajor, CblasUpper, CblasNoTrans, 2, 3, 1, a.data(), 2, 0, c.data(), 2); }},
      {"ssyrk col bad ldc",
       [&](bool o) { (o ? mk : rk)(CblasColMajor, CblasLower, CblasTrans, 3, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"ssyrk negative k",
       [&](bool o) { (o ? mk : rk)(CblasRowMajor, CblasLower, CblasTrans, 2, -1, 1, a.data(), 2, 0, c.data(), 2); }},
  };
  for (const auto& [what, call] : calls) {
    SCOPED_TRACE(what);
    clear_error_logs();
    call(true);
    auto mine_c = cblas_xerbla_log(), mine_f = xerbla_log();
    clear_error_logs();
    call(false);
    EXPECT_EQ(mine_c, cblas_xerbla_log());
    EXPECT_EQ(mine_f, xerbla_log());
    EXPECT_EQ(mine_c.size() + mine_f.size(), 1u) << "exactly one error report expected";
    for (float v : c) ASSERT_EQ(v, kPoison);
  }
}

}  // namespace
}  // namespace bt
