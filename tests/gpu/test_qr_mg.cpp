// GPU tests of the tiled QR (offload/module/qr_mg.h) through the module's call(), typed suite GpuLapackQrMg over the
// four types: geqrf over two lanes (GPUs 0 and 1 where the machine has two, else two shares of GPU 0) with
// BLASOFFLOAD_MULTI_GPU_MIN_N lowered, square, tall and wide shapes with padding rows: A = Q R and Q^H Q = I within
// LAPACK's xQRT01 bounds (each ratio / (m eps) < 30, Q formed from the reflectors in the wider type), nothing written
// outside A's m x n part and TAU's min(m, n) elements (padding rows and guard zones keep their bits), two runs bit for
// bit, every call counted on the path; a NaN or Inf answered by the CPU with nothing written, INFO included. And one
// double matrix beyond 2^31 elements (the one-GPU path's limit), on one lane, checked on sampled columns. Without a
// CUDA device every test reports SKIPPED.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_test_support.h"
#include "pipeline_support.h"  // Knobs

using namespace gt;

namespace {

constexpr long double kThresh = 30;
constexpr size_t kZone = 16;  // poisoned elements before and after A and TAU
constexpr int32_t kInfoPoison = -987654;

template <typename T>
using Acc = typename Real<T>::Acc;
template <typename T>
constexpr long double kEps = 2 * Real<T>::u;  // LAPACK's eps of the type's parts

// One geqrf call's operands, each inside guard zones; A's padding rows hold the sentinel.
template <typename T>
struct Qr {
  int64_t m, n, lda, k;
  std::vector<T> a, tau;
  int32_t info = kInfoPoison;
  T* A() { return a.data() + kZone; }
  T* Tau() { return tau.data() + kZone; }
  const T* A() const { return a.data() + kZone; }
  const T* Tau() const { return tau.data() + kZone; }
};

template <typename T>
Qr<T> make_qr(int64_t m, int64_t n, int64_t lda) {
  Qr<T> p{m, n, lda, std::min(m, n), {}, {}};
  p.a.assign(size_t(lda * n) + 2 * kZone, sentinel<T>());
  p.tau.assign(size_t(p.k) + 2 * kZone, sentinel<T>());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) p.A()[i + j * lda] = rand_elem<T>();
  return p;
}

// The module's call, built as the descriptor (src/routines/geqrf.h) builds it.
template <typename T>
int run(Qr<T>& p) {
  bo_call g = make_call(routine_of<T>(BO_KIND_GEQRF), "", p.m, p.n, 0, 0.0, 0.0, p.lda, p.k, 0);
  g.a = p.A();
  g.b = p.Tau();
  g.info = &p.info;
  return module().mod->call(&g, 0.0);
}

// x := H_i x in the wider type, H_i = I - tau_i v v^H with v = (0 .. 0, 1, A(i+1 .. m-1, i)) as geqrf leaves them.
template <typename T, typename X>
void apply_reflector(const T* a, int64_t lda, int64_t m, int64_t i, T tau, X* x) {
  X s = x[i];
  for (int64_t r = i + 1; r < m; ++r) s += conj_if(X(a[r + i * lda]), true) * x[r];
  s *= X(tau);
  x[i] -= s;
  for (int64_t r = i + 1; r < m; ++r) x[r] -= X(a[r + i * lda]) * s;
}
// x := Q x, Q = H_0 H_1 ... H_{k-1}.
template <typename T, typename X>
void apply_q(const T* a, int64_t lda, int64_t m, int64_t k, const T* tau, X* x) {
  for (int64_t i = k - 1; i >= 0; --i) apply_reflector(a, lda, m, i, tau[i], x);
}

