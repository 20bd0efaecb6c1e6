// What the LAPACK unit tests (test_lapack*.cpp) share: the routines' Fortran types, the reference LAPACK the process
// forwards to (looked up by name), one call of any routine on guarded data, the test matrices, and LAPACK's own
// acceptance ratios (xGET01/xGET02/xPOT01: residual / (n ||A|| eps) < 30).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reference.h"

namespace bt::lapack {

// LAPACK's threshold for the normalised residuals (the TESTING/LIN programs' THRESH).
constexpr double kThresh = 30;
// INFO and pivots before a call: never a value the routines write.
constexpr blas_int kInfoPoison = -987654;
constexpr blas_int kPivPoison = -424242;
constexpr std::size_t kPivGuard = 4;  // poisoned pivots after the ones a routine may write

// The Fortran types, written from the LAPACK documentation (gfortran's hidden CHARACTER lengths last).
template <class T>
struct Fn {
  using I = blas_int;
  using L = blasoffload::fortran_strlen;
  using getrf = void(const I* m, const I* n, T* a, const I* lda, I* ipiv, I* info);
  using getrs = void(const char* trans, const I* n, const I* nrhs, const T* a, const I* lda, const I* ipiv, T* b,
                     const I* ldb, I* info, L);
  using gesv = void(const I* n, const I* nrhs, T* a, const I* lda, I* ipiv, T* b, const I* ldb, I* info);
  using potrf = void(const char* uplo, const I* n, T* a, const I* lda, I* info, L);
  using potrs = void(const char* uplo, const I* n, const I* nrhs, const T* a, const I* lda, T* b, const I* ldb, I* info,
                     L);
  using posv = void(const char* uplo, const I* n, const I* nrhs, T* a, const I* lda, T* b, const I* ldb, I* info, L);
  using trtrs = void(const char* uplo, const char* trans, const char* diag, const I* n, const I* nrhs, const T* a,
                     const I* lda, T* b, const I* ldb, I* info, L, L, L);
};

enum class R { kGetrf, kGetrs, kGesv, kPotrf, kPotrs, kPosv, kTrtrs };
constexpr R kAll[] = {R::kGetrf, R::kGetrs, R::kGesv, R::kPotrf, R::kPotrs, R::kPosv, R::kTrtrs};
inline const char* base(R r) {
  static const char* const names[] = {"getrf", "getrs", "gesv", "potrf", "potrs", "posv", "trtrs"};
  return names[int(r)];
}
inline bool has_b(R r) { return r != R::kGetrf && r != R::kPotrf; }
inline bool has_ipiv(R r) { return r == R::kGetrf || r == R::kGetrs || r == R::kGesv; }
inline bool triangle_only(R r) { return r == R::kPotrf || r == R::kPotrs || r == R::kPosv || r == R::kTrtrs; }
inline bool writes_a(R r) { return r == R::kGetrf || r == R::kGesv || r == R::kPotrf || r == R::kPosv; }

// One call's arguments (m is getrf's only; the others are n x n).
struct Case {
  R r;
  blas_int m, n, nrhs, lda, ldb;
  char uplo = 'U', trans = 'N', diag = 'N';
  blas_int rows() const { return r == R::kGetrf ? m : n; }
  blas_int npiv() const { return r == R::kGetrf ? std::min(m, n) : has_ipiv(r) ? n : 0; }
  std::string str() const {
    std::string s = base(r);
    if (r == R::kGetrs || r == R::kTrtrs) s += std::string(" trans=") + trans;
    if (triangle_only(r)) s += std::string(" uplo=") + uplo;
    if (r == R::kTrtrs) s += std::string(" diag=") + diag;
    if (r == R::kGetrf) s += " m=" + std::to_string(m);
    s += " n=" + std::to_string(n);
    if (has_b(r)) s += " nrhs=" + std::to_string(nrhs) + " ldb=" + std::to_string(ldb);
    return s + " lda=" + std::to_string(lda);
  }
};

// Everything a call may read or write, each array with room for any valid call of its case.
template <class T>
struct Data {
  std::vector<T> a, b;
  std::vector<blas_int> ipiv;
  blas_int info = kInfoPoison;
};
template <class T>
bool same(const Data<T>& x, const Data<T>& y) {
  return same_bits(x.a, y.a) && same_bits(x.b, y.b) && x.ipiv == y.ipiv && x.info == y.info;
}

// The reference LAPACK the test links (liblapack.so.3 of Debian's reference package, pinned by LD_LIBRARY_PATH).
inline void* reference_lapack_handle() {
  static void* h = dlopen("liblapack.so.3", RTLD_NOW | RTLD_NOLOAD);
  return h;
}
inline void* lapack_reference(const std::string& symbol) {
  void* h = reference_lapack_handle();
  void* p = h ? dlsym(h, symbol.c_str()) : nullptr;
  EXPECT_NE(p, nullptr) << symbol << " not in the liblapack.so.3 the test links";
  return p;
}
template <class T>
void* ours_fn(R r, int spelling = 0) {
  return ours(fortran_names<T>(base(r))[spelling]);
}
template <class T>
void* ref_fn(R r) {
  return lapack_reference(name<T>(base(r)) + "_");
}

// Calls fn (a routine of kind c.r) with the case's arguments on raw operands.
template <class T>
void invoke(const Case& c, T* a, T* b, blas_int* ipiv, blas_int* info, void* fn) {
  using F = Fn<T>;
  switch (c.r) {
    case R::kGetrf:
      reinterpret_cast<typename F::getrf*>(fn)(&c.m, &c.n, a, &c.lda, ipiv, info);
      break;
    case R::kGetrs:
      reinterpret_cast<typename F::getrs*>(fn)(&c.trans, &c.n, &c.nrhs, a, &c.lda, ipiv, b, &c.ldb, info, 1);
      break;
    case R::kGesv:
      reinterpret_cast<typename F::gesv*>(fn)(&c.n, &c.nrhs, a, &c.lda, ipiv, b, &c.ldb, info);
      break;
    case R::kPotrf:
      reinterpret_cast<typename F::potrf*>(fn)(&c.uplo, &c.n, a, &c.lda, info, 1);
      break;
    case R::kPotrs:
      reinterpret_cast<typename F::potrs*>(fn)(&c.uplo, &c.n, &c.nrhs, a, &c.lda, b, &c.ldb, info, 1);
      break;
    case R::kPosv:
      reinterpret_cast<typename F::posv*>(fn)(&c.uplo, &c.n, &c.nrhs, a, &c.lda, b, &c.ldb, info, 1);
      break;
    case R::kTrtrs:
      reinterpret_cast<typename F::trtrs*>(fn)(&c.uplo, &c.trans, &c.diag, &c.n, &c.nrhs, a, &c.lda, b, &c.ldb, info, 1,
                                               1, 1);
      break;
  }
}
// A copy of d after fn(c) on it.
template <class T>
Data<T> after(const Case& c, Data<T> d, void* fn) {
  invoke(c, d.a.data(), d.b.data(), d.ipiv.data(), &d.info, fn);
  return d;
}

// ---- Test matrices. Padding rows (between the rows and the leading dimension) hold kPoison; an unreferenced
// triangle holds NaN, as does a unit diagonal: reading them shows in the results, writing them in the bytes. ----

// A general rows x cols matrix, entries uniform in [-1, 1].
template <class T>
std::vector<T> general(blas_int rows, blas_int cols, blas_int ld, std::uint32_t seed) {
  auto a = random_vector<T>(std::size_t(ld) * std::max<blas_int>(cols, 1), seed);
  for (blas_int j = 0; j < cols; ++j)
    for (blas_int i = rows; i < ld; ++i) a[at(i, j, ld)] = kPoison<T>;
  return a;
}

inline bool in_triangle(char uplo, blas_int i, blas_int j) { return is_upper(uplo) ? i <= j : i >= j; }

// A symmetric positive definite matrix (diagonally dominant: a_ii = 1 + sum_j |a_ij|), its uplo triangle stored.
template <class T>
std::vector<T> spd(char uplo, blas_int n, blas_int ld, std::uint32_t seed) {
  auto a = general<T>(n, n, ld, seed);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < j; ++i) a[at(j, i, ld)] = a[at(i, j, ld)];
  for (blas_int i = 0; i < n; ++i) {
    T s = 1;
    for (blas_int j = 0; j < n; ++j)
      if (j != i) s += std::fabs(a[at(i, j, ld)]);
    a[at(i, i, ld)] = s;
  }
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < n; ++i)
      if (!in_triangle(uplo, i, j)) a[at(i, j, ld)] = nan<T>();
  return a;
}

