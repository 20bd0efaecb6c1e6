// Invalid arguments, both precisions: our XERBLA reports match the reference BLAS's (routine name as passed, "DGEMM "
// with its blank, and the netlib INFO), reach the program's own XERBLA, and write nothing; invalid CBLAS calls
// follow the CPU CBLAS's error protocol.
#include "reference.h"

namespace bt {
namespace {

BT_PRECISION_SUITE(Errors);

// `call(true)` calls ours, `call(false)` the reference routine, with the same arguments.
using Call = std::function<void(bool ours)>;

// Ours must report exactly one XERBLA(name, info) - the same report, name bytes included, as the reference's - and
// leave `out` as it was; nothing may go to cblas_xerbla.
template <class T>
void expect_one_report(const std::string& base, int info, const Call& call, const std::vector<T>& out) {
  const auto before = out;
  clear_error_logs();
  call(true);
  const auto mine = xerbla_log();
  EXPECT_TRUE(cblas_xerbla_log().empty());
  ASSERT_TRUE(same_bits(out, before)) << "written despite the error";
  clear_error_logs();
  call(false);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0], (ErrorRecord{upper_name<T>(base), info, upper_name<T>(base) + " "}));
  EXPECT_EQ(mine, xerbla_log()) << "the reference reports differently";
}

// Our routine `fname` (one of its Fortran spellings) or the reference's, as a function of type F.
template <class F, class T>
F* pick(bool ours, const std::string& fname, const std::string& base) {
  return ours ? ours_as<F>(fname) : reference_as<F>(name<T>(base + "_"));
}

TYPED_TEST(Errors, GemmInfoNumbers) {
  using T = TypeParam;
  using F = typename Api<T>::gemm;
  const struct {
    char ta, tb;
    blas_int m, n, k, lda, ldb, ldc;
    int info;
  } cases[] = {{'X', 'N', 2, 2, 2, 2, 2, 2, 1},  {'N', 'x', 2, 2, 2, 2, 2, 2, 2},  {'N', 'N', -1, 2, 2, 2, 2, 2, 3},
               {'N', 'N', 2, -1, 2, 2, 2, 2, 4}, {'N', 'N', 2, 2, -1, 2, 2, 2, 5}, {'N', 'N', 3, 2, 2, 2, 2, 3, 8},
               {'T', 'N', 2, 2, 3, 2, 3, 2, 8},  {'N', 'N', 2, 2, 3, 2, 2, 2, 10}, {'N', 'T', 2, 3, 2, 2, 2, 2, 10},
               {'N', 'N', 3, 2, 2, 3, 2, 2, 13}, {'N', 'N', 0, 0, 0, 0, 1, 1, 8},  {'X', 'Y', -1, -1, -1, 0, 0, 0, 1}};
  for (const auto& fname : fortran_names<T>("gemm"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), b(64, 1), cc(64, kPoison<T>);
      const T alpha = 1, beta = 0;
      expect_one_report<T>(
          "gemm", c.info,
          [&](bool o) {
            pick<F, T>(o, fname, "gemm")(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &c.lda, b.data(), &c.ldb,
                                         &beta, cc.data(), &c.ldc, 1, 1);
          },
          cc);
    }
}

TYPED_TEST(Errors, GemvInfoNumbers) {
  using T = TypeParam;
  using F = typename Api<T>::gemv;
  const struct {
    char t;
    blas_int m, n, lda, incx, incy;
    int info;
  } cases[] = {{'Z', 2, 2, 2, 1, 1, 1}, {'N', -1, 2, 2, 1, 1, 2}, {'T', 2, -4, 2, 1, 1, 3}, {'N', 3, 2, 2, 1, 1, 6},
               {'N', 2, 2, 2, 0, 1, 8}, {'T', 2, 2, 2, 1, 0, 11}, {'N', 0, 2, 0, 1, 1, 6},  {'c', 2, 3, 1, 0, 0, 6}};
  for (const auto& fname : fortran_names<T>("gemv"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), x(16, 1), y(16, kPoison<T>);
      const T alpha = 1, beta = 0;
      expect_one_report<T>(
          "gemv", c.info,
          [&](bool o) {
            pick<F, T>(o, fname, "gemv")(&c.t, &c.m, &c.n, &alpha, a.data(), &c.lda, x.data(), &c.incx, &beta, y.data(),
                                         &c.incy, 1);
          },
          y);
    }
}