// xQRT01's two ratios: ||A - Q R||_1 / (m ||A||_1 eps) and ||I - Q^H Q||_1 / (m eps) over Q's first k columns.
template <typename T>
void check_qr(const Qr<T>& p, const std::vector<T>& a0, const std::string& what) {
  using X = Acc<T>;
  const int64_t m = p.m, n = p.n, k = p.k, lda = p.lda;
  const T* a = p.A();
  long double anorm = 0, rnorm = 0, onorm = 0;
  std::vector<X> x(static_cast<size_t>(m));
  for (int64_t j = 0; j < n; ++j) {
    std::fill(x.begin(), x.end(), X(0));
    for (int64_t i = 0; i <= std::min(j, m - 1); ++i) x[size_t(i)] = X(a[i + j * lda]);  // R's column
    apply_q(a, lda, m, k, p.Tau(), x.data());
    long double as = 0, rs = 0;
    for (int64_t i = 0; i < m; ++i) {
      const X orig = X(a0[kZone + size_t(i + j * lda)]);
      as += std::abs(orig), rs += std::abs(orig - x[size_t(i)]);
    }
    anorm = std::max(anorm, as), rnorm = std::max(rnorm, rs);
  }
  std::vector<X> q(size_t(m * k), X(0));
  for (int64_t c = 0; c < k; ++c) {
    q[size_t(c + c * m)] = X(1);
    apply_q(a, lda, m, k, p.Tau(), q.data() + c * m);
  }
  for (int64_t j = 0; j < k; ++j) {
    long double s = 0;
    for (int64_t i = 0; i < k; ++i) {
      X g = X(i == j ? 1 : 0);
      for (int64_t r = 0; r < m; ++r) g -= conj_if(q[size_t(r + i * m)], true) * q[size_t(r + j * m)];
      s += std::abs(g);
    }
    onorm = std::max(onorm, s);
  }
  const long double md = (long double)std::max<int64_t>(m, 1);
  const long double r1 = anorm > 0 ? rnorm / md / anorm / kEps<T> : 0, r2 = onorm / md / kEps<T>;
  EXPECT_LT(r1, kThresh) << what << ": ||A - QR|| ratio";
  EXPECT_LT(r2, kThresh) << what << ": ||I - Q^H Q|| ratio";
  std::printf("  %-38s ||A - QR|| %.3f, ||I - Q^H Q|| %.3f (of %g)\n", what.c_str(), double(r1), double(r2),
              double(kThresh));
}

// Every element outside A's m x n part and TAU's k elements bit-identical to before.
template <typename T>
::testing::AssertionResult only_outputs_written(const Qr<T>& before, const Qr<T>& after) {
  size_t changed = 0;
  for (size_t e = 0; e < before.a.size(); ++e) {
    const int64_t o = int64_t(e) - int64_t(kZone);
    const bool out = o >= 0 && o < before.lda * before.n && o % before.lda < before.m;
    if (!out && bits(before.a[e]) != bits(after.a[e])) ++changed;
  }
  for (size_t e = 0; e < before.tau.size(); ++e) {
    const int64_t o = int64_t(e) - int64_t(kZone);
    if (!(o >= 0 && o < before.k) && bits(before.tau[e]) != bits(after.tau[e])) ++changed;
  }
  if (changed) return ::testing::AssertionFailure() << changed << " elements outside the outputs changed";
  return ::testing::AssertionSuccess();
}

template <typename T>
bool same(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), sizeof(T) * x.size()) == 0;
}

// Two lanes, the tiled QR from small sizes on.
void set_two_lanes(gt::pipe::Knobs& knobs) {
  knobs.set("BLASOFFLOAD_DEVICES", device_count() >= 2 ? "0,1" : "0,0");
  knobs.set("BLASOFFLOAD_MULTI_GPU_MIN_N", "32");
}

GPU_TYPED_SUITE_ALL(GpuLapackQrMg);

