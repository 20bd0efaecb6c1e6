// The GPU kernel tests' cases and checks (test_gpu.cpp, test_gpu_runtime.cpp): for nrm2, gemv, trsv and gemm, one
// case's guarded operands and its reference accumulated in a wider type (Real<T>::Acc), run on every runner that
// takes the case and checked against the bounds below; and which registry entries (runners) take a case.
//
// Error bounds (u = unit roundoff of the element type: 2^-24 float, 2^-53 double; u_acc the reference's; tiny = the
// smallest normal number of the element type):
//   nrm2: |r - ||x|| | <= 2 u ||x|| where the kernel accumulates in a wider type (float), else (n/2 + 2) u ||x||
//         (any summation order of n squares); cuBLAS float: (2 sqrt(n) + 2) u ||x||
//   gemv: |y_i - ref| <= ((len+3) u + (len+2) u_acc) (|alpha| sum_j |a_ij x_j| + |beta y_i|) + tiny
//   gemm: |c_ij - ref| <= ((k+3) u + (k+2) u_acc) (|alpha| sum_l |a_il b_lj| + |beta c_ij|) + tiny
//   trsv: |x - ref|_inf <= 8 (n+2) u |x_ref|_inf on diagonally dominant systems (cond ~ 1)
#pragma once
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "gpu_test_support.h"

namespace gt::kernels {

// A tuning space compiles many configurations of one template: each case runs on at least kShare of them (and each
// configuration on 1/stride of the cases, every kind of case included), so the suite stays minutes long while every
// configuration meets tails, increments and alpha/beta cases.
inline constexpr size_t kShare = 6;
inline bool shared_case(size_t config, size_t ncase, size_t nconfigs) {
  const size_t stride = (nconfigs + kShare - 1) / kShare;
  return stride <= 1 || ncase % stride == config % stride;
}
inline const Runner kHost{Mode::kModuleHost, nullptr}, kDevice{Mode::kModuleDevice, nullptr};

// Whether an entry takes a call whose operands are aligned as the test's device images are (configurations with vector
// fast paths decline misaligned operands; another configuration runs those).
template <typename T>
bool takes(const bo_kernel_entry* k, bo_call g) {
  g.a = g.b = g.c = fake_dev_ptr<T>();
  return k->can_implement(&g);
}

// The entries of a routine that take a case (can(entry)), for the case's runner list; counts each entry's cases.
inline std::vector<Runner> takers(const std::vector<const bo_kernel_entry*>& ks, std::vector<int>* ran,
                                  const std::function<bool(size_t)>& can) {
  std::vector<Runner> rs;
  for (size_t ki = 0; ki < ks.size(); ++ki)
    if (can(ki)) {
      rs.push_back(entry_runner(ks[ki]));
      if (ran) ++(*ran)[ki];
    }
  return rs;
}

// ---------------------------------------------------------------- nrm2

// kind: 0 U(-1,1), 1 huge scale, 2 small scale, 3 an Inf, 4 a NaN, 5 -Inf and NaN.
template <typename T>
void check_nrm2(const std::vector<Runner>& rs, int64_t n, int64_t incx, int kind) {
  using Acc = typename Real<T>::Acc;
  SCOPED_TRACE(std::string(Real<T>::name) + " n=" + std::to_string(n) + " incx=" + std::to_string(incx) +
               " kind=" + std::to_string(kind));
  Image<T> x(vspan(n, incx));
  const double scale = kind == 1 ? Real<T>::huge : kind == 2 ? Real<T>::small : 1.0;
  for (int64_t i = 0; i < n; ++i) x.p()[i * incx] = T(double(uni<T>()) * scale);
  if (kind == 3) x.p()[(n / 2) * incx] = INFINITY;
  if (kind == 4) x.p()[(n / 3) * incx] = NAN;
  if (kind == 5) {
    x.p()[(n / 3) * incx] = -INFINITY;
    x.p()[(n - 1) * incx] = NAN;
  }
  Acc s = 0;
  bool inf = false, nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const Acc v = Acc(x.p()[i * incx]) / Acc(scale);
    inf |= std::isinf(v);
    nan |= std::isnan(v);
    s += v * v;
  }
  const long double ref = nan ? NAN : inf ? INFINITY : std::sqrt(s) * Acc(scale);
  const double u = Real<T>::u;
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    // A reference-only vendor entry is never chosen because its special values differ: check finite data only.
    if (rn.e && rn.e->vendor == 2 && (inf || nan)) continue;
    const bool wide_acc = std::is_same_v<T, float>;  // our float kernels accumulate in double: one final rounding
    double rel = wide_acc ? 2 * u : (double(n) / 2 + 2) * u;
    if (rn.e && rn.e->vendor) rel = wide_acc ? (2 * std::sqrt(double(n)) + 2) * u : (double(n) / 2 + 2) * u;
    const bo_call call = make_call(routine_of<T>(BO_KIND_NRM2), "", 0, n, 0, 0, 0, 0, 0, 0, incx);
    Image<T> x1 = x, r1(1);
    ASSERT_EQ(run_call<T>(rn, call, nullptr, &x1, &r1), BO_CUDA_OK);
    const T got = r1.p()[0];
    if (std::isnan(ref))
      EXPECT_TRUE(std::isnan(got)) << got;
    else if (std::isinf(ref))
      EXPECT_EQ(got, T(INFINITY));
    else
      EXPECT_LE(std::fabs((long double)got - ref), rel * ref + tiny<T>()) << "got " << got << " want " << double(ref);
    EXPECT_TRUE(check_image(x, x1, {}));
    EXPECT_TRUE(check_image(Image<T>(1), r1, {{0, ref, rel * ref + tiny<T>()}})) << "the result and its guard zone";
    // Deterministic: the same input gives the same bits.
    Image<T> x2 = x, r2(1);
    run_call<T>(rn, call, nullptr, &x2, &r2);
    EXPECT_EQ(bits(got), bits(r2.p()[0]));
  }
}

