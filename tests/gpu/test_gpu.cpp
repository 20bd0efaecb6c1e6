// GPU tests of nrm2, gemv, trsv and gemm in both precisions: every registered kernel configuration (through the
// registry, on device memory) and the module's call() (host operands staged by the runtime, and device operands used
// in place) against references accumulated in a wider type (Real<T>::Acc), with guard zones around every operand and
// poisoned outputs. One typed test per routine kind, run for float and double. Each case's data and reference are made
// once and run on every runner that takes the case (the references of the double suites accumulate in long double,
// which costs several times a double one). Without a CUDA device every test reports SKIPPED.
//
// Error bounds (u = unit roundoff of the element type: 2^-24 float, 2^-53 double; u_acc the reference's; tiny = the
// smallest normal number of the element type):
//   nrm2: |r - ||x|| | <= 2 u ||x|| where the kernel accumulates in a wider type (float), else (n/2 + 2) u ||x||
//         (any summation order of n squares); cuBLAS float: (2 sqrt(n) + 2) u ||x||
//   gemv: |y_i - ref| <= ((len+3) u + (len+2) u_acc) (|alpha| sum_j |a_ij x_j| + |beta y_i|) + tiny
//   gemm: |c_ij - ref| <= ((k+3) u + (k+2) u_acc) (|alpha| sum_l |a_il b_lj| + |beta c_ij|) + tiny
//   trsv: |x - ref|_inf <= 8 (n+2) u |x_ref|_inf on diagonally dominant systems (cond ~ 1)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "gpu_test_support.h"

using namespace gt;

namespace {

// A tuning space compiles many configurations of one template: each case runs on at least kShare of them (and each
// configuration on 1/stride of the cases, every kind of case included), so the suite stays minutes long while every
// configuration meets tails, increments and alpha/beta cases.
constexpr size_t kShare = 6;
bool shared_case(size_t config, size_t ncase, size_t nconfigs) {
  const size_t stride = (nconfigs + kShare - 1) / kShare;
  return stride <= 1 || ncase % stride == config % stride;
}
const Runner kHost{Mode::kModuleHost, nullptr}, kDevice{Mode::kModuleDevice, nullptr};

// Whether an entry takes a call whose operands are aligned as the test's device images are (configurations with vector
// fast paths decline misaligned operands; another configuration runs those).
template <typename T>
bool takes(const bo_kernel_entry* k, bo_call g) {
  g.a = g.b = g.c = fake_dev_ptr<T>();
  return k->can_implement(&g);
}

// The entries of a routine that take a case (can(entry)), for the case's runner list; counts each entry's cases.
std::vector<Runner> takers(const std::vector<const bo_kernel_entry*>& ks, std::vector<int>* ran,
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
GPU_TYPED_SUITE(GpuNrm2);

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

TYPED_TEST(GpuNrm2, AllConfigs) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_NRM2));
  const auto rs = takers(ks, nullptr, [](size_t) { return true; });
  for (int64_t n : {1, 2, 3, 31, 1000, 1027, 65537, 1000003})
    for (int64_t incx : {1, 3})
      for (int kind = 0; kind < 6; ++kind)
        if (kind == 0 || n > 2) check_nrm2<TypeParam>(rs, n, incx, kind);
}
TYPED_TEST(GpuNrm2, Large) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_NRM2));
  check_nrm2<TypeParam>(takers(ks, nullptr, [](size_t) { return true; }), (1 << 24) + 5, 1, 0);
}
TYPED_TEST(GpuNrm2, Module) {
  GPU_TEST_PREAMBLE();
  for (int64_t n : {1, 7, 4099, 300001})
    for (int64_t incx : {1, 2})
      for (int kind : {0, 1, 2, 3, 4}) check_nrm2<TypeParam>({kHost, kDevice}, n, incx, kind);
}