// A well-conditioned triangle: diagonal +-[1, 2), off-diagonal entries uniform in [-1, 1] / n.
template <class T>
std::vector<T> triangle(char uplo, char diag, blas_int n, blas_int ld, std::uint32_t seed) {
  auto a = general<T>(n, n, ld, seed);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < n; ++i) {
      T& e = a[at(i, j, ld)];
      if (i == j)
        e = is_unit(diag) ? nan<T>() : (e < 0 ? e - 1 : e + 1);
      else
        e = in_triangle(uplo, i, j) ? e / T(n) : nan<T>();
    }
  return a;
}

// The operands of a valid case, generated for its routine (getrs and potrs get factors from the reference LAPACK).
template <class T>
Data<T> make(const Case& c, std::uint32_t seed) {
  Data<T> d;
  switch (c.r) {
    case R::kGetrf:
    case R::kGesv:
    case R::kGetrs:
      d.a = general<T>(c.rows(), c.n, c.lda, seed);
      break;
    case R::kPotrf:
    case R::kPosv:
    case R::kPotrs:
      d.a = spd<T>(c.uplo, c.n, c.lda, seed);
      break;
    case R::kTrtrs:
      d.a = triangle<T>(c.uplo, c.diag, c.n, c.lda, seed);
      break;
  }
  d.b = has_b(c.r) ? general<T>(c.n, c.nrhs, c.ldb, seed + 1) : std::vector<T>(1, kPoison<T>);
  d.ipiv.assign(std::size_t(c.npiv()) + kPivGuard, kPivPoison);
  return d;
}