TYPED_TEST(Errors, TrsvInfoNumbers) {
  using T = TypeParam;
  using F = typename Api<T>::trsv;
  const struct {
    char u, t, d;
    blas_int n, lda, incx;
    int info;
  } cases[] = {{'Q', 'N', 'N', 2, 2, 1, 1},  {'U', 'Q', 'N', 2, 2, 1, 2}, {'L', 'N', 'Q', 2, 2, 1, 3},
               {'U', 'N', 'N', -1, 2, 1, 4}, {'U', 'T', 'U', 3, 2, 1, 6}, {'L', 'N', 'N', 2, 2, 0, 8},
               {'l', 'c', 'u', 0, 0, 0, 6}};
  for (const auto& fname : fortran_names<T>("trsv"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), x(16, kPoison<T>);
      expect_one_report<T>(
          "trsv", c.info,
          [&](bool o) {
            pick<F, T>(o, fname, "trsv")(&c.u, &c.t, &c.d, &c.n, a.data(), &c.lda, x.data(), &c.incx, 1, 1, 1);
          },
          x);
    }
}

// nrm2 has no error exits: n <= 0 or incx <= 0 answer without a report.
TYPED_TEST(Errors, Nrm2HasNoErrorExits) {
  using T = TypeParam;
  const std::vector<T> x(16, 1);
  for (const auto& fname : fortran_names<T>("nrm2"))
    for (blas_int n : {-1, 0, 3})
      for (blas_int incx : {-2, 0}) {
        SCOPED_TRACE(fname + " n=" + std::to_string(n) + " incx=" + std::to_string(incx));
        clear_error_logs();
        ours_as<typename Api<T>::nrm2>(fname)(&n, x.data(), &incx);
        EXPECT_TRUE(xerbla_log().empty());
        EXPECT_TRUE(cblas_xerbla_log().empty());
      }
}