// ---------------------------------------------------------------- gemv
struct GemvCase {
  char t;
  int64_t m, n, lda, incx, incy;
  double alpha, beta;
};
bo_call gemv_call(int routine, const GemvCase& c) {
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

std::vector<GemvCase> gemv_cases(char t, bool big) {
  std::vector<GemvCase> v;
  if (!big) {
    const int64_t sizes[] = {1, 2, 7, 32, 33, 97, 256, 1031};
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t pad : {0, 3}) {
          const int64_t inc[][2] = {{1, 1}, {-1, 2}, {3, -2}};
          const double ab[][2] = {{1.5, 0.0}, {-0.5, 2.0}, {0.0, 0.5}, {0.0, 0.0}};
          // Not the full product at every size: rotate increments and alpha/beta.
          const size_t h = size_t(m * 131 + n * 7 + pad);
          auto& in = inc[h % 3];
          auto& s = ab[(h / 3) % 4];
          v.push_back({t, m, n, m + pad, in[0], in[1], s[0], s[1]});
          if (m <= 33 && n <= 33)
            for (auto& in2 : inc)
              for (auto& s2 : ab) v.push_back({t, m, n, m + pad, in2[0], in2[1], s2[0], s2[1]});
        }
  } else {
    v.push_back({t, 4096, 4096, 4099, 1, 1, 1.0, 0.0});
    v.push_back({t, 16384, 7, 16384, 1, -1, 2.0, 1.0});
    v.push_back({t, 7, 16384, 9, -2, 1, 1.0, -1.0});
    v.push_back({t, 100003, 3, 100003, 1, 1, 1.0, 0.0});
    v.push_back({t, 3, 100003, 3, 1, 1, 1.0, 0.0});
  }
  return v;
}
template <typename T>
bool gemv_can(const bo_kernel_entry* k, const GemvCase& c) {
  return takes<T>(k, gemv_call(k->routine, c));
}

GPU_TYPED_SUITE(GpuGemv);

TYPED_TEST(GpuGemv, AllConfigs) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMV));
  std::vector<int> ran(ks.size());
  for (char t : {'N', 'T'}) {
    const auto cases = gemv_cases(t, false);
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const auto rs = takers(ks, &ran, [&](size_t ki) {
        return gemv_can<TypeParam>(ks[ki], cases[ci]) && shared_case(ki, ci, ks.size());
      });
      if (!rs.empty()) check_gemv<TypeParam>(rs, cases[ci]);
    }
  }
  for (size_t ki = 0; ki < ks.size(); ++ki) EXPECT_GT(ran[ki], 20) << ks[ki]->name;
}
TYPED_TEST(GpuGemv, LargeAndShapes) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMV));
  for (char t : {'N', 'T'}) {
    const auto cases = gemv_cases(t, true);
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const auto rs = takers(ks, nullptr, [&](size_t ki) {
        return gemv_can<TypeParam>(ks[ki], cases[ci]) && shared_case(ki, ci, ks.size() / 2);
      });
      if (!rs.empty()) check_gemv<TypeParam>(rs, cases[ci]);
    }
  }
}
TYPED_TEST(GpuGemv, BetaZeroNeverReadsY) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMV));
  for (char t : {'N', 'T'}) {
    GemvCase c{t, 45, 37, 50, 2, -3, 1.0, 0.0};
    auto rs = takers(ks, nullptr, [&](size_t ki) { return gemv_can<TypeParam>(ks[ki], c); });
    rs.push_back(kHost);
    rs.push_back(kDevice);
    check_gemv<TypeParam>(rs, c, true);
    c.alpha = 0.0;  // y = 0 exactly
    check_gemv<TypeParam>(rs, c, true);
  }
}
TYPED_TEST(GpuGemv, Module) {
  GPU_TEST_PREAMBLE();
  for (char t : {'N', 'T'}) {
    for (const GemvCase& c : gemv_cases(t, false))
      if (c.m % 5 == 2 || c.n == 1031) check_gemv<TypeParam>({kHost, kDevice}, c);
    check_gemv<TypeParam>({kHost, kDevice}, {t, 2000, 3000, 2001, -1, 2, 0.5, 0.25});
  }
}