// For getrs / potrs: the factors of d.a by the reference getrf / potrf (its INFO must be 0).
template <class T>
void factor_with_reference(const Case& c, Data<T>* d) {
  const R f = c.r == R::kGetrs ? R::kGetrf : R::kPotrf;
  Case fc = c;
  fc.r = f;
  fc.m = c.n;
  blas_int info = kInfoPoison;
  invoke(fc, d->a.data(), d->b.data(), d->ipiv.data(), &info, ref_fn<T>(f));
  ASSERT_EQ(info, 0) << "the reference could not factor the test matrix";
}

// ---- What may change. ----

// Elements of A (rows() x n, leading dimension lda) the call may write: its factors' part.
inline bool a_writable(const Case& c, blas_int i, blas_int j) {
  if (!writes_a(c.r) || i >= c.rows()) return false;
  return !triangle_only(c.r) || in_triangle(c.uplo, i, j);
}
// Every element outside what the call may write is bit-identical to before: padding rows, the other triangle, input
// operands, B when there is no B to solve for, pivots past the ones the routine writes.
template <class T>
::testing::AssertionResult only_outputs_written(const Case& c, const Data<T>& before, const Data<T>& got) {
  for (std::size_t p = 0; p < got.a.size(); ++p) {
    const blas_int i = blas_int(p % c.lda), j = blas_int(p / c.lda);
    if (!a_writable(c, i, j) && !same_bits(got.a[p], before.a[p]))
      return ::testing::AssertionFailure() << "A(" << i << ", " << j << ") written, not an output";
  }
  for (std::size_t p = 0; p < got.b.size(); ++p) {
    const blas_int i = blas_int(p % std::max<blas_int>(c.ldb, 1));
    if (!(has_b(c.r) && c.nrhs > 0 && i < c.n) && !same_bits(got.b[p], before.b[p]))
      return ::testing::AssertionFailure() << "B element " << p << " written, not an output";
  }
  const std::size_t first = c.r == R::kGetrs ? 0 : std::size_t(c.npiv());
  for (std::size_t p = first; p < got.ipiv.size(); ++p)
    if (got.ipiv[p] != before.ipiv[p]) return ::testing::AssertionFailure() << "IPIV(" << p + 1 << ") written";
  return ::testing::AssertionSuccess();
}

