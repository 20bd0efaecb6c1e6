// Invalid arguments of the complex BLAS routines (c and z, every Fortran spelling): exactly the reference BLAS's XERBLA
// report (name as passed, "CGEMM " with its blank, the netlib INFO; syrk's trans C and herk's trans T are INFO 2),
// through the program's own XERBLA, nothing written; the complex norms have no error exits; invalid complex CBLAS
// calls follow the CPU CBLAS's error protocol and leave what it leaves.
#include "complex_support.h"

namespace bt::cx {
namespace {

BT_COMPLEX_SUITE(ComplexErrors);

// `call(true)` calls ours, `call(false)` the reference routine, with the same arguments.
using Call = std::function<void(bool ours)>;

// Ours reports exactly one XERBLA(NAME, info) - the same report, name bytes included, as the reference's - and leaves
// `out` as it was; nothing goes to cblas_xerbla.
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

template <class F, class T>
F* pick(bool ours, const std::string& fname, const std::string& base) {
  return ours ? ours_c<F>(fname) : ref_c<T, F>(base);
}

TYPED_TEST(ComplexErrors, GemmInfoNumbers) {
  using T = TypeParam;
  using F = typename CApi<T>::gemm;
  const struct {
    char ta, tb;
    blas_int m, n, k, lda, ldb, ldc;
    int info;
  } cases[] = {{'X', 'N', 2, 2, 2, 2, 2, 2, 1},    {'N', 'x', 2, 2, 2, 2, 2, 2, 2},   {'C', 'N', -1, 2, 2, 2, 2, 2, 3},
               {'N', 'c', 2, -1, 2, 2, 2, 2, 4},   {'N', 'N', 2, 2, -1, 2, 2, 2, 5},  {'N', 'N', 3, 2, 2, 2, 2, 3, 8},
               {'C', 'N', 2, 2, 3, 2, 3, 2, 8},    {'N', 'N', 2, 2, 3, 2, 2, 2, 10},  {'N', 'C', 2, 3, 2, 2, 2, 2, 10},
               {'c', 't', 2, 3, 3, 3, 2, 2, 10},   {'N', 'N', 3, 2, 2, 3, 2, 2, 13},  {'N', 'N', 0, 0, 0, 0, 1, 1, 8},
               {'X', 'Y', -1, -1, -1, 0, 0, 0, 1}, {'C', 'Y', -1, -1, -1, 0, 0, 0, 2}};
  for (const auto& fname : fortran_names<T>("gemm"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), b(64, 1), cc(64, cpoison<T>());
      for (const T alpha : {T(1), T(0, 1), T(0)}) {  // alpha = 0 is a quick return only after the checks
        const T beta = 0;
        expect_one_report<T>(
            "gemm", c.info,
            [&](bool o) {
              pick<F, T>(o, fname, "gemm")(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &c.lda, b.data(), &c.ldb,
                                           &beta, cc.data(), &c.ldc, 1, 1);
            },
            cc);
      }
    }
}

TYPED_TEST(ComplexErrors, GemvInfoNumbers) {
  using T = TypeParam;
  using F = typename CApi<T>::gemv;
  const struct {
    char t;
    blas_int m, n, lda, incx, incy;
    int info;
  } cases[] = {{'Z', 2, 2, 2, 1, 1, 1}, {'N', -1, 2, 2, 1, 1, 2}, {'C', 2, -4, 2, 1, 1, 3}, {'N', 3, 2, 2, 1, 1, 6},
               {'C', 2, 2, 2, 0, 1, 8}, {'T', 2, 2, 2, 1, 0, 11}, {'N', 0, 2, 0, 1, 1, 6},  {'c', 2, 3, 1, 0, 0, 6}};
  for (const auto& fname : fortran_names<T>("gemv"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), x(16, 1), y(16, cpoison<T>());
      const T alpha = T(0, 1), beta = 0;
      expect_one_report<T>(
          "gemv", c.info,
          [&](bool o) {
            pick<F, T>(o, fname, "gemv")(&c.t, &c.m, &c.n, &alpha, a.data(), &c.lda, x.data(), &c.incx, &beta, y.data(),
                                         &c.incy, 1);
          },
          y);
    }
}

TYPED_TEST(ComplexErrors, TrsvInfoNumbers) {
  using T = TypeParam;
  using F = typename CApi<T>::trsv;
  const struct {
    char u, t, d;
    blas_int n, lda, incx;
    int info;
  } cases[] = {{'Q', 'N', 'N', 2, 2, 1, 1},  {'U', 'Q', 'N', 2, 2, 1, 2}, {'L', 'C', 'Q', 2, 2, 1, 3},
               {'U', 'C', 'N', -1, 2, 1, 4}, {'U', 'C', 'U', 3, 2, 1, 6}, {'L', 'N', 'N', 2, 2, 0, 8},
               {'l', 'c', 'u', 0, 0, 0, 6}};
  for (const auto& fname : fortran_names<T>("trsv"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), x(16, cpoison<T>());
      expect_one_report<T>(
          "trsv", c.info,
          [&](bool o) {
            pick<F, T>(o, fname, "trsv")(&c.u, &c.t, &c.d, &c.n, a.data(), &c.lda, x.data(), &c.incx, 1, 1, 1);
          },
          x);
    }
}

// scnrm2 / dznrm2 have no error exits: n <= 0 or incx <= 0 answer without a report.
TYPED_TEST(ComplexErrors, Nrm2HasNoErrorExits) {
  using T = TypeParam;
  const std::vector<T> x(16, T(1, -1));
  for (const auto& fname : exported_fortran_names(nrm2_name<T>()))
    for (blas_int n : {-1, 0, 3})
      for (blas_int incx : {-2, 0}) {
        SCOPED_TRACE(fname + " n=" + std::to_string(n) + " incx=" + std::to_string(incx));
        clear_error_logs();
        ours_c<typename CApi<T>::nrm2>(fname)(&n, x.data(), &incx);
        EXPECT_TRUE(xerbla_log().empty());
        EXPECT_TRUE(cblas_xerbla_log().empty());
      }
}

// With several arguments wrong, the first in the reference's order is the one reported.
TYPED_TEST(ComplexErrors, TrsmInfoNumbers) {
  using T = TypeParam;
  using F = typename CApi<T>::trsm;
  const struct {
    char side, uplo, transa, diag;
    blas_int m, n, lda, ldb;
    int info;
  } cases[] = {
      {'X', 'U', 'N', 'N', 2, 2, 2, 2, 1},   {'L', 'X', 'C', 'N', 2, 2, 2, 2, 2},  {'R', 'L', 'X', 'N', 2, 2, 2, 2, 3},
      {'l', 'u', 'c', 'X', 2, 2, 2, 2, 4},   {'L', 'U', 'C', 'N', -1, 2, 2, 2, 5}, {'R', 'L', 'T', 'U', 2, -1, 2, 2, 6},
      {'L', 'U', 'N', 'N', 3, 2, 2, 3, 9},   {'R', 'U', 'C', 'N', 2, 3, 2, 2, 9},  {'L', 'U', 'C', 'N', 2, 2, 2, 1, 11},
      {'R', 'L', 'C', 'N', 3, 2, 2, 2, 11},  {'L', 'U', 'N', 'N', 0, 0, 0, 1, 9},  {'R', 'U', 'N', 'N', 0, 0, 1, 0, 11},
      {'X', 'Y', 'Z', 'W', -1, -1, 0, 0, 1}, {'L', 'U', 'C', 'W', -1, -1, 0, 0, 4}};
  for (const auto& fname : fortran_names<T>("trsm"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), b(64, cpoison<T>());
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

struct RankKCase {
  char uplo, trans;
  blas_int n, k, lda, ldc;
  int info;
};

// syrk takes trans N and T only (C is INFO 2 for complex elements, unlike the real routines).
TYPED_TEST(ComplexErrors, SyrkInfoNumbers) {
  using T = TypeParam;
  using F = typename CApi<T>::syrk;
  const RankKCase cases[] = {{'X', 'N', 2, 2, 2, 2, 1},   {'U', 'X', 2, 2, 2, 2, 2},   {'U', 'C', 2, 2, 2, 2, 2},
                             {'l', 'c', 2, 2, 2, 2, 2},   {'L', 'C', -1, -1, 0, 0, 2}, {'l', 't', -1, 2, 2, 2, 3},
                             {'L', 'T', 2, -1, 2, 2, 4},  {'U', 'N', 3, 2, 2, 3, 7},   {'U', 'T', 2, 3, 2, 2, 7},
                             {'L', 'T', 2, 3, 3, 1, 10},  {'U', 'N', 0, 0, 0, 1, 7},   {'U', 'T', 0, 0, 1, 0, 10},
                             {'X', 'C', -1, -1, 0, 0, 1}, {'L', 'N', 2, -1, 0, 0, 4}};
  for (const auto& fname : fortran_names<T>("syrk"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " " + c.uplo + c.trans + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), cc(64, cpoison<T>());
      for (const T alpha : {T(0, 1), T(0)}) {  // alpha = 0 and k = 0 are quick returns only after the checks
        const T beta = 1;
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

// herk takes trans N and C only (T is INFO 2); lda >= k for trans C.
TYPED_TEST(ComplexErrors, HerkInfoNumbers) {
  using T = TypeParam;
  using F = typename CApi<T>::herk;
  const RankKCase cases[] = {{'X', 'N', 2, 2, 2, 2, 1},   {'U', 'X', 2, 2, 2, 2, 2},   {'U', 'T', 2, 2, 2, 2, 2},
                             {'l', 't', 2, 2, 2, 2, 2},   {'L', 'T', -1, -1, 0, 0, 2}, {'l', 'c', -1, 2, 2, 2, 3},
                             {'L', 'C', 2, -1, 2, 2, 4},  {'U', 'N', 3, 2, 2, 3, 7},   {'U', 'C', 2, 3, 2, 2, 7},
                             {'L', 'C', 2, 3, 3, 1, 10},  {'U', 'N', 0, 0, 0, 1, 7},   {'U', 'C', 0, 0, 1, 0, 10},
                             {'X', 'T', -1, -1, 0, 0, 1}, {'u', 'n', 3, 9, 2, 2, 7}};
  for (const auto& fname : fortran_names<T>("herk"))
    for (const auto& c : cases) {
      SCOPED_TRACE(fname + " " + c.uplo + c.trans + " expecting INFO " + std::to_string(c.info));
      std::vector<T> a(64, 1), cc(64, cpoison<T>());
      for (const Real<T> alpha : {Real<T>(1), Real<T>(0)}) {
        const Real<T> beta = 1;
        expect_one_report<T>(
            "herk", c.info,
            [&](bool o) {
              pick<F, T>(o, fname, "herk")(&c.uplo, &c.trans, &c.n, &c.k, &alpha, a.data(), &c.lda, &beta, cc.data(),
                                           &c.ldc, 1, 1);
            },
            cc);
      }
    }
}

// Invalid CBLAS calls (and the ones no column-major call expresses) go unchanged to the CPU CBLAS: the reports
// (cblas_xerbla and XERBLA) and the output must be exactly those of calling the reference CBLAS directly.
TYPED_TEST(ComplexErrors, CblasProtocolIsTheCpuLibrarys) {
  using T = TypeParam;
  using R = Real<T>;
  using A = CApi<T>;
  auto* mg = ours_c<typename A::cblas_gemm>(name<T>("gemm", "cblas_"));
  auto* rg = reference_as<typename A::cblas_gemm>(name<T>("gemm", "cblas_"));
  auto* mv = ours_c<typename A::cblas_gemv>(name<T>("gemv", "cblas_"));
  auto* rv = reference_as<typename A::cblas_gemv>(name<T>("gemv", "cblas_"));
  auto* mt = ours_c<typename A::cblas_trsv>(name<T>("trsv", "cblas_"));
  auto* rt = reference_as<typename A::cblas_trsv>(name<T>("trsv", "cblas_"));
  auto* mm = ours_c<typename A::cblas_trsm>(name<T>("trsm", "cblas_"));
  auto* rm = reference_as<typename A::cblas_trsm>(name<T>("trsm", "cblas_"));
  auto* mk = ours_c<typename A::cblas_syrk>(name<T>("syrk", "cblas_"));
  auto* rk = reference_as<typename A::cblas_syrk>(name<T>("syrk", "cblas_"));
  auto* mh = ours_c<typename A::cblas_herk>(name<T>("herk", "cblas_"));
  auto* rh = reference_as<typename A::cblas_herk>(name<T>("herk", "cblas_"));
  const auto a = random_cvector<T>(64, 3), b = random_cvector<T>(64, 4);
  const T one = 1, zero = 0, i1(0, 1);
  const auto bad_layout = static_cast<CBLAS_LAYOUT>(99);
  const auto bad_trans = static_cast<CBLAS_TRANSPOSE>(7);
  const auto bad_uplo = static_cast<CBLAS_UPLO>(7);
  const auto bad_diag = static_cast<CBLAS_DIAG>(7);
  const auto bad_side = static_cast<CBLAS_SIDE>(7);
  const auto CT = CblasConjTrans, NT = CblasNoTrans;
  using Fn = std::function<void(bool, T*)>;
  const std::vector<std::pair<std::string, Fn>> calls = {
      {"gemm bad layout",
       [&](bool o, T* c) { (o ? mg : rg)(bad_layout, NT, CT, 2, 2, 2, &i1, a.data(), 2, b.data(), 2, &zero, c, 2); }},
      {"gemm bad transa",
       [&](bool o, T* c) {
         (o ? mg : rg)(CblasColMajor, bad_trans, CT, 2, 2, 2, &one, a.data(), 2, b.data(), 2, &zero, c, 2);
       }},
      {"gemm row bad transb",
       [&](bool o, T* c) {
         (o ? mg : rg)(CblasRowMajor, CT, bad_trans, 2, 2, 2, &one, a.data(), 2, b.data(), 2, &zero, c, 2);
       }},
      {"gemm col bad ldc",
       [&](bool o, T* c) {
         (o ? mg : rg)(CblasColMajor, CT, NT, 3, 2, 2, &one, a.data(), 3, b.data(), 2, &zero, c, 2);
       }},
      {"gemm row bad lda",
       [&](bool o, T* c) {
         (o ? mg : rg)(CblasRowMajor, NT, CT, 2, 2, 3, &one, a.data(), 2, b.data(), 2, &zero, c, 2);
       }},
      {"gemv bad layout",
       [&](bool o, T* c) { (o ? mv : rv)(bad_layout, CT, 2, 2, &one, a.data(), 2, b.data(), 1, &zero, c, 1); }},
      {"gemv row bad trans",
       [&](bool o, T* c) {
         (o ? mv : rv)(CblasRowMajor, bad_trans, 2, 2, &one, a.data(), 2, b.data(), 1, &zero, c, 1);
       }},
      {"gemv row conj bad lda",
       [&](bool o, T* c) { (o ? mv : rv)(CblasRowMajor, CT, 2, 3, &one, a.data(), 2, b.data(), 1, &zero, c, 1); }},
      {"gemv row conj zero incx",
       [&](bool o, T* c) { (o ? mv : rv)(CblasRowMajor, CT, 2, 2, &one, a.data(), 2, b.data(), 0, &zero, c, 1); }},
      {"gemv col zero incy",
       [&](bool o, T* c) { (o ? mv : rv)(CblasColMajor, CT, 2, 2, &one, a.data(), 2, b.data(), 1, &zero, c, 0); }},
      {"trsv bad layout",
       [&](bool o, T* c) { (o ? mt : rt)(bad_layout, CblasUpper, CT, CblasNonUnit, 2, a.data(), 2, c, 1); }},
      {"trsv bad uplo",
       [&](bool o, T* c) { (o ? mt : rt)(CblasColMajor, bad_uplo, CT, CblasNonUnit, 2, a.data(), 2, c, 1); }},
      {"trsv row bad diag",
       [&](bool o, T* c) { (o ? mt : rt)(CblasRowMajor, CblasLower, CT, bad_diag, 2, a.data(), 2, c, 1); }},
      {"trsv row conj bad lda",
       [&](bool o, T* c) { (o ? mt : rt)(CblasRowMajor, CblasLower, CT, CblasUnit, 3, a.data(), 2, c, 1); }},
      {"trsv row conj zero incx",
       [&](bool o, T* c) { (o ? mt : rt)(CblasRowMajor, CblasUpper, CT, CblasUnit, 2, a.data(), 2, c, 0); }},
      {"trsm bad side",
       [&](bool o, T* c) {
         (o ? mm : rm)(CblasColMajor, bad_side, CblasUpper, CT, CblasNonUnit, 2, 2, &i1, a.data(), 2, c, 2);
       }},
      {"trsm row bad uplo",
       [&](bool o, T* c) {
         (o ? mm : rm)(CblasRowMajor, CblasRight, bad_uplo, CT, CblasUnit, 2, 2, &one, a.data(), 2, c, 2);
       }},
      {"trsm row bad ldb",
       [&](bool o, T* c) {
         (o ? mm : rm)(CblasRowMajor, CblasLeft, CblasUpper, CT, CblasNonUnit, 2, 3, &one, a.data(), 2, c, 2);
       }},
      {"syrk col trans C",
       [&](bool o, T* c) { (o ? mk : rk)(CblasColMajor, CblasUpper, CT, 2, 2, &one, a.data(), 2, &zero, c, 2); }},
      {"syrk row trans C",
       [&](bool o, T* c) { (o ? mk : rk)(CblasRowMajor, CblasLower, CT, 2, 2, &i1, a.data(), 2, &one, c, 2); }},
      {"syrk bad layout",
       [&](bool o, T* c) { (o ? mk : rk)(bad_layout, CblasUpper, NT, 2, 2, &one, a.data(), 2, &zero, c, 2); }},
      {"syrk row bad lda",
       [&](bool o, T* c) { (o ? mk : rk)(CblasRowMajor, CblasUpper, NT, 2, 3, &one, a.data(), 2, &zero, c, 2); }},
      {"herk col trans T",
       [&](bool o, T* c) {
         (o ? mh : rh)(CblasColMajor, CblasUpper, CblasTrans, 2, 2, R(1), a.data(), 2, R(0), c, 2);
       }},
      {"herk row trans T",
       [&](bool o, T* c) {
         (o ? mh : rh)(CblasRowMajor, CblasLower, CblasTrans, 2, 2, R(1), a.data(), 2, R(0.5), c, 2);
       }},
      {"herk bad uplo",
       [&](bool o, T* c) { (o ? mh : rh)(CblasColMajor, bad_uplo, CT, 2, 2, R(1), a.data(), 2, R(0), c, 2); }},
      {"herk row bad trans",
       [&](bool o, T* c) { (o ? mh : rh)(CblasRowMajor, CblasUpper, bad_trans, 2, 2, R(1), a.data(), 2, R(0), c, 2); }},
      {"herk row bad lda",  // row-major A is n x k for NoTrans: lda >= k
       [&](bool o, T* c) { (o ? mh : rh)(CblasRowMajor, CblasUpper, NT, 2, 3, R(1), a.data(), 2, R(0), c, 2); }},
      {"herk col negative k",
       [&](bool o, T* c) { (o ? mh : rh)(CblasColMajor, CblasUpper, CT, 2, -1, R(1), a.data(), 2, R(0), c, 2); }},
  };
  const auto c0 = random_cvector<T>(64, 5);
  for (const auto& [what, call] : calls) {
    SCOPED_TRACE(what);
    auto mine = c0, ref = c0;
    clear_error_logs();
    call(true, mine.data());
    const auto mine_c = cblas_xerbla_log(), mine_f = xerbla_log();
    clear_error_logs();
    call(false, ref.data());
    EXPECT_EQ(mine_c, cblas_xerbla_log());
    EXPECT_EQ(mine_f, xerbla_log());
    // Not always untouched: the reference's row-major ConjTrans trsv conjugates x before it checks diag. Where it
    // computes (a row-major transpose it accepts, a zero increment it copies away), its Fortran call reaches our
    // export, which may run it on the GPU: then equal within rounding, not bit for bit.
    if (allow_gpu() && cblas_xerbla_log().empty() && xerbla_log().empty()) {
      for (std::size_t p = 0; p < mine.size(); ++p)
        EXPECT_TRUE(cwithin(mine[p], W<T>(ref[p]), 64 * ceps<T>() * (std::abs(W<T>(ref[p])) + 1))) << "element " << p;
    } else {
      EXPECT_TRUE(same_bits(mine, ref)) << "output differs from the reference CBLAS's";
    }
    if (!mine_c.empty() || !mine_f.empty()) EXPECT_EQ(mine_c.size() + mine_f.size(), 1u) << "one error report expected";
  }
}

}  // namespace
}  // namespace bt::cx