// ---------------------------------------------------------------- trsv
struct TrsvCase {
  char uplo, trans, diag;
  int64_t n, lda, incx;
};
bo_call trsv_call(int routine, const TrsvCase& c) {
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

GPU_TYPED_SUITE(GpuTrsv);

TYPED_TEST(GpuTrsv, AllConfigsAllCombinations) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_TRSV));
  std::vector<int> ran(ks.size());
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (char diag : {'N', 'U'})
        for (int64_t n : {1, 2, 31, 32, 33, 63, 64, 65, 100, 128, 129, 256, 257, 1000})
          for (int64_t lda : {n + (n % 3), (n + 3) / 4 * 4 + 4})
            for (int64_t incx : {1, -2}) {
              const TrsvCase c{uplo, trans, diag, n, lda, incx};
              const auto rs = takers(ks, &ran, [&](size_t ki) { return trsv_can<TypeParam>(ks[ki], c); });
              if (!rs.empty()) check_trsv<TypeParam>(rs, c);
            }
  for (size_t ki = 0; ki < ks.size(); ++ki) EXPECT_GT(ran[ki], 200) << ks[ki]->name << " ran too few cases";
}
TYPED_TEST(GpuTrsv, Large) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_TRSV));
  ASSERT_FALSE(ks.empty());
  // Case ci runs on the entries ki with ci % stride == ki % stride among those that take it (each entry counts its
  // own cases: an entry that declines one does not shift the others').
  std::vector<size_t> seen(ks.size());
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'})
      for (TrsvCase c : {TrsvCase{uplo, trans, 'N', 4099, 4100, 1}, TrsvCase{uplo, trans, 'N', 4100, 4104, 1}}) {
        const auto rs = takers(ks, nullptr, [&](size_t ki) {
          return trsv_can<TypeParam>(ks[ki], c) && shared_case(ki, seen[ki]++, 2 * ks.size());
        });
        if (!rs.empty()) check_trsv<TypeParam>(rs, c);
      }
  // Order 16384 on the first entry that takes it.
  for (const TrsvCase c : {TrsvCase{'L', 'N', 'U', 16384, 16384, -1}, TrsvCase{'U', 'T', 'N', 16384, 16385, 1}}) {
    const auto rs = takers(ks, nullptr, [&](size_t ki) { return trsv_can<TypeParam>(ks[ki], c); });
    ASSERT_FALSE(rs.empty()) << "no entry takes n = 16384";
    check_trsv<TypeParam>({rs[0]}, c);
  }
}
TYPED_TEST(GpuTrsv, Module) {
  GPU_TEST_PREAMBLE();
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'})
      for (char diag : {'N', 'U'})
        check_trsv<TypeParam>({kHost, kDevice}, {uplo, trans, diag, 517, 520, trans == 'N' ? 1 : -3});
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
bo_call gemm_call(int routine, const GemmCase& c) {
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

GPU_TYPED_SUITE(GpuGemm);

TYPED_TEST(GpuGemm, AllConfigsAllTransposes) {
  GPU_TEST_PREAMBLE();
  // Odd sizes (tails, misaligned leading dimensions) and multiples of 4 (the aligned vector fast paths).
  const int64_t sizes[] = {1, 2, 5, 17, 64, 67, 128, 131, 257, 4, 36, 132, 260};
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMM));
  std::vector<int> ran(ks.size());
  for (char ta : {'N', 'T', 'C'})
    for (char tb : {'N', 'T', 'C'}) {
      size_t h = 0;
      for (int64_t m : sizes)
        for (int64_t n : sizes) {
          ++h;
          const int64_t kk = sizes[(h * 5) % 13] + (h % 4 == 0 || sizes[(h * 5) % 13] % 4 == 0 ? 0 : 1);
          const double ab[][2] = {{1.0, 0.0}, {-1.5, 0.5}, {0.0, 2.0}, {0.0, 0.0}, {2.0, 1.0}};
          const GemmCase c{ta,           tb,          m, n, kk, m % 4 == 0 ? int64_t(h % 2) * 4 : int64_t(h % 3),
                           ab[h % 5][0], ab[h % 5][1]};
          const auto rs = takers(ks, &ran, [&](size_t ki) { return gemm_can<TypeParam>(ks[ki], c); });
          if (!rs.empty()) check_gemm<TypeParam>(rs, c);
        }
    }
  for (size_t ki = 0; ki < ks.size(); ++ki) EXPECT_GT(ran[ki], 60) << ks[ki]->name << " ran too few cases";
}
TYPED_TEST(GpuGemm, TallWideAndK0) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMM));
  for (GemmCase c : {GemmCase{'N', 'N', 3001, 3, 129, 1, 1.0, 0.0}, GemmCase{'N', 'N', 3, 3001, 129, 0, 1.0, 1.0},
                     GemmCase{'N', 'N', 300, 200, 0, 2, 1.0, 0.5}, GemmCase{'N', 'N', 1, 1, 5000, 0, 1.0, 0.0},
                     GemmCase{'N', 'N', 77, 65, 1, 1, 1.0, 0.0}, GemmCase{'N', 'N', 3000, 4, 132, 0, 1.0, 0.0},
                     GemmCase{'N', 'N', 4, 3000, 132, 0, -1.0, 1.0}, GemmCase{'N', 'N', 300, 200, 0, 4, 1.0, 0.5}})
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'}) {
        c.ta = ta;
        c.tb = tb;
        const auto rs = takers(ks, nullptr, [&](size_t ki) { return gemm_can<TypeParam>(ks[ki], c); });
        if (!rs.empty()) check_gemm<TypeParam>(rs, c);
      }
}
TYPED_TEST(GpuGemm, BetaZeroNeverReadsC) {
  GPU_TEST_PREAMBLE();
  // The aligned case on every entry that takes it and the module; a misaligned one on the entries that take only it.
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMM));
  std::vector<char> done(ks.size(), 0);
  for (GemmCase c : {GemmCase{'N', 'T', 72, 45, 36, 0, 1.0, 0.0}, GemmCase{'N', 'T', 70, 45, 33, 3, 1.0, 0.0}}) {
    auto rs = takers(ks, nullptr, [&](size_t ki) { return !done[ki] && gemm_can<TypeParam>(ks[ki], c); });
    for (const Runner& r : rs) done[std::find(ks.begin(), ks.end(), r.e) - ks.begin()] = 1;
    if (c.pad == 0) {
      rs.push_back(kHost);
      rs.push_back(kDevice);
    }
    if (rs.empty()) continue;
    check_gemm<TypeParam>(rs, c, true);
    c.alpha = 0.0;
    check_gemm<TypeParam>(rs, c, true);
  }
}
TYPED_TEST(GpuGemm, Large) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(routine_of<TypeParam>(BO_KIND_GEMM));
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'})
      for (GemmCase c :
           {GemmCase{ta, tb, 1000, 1001, 999, 3, 1.0, 0.5}, GemmCase{ta, tb, 1024, 1000, 996, 4, 1.0, 0.5}}) {
        const auto rs = takers(ks, nullptr, [&](size_t ki) { return gemm_can<TypeParam>(ks[ki], c); });
        if (!rs.empty()) check_gemm<TypeParam>(rs, c);
      }
  check_gemm<TypeParam>({kHost}, {'N', 'N', 2048, 2048, 2048, 0, 1.0, 0.0});
  check_gemm<TypeParam>({kHost}, {'T', 'N', 2053, 2047, 2049, 5, -1.0, 1.0});
}
TYPED_TEST(GpuGemm, Module) {
  GPU_TEST_PREAMBLE();
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'}) {
      check_gemm<TypeParam>({kHost, kDevice}, {ta, tb, 33, 65, 17, 3, 1.0, 0.0});
      check_gemm<TypeParam>({kHost, kDevice}, {ta, tb, 513, 257, 129, 1, 0.5, -1.0});
    }
}