// ---- LAPACK's acceptance ratios, accumulated in Acc<T>. ----

// Element (i, j) of the matrix a routine works with, from its original stored form: general, symmetric from one
// triangle, or triangular (unit diagonal = 1); `op` reads it transposed.
template <class T>
struct Matrix {
  const std::vector<T>* a;
  blas_int ld;
  enum { kGeneral, kSymmetric, kTriangular } kind;
  char uplo = 'U', diag = 'N';
  bool op = false;
  Acc<T> operator()(blas_int i, blas_int j) const {
    if (op) std::swap(i, j);
    if (kind == kGeneral) return (*a)[at(i, j, ld)];
    if (kind == kSymmetric) return in_triangle(uplo, i, j) ? (*a)[at(i, j, ld)] : (*a)[at(j, i, ld)];
    if (!in_triangle(uplo, i, j)) return 0;
    return i == j && is_unit(diag) ? 1 : (*a)[at(i, j, ld)];
  }
};
// The system matrix of a solve, from the original A (for getrs / potrs: the matrix that was factored).
template <class T>
Matrix<T> system_matrix(const Case& c, const std::vector<T>& a0) {
  if (c.r == R::kGetrs || c.r == R::kGesv) return {&a0, c.lda, Matrix<T>::kGeneral, 'U', 'N', !is_notrans(c.trans)};
  if (c.r == R::kTrtrs) return {&a0, c.lda, Matrix<T>::kTriangular, c.uplo, c.diag, !is_notrans(c.trans)};
  return {&a0, c.lda, Matrix<T>::kSymmetric, c.uplo, 'N', false};
}

template <class M>
double norm1(const M& a, blas_int rows, blas_int cols) {
  long double worst = 0;
  for (blas_int j = 0; j < cols; ++j) {
    long double s = 0;
    for (blas_int i = 0; i < rows; ++i) s += std::fabs((long double)a(i, j));
    worst = std::max(worst, s);
  }
  return double(worst);
}
inline double ratio(long double resid, long double scale) {
  if (scale == 0) return resid == 0 ? 0 : INFINITY;
  return double(resid / scale);
}

// xGET02: max over the checked columns j of ||b_j - op(A) x_j||_1 / (n ||op(A)||_1 ||x_j||_1 eps). `cols` empty:
// every column.
template <class T>
double solve_ratio(const Matrix<T>& a, blas_int n, const std::vector<T>& b0, const std::vector<T>& x, blas_int ldb,
                   blas_int nrhs, std::vector<blas_int> cols = {}) {
  if (cols.empty())
    for (blas_int j = 0; j < nrhs; ++j) cols.push_back(j);
  const double anorm = norm1(a, n, n);
  double worst = 0;
  std::vector<Acc<T>> r(n);
  for (blas_int j : cols) {
    for (blas_int i = 0; i < n; ++i) r[i] = b0[at(i, j, ldb)];
    long double xnorm = 0;
    for (blas_int l = 0; l < n; ++l) {
      const Acc<T> xl = x[at(l, j, ldb)];
      xnorm += std::fabs(xl);
      for (blas_int i = 0; i < n; ++i) r[i] -= a(i, l) * xl;
    }
    long double rnorm = 0;
    for (blas_int i = 0; i < n; ++i) rnorm += std::fabs(r[i]);
    worst = std::max(worst, ratio(rnorm, (long double)n * anorm * xnorm * eps<T>()));
  }
  return worst;
}

