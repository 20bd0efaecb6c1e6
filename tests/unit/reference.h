// Double-precision reference implementations with BLAS semantics (beta = 0 never reads the output), and
// the error bounds the float results are held to.
#pragma once

#include <cmath>
#include <vector>

#include "support.h"

namespace bt {

inline bool is_notrans(char t) { return t == 'N' || t == 'n'; }
inline bool is_upper(char u) { return u == 'U' || u == 'u'; }
inline bool is_unit(char d) { return d == 'U' || d == 'u'; }

// C = alpha op(A) op(B) + beta C in double; `mag` gets |alpha||op(A)||op(B)| + |beta||C| per element, the
// scale of the rounding error a float GEMM may make (Higham: |error| <= gamma_{k+2} * mag).
inline void ref_gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, float alpha, const std::vector<float>& a,
                     blas_int lda, const std::vector<float>& b, blas_int ldb, float beta, const std::vector<float>& c,
                     blas_int ldc, std::vector<double>& out, std::vector<double>& mag) {
  out.assign(std::size_t(m) * n, 0.0);
  mag.assign(std::size_t(m) * n, 0.0);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i) {
      double s = 0, sa = 0;
      for (blas_int l = 0; l < k; ++l) {
        double av = is_notrans(ta) ? a[at(i, l, lda)] : a[at(l, i, lda)];
        double bv = is_notrans(tb) ? b[at(l, j, ldb)] : b[at(j, l, ldb)];
        s += av * bv;
        sa += std::fabs(av * bv);
      }
      double r = double(alpha) * s, rm = std::fabs(double(alpha)) * sa;
      if (beta != 0.0f) {
        r += double(beta) * c[at(i, j, ldc)];
        rm += std::fabs(double(beta) * c[at(i, j, ldc)]);
      }
      out[std::size_t(i) + std::size_t(j) * m] = r;
      mag[std::size_t(i) + std::size_t(j) * m] = rm;
    }
}

// y = alpha op(A) x + beta y in double, with the magnitude bound as for GEMM. x and y are strided.
inline void ref_gemv(char t, blas_int m, blas_int n, float alpha, const std::vector<float>& a, blas_int lda,
                     const std::vector<float>& x, blas_int incx, float beta, const std::vector<float>& y, blas_int incy,
                     std::vector<double>& out, std::vector<double>& mag) {
  const blas_int lx = is_notrans(t) ? n : m, ly = is_notrans(t) ? m : n;
  out.assign(ly, 0.0);
  mag.assign(ly, 0.0);
  const std::size_t x0 = vstart(lx, incx), y0 = vstart(ly, incy);
  for (blas_int i = 0; i < ly; ++i) {
    double s = 0, sa = 0;
    for (blas_int l = 0; l < lx; ++l) {
      double av = is_notrans(t) ? a[at(i, l, lda)] : a[at(l, i, lda)];
      double xv = x[x0 + std::ptrdiff_t(l) * incx];
      s += av * xv;
      sa += std::fabs(av * xv);
    }
    double r = double(alpha) * s, rm = std::fabs(double(alpha)) * sa;
    if (beta != 0.0f) {
      double yv = y[y0 + std::ptrdiff_t(i) * incy];
      r += double(beta) * yv;
      rm += std::fabs(double(beta) * yv);
    }
    out[i] = r;
    mag[i] = rm;
  }
}

// Solves op(T) x = b in double (b strided in x, result returned dense).
inline std::vector<double> ref_trsv(char uplo, char trans, char diag, blas_int n, const std::vector<float>& a,
                                    blas_int lda, const std::vector<float>& x, blas_int incx) {
  std::vector<double> v(n);
  const std::size_t x0 = vstart(n, incx);
  for (blas_int i = 0; i < n; ++i) v[i] = x[x0 + std::ptrdiff_t(i) * incx];
  auto T = [&](blas_int i, blas_int j) -> double {  // element of op(T)
    return is_notrans(trans) ? a[at(i, j, lda)] : a[at(j, i, lda)];
  };
  // op(T) is lower when (lower, N) or (upper, T).
  const bool lower = is_upper(uplo) != is_notrans(trans);
  for (blas_int s = 0; s < n; ++s) {
    blas_int i = lower ? s : n - 1 - s;
    double sum = v[i];
    if (lower)
      for (blas_int j = 0; j < i; ++j) sum -= T(i, j) * v[j];
    else
      for (blas_int j = i + 1; j < n; ++j) sum -= T(i, j) * v[j];
    v[i] = is_unit(diag) ? sum : sum / T(i, i);
  }
  return v;
}

inline double ref_nrm2(blas_int n, const std::vector<float>& x, blas_int incx) {
  // Scaled to stay finite for any float input.
  double scale = 0;
  for (blas_int i = 0; i < n; ++i)
    scale = std::fmax(scale, std::fabs(double(x[vstart(n, incx) + std::ptrdiff_t(i) * incx])));
  if (scale == 0 || !std::isfinite(scale)) {
    for (blas_int i = 0; i < n; ++i)
      if (std::isnan(x[vstart(n, incx) + std::ptrdiff_t(i) * incx])) return NAN;
    return scale;
  }
  double s = 0;
  for (blas_int i = 0; i < n; ++i) {
    double v = x[vstart(n, incx) + std::ptrdiff_t(i) * incx] / scale;
    s += v * v;
  }
  return scale * std::sqrt(s);
}

}  // namespace bt
