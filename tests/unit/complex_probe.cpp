// A program with no BLAS of its own, run under LD_PRELOAD=libblasoffload.so by test_complex_summary.cpp: it makes a
// fixed set of complex BLAS ("blas") or LAPACK ("lapack") calls - valid ones, invalid ones, quick returns - through
// whatever the process resolves, so the summary's per-routine counts can be checked against the list below.
#include <dlfcn.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/complex_api.h"

namespace {

using blasoffload::blas_int;
using C = std::complex<float>;
using Z = std::complex<double>;

template <class F>
F* sym(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (!p) {
    std::fprintf(stderr, "probe: %s not found (run me under LD_PRELOAD=libblasoffload.so)\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F*>(p);
}

// The BLAS calls; the expected counts are in test_complex_summary.cpp.
template <class T>
void blas_calls(const char* p) {  // p: "c" or "z"
  using A = bt::cx::CApi<T>;
  using R = typename T::value_type;
  auto nm = [&](const char* base) { return std::string(p) + base; };
  const blas_int n = 4, zero = 0, one = 1, bad = -1;
  std::vector<T> a(16, T(1, 0.5)), b(16, T(0.25, -1)), c(16, T(2, 0));
  for (int i = 0; i < 4; ++i) a[i * 5] = T(4, 0);
  const T alpha(0, 1), beta(1, 0);
  const R ralpha = 0.5, rbeta = 1;
  auto* gemm = sym<typename A::gemm>((nm("gemm_")).c_str());
  gemm("N", "C", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);     // valid
  gemm("X", "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);     // invalid
  gemm("N", "N", &zero, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n, 1, 1);  // quick
  auto* cgemm = sym<typename A::cblas_gemm>(("cblas_" + nm("gemm")).c_str());
  cgemm(CblasRowMajor, CblasConjTrans, CblasTrans, 4, 4, 4, &alpha, a.data(), 4, b.data(), 4, &beta, c.data(), 4);
  sym<typename A::gemv>(nm("gemv_").c_str())("C", &n, &n, &alpha, a.data(), &n, b.data(), &one, &beta, c.data(), &one,
                                             1);
  auto* cgemv = sym<typename A::cblas_gemv>(("cblas_" + nm("gemv")).c_str());
  cgemv(CblasColMajor, CblasConjTrans, 4, 4, &alpha, a.data(), 4, b.data(), 1, &beta, c.data(), 1);
  sym<typename A::trsv>(nm("trsv_").c_str())("U", "C", "N", &n, a.data(), &n, c.data(), &one, 1, 1, 1);
  sym<typename A::trsv>(nm("trsv_").c_str())("X", "C", "N", &n, a.data(), &n, c.data(), &one, 1, 1, 1);
  sym<typename A::trsm>(nm("trsm_").c_str())("L", "L", "C", "N", &n, &n, &alpha, a.data(), &n, c.data(), &n, 1, 1, 1,
                                             1);
  sym<typename A::syrk>(nm("syrk_").c_str())("U", "T", &n, &n, &alpha, a.data(), &n, &beta, c.data(), &n, 1, 1);
  sym<typename A::syrk>(nm("syrk_").c_str())("U", "C", &n, &n, &alpha, a.data(), &n, &beta, c.data(), &n, 1, 1);
  sym<typename A::herk>(nm("herk_").c_str())("L", "C", &n, &n, &ralpha, a.data(), &n, &rbeta, c.data(), &n, 1, 1);
  sym<typename A::herk>(nm("herk_").c_str())("L", "T", &n, &n, &ralpha, a.data(), &n, &rbeta, c.data(), &n, 1, 1);
  sym<typename A::cblas_herk>(("cblas_" + nm("herk")).c_str())(CblasRowMajor, CblasUpper, CblasNoTrans, 4, 4, ralpha,
                                                               a.data(), 4, rbeta, c.data(), 4);
  const std::string norm = std::strcmp(p, "c") == 0 ? "scnrm2" : "dznrm2";
  sym<typename A::nrm2>((norm + "_").c_str())(&n, a.data(), &one);
  sym<typename A::nrm2>((norm + "_").c_str())(&n, a.data(), &bad);  // incx < 0: the CPU library's answer
  sym<typename A::cblas_nrm2>(("cblas_" + norm).c_str())(4, a.data(), 1);
}

// The LAPACK calls: each routine once (getrs and potrs on the factors just made), one invalid getrf.
// The LAPACK routines' Fortran types (gfortran's hidden CHARACTER lengths last).
template <class T>
struct Fn {
  using I = blas_int;
  using L = blasoffload::fortran_strlen;
  using getrf = void(const I*, const I*, T*, const I*, I*, I*);
  using getrs = void(const char*, const I*, const I*, const T*, const I*, const I*, T*, const I*, I*, L);
  using gesv = void(const I*, const I*, T*, const I*, I*, T*, const I*, I*);
  using potrf = void(const char*, const I*, T*, const I*, I*, L);
  using potrs = void(const char*, const I*, const I*, const T*, const I*, T*, const I*, I*, L);
  using posv = void(const char*, const I*, const I*, T*, const I*, T*, const I*, I*, L);
  using trtrs = void(const char*, const char*, const char*, const I*, const I*, const T*, const I*, T*, const I*, I*, L,
                     L, L);
};

template <class T>
void lapack_calls(const char* p) {
  using F = Fn<T>;
  auto nm = [&](const char* base) { return std::string(p) + base; };
  const blas_int n = 4, nrhs = 2, bad = -1;
  std::vector<T> a(16, T(0.5, 0.25)), f, b(8, T(1, -1)), x;
  for (int i = 0; i < 4; ++i) a[i * 5] = T(8, 0);
  std::vector<blas_int> ipiv(4);
  blas_int info = 0;
  f = a;
  sym<typename F::getrf>(nm("getrf_").c_str())(&n, &n, f.data(), &n, ipiv.data(), &info);
  sym<typename F::getrf>(nm("getrf_").c_str())(&bad, &n, f.data(), &n, ipiv.data(), &info);
  x = b;
  sym<typename F::getrs>(nm("getrs_").c_str())("C", &n, &nrhs, f.data(), &n, ipiv.data(), x.data(), &n, &info, 1);
  f = a, x = b;
  sym<typename F::gesv>(nm("gesv_").c_str())(&n, &nrhs, f.data(), &n, ipiv.data(), x.data(), &n, &info);
  f = a;
  sym<typename F::potrf>(nm("potrf_").c_str())("L", &n, f.data(), &n, &info, 1);
  x = b;
  sym<typename F::potrs>(nm("potrs_").c_str())("L", &n, &nrhs, f.data(), &n, x.data(), &n, &info, 1);
  f = a, x = b;
  sym<typename F::posv>(nm("posv_").c_str())("U", &n, &nrhs, f.data(), &n, x.data(), &n, &info, 1);
  x = b;
  sym<typename F::trtrs>(nm("trtrs_").c_str())("U", "C", "N", &n, &nrhs, a.data(), &n, x.data(), &n, &info, 1, 1, 1);
}

// The valid CBLAS calls that no column-major Fortran call expresses (row-major ConjTrans of gemv and trsv).
void row_major_conj_trans_calls() {
  std::vector<C> a(16, C(1, 0.5)), x(4, C(0.25, -1)), y(4, C(2, 0));
  for (int i = 0; i < 4; ++i) a[i * 5] = C(4, 0);
  const C alpha(0, 1), beta(1, 0);
  sym<bt::cx::CApi<C>::cblas_gemv>("cblas_cgemv")(CblasRowMajor, CblasConjTrans, 4, 4, &alpha, a.data(), 4, x.data(), 1,
                                                  &beta, y.data(), 1);
  std::vector<Z> az(16, Z(1, 0.5)), xz(4, Z(0.25, -1));
  for (int i = 0; i < 4; ++i) az[i * 5] = Z(4, 0);
  sym<bt::cx::CApi<Z>::cblas_trsv>("cblas_ztrsv")(CblasRowMajor, CblasUpper, CblasConjTrans, CblasNonUnit, 4, az.data(),
                                                  4, xz.data(), 1);
}

}  // namespace

// Invalid calls report here and the program goes on (the reference XERBLA would stop it).
extern "C" void xerbla_(const char* srname, const int* info, std::size_t len) {
  std::printf("probe: XERBLA %.*s %d\n", int(len), srname, *info);
}
extern "C" void cblas_xerbla(int info, const char* rout, const char*, ...) {
  std::printf("probe: cblas_xerbla %s %d\n", rout, info);
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (std::strcmp(what, "blas") == 0) {
    blas_calls<C>("c");
    blas_calls<Z>("z");
  } else if (std::strcmp(what, "lapack") == 0) {
    lapack_calls<C>("c");
    lapack_calls<Z>("z");
  } else if (std::strcmp(what, "rowconj") == 0) {
    row_major_conj_trans_calls();
  } else {
    std::fprintf(stderr, "usage: complex_probe blas|lapack|rowconj\n");
    return 2;
  }
  std::printf("probe: done\n");
  return 0;
}
