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

// Invalid CBLAS calls go unchanged to the CPU CBLAS: the reports (cblas_xerbla and XERBLA) must be exactly
// those of calling the reference CBLAS directly.
TEST(Errors, CblasProtocolIsTheCpuLibrarys) {
  auto* mg = ours_as<blasoffload::sgemm_cblas_t>("cblas_sgemm");
  auto* rg = reference_as<blasoffload::sgemm_cblas_t>("cblas_sgemm");
  auto* mv = ours_as<blasoffload::sgemv_cblas_t>("cblas_sgemv");
  auto* rv = reference_as<blasoffload::sgemv_cblas_t>("cblas_sgemv");
  auto* mt = ours_as<blasoffload::strsv_cblas_t>("cblas_strsv");
  auto* rt = reference_as<blasoffload::strsv_cblas_t>("cblas_strsv");
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, kPoison);
  const auto bad_layout = static_cast<CBLAS_LAYOUT>(99);
  const auto bad_trans = static_cast<CBLAS_TRANSPOSE>(7);
  const auto bad_uplo = static_cast<CBLAS_UPLO>(7);
  const auto bad_diag = static_cast<CBLAS_DIAG>(7);
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
