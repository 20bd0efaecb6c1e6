// The GPU kernel tests' cases and checks (test_gpu.cpp, test_gpu_runtime.cpp): for nrm2, gemv, trsv and gemm in all
// four element types, one case's guarded operands and its reference accumulated in a wider type (Real<T>::Acc), run on
// every runner that takes the case and checked against the bounds below; and which registry entries (runners) take a
// case.
//
// Error bounds (u = unit roundoff of the element type's real parts: 2^-24 float, 2^-53 double; u_acc the reference's;
// tiny = the smallest normal number of the real type; |.| a complex modulus; a = Real<T>::arith, 1 real, 2 complex):
//   nrm2: |r - ||x|| | <= 2 u ||x|| where the kernel accumulates in a wider type (float), else (p/2 + 2) u ||x||
//         (any summation order of p squares; p = n, or 2n parts of a complex vector); cuBLAS float: (2 sqrt(p) + 2)
//         u ||x||; our complex norms of a strided vector: 8 u more (two norms and CUDA's hypot, within 3 ulp float)
//   gemv: |y_i - ref| <= a ((len+3) u + (len+2) u_acc) (|alpha| sum_j |a_ij| |x_j| + |beta y_i|) + tiny
//   gemm: |c_ij - ref| <= a ((k+3) u + (k+2) u_acc) (|alpha| sum_l |a_il| |b_lj| + |beta c_ij|) + tiny
//   trsv: |x - ref|_inf <= 8 a (n+2) u |x_ref|_inf on diagonally dominant systems (cond ~ 1)
// The references are computed with -fcx-limited-range (CMakeLists.txt): complex products as four real ones, like the
// GPU's, and without C's Annex G recovery of Inf from NaN.
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

// Sets one part (0 real, 1 imaginary) of an element; a real element has only part 0.
template <typename T>
void set_part(T& e, int part, double v) {
  if constexpr (is_complex_v<T>) {
    if (part == 0)
      e.real(typename T::value_type(v));
    else
      e.imag(typename T::value_type(v));
  } else {
    e = T(v);
  }
}

// kind: 0 U(-1,1), 1 huge scale, 2 small scale, 3 an Inf, 4 a NaN, 5 -Inf and NaN (in different elements), 6 (complex
// only) Inf and NaN as the two parts of one element: the reference gives NaN, where cuBLAS and a hypotenuse give Inf.
template <typename T>
void check_nrm2(const std::vector<Runner>& rs, int64_t n, int64_t incx, int kind) {
  using R = typename Real<T>::Part;
  using Acc = MagOf<typename Real<T>::Acc>;
  constexpr bool cx = is_complex_v<T>;
  SCOPED_TRACE(std::string(Real<T>::name) + " n=" + std::to_string(n) + " incx=" + std::to_string(incx) +
               " kind=" + std::to_string(kind));
  Image<T> x(vspan(n, incx));
  const double scale = kind == 1 ? Real<T>::huge : kind == 2 ? Real<T>::small : 1.0;
  for (int64_t i = 0; i < n; ++i) {
    T& e = x.p()[i * incx];
    e = T(R(double(uni<R>()) * scale));
    if constexpr (cx) e.imag(R(double(uni<R>()) * scale));
  }
  // Complex: the specials in the imaginary part where a real one has them in its only part, and vice versa.
  const int other = cx ? 1 : 0;
  if (kind == 3) set_part(x.p()[(n / 2) * incx], other, INFINITY);
  if (kind == 4) set_part(x.p()[(n / 3) * incx], 0, NAN);
  if (kind == 5) {
    set_part(x.p()[(n / 3) * incx], 0, -INFINITY);
    set_part(x.p()[(n - 1) * incx], other, NAN);
  }
  if constexpr (cx)
    if (kind == 6) {
      set_part(x.p()[(n / 2) * incx], 0, INFINITY);
      set_part(x.p()[(n / 2) * incx], 1, NAN);
    }
  Acc s = 0;
  bool inf = false, nan = false;
  for (int64_t i = 0; i < n; ++i)
    for (int part = 0; part < (cx ? 2 : 1); ++part) {
      const R* parts = reinterpret_cast<const R*>(&x.p()[i * incx]);
      const Acc v = Acc(parts[part]) / Acc(scale);
      inf |= std::isinf(v);
      nan |= std::isnan(v);
      s += v * v;
    }
  const long double ref = nan ? NAN : inf ? INFINITY : std::sqrt(s) * Acc(scale);
  const double u = Real<T>::u, p = cx ? 2.0 * double(n) : double(n);
  const bool wide_acc = std::is_same_v<R, float>;  // our float kernels accumulate in double: one final rounding
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    // A reference-only vendor entry is never chosen because its special values differ: check finite data only.
    if (rn.e && rn.e->vendor == 2 && (inf || nan)) continue;
    double rel = wide_acc ? 2 * u : (p / 2 + 2) * u;
    if (rn.e && rn.e->vendor)
      rel = wide_acc ? (2 * std::sqrt(p) + 2) * u : (p / 2 + 2) * u;
    else if (cx && incx != 1)
      rel += 8 * u;
    const bo_call call = make_call(routine_of<T>(BO_KIND_NRM2), "", 0, n, 0, 0.0, 0.0, 0, 0, 0, incx);
    Image<T> x1 = x, r1(1);
    ASSERT_EQ(run_call<T>(rn, call, nullptr, &x1, &r1), BO_CUDA_OK);
    R got;  // the result is real: the first part of the result element
    std::memcpy(&got, r1.p(), sizeof got);
    if (std::isnan(ref))
      EXPECT_TRUE(std::isnan(got)) << got;
    else if (std::isinf(ref))
      EXPECT_EQ(got, R(INFINITY));
    else
      EXPECT_LE(std::fabs((long double)got - ref), rel * ref + tiny<T>()) << "got " << got << " want " << double(ref);
    EXPECT_TRUE(check_image(x, x1, {}));
    // Nothing but the real result written (a complex norm's second part and the guard zone keep their bits).
    Image<T> masked = r1;
    const R sent = sentinel<R>();
    std::memcpy(static_cast<void*>(masked.p()), &sent, sizeof sent);
    EXPECT_TRUE(unchanged(Image<T>(1), masked)) << "the result's guard zone (and a complex norm's second part)";
    // Deterministic: the same input gives the same bits.
    Image<T> x2 = x, r2(1);
    run_call<T>(rn, call, nullptr, &x2, &r2);
    EXPECT_EQ(0, std::memcmp(&got, r2.p(), sizeof got)) << "two runs differ";
  }
}