// ---------------------------------------------------------------- gemv
struct GemvCase {
  char t;
  int64_t m, n, lda, incx, incy;
  double alpha, beta;
};
inline bo_call gemv_call(int routine, const GemvCase& c) {
  const char ops[] = {c.t, 0};
  return make_call(routine, ops, c.m, c.n, 0, c.alpha, c.beta, c.lda, 0, 0, c.incx, c.incy);
}

template <typename T>
void check_gemv(const std::vector<Runner>& rs, const GemvCase& c, bool nan_in_y = false) {
  using Acc = typename Real<T>::Acc;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.t + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
               " lda=" + std::to_string(c.lda) + " incx=" + std::to_string(c.incx) + " incy=" + std::to_string(c.incy) +
               " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta));
  const int64_t lenx = c.t == 'N' ? c.n : c.m, leny = c.t == 'N' ? c.m : c.n;
  Image<T> a(mspan(c.m, c.n, c.lda)), x(vspan(lenx, c.incx)), y(vspan(leny, c.incy));
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) a.p()[i + j * c.lda] = uni<T>();
  for (int64_t i = 0; i < lenx; ++i) x.p()[vi(i, lenx, c.incx)] = uni<T>();
  for (int64_t i = 0; i < leny; ++i) y.p()[vi(i, leny, c.incy)] = nan_in_y ? NAN : uni<T>();
  if (c.alpha == 0.0 && c.m > 0 && c.n > 0) a.p()[0] = NAN;  // alpha = 0: A is not read
  std::vector<Expect> out(leny);
  const long double rel = (lenx + 3) * Real<T>::u + (lenx + 2) * Real<T>::u_acc;
  parallel_for(leny, [&](int64_t r) {
    Acc s = 0, sa = 0;
    if (c.alpha != 0.0)
      for (int64_t l = 0; l < lenx; ++l) {
        const Acc av = c.t == 'N' ? a.p()[r + l * c.lda] : a.p()[l + r * c.lda];
        const Acc p = av * Acc(x.p()[vi(l, lenx, c.incx)]);
        s += p;
        sa += std::fabs(p);
      }
    const Acc y0 = c.beta != 0.0 ? Acc(c.beta) * Acc(y.p()[vi(r, leny, c.incy)]) : Acc(0);
    out[r] = {size_t(vi(r, leny, c.incy)), Acc(c.alpha) * s + y0,
              rel * (std::fabs(Acc(c.alpha)) * sa + std::fabs(y0)) + tiny<T>()};
  });
  const bo_call call = gemv_call(routine_of<T>(BO_KIND_GEMV), c);
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    Image<T> ra = a, rx = x, ry = y;
    ASSERT_EQ(run_call<T>(rn, call, &ra, &rx, &ry), BO_CUDA_OK) << "declined or failed";
    EXPECT_TRUE(check_image(a, ra, {})) << "A";
    EXPECT_TRUE(check_image(x, rx, {})) << "x";
    EXPECT_TRUE(check_image(y, ry, out)) << "y";
    Image<T> ra2 = a, rx2 = x, ry2 = y;
    run_call<T>(rn, call, &ra2, &rx2, &ry2);
    EXPECT_TRUE(same_bits(ry, ry2));
  }
}

