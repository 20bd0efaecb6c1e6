// What the complex LAPACK tests share on top of test_lapack_support.h (whose call machinery - Case, Data, invoke,
// after, only_outputs_written - is element-type generic): complex test matrices (general, Hermitian positive definite,
// triangular) and LAPACK's acceptance ratios for complex matrices (xGET01 / xGET02 / xPOT01 with conjugation).
#pragma once

#include "complex_support.h"
#include "test_lapack_support.h"

namespace bt::lapack::cplx {

using cx::cnan;
using cx::cpoison;
using cx::Real;
using cx::W;
using cx::WR;

// ---- Test matrices. Padding rows hold the poison; an unreferenced triangle and a unit diagonal hold NaN. ----

template <class T>
std::vector<T> general(blas_int rows, blas_int cols, blas_int ld, std::uint32_t seed) {
  auto a = cx::random_cvector<T>(std::size_t(ld) * std::max<blas_int>(cols, 1), seed);
  for (blas_int j = 0; j < cols; ++j)
    for (blas_int i = rows; i < ld; ++i) a[at(i, j, ld)] = cpoison<T>();
  return a;
}

// A Hermitian positive definite matrix (diagonally dominant: a_ii = 1 + sum_j |a_ij|, real), its uplo triangle stored.
template <class T>
std::vector<T> hpd(char uplo, blas_int n, blas_int ld, std::uint32_t seed) {
  auto a = general<T>(n, n, ld, seed);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < j; ++i) a[at(j, i, ld)] = std::conj(a[at(i, j, ld)]);
  for (blas_int i = 0; i < n; ++i) {
    Real<T> s = 1;
    for (blas_int j = 0; j < n; ++j)
      if (j != i) s += std::abs(a[at(i, j, ld)]);
    a[at(i, i, ld)] = T(s, 0);
  }
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < n; ++i)
      if (!in_triangle(uplo, i, j)) a[at(i, j, ld)] = cnan<T>();
  return a;
}

// A well-conditioned triangle: diagonal entries of modulus at least 1, off-diagonal entries of parts up to 1 / n.
template <class T>
std::vector<T> triangle(char uplo, char diag, blas_int n, blas_int ld, std::uint32_t seed) {
  auto a = general<T>(n, n, ld, seed);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < n; ++i) {
      T& e = a[at(i, j, ld)];
      if (i == j)
        e = is_unit(diag) ? cnan<T>() : e + T(e.real() < 0 ? -1 : 1, 0);
      else
        e = in_triangle(uplo, i, j) ? e / Real<T>(n) : cnan<T>();
    }
  return a;
}

// The operands of a valid case, generated for its routine (getrs and potrs factor with the reference afterwards).
template <class T>
Data<T> make_operands(const Case& c, std::uint32_t seed) {
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
      d.a = hpd<T>(c.uplo, c.n, c.lda, seed);
      break;
    case R::kTrtrs:
      d.a = triangle<T>(c.uplo, c.diag, c.n, c.lda, seed);
      break;
  }
  d.b = has_b(c.r) ? general<T>(c.n, c.nrhs, c.ldb, seed + 1) : std::vector<T>(1, cpoison<T>());
  d.ipiv.assign(std::size_t(c.npiv()) + kPivGuard, kPivPoison);
  return d;
}

// ---- LAPACK's acceptance ratios, accumulated in the wide complex type. ----

// Element (i, j) of the matrix a routine works with, from its original stored form: general, Hermitian from one
// triangle (the diagonal's real part only, as the routines read it), or triangular (unit diagonal = 1); `trans` reads
// it as op(A) (N, T or C).
template <class T>
struct Matrix {
  const std::vector<T>* a;
  blas_int ld;
  enum { kGeneral, kHermitian, kTriangular } kind;
  char uplo = 'U', diag = 'N', trans = 'N';
  W<T> plain(blas_int i, blas_int j) const {
    if (kind == kGeneral) return W<T>((*a)[at(i, j, ld)]);
    if (kind == kHermitian) {
      if (i == j) return W<T>((*a)[at(i, i, ld)].real());
      return in_triangle(uplo, i, j) ? W<T>((*a)[at(i, j, ld)]) : std::conj(W<T>((*a)[at(j, i, ld)]));
    }
    if (!in_triangle(uplo, i, j)) return 0;
    return i == j && is_unit(diag) ? W<T>(1) : W<T>((*a)[at(i, j, ld)]);
  }
  W<T> operator()(blas_int i, blas_int j) const {
    if (is_notrans(trans)) return plain(i, j);
    return cx::is_conj(trans) ? std::conj(plain(j, i)) : plain(j, i);
  }
};
template <class T>
Matrix<T> system_of(const Case& c, const std::vector<T>& a0) {
  if (c.r == R::kGetrs || c.r == R::kGesv) return {&a0, c.lda, Matrix<T>::kGeneral, 'U', 'N', c.trans};
  if (c.r == R::kTrtrs) return {&a0, c.lda, Matrix<T>::kTriangular, c.uplo, c.diag, c.trans};
  return {&a0, c.lda, Matrix<T>::kHermitian, c.uplo, 'N', 'N'};
}