// ---------------------------------------------------------------- gemv
struct GemvCase {
  char t;
  int64_t m, n, lda, incx, incy;
  Scalar alpha, beta;
};
inline bo_call gemv_call(int routine, const GemvCase& c) {
  const char ops[] = {c.t, 0};
  return make_call(routine, ops, c.m, c.n, 0, c.alpha, c.beta, c.lda, 0, 0, c.incx, c.incy);
}

// nan_in_y: y all NaN (beta = 0 must not read it). poison: a NaN in row r0 of op(A) and an Inf in row r1, which
// reach y_r0 (NaN) and y_r1 (Inf; complex: some part not finite) only, unless alpha = 0 (A is then not read at all).
// m or n = 0: BLAS returns at once, y unchanged whatever beta (the registry entries' contract; the core never hands
// the module such a call).
template <typename T>
void check_gemv(const std::vector<Runner>& rs, const GemvCase& c, bool nan_in_y = false, bool poison = false) {
  using Acc = typename Real<T>::Acc;
  using M = MagOf<Acc>;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.t + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
               " lda=" + std::to_string(c.lda) + " incx=" + std::to_string(c.incx) + " incy=" + std::to_string(c.incy) +
               " alpha=" + scalar_str(c.alpha) + " beta=" + scalar_str(c.beta) + (poison ? " NaN/Inf in A" : ""));
  const int64_t lenx = c.t == 'N' ? c.n : c.m, leny = c.t == 'N' ? c.m : c.n;
  const bool conj = c.t == 'C';
  Image<T> a(mspan(c.m, c.n, c.lda)), x(vspan(lenx, c.incx)), y(vspan(leny, c.incy));
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) a.p()[i + j * c.lda] = rand_elem<T>();
  for (int64_t i = 0; i < lenx; ++i) x.p()[vi(i, lenx, c.incx)] = rand_elem<T>();
  for (int64_t i = 0; i < leny; ++i) y.p()[vi(i, leny, c.incy)] = nan_in_y ? nan_elem<T>() : rand_elem<T>();
  if (c.alpha == 0.0 && c.m > 0 && c.n > 0) a.p()[0] = nan_elem<T>();  // alpha = 0: A is not read
  auto at = [&](int64_t r, int64_t l) -> T& { return c.t == 'N' ? a.p()[r + l * c.lda] : a.p()[l + r * c.lda]; };
  const int64_t r0 = leny / 3, r1 = leny - 1;
  poison = poison && lenx > 0 && leny > 0;
  if (poison) {
    at(r0, lenx / 2) = elem<T>(NAN);
    at(r1, 0) = elem<T>(INFINITY);
  }
  std::vector<ExpectOf<T>> out(leny);
  const long double rel = Real<T>::arith * ((lenx + 3) * Real<T>::u + (lenx + 2) * Real<T>::u_acc);
  const Acc alpha = from_scalar<Acc>(c.alpha), beta = from_scalar<Acc>(c.beta);
  parallel_for(leny, [&](int64_t r) {
    Acc s = 0;
    M sa = 0;
    if (c.alpha != 0.0)
      for (int64_t l = 0; l < lenx; ++l) {
        const Acc av = conj_if(Acc(at(r, l)), conj), xv = Acc(x.p()[vi(l, lenx, c.incx)]);
        s += av * xv;
        sa += absval(av) * absval(xv);
      }
    const Acc y0 = c.beta != 0.0 ? beta * Acc(y.p()[vi(r, leny, c.incy)]) : Acc(0);
    out[r] = {size_t(vi(r, leny, c.incy)), alpha * s + y0, rel * (absval(alpha) * sa + absval(y0)) + tiny<T>()};
  });
  // A complex product turns the Inf into NaN parts in any order (Inf * 0): only "not finite" is required there.
  if constexpr (is_complex_v<T>)
    if (poison && c.alpha != 0.0 && r1 != r0) out[r1].value = {INFINITY, 0};
  if (c.m == 0 || c.n == 0) out.clear();
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
  return make_call(routine, ops, 0, c.n, 0, 0.0, 0.0, c.lda, 0, 0, c.incx);
}