// The checks in reference order: with several arguments wrong, the first in that order is the one reported.
TYPED_TEST(Errors, TrsmInfoNumbers) {
  using T = TypeParam;
  using F = typename Api<T>::trsm;
  const struct {
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
  for (const auto& fname : fortran_names<T>("trsm"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), b(64, kPoison<T>);
      for (const T alpha : {T(1), T(0)}) {  // alpha = 0 is a quick return only after the checks
        expect_one_report<T>(
            "trsm", c.info,
            [&](bool o) {
              pick<F, T>(o, fname, "trsm")(&c.side, &c.uplo, &c.transa, &c.diag, &c.m, &c.n, &alpha, a.data(), &c.lda,
                                           b.data(), &c.ldb, 1, 1, 1, 1);
            },
            b);
      }
    }
}

TYPED_TEST(Errors, SyrkInfoNumbers) {
  using T = TypeParam;
  using F = typename Api<T>::syrk;
  const struct {
    char uplo, trans;
    blas_int n, k, lda, ldc;
    int info;
  } cases[] = {{'X', 'N', 2, 2, 2, 2, 1},   {'U', 'X', 2, 2, 2, 2, 2},   {'l', 'c', -1, 2, 2, 2, 3},
               {'L', 'T', 2, -1, 2, 2, 4},  {'U', 'N', 3, 2, 2, 3, 7},   {'U', 'T', 2, 3, 2, 2, 7},
               {'L', 'C', 2, 3, 3, 1, 10},  {'U', 'N', 0, 0, 0, 1, 7},   {'U', 'T', 0, 0, 1, 0, 10},
               {'X', 'Y', -1, -1, 0, 0, 1}, {'U', 'Y', -1, -1, 0, 0, 2}, {'L', 'N', -1, -1, 0, 0, 3},
               {'L', 'N', 2, -1, 0, 0, 4},  {'L', 'T', 3, 2, 1, 2, 7},   {'u', 'n', 3, 9, 2, 2, 7}};
  for (const auto& fname : fortran_names<T>("syrk"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), cc(64, kPoison<T>);
      const T beta = 0;
      for (const T alpha : {T(1), T(0)}) {  // alpha = 0 and k = 0 are quick returns only after the checks
        expect_one_report<T>(
            "syrk", c.info,
            [&](bool o) {
              pick<F, T>(o, fname, "syrk")(&c.uplo, &c.trans, &c.n, &c.k, &alpha, a.data(), &c.lda, &beta, cc.data(),
                                           &c.ldc, 1, 1);
            },
            cc);
      }
    }
}

// Invalid CBLAS calls go unchanged to the CPU CBLAS: the reports (cblas_xerbla and XERBLA) must be exactly
// those of calling the reference CBLAS directly.
TYPED_TEST(Errors, CblasProtocolIsTheCpuLibrarys) {
  using T = TypeParam;
  auto* mg = ours_as<typename Api<T>::cblas_gemm>(name<T>("gemm", "cblas_"));
  auto* rg = reference_as<typename Api<T>::cblas_gemm>(name<T>("gemm", "cblas_"));
  auto* mv = ours_as<typename Api<T>::cblas_gemv>(name<T>("gemv", "cblas_"));
  auto* rv = reference_as<typename Api<T>::cblas_gemv>(name<T>("gemv", "cblas_"));
  auto* mt = ours_as<typename Api<T>::cblas_trsv>(name<T>("trsv", "cblas_"));
  auto* rt = reference_as<typename Api<T>::cblas_trsv>(name<T>("trsv", "cblas_"));
  auto* mm = ours_as<typename Api<T>::cblas_trsm>(name<T>("trsm", "cblas_"));
  auto* rm = reference_as<typename Api<T>::cblas_trsm>(name<T>("trsm", "cblas_"));
  auto* mk = ours_as<typename Api<T>::cblas_syrk>(name<T>("syrk", "cblas_"));
  auto* rk = reference_as<typename Api<T>::cblas_syrk>(name<T>("syrk", "cblas_"));
  std::vector<T> a(64, 1), b(64, 1), c(64, kPoison<T>);
  const auto bad_layout = static_cast<CBLAS_LAYOUT>(99);
  const auto bad_trans = static_cast<CBLAS_TRANSPOSE>(7);
  const auto bad_uplo = static_cast<CBLAS_UPLO>(7);
  const auto bad_diag = static_cast<CBLAS_DIAG>(7);
  const auto bad_side = static_cast<CBLAS_SIDE>(7);
  const std::vector<std::pair<std::string, Call>> calls = {
      {"gemm bad layout",
       [&](bool o) {
         (o ? mg : rg)(bad_layout, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"gemm bad transa",
       [&](bool o) {
         (o ? mg : rg)(CblasColMajor, bad_trans, CblasNoTrans, 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"gemm row bad transb",
       [&](bool o) {
         (o ? mg : rg)(CblasRowMajor, CblasNoTrans, bad_trans, 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"gemm col bad ldc",
       [&](bool o) {
         (o ? mg : rg)(CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 1, a.data(), 3, b.data(), 2, 0, c.data(), 2);
       }},
      {"gemm row bad lda",
       [&](bool o) {
         (o ? mg : rg)(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
       }},
      {"gemm row negative m",
       [&](bool o) {
         (o ? mg : rg)(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(),
                       2);
       }},
      {"gemv bad layout",
       [&](bool o) { (o ? mv : rv)(bad_layout, CblasNoTrans, 2, 2, 1, a.data(), 2, b.data(), 1, 0, c.data(), 1); }},
      {"gemv bad trans",
       [&](bool o) { (o ? mv : rv)(CblasRowMajor, bad_trans, 2, 2, 1, a.data(), 2, b.data(), 1, 0, c.data(), 1); }},
      {"gemv row bad lda",
       [&](bool o) { (o ? mv : rv)(CblasRowMajor, CblasNoTrans, 2, 3, 1, a.data(), 2, b.data(), 1, 0, c.data(), 1); }},
      {"gemv col zero incy",
       [&](bool o) { (o ? mv : rv)(CblasColMajor, CblasTrans, 2, 2, 1, a.data(), 2, b.data(), 1, 0, c.data(), 0); }},
      {"trsv bad layout",
       [&](bool o) { (o ? mt : rt)(bad_layout, CblasUpper, CblasNoTrans, CblasNonUnit, 2, a.data(), 2, c.data(), 1); }},
      {"trsv bad uplo",
       [&](bool o) {
         (o ? mt : rt)(CblasColMajor, bad_uplo, CblasNoTrans, CblasNonUnit, 2, a.data(), 2, c.data(), 1);
       }},
      {"trsv row bad trans",
       [&](bool o) { (o ? mt : rt)(CblasRowMajor, CblasLower, bad_trans, CblasNonUnit, 2, a.data(), 2, c.data(), 1); }},
      {"trsv bad diag",
       [&](bool o) { (o ? mt : rt)(CblasRowMajor, CblasLower, CblasNoTrans, bad_diag, 2, a.data(), 2, c.data(), 1); }},
      {"trsv row bad lda",
       [&](bool o) { (o ? mt : rt)(CblasRowMajor, CblasLower, CblasNoTrans, CblasUnit, 3, a.data(), 2, c.data(), 1); }},
      {"trsv zero incx",
       [&](bool o) { (o ? mt : rt)(CblasColMajor, CblasLower, CblasNoTrans, CblasUnit, 2, a.data(), 2, c.data(), 0); }},
      {"trsm bad layout",
       [&](bool o) {
         (o ? mm : rm)(bad_layout, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"trsm bad side",
       [&](bool o) {
         (o ? mm : rm)(CblasColMajor, bad_side, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"trsm row bad side",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, bad_side, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"trsm row bad uplo",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasRight, bad_uplo, CblasTrans, CblasUnit, 2, 2, 1, a.data(), 2, c.data(), 2);
       }},
      {"trsm bad transa",
       [&](bool o) {
         (o ? mm : rm)(CblasColMajor, CblasLeft, CblasLower, bad_trans, CblasUnit, 2, 2, 1, a.data(), 2, c.data(), 2);
       }},
      {"trsm row bad diag",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasLower, CblasConjTrans, bad_diag, 2, 2, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"trsm row bad ldb",  // row-major B is m x n: ldb >= n
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 3, 1, a.data(), 2, c.data(),
                       2);
       }},
      {"trsm col bad lda",
       [&](bool o) {
         (o ? mm : rm)(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 3, 1, a.data(), 2,
                       c.data(), 2);
       }},
      {"trsm row negative m",
       [&](bool o) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, -1, 2, 1, a.data(), 2,
                       c.data(), 2);
       }},
      {"syrk bad layout",
       [&](bool o) { (o ? mk : rk)(bad_layout, CblasUpper, CblasNoTrans, 2, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"syrk bad uplo",
       [&](bool o) { (o ? mk : rk)(CblasColMajor, bad_uplo, CblasNoTrans, 2, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"syrk row bad trans",
       [&](bool o) { (o ? mk : rk)(CblasRowMajor, CblasLower, bad_trans, 2, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"syrk row bad lda",  // row-major A is n x k for NoTrans: lda >= k
       [&](bool o) { (o ? mk : rk)(CblasRowMajor, CblasUpper, CblasNoTrans, 2, 3, 1, a.data(), 2, 0, c.data(), 2); }},
      {"syrk col bad ldc",
       [&](bool o) { (o ? mk : rk)(CblasColMajor, CblasLower, CblasTrans, 3, 2, 1, a.data(), 2, 0, c.data(), 2); }},
      {"syrk negative k",
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
    ASSERT_TRUE(same_bits(c, std::vector<T>(64, kPoison<T>)));
  }
}

}  // namespace
}  // namespace bt