TYPED_TEST(GpuLapackQrMg, SharedOverTwoLanes) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  gt::pipe::Knobs knobs(0, nullptr);  // every engine knob cleared, restored at the end
  set_two_lanes(knobs);
  struct Shape {
    int64_t m, n, lda;
    const char* what;
  };
  // Blocks of 32 columns here (qr_mg.cu: at least four a lane): several panels each, a narrow last block, a last panel
  // inside a block (wide: its block's other columns only updated), and more rows than columns on both sides.
  const Shape shapes[] = {{64, 64, 64, "square 64, two blocks"},
                          {300, 300, 305, "square 300, padding rows"},
                          {700, 260, 703, "tall 700 x 260"},
                          {200, 333, 201, "wide 200 x 333"},
                          {1000, 40, 1000, "tall 1000 x 40, a narrow last panel"},
                          {270, 270, 270, "square 270, a narrow last block"}};
  const int64_t before = gt::qr_calls(2).load();
  int runs = 0;
  std::printf("%s:\n", Real<T>::name);
  for (const Shape& s : shapes) {
    Qr<T> p = make_qr<T>(s.m, s.n, s.lda);
    const Qr<T> p0 = p;
    ASSERT_EQ(run(p), BO_CUDA_OK) << s.what;
    ++runs;
    EXPECT_EQ(p.info, 0) << s.what;
    EXPECT_TRUE(only_outputs_written(p0, p)) << s.what;
    check_qr(p, p0.a, s.what);
    Qr<T> again = p0;
    ASSERT_EQ(run(again), BO_CUDA_OK) << s.what;
    ++runs;
    EXPECT_TRUE(same(p.a, again.a) && same(p.tau, again.tau)) << s.what << ": two runs differ";
  }
  EXPECT_EQ(gt::qr_calls(2).load() - before, runs) << "calls that ran on two lanes";
}

TYPED_TEST(GpuLapackQrMg, NonFiniteLeftToCpu) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  gt::pipe::Knobs knobs(0, nullptr);
  set_two_lanes(knobs);
  using R = typename Real<T>::Part;
  const struct {
    int64_t i, j;
    R v;
  } cases[] = {{5, 3, R(NAN)}, {250, 290, R(INFINITY)}, {0, 299, -R(INFINITY)}};
  for (const auto& c : cases) {
    Qr<T> p = make_qr<T>(300, 300, 301);
    p.A()[c.i + c.j * p.lda] = T(c.v);
    const Qr<T> p0 = p;
    EXPECT_EQ(run(p), BO_CUDA_CPU_ANSWERS) << c.v << " at " << c.i << ", " << c.j;
    EXPECT_TRUE(same(p.a, p0.a) && same(p.tau, p0.tau)) << "written: " << c.v;
    EXPECT_EQ(p.info, kInfoPoison);
  }
}

// A double matrix of 4 130 000 x 520 (2^31 + 116 352 elements, 17.2 GB): the one-GPU path indexes by int and declined
// such calls (the CPU LAPACK ran them); the tiled QR takes it on one lane. Checked on sampled columns: A - Q R and
// Q's orthonormality, each in long double (about 2 * 10^9 multiply-adds a column, the columns on threads of their own).
// A's elements are a hash of their index, so that the input's columns are made again for the check, not kept.
double element_of(int64_t idx) {
  uint64_t z = uint64_t(idx) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1p-52 - 1.0;  // uniform in [-1, 1)
}