template <typename T>
bool gemv_can(const bo_kernel_entry* k, const GemvCase& c) {
  return takes<T>(k, gemv_call(k->routine, c));
}

// ---------------------------------------------------------------- trsv
struct TrsvCase {
  char uplo, trans, diag;
  int64_t n, lda, incx;
};
inline bo_call trsv_call(int routine, const TrsvCase& c) {
  const char ops[] = {c.uplo, c.trans, c.diag, 0};
  return make_call(routine, ops, 0, c.n, 0, 0, 0, c.lda, 0, 0, c.incx);
}

template <typename T>
void check_trsv(const std::vector<Runner>& rs, const TrsvCase& c) {
  using Acc = typename Real<T>::Acc;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.uplo + c.trans + c.diag + " n=" + std::to_string(c.n) +
               " lda=" + std::to_string(c.lda) + " incx=" + std::to_string(c.incx));
  const int64_t n = c.n;
  Image<T> a(mspan(n, n, c.lda)), x(vspan(n, c.incx));
  // Diagonally dominant: off-diagonal entries U(-1,1)/n, diagonal 1.5..2.5 (or unit). The other triangle, and the
  // diagonal when diag = 'U', hold NaN: they must never be read.
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const bool stored = c.uplo == 'U' ? i < j : i > j;
      T v = NAN;
      if (stored) v = uni<T>() / T(n);
      if (i == j && c.diag == 'N') v = uni<T>(1.5, 2.5) * (uni<T>() < 0 ? -1 : 1);
      a.p()[i + j * c.lda] = v;
    }
  for (int64_t i = 0; i < n; ++i) x.p()[vi(i, n, c.incx)] = uni<T>();
  // Reference in Acc (row-oriented substitution).
  std::vector<Acc> xr(n);
  for (int64_t i = 0; i < n; ++i) xr[i] = x.p()[vi(i, n, c.incx)];
  auto op = [&](int64_t i, int64_t j) -> Acc { return c.trans == 'N' ? a.p()[i + j * c.lda] : a.p()[j + i * c.lda]; };
  const bool unit = c.diag == 'U', lower_eff = (c.uplo == 'L') == (c.trans == 'N');
  for (int64_t q = 0; q < n; ++q) {
    const int64_t i = lower_eff ? q : n - 1 - q;
    Acc s = xr[i];
    for (int64_t j = lower_eff ? 0 : i + 1; j < (lower_eff ? i : n); ++j) s -= op(i, j) * xr[j];
    xr[i] = unit ? s : s / op(i, i);
  }
  Acc xmax = 0;
  for (Acc v : xr) xmax = std::max(xmax, std::fabs(v));
  std::vector<Expect> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = {size_t(vi(i, n, c.incx)), xr[i], 8 * (n + 2) * Real<T>::u * xmax + tiny<T>()};
  const bo_call call = trsv_call(routine_of<T>(BO_KIND_TRSV), c);
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    Image<T> ra = a, rx = x;
    ASSERT_EQ(run_call<T>(rn, call, &ra, nullptr, &rx), BO_CUDA_OK)
        << "declined (the test's can-check and the real operands disagree) or failed";
    EXPECT_TRUE(check_image(a, ra, {})) << "A";
    EXPECT_TRUE(check_image(x, rx, out)) << "x";
    Image<T> ra2 = a, rx2 = x;
    run_call<T>(rn, call, &ra2, nullptr, &rx2);
    EXPECT_TRUE(same_bits(rx, rx2));
  }
}