// The pivots: each names a row of the m-row matrix.
inline ::testing::AssertionResult valid_pivots(const std::vector<blas_int>& ipiv, blas_int k, blas_int m) {
  for (blas_int s = 0; s < k; ++s)
    if (ipiv[s] < 1 || ipiv[s] > m)
      return ::testing::AssertionFailure() << "IPIV(" << s + 1 << ") = " << ipiv[s] << " outside 1.." << m;
  return ::testing::AssertionSuccess();
}

// P L U y for the factors of an m x n matrix (getrf's output), rows interchanged back as IPIV says.
template <class T>
std::vector<Acc<T>> plu_times(const std::vector<T>& f, blas_int m, blas_int n, blas_int ld,
                              const std::vector<blas_int>& ipiv, const std::vector<Acc<T>>& y) {
  const blas_int k = std::min(m, n);
  std::vector<Acc<T>> v(k, 0), w(m, 0);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i <= std::min(j, k - 1); ++i) v[i] += Acc<T>(f[at(i, j, ld)]) * y[j];
  for (blas_int l = 0; l < k; ++l) {
    w[l] += v[l];  // the unit diagonal of L
    for (blas_int i = l + 1; i < m; ++i) w[i] += Acc<T>(f[at(i, l, ld)]) * v[l];
  }
  for (blas_int s = k - 1; s >= 0; --s) std::swap(w[s], w[ipiv[s] - 1]);
  return w;
}
// xGET01: ||P L U - A||_1 / (max(m, n) ||A||_1 eps), the product formed column by column (P L U e_j); `cols`
// empty: every column, else only those (the norm of the checked columns: for the large cases).
template <class T>
double lu_ratio(const std::vector<T>& a0, const std::vector<T>& f, blas_int m, blas_int n, blas_int ld,
                const std::vector<blas_int>& ipiv, std::vector<blas_int> cols = {}) {
  if (cols.empty())
    for (blas_int j = 0; j < n; ++j) cols.push_back(j);
  const Matrix<T> a{&a0, ld, Matrix<T>::kGeneral};
  long double worst = 0;
  std::vector<Acc<T>> e(n, 0);
  for (blas_int j : cols) {
    e[j] = 1;
    const auto col = plu_times(f, m, n, ld, ipiv, e);
    e[j] = 0;
    long double s = 0;
    for (blas_int i = 0; i < m; ++i) s += std::fabs(col[i] - a(i, j));
    worst = std::max(worst, s);
  }
  return ratio(worst, (long double)std::max(m, n) * norm1(a, m, n) * eps<T>());
}
// xPOT01: ||F^T F - A||_1 / (n ||A||_1 eps) with F the factor in the uplo triangle (U, or L^T), over `cols`.
template <class T>
double chol_ratio(char uplo, const std::vector<T>& a0, const std::vector<T>& f, blas_int n, blas_int ld,
                  std::vector<blas_int> cols = {}) {
  if (cols.empty())
    for (blas_int j = 0; j < n; ++j) cols.push_back(j);
  const Matrix<T> a{&a0, ld, Matrix<T>::kSymmetric, uplo};
  // U(i, j) of the factor A = U^T U (uplo L: U = L^T).
  auto u = [&](blas_int i, blas_int j) -> Acc<T> {
    if (i > j) return 0;
    return is_upper(uplo) ? f[at(i, j, ld)] : f[at(j, i, ld)];
  };
  long double worst = 0;
  for (blas_int j : cols) {
    long double s = 0;
    for (blas_int i = 0; i < n; ++i) {
      Acc<T> p = 0;
      for (blas_int l = 0; l <= std::min(i, j); ++l) p += u(l, i) * u(l, j);
      s += std::fabs(p - a(i, j));
    }
    worst = std::max(worst, s);
  }
  return ratio(worst, (long double)n * norm1(a, n, n) * eps<T>());
}

// Whether a GPU is present to run the large cases on (BLASOFFLOAD_TEST_ALLOW_GPU alone is set on CI too).
inline bool gpu_present() { return allow_gpu() && access("/dev/nvidiactl", F_OK) == 0; }

}  // namespace bt::lapack
