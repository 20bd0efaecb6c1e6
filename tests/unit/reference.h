// Reference implementations with BLAS semantics (beta = 0 never reads the output), accumulated in the wider type
// Acc<T> (double for float, long double for double), and the magnitudes the results' error bounds scale with.
#pragma once

#include <cmath>
#include <iomanip>
#include <sstream>
#include <vector>

#include "support.h"

namespace bt {

inline bool is_notrans(char t) { return t == 'N' || t == 'n'; }
inline bool is_upper(char u) { return u == 'U' || u == 'u'; }
inline bool is_unit(char d) { return d == 'U' || d == 'u'; }

// C = alpha op(A) op(B) + beta C, dense m x n result; `mag` gets |alpha||op(A)||op(B)| + |beta||C| per element, the
// scale of the rounding error a GEMM in T may make (Higham: |error| <= gamma_{k+2} * mag).
template <class T>
void ref_gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, T alpha, const std::vector<T>& a, blas_int lda,
              const std::vector<T>& b, blas_int ldb, T beta, const std::vector<T>& c, blas_int ldc,
              std::vector<Acc<T>>& out, std::vector<Acc<T>>& mag) {
  using W = Acc<T>;
  out.assign(std::size_t(m) * n, 0);
  mag.assign(std::size_t(m) * n, 0);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i) {
      W s = 0, sa = 0;
      for (blas_int l = 0; l < k; ++l) {
        const W av = is_notrans(ta) ? a[at(i, l, lda)] : a[at(l, i, lda)];
        const W bv = is_notrans(tb) ? b[at(l, j, ldb)] : b[at(j, l, ldb)];
        s += av * bv;
        sa += std::fabs(av * bv);
      }
      W r = W(alpha) * s, rm = std::fabs(W(alpha)) * sa;
      if (beta != T(0)) {
        r += W(beta) * c[at(i, j, ldc)];
        rm += std::fabs(W(beta) * c[at(i, j, ldc)]);
      }
      out[at(i, j, m)] = r;
      mag[at(i, j, m)] = rm;
    }
}

// y = alpha op(A) x + beta y, with the magnitude bound as for GEMM. x and y are strided; the result is dense.
template <class T>
void ref_gemv(char t, blas_int m, blas_int n, T alpha, const std::vector<T>& a, blas_int lda, const std::vector<T>& x,
              blas_int incx, T beta, const std::vector<T>& y, blas_int incy, std::vector<Acc<T>>& out,
              std::vector<Acc<T>>& mag) {
  using W = Acc<T>;
  const blas_int lx = is_notrans(t) ? n : m, ly = is_notrans(t) ? m : n;
  out.assign(ly, 0);
  mag.assign(ly, 0);
  const std::size_t x0 = vstart(lx, incx), y0 = vstart(ly, incy);
  for (blas_int i = 0; i < ly; ++i) {
    W s = 0, sa = 0;
    for (blas_int l = 0; l < lx; ++l) {
      const W av = is_notrans(t) ? a[at(i, l, lda)] : a[at(l, i, lda)];
      const W xv = x[x0 + std::ptrdiff_t(l) * incx];
      s += av * xv;
      sa += std::fabs(av * xv);
    }
    W r = W(alpha) * s, rm = std::fabs(W(alpha)) * sa;
    if (beta != T(0)) {
      const W yv = y[y0 + std::ptrdiff_t(i) * incy];
      r += W(beta) * yv;
      rm += std::fabs(W(beta) * yv);
    }
    out[i] = r;
    mag[i] = rm;
  }
}

// Solves op(T) x = b (b strided in x, result returned dense).
template <class T>
std::vector<Acc<T>> ref_trsv(char uplo, char trans, char diag, blas_int n, const std::vector<T>& a, blas_int lda,
                             const std::vector<T>& x, blas_int incx) {
  using W = Acc<T>;
  std::vector<W> v(n);
  const std::size_t x0 = vstart(n, incx);
  for (blas_int i = 0; i < n; ++i) v[i] = x[x0 + std::ptrdiff_t(i) * incx];
  auto op = [&](blas_int i, blas_int j) -> W {  // element of op(T)
    return is_notrans(trans) ? a[at(i, j, lda)] : a[at(j, i, lda)];
  };
  // op(T) is lower when (lower, N) or (upper, T).
  const bool lower = is_upper(uplo) != is_notrans(trans);
  for (blas_int s = 0; s < n; ++s) {
    const blas_int i = lower ? s : n - 1 - s;
    W sum = v[i];
    if (lower)
      for (blas_int j = 0; j < i; ++j) sum -= op(i, j) * v[j];
    else
      for (blas_int j = i + 1; j < n; ++j) sum -= op(i, j) * v[j];
    v[i] = is_unit(diag) ? sum : sum / op(i, i);
  }
  return v;
}

// The 2-norm, scaled so it stays finite for any input of type T.
template <class T>
Acc<T> ref_nrm2(blas_int n, const std::vector<T>& x, blas_int incx) {
  using W = Acc<T>;
  auto elem = [&](blas_int i) -> W { return x[vstart(n, incx) + std::ptrdiff_t(i) * incx]; };
  W scale = 0;
  for (blas_int i = 0; i < n; ++i) scale = std::fmax(scale, std::fabs(elem(i)));
  if (scale == 0 || !std::isfinite(scale)) {
    for (blas_int i = 0; i < n; ++i)
      if (std::isnan(elem(i))) return NAN;
    return scale;
  }
  W s = 0;
  for (blas_int i = 0; i < n; ++i) s += (elem(i) / scale) * (elem(i) / scale);
  return scale * std::sqrt(s);
}

// Every entry the CPU BLAS's result `direct` has non-finite is non-finite in ours too (and there is one); unless the
// GPU may run, ours is the CPU BLAS's bit for bit.
template <class T>
void expect_nonfinite_as_cpu(const std::vector<T>& got, const std::vector<T>& direct) {
  int nonfinite = 0;
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (std::isfinite(direct[p])) continue;
    ++nonfinite;
    ASSERT_FALSE(std::isfinite(got[p])) << "element " << p << " should not be finite";
  }
  EXPECT_GT(nonfinite, 0);
  if (!allow_gpu()) {
    ASSERT_TRUE(same_bits(got, direct));
  }
}

// |got - want| <= bound, as a GoogleTest assertion that prints all three to the element type's full precision.
template <class T, class W>
::testing::AssertionResult within(T got, W want, double bound) {
  const long double err = std::fabs((long double)got - (long double)want);
  if (err <= bound) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << std::setprecision(std::numeric_limits<T>::max_digits10) << "got " << got << ", want " << want << " (error "
     << err << " > bound " << bound << ")";
  return ::testing::AssertionFailure() << os.str();
}

}  // namespace bt