template <typename T>
bool trsv_can(const bo_kernel_entry* k, const TrsvCase& c) {
  return takes<T>(k, trsv_call(k->routine, c));
}

// ---------------------------------------------------------------- gemm
struct GemmCase {
  char ta, tb;
  int64_t m, n, k, pad;
  double alpha, beta;
  int64_t ar() const { return ta == 'N' ? m : k; }
  int64_t ac() const { return ta == 'N' ? k : m; }
  int64_t br() const { return tb == 'N' ? k : n; }
  int64_t bc() const { return tb == 'N' ? n : k; }
  int64_t lda() const { return std::max<int64_t>(1, ar() + pad); }
  int64_t ldb() const { return std::max<int64_t>(1, br() + 2 * pad); }
  int64_t ldc() const { return std::max<int64_t>(1, m + pad); }
};
inline bo_call gemm_call(int routine, const GemmCase& c) {
  const char ops[] = {c.ta, c.tb, 0};
  return make_call(routine, ops, c.m, c.n, c.k, c.alpha, c.beta, c.lda(), c.ldb(), c.ldc());
}

template <typename T>
void check_gemm(const std::vector<Runner>& rs, const GemmCase& c, bool nan_in_c = false) {
  using Acc = typename Real<T>::Acc;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.ta + c.tb + " m=" + std::to_string(c.m) +
               " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " pad=" + std::to_string(c.pad) +
               " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta));
  const int64_t lda = c.lda(), ldb = c.ldb(), ldc = c.ldc();
  Image<T> a(mspan(c.ar(), c.ac(), lda)), b(mspan(c.br(), c.bc(), ldb)), cc(mspan(c.m, c.n, ldc));
  for (int64_t j = 0; j < c.ac(); ++j)
    for (int64_t i = 0; i < c.ar(); ++i) a.p()[i + j * lda] = uni<T>();
  for (int64_t j = 0; j < c.bc(); ++j)
    for (int64_t i = 0; i < c.br(); ++i) b.p()[i + j * ldb] = uni<T>();
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) cc.p()[i + j * ldc] = nan_in_c ? NAN : uni<T>();
  std::vector<Expect> out(size_t(c.m * c.n));
  const long double rel = (c.k + 3) * Real<T>::u + (c.k + 2) * Real<T>::u_acc;
  parallel_for(c.n, [&](int64_t j) {
    std::vector<Acc> s(c.m, 0), sa(c.m, 0);
    if (c.alpha != 0.0)
      for (int64_t l = 0; l < c.k; ++l) {
        const Acc bv = c.tb == 'N' ? b.p()[l + j * ldb] : b.p()[j + l * ldb];
        for (int64_t i = 0; i < c.m; ++i) {
          const Acc p = Acc(c.ta == 'N' ? a.p()[i + l * lda] : a.p()[l + i * lda]) * bv;
          s[i] += p;
          sa[i] += std::fabs(p);
        }
      }
    for (int64_t i = 0; i < c.m; ++i) {
      const Acc c0 = c.beta != 0.0 ? Acc(c.beta) * Acc(cc.p()[i + j * ldc]) : Acc(0);
      out[size_t(i + j * c.m)] = {size_t(i + j * ldc), Acc(c.alpha) * s[i] + c0,
                                  rel * (std::fabs(Acc(c.alpha)) * sa[i] + std::fabs(c0)) + tiny<T>()};
    }
  });
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    Image<T> ra = a, rb = b, rc = cc;
    ASSERT_EQ(run_call<T>(rn, gemm_call(routine_of<T>(BO_KIND_GEMM), c), &ra, &rb, &rc), BO_CUDA_OK)
        << "declined (the test's can-check and the real operands disagree) or failed";
    EXPECT_TRUE(check_image(a, ra, {})) << "A";
    EXPECT_TRUE(check_image(b, rb, {})) << "B";
    EXPECT_TRUE(check_image(cc, rc, out)) << "C";
  }
}

template <typename T>
bool gemm_can(const bo_kernel_entry* k, const GemmCase& c) {
  return takes<T>(k, gemm_call(k->routine, c));
}

}  // namespace gt::kernels