// ---------------------------------------------------------------- misaligned operands
// Operands one element past a 16-byte boundary: the vector paths must notice and fall back.
struct Shift {
  Shift() { g_dev_shift = 1; }
  ~Shift() { g_dev_shift = 0; }
};
GPU_TYPED_SUITE(GpuMisaligned);

TYPED_TEST(GpuMisaligned, AllRoutinesAllConfigs) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Shift shift;
  const auto all = [](size_t) { return true; };
  check_nrm2<T>(takers(configs(routine_of<T>(BO_KIND_NRM2)), nullptr, all), 100003, 1, 0);
  const auto gv = configs(routine_of<T>(BO_KIND_GEMV));
  for (char t : {'N', 'T'}) {
    const GemvCase c{t, 1024, 515, 1024, 1, 1, 1.0, 0.5};
    const auto rs = takers(gv, nullptr, [&](size_t ki) { return gemv_can<T>(gv[ki], c); });
    if (!rs.empty()) check_gemv<T>(rs, c);
  }
  const auto gm = configs(routine_of<T>(BO_KIND_GEMM));
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'}) {
      const GemmCase c{ta, tb, 256, 131, 64, 0, 1.0, 0.0};
      const auto rs = takers(gm, nullptr, [&](size_t ki) { return gemm_can<T>(gm[ki], c); });
      if (!rs.empty()) check_gemm<T>(rs, c);
    }
  const auto tv = configs(routine_of<T>(BO_KIND_TRSV));
  const TrsvCase tc{'L', 'T', 'N', 300, 300, 1};
  if (const auto rs = takers(tv, nullptr, [&](size_t ki) { return trsv_can<T>(tv[ki], tc); }); !rs.empty())
    check_trsv<T>(rs, tc);
  check_gemm<T>({kDevice}, {'N', 'N', 256, 256, 256, 0, 1.0, 1.0});
}