template <typename T>
void check_trsv(const std::vector<Runner>& rs, const TrsvCase& c) {
  using Acc = typename Real<T>::Acc;
  using R = typename Real<T>::Part;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.uplo + c.trans + c.diag + " n=" + std::to_string(c.n) +
               " lda=" + std::to_string(c.lda) + " incx=" + std::to_string(c.incx));
  const int64_t n = c.n;
  Image<T> a(mspan(n, n, c.lda)), x(vspan(n, c.incx));
  // Diagonally dominant: off-diagonal entries U(-1,1)/n (each part), diagonal of modulus 1.5..2.5 (or unit). The other
  // triangle, and the diagonal when diag = 'U', hold NaN: they must never be read.
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const bool stored = c.uplo == 'U' ? i < j : i > j;
      T v = nan_elem<T>();
      if (stored) v = rand_elem<T>() / R(n);
      if (i == j && c.diag == 'N') v = with_phase<T>(uni<R>(1.5, 2.5));
      a.p()[i + j * c.lda] = v;
    }
  for (int64_t i = 0; i < n; ++i) x.p()[vi(i, n, c.incx)] = rand_elem<T>();
  // Reference in Acc, by substitution along A's columns (an order-16384 row walk would miss the cache at every
  // element): column-oriented for op(A) = A, row-oriented (a row of op(A) is a column of A) for the transposes.
  std::vector<Acc> xr(n);
  for (int64_t i = 0; i < n; ++i) xr[i] = Acc(x.p()[vi(i, n, c.incx)]);
  const bool unit = c.diag == 'U', lower_eff = (c.uplo == 'L') == (c.trans == 'N'), conj = c.trans == 'C';
  for (int64_t q = 0; q < n; ++q) {
    const int64_t p = lower_eff ? q : n - 1 - q;
    const T* col = a.p() + p * c.lda;
    if (c.trans == 'N') {
      if (!unit) xr[p] /= Acc(col[p]);
      const Acc xp = xr[p];
      for (int64_t i = lower_eff ? p + 1 : 0; i < (lower_eff ? n : p); ++i) xr[i] -= Acc(col[i]) * xp;
    } else {
      Acc s = xr[p];
      for (int64_t j = lower_eff ? 0 : p + 1; j < (lower_eff ? p : n); ++j) s -= conj_if(Acc(col[j]), conj) * xr[j];
      xr[p] = unit ? s : s / conj_if(Acc(col[p]), conj);
    }
  }
  MagOf<Acc> xmax = 0;
  for (const Acc& v : xr) xmax = std::max(xmax, absval(v));
  std::vector<ExpectOf<T>> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = {size_t(vi(i, n, c.incx)), xr[i], Real<T>::arith * 8 * (n + 2) * Real<T>::u * xmax + tiny<T>()};
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
  Scalar alpha, beta;
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