template <class M>
double norm1(const M& a, blas_int rows, blas_int cols) {
  WR worst = 0;
  for (blas_int j = 0; j < cols; ++j) {
    WR s = 0;
    for (blas_int i = 0; i < rows; ++i) s += std::abs(a(i, j));
    worst = std::max(worst, s);
  }
  return double(worst);
}

// xGET02: max over the checked columns j of ||b_j - op(A) x_j||_1 / (n ||op(A)||_1 ||x_j||_1 eps).
template <class T>
double solve_ratio(const Matrix<T>& a, blas_int n, const std::vector<T>& b0, const std::vector<T>& x, blas_int ldb,
                   blas_int nrhs) {
  const double anorm = norm1(a, n, n);
  double worst = 0;
  std::vector<W<T>> r(n);
  for (blas_int j = 0; j < nrhs; ++j) {
    for (blas_int i = 0; i < n; ++i) r[i] = W<T>(b0[at(i, j, ldb)]);
    WR xnorm = 0;
    for (blas_int l = 0; l < n; ++l) {
      const W<T> xl(x[at(l, j, ldb)]);
      xnorm += std::abs(xl);
      for (blas_int i = 0; i < n; ++i) r[i] -= a(i, l) * xl;
    }
    WR rnorm = 0;
    for (blas_int i = 0; i < n; ++i) rnorm += std::abs(r[i]);
    worst = std::max(worst, ratio(rnorm, WR(n) * anorm * xnorm * cx::ceps<T>()));
  }
  return worst;
}

// xGET01: ||P L U - A||_1 / (max(m, n) ||A||_1 eps), column by column (P L U e_j) over `cols` (empty: all).
template <class T>
double lu_ratio(const std::vector<T>& a0, const std::vector<T>& f, blas_int m, blas_int n, blas_int ld,
                const std::vector<blas_int>& ipiv, std::vector<blas_int> cols = {}) {
  if (cols.empty())
    for (blas_int j = 0; j < n; ++j) cols.push_back(j);
  const Matrix<T> a{&a0, ld, Matrix<T>::kGeneral};
  const blas_int k = std::min(m, n);
  WR worst = 0;
  for (blas_int j : cols) {
    std::vector<W<T>> w(m, 0);
    for (blas_int i = 0; i <= std::min(j, k - 1); ++i) {  // U e_j, then L times it (unit diagonal)
      const W<T> u(f[at(i, j, ld)]);
      w[i] += u;
      for (blas_int r = i + 1; r < m; ++r) w[r] += W<T>(f[at(r, i, ld)]) * u;
    }
    for (blas_int s = k - 1; s >= 0; --s) std::swap(w[s], w[ipiv[s] - 1]);
    WR col = 0;
    for (blas_int i = 0; i < m; ++i) col += std::abs(w[i] - a(i, j));
    worst = std::max(worst, col);
  }
  return ratio(worst, WR(std::max(m, n)) * norm1(a, m, n) * cx::ceps<T>());
}

// xPOT01: ||U^H U - A||_1 / (n ||A||_1 eps), U the factor in the uplo triangle (U, or L^H), over `cols` (empty: all).
template <class T>
double chol_ratio(char uplo, const std::vector<T>& a0, const std::vector<T>& f, blas_int n, blas_int ld,
                  std::vector<blas_int> cols = {}) {
  if (cols.empty())
    for (blas_int j = 0; j < n; ++j) cols.push_back(j);
  const Matrix<T> a{&a0, ld, Matrix<T>::kHermitian, uplo};
  auto u = [&](blas_int i, blas_int j) -> W<T> {
    if (i > j) return 0;
    return is_upper(uplo) ? W<T>(f[at(i, j, ld)]) : std::conj(W<T>(f[at(j, i, ld)]));
  };
  WR worst = 0;
  for (blas_int j : cols) {
    WR s = 0;
    for (blas_int i = 0; i < n; ++i) {
      W<T> p = 0;
      for (blas_int l = 0; l <= std::min(i, j); ++l) p += std::conj(u(l, i)) * u(l, j);
      s += std::abs(p - a(i, j));
    }
    worst = std::max(worst, s);
  }
  return ratio(worst, WR(n) * norm1(a, n, n) * cx::ceps<T>());
}

}  // namespace bt::lapack::cplx