// ---------------------------------------------------------------- registry, runtime
// Every BLAS routine in both precisions has named configurations, all names distinct, each entry's name saying its
// routine and precision ("dgemm_...", "cublas_dgemm"); LAPACK routines have none (cuSOLVER runs them). Needs the module
// file only (no GPU).
TEST(GpuRegistry, EveryRoutineAndPrecisionHasNamedConfigs) {
  if (!module().reg) GTEST_SKIP() << "module not loadable: " << module().error;
  EXPECT_EQ(module().reg->version, 5u);
  std::vector<bool> lapack(BO_R_COUNT, false);
#define BO_LAPACK_ENTRY(p, P, name, NAME, T) lapack[BO_R_##P##NAME] = true;
#include "routines/routine_list.h"
#undef BO_LAPACK_ENTRY
  std::vector<std::string> names;
  for (int r = 0; r < BO_R_COUNT; ++r) {
    const auto v = configs(r);
    if (lapack[size_t(r)]) {
      EXPECT_TRUE(v.empty()) << bo_routine_name(r);
      continue;
    }
    EXPECT_FALSE(v.empty()) << bo_routine_name(r);
    int own = 0;
    for (const bo_kernel_entry* e : v) {
      ASSERT_NE(e->name, nullptr);
      names.push_back(e->name);
      EXPECT_NE(names.back().find(bo_routine_name(r)), std::string::npos)
          << names.back() << " listed as " << bo_routine_name(r);
      EXPECT_NE(e->family, nullptr) << e->name;
      EXPECT_TRUE(e->can_implement && e->workspace_bytes && e->launch) << e->name;
      own += e->vendor == 0;
      std::printf("  %s config %s%s\n", bo_routine_name(r), e->name, e->vendor ? " (vendor)" : "");
    }
    EXPECT_GT(own, 0) << "no own " << bo_routine_name(r) << " configuration";
  }
  for (size_t i = 0; i < module().reg->count; ++i) {
    const int r = module().reg->entries[i].routine;
    EXPECT_TRUE(r >= 0 && r < BO_R_COUNT) << module().reg->entries[i].name << ": routine " << r;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate configuration names";
}

GPU_TYPED_SUITE(GpuRuntime);

bo_call nrm2_host_call(int routine, int64_t n, const void* x, void* result) {
  bo_call c = make_call(routine, "", 0, n, 0, 0, 0, 0, 0, 0, 1);
  c.b = x;
  c.c = result;
  return c;
}

TYPED_TEST(GpuRuntime, ManyThreadsShareTheModule) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  std::vector<std::thread> th;
  std::atomic<int> bad{0};
  for (int t = 0; t < 12; ++t)
    th.emplace_back([&, t] {
      const int64_t n = 200 + t;
      std::vector<T> x(n);
      for (int i = 0; i < n; ++i) x[i] = T(i % 7) - 3;
      double s = 0;
      for (T v : x) s += double(v) * v;  // small integers: exact
      for (int rep = 0; rep < 50; ++rep) {
        T r = 0;
        const bo_call c = nrm2_host_call(routine_of<T>(BO_KIND_NRM2), n, x.data(), &r);
        if (module().mod->call(&c, 0.0) != BO_CUDA_OK ||
            std::fabs(r - std::sqrt(s)) > (double(n) / 2 + 2) * Real<T>::u * std::sqrt(s))
          ++bad;
      }
    });
  for (auto& t : th) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TYPED_TEST(GpuRuntime, ForkedChildNeverTouchesCuda) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  const int routine = routine_of<T>(BO_KIND_NRM2);
  pid_t pid = fork();
  if (pid == 0) {
    module().mod->forked_child();
    T x[3] = {1, 2, 3}, r = -1;
    const bo_call c = nrm2_host_call(routine, 3, x, &r);
    const int st = module().mod->call(&c, 0.0);
    _exit(st == BO_CUDA_FORKED_CHILD && r == -1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  T x[3] = {3, 4, 0}, r = 0;  // the parent is unaffected
  const bo_call c = nrm2_host_call(routine, 3, x, &r);
  EXPECT_EQ(module().mod->call(&c, 0.0), BO_CUDA_OK);
  EXPECT_NEAR(r, 5.0, 4 * Real<T>::u * 5.0);
}

}  // namespace