// nan_in_c: C all NaN (beta = 0 must not read it). poison: a NaN in row i0 of op(A) and an Inf in column j1 of op(B),
// which reach row i0 (NaN) and column j1 (Inf; complex: some part not finite) of C only, unless alpha = 0. twice: each
// runner runs the case again, and the two results must be bit-identical.
template <typename T>
void check_gemm(const std::vector<Runner>& rs, const GemmCase& c, bool nan_in_c = false, bool poison = false,
                bool twice = false) {
  using Acc = typename Real<T>::Acc;
  using M = MagOf<Acc>;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.ta + c.tb + " m=" + std::to_string(c.m) +
               " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " pad=" + std::to_string(c.pad) +
               " alpha=" + scalar_str(c.alpha) + " beta=" + scalar_str(c.beta) + (poison ? " NaN/Inf in A/B" : ""));
  const int64_t lda = c.lda(), ldb = c.ldb(), ldc = c.ldc(), m = c.m, k = c.k;
  Image<T> a(mspan(c.ar(), c.ac(), lda)), b(mspan(c.br(), c.bc(), ldb)), cc(mspan(c.m, c.n, ldc));
  for (int64_t j = 0; j < c.ac(); ++j)
    for (int64_t i = 0; i < c.ar(); ++i) a.p()[i + j * lda] = rand_elem<T>();
  for (int64_t j = 0; j < c.bc(); ++j)
    for (int64_t i = 0; i < c.br(); ++i) b.p()[i + j * ldb] = rand_elem<T>();
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) cc.p()[i + j * ldc] = nan_in_c ? nan_elem<T>() : rand_elem<T>();
  auto at_a = [&](int64_t i, int64_t l) -> T& { return c.ta == 'N' ? a.p()[i + l * lda] : a.p()[l + i * lda]; };
  auto at_b = [&](int64_t l, int64_t j) -> T& { return c.tb == 'N' ? b.p()[l + j * ldb] : b.p()[j + l * ldb]; };
  const int64_t i0 = m / 2, j1 = c.n / 3;
  poison = poison && m > 0 && c.n > 0 && k > 0;
  if (poison) {
    at_a(i0, k / 3) = elem<T>(NAN);
    at_b(k - 1, j1) = elem<T>(INFINITY);
  }
  // op(A) in Acc, column-major m x k, with its moduli: each is read n times below.
  const bool read_ab = c.alpha != 0.0;
  std::vector<Acc> oa(read_ab ? size_t(m * k) : 0);
  std::vector<M> ma(oa.size());
  parallel_for(read_ab ? k : 0, [&](int64_t l) {
    for (int64_t i = 0; i < m; ++i) {
      oa[size_t(i + l * m)] = conj_if(Acc(at_a(i, l)), c.ta == 'C');
      ma[size_t(i + l * m)] = absval(oa[size_t(i + l * m)]);
    }
  });
  std::vector<ExpectOf<T>> out(size_t(c.m * c.n));
  const long double rel = Real<T>::arith * ((c.k + 3) * Real<T>::u + (c.k + 2) * Real<T>::u_acc);
  const Acc alpha = from_scalar<Acc>(c.alpha), beta = from_scalar<Acc>(c.beta);
  parallel_for(c.n, [&](int64_t j) {
    std::vector<Acc> s(m, Acc(0));
    std::vector<M> sa(m, 0);
    if (read_ab)
      for (int64_t l = 0; l < k; ++l) {
        const Acc bv = conj_if(Acc(at_b(l, j)), c.tb == 'C');
        const M mb = absval(bv);
        const Acc* col = oa.data() + l * m;
        const M* mcol = ma.data() + l * m;
        for (int64_t i = 0; i < m; ++i) {
          s[i] += col[i] * bv;
          sa[i] += mcol[i] * mb;
        }
      }
    for (int64_t i = 0; i < m; ++i) {
      const Acc c0 = c.beta != 0.0 ? beta * Acc(cc.p()[i + j * ldc]) : Acc(0);
      out[size_t(i + j * m)] = {size_t(i + j * ldc), alpha * s[i] + c0,
                                rel * (absval(alpha) * sa[i] + absval(c0)) + tiny<T>()};
    }
  });
  // A complex product turns the Inf into NaN parts in any order (Inf * 0): only "not finite" is required there.
  if constexpr (is_complex_v<T>)
    if (poison && read_ab)
      for (int64_t i = 0; i < m; ++i)
        if (i != i0) out[size_t(i + j1 * m)].value = {INFINITY, 0};
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    Image<T> ra = a, rb = b, rc = cc;
    const bo_call call = gemm_call(routine_of<T>(BO_KIND_GEMM), c);
    ASSERT_EQ(run_call<T>(rn, call, &ra, &rb, &rc), BO_CUDA_OK)
        << "declined (the test's can-check and the real operands disagree) or failed";
    EXPECT_TRUE(check_image(a, ra, {})) << "A";
    EXPECT_TRUE(check_image(b, rb, {})) << "B";
    EXPECT_TRUE(check_image(cc, rc, out)) << "C";
    if (!twice) continue;
    Image<T> ra2 = a, rb2 = b, rc2 = cc;
    run_call<T>(rn, call, &ra2, &rb2, &rc2);
    EXPECT_TRUE(same_bits(rc, rc2));
  }
}

template <typename T>
bool gemm_can(const bo_kernel_entry* k, const GemmCase& c) {
  return takes<T>(k, gemm_call(k->routine, c));
}

}  // namespace gt::kernels