TEST(GpuLapackQrMgLarge, BeyondInt32OnOneLane) {
  GPU_TEST_PREAMBLE();
  const int64_t m = 4130000, n = 520, k = n;
  size_t free_b = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total), cudaSuccess);
  if (free_b < (size_t(24) << 30)) GTEST_SKIP() << "the GPU has less than 24 GiB free";
  gt::pipe::Knobs knobs(0, nullptr);  // BLASOFFLOAD_DEVICES=0, the default BLASOFFLOAD_MULTI_GPU_MIN_N
  std::vector<double> a(size_t(m * n) + 2 * kZone, sentinel<double>()), tau(size_t(k) + 2 * kZone, sentinel<double>());
  {
    std::vector<std::thread> th;
    const int parts = 16;
    for (int t = 0; t < parts; ++t)
      th.emplace_back([&, t] {
        for (int64_t j = t; j < n; j += parts)
          for (int64_t i = 0; i < m; ++i) a[kZone + size_t(i + j * m)] = element_of(i + j * m);
      });
    for (auto& x : th) x.join();
  }
  int32_t info = kInfoPoison;
  bo_call g = make_call(routine_of<double>(BO_KIND_GEQRF), "", m, n, 0, 0.0, 0.0, m, k, 0);
  g.a = a.data() + kZone;
  g.b = tau.data() + kZone;
  g.info = &info;
  const int64_t before = gt::qr_calls(1).load();
  ASSERT_EQ(module().mod->call(&g, 0.0), BO_CUDA_OK);
  EXPECT_EQ(gt::qr_calls(1).load() - before, 1) << "the call did not take one lane of the tiled QR";
  EXPECT_EQ(info, 0);
  for (size_t z = 0; z < kZone; ++z) {
    EXPECT_EQ(bits(a[z]), bits(sentinel<double>())) << "guard before A";
    EXPECT_EQ(bits(a[a.size() - 1 - z]), bits(sentinel<double>())) << "guard after A";
    EXPECT_EQ(bits(tau[z]), bits(sentinel<double>())) << "guard before TAU";
    EXPECT_EQ(bits(tau[tau.size() - 1 - z]), bits(sentinel<double>())) << "guard after TAU";
  }
  const double* af = a.data() + kZone;
  const double* tf = tau.data() + kZone;
  // Residual columns (first, second, one inside a later block, last) and Q's columns 0 and n - 1.
  const int64_t cols[] = {0, 1, 300, n - 1};
  long double resid[4] = {}, anorm = 0, qq[2][2] = {};
  std::vector<std::vector<long double>> q(2, std::vector<long double>(size_t(m)));
  std::vector<std::thread> th;
  for (int c = 0; c < 4; ++c)
    th.emplace_back([&, c] {
      const int64_t j = cols[c];
      std::vector<long double> x(size_t(m), 0.0L);
      for (int64_t i = 0; i <= j; ++i) x[size_t(i)] = af[i + j * m];
      apply_q(af, m, m, k, tf, x.data());
      long double rs = 0;
      for (int64_t i = 0; i < m; ++i) rs += std::fabs((long double)element_of(i + j * m) - x[size_t(i)]);
      resid[c] = rs;
    });
  for (int c = 0; c < 2; ++c)
    th.emplace_back([&, c] {
      std::vector<long double>& x = q[size_t(c)];
      x[size_t(c == 0 ? 0 : k - 1)] = 1;
      apply_q(af, m, m, k, tf, x.data());
    });
  for (auto& t : th) t.join();
  for (int64_t j : cols) {
    long double s = 0;
    for (int64_t i = 0; i < m; ++i) s += std::fabs(element_of(i + j * m));
    anorm = std::max(anorm, s);
  }
  for (int x = 0; x < 2; ++x)
    for (int y = 0; y < 2; ++y)
      for (int64_t i = 0; i < m; ++i) qq[x][y] += q[size_t(x)][size_t(i)] * q[size_t(y)][size_t(i)];
  const long double eps = kEps<double>;
  for (int c = 0; c < 4; ++c) {
    const long double r = resid[c] / (long double)m / anorm / eps;
    std::printf("  column %lld: ||a - QR||_1 / (m ||A||_1 eps) = %.3g\n", (long long)cols[c], double(r));
    EXPECT_LT(r, kThresh) << "column " << cols[c];
  }
  const long double o = std::max({std::fabs(qq[0][0] - 1), std::fabs(qq[1][1] - 1), std::fabs(qq[0][1])}) / m / eps;
  std::printf("  Q's columns 0 and %lld: |q^T q - I| / (m eps) = %.3g\n", (long long)(k - 1), double(o));
  EXPECT_LT(o, kThresh);
}

}  // namespace
