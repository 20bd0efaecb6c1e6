// GPU tests: every registered kernel configuration (through the registry, on device memory) and the
// module's entry points (host operands staged by the runtime, and device operands used in place) against
// double-precision references, with guard zones around every operand and poisoned outputs.
// Without a CUDA device every test reports SKIPPED.
//
// Error bounds (eps = 2^-24, unit roundoff of float):
//   snrm2: |r - ||x|| | <= 2 eps ||x||       (double accumulation, one final rounding)
//   sgemv: |y_i - ref| <= (len+3) eps (|alpha| sum_j |a_ij x_j| + |beta y_i|) + tiny
//   sgemm: |c_ij - ref| <= (k+3) eps (|alpha| sum_l |a_il b_lj| + |beta c_ij|) + tiny
//   strsv: |x - ref|_inf <= 8 (n+2) eps |x_ref|_inf on diagonally dominant systems (cond ~ 1)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "gpu_test_support.h"

using namespace gt;

namespace {

constexpr double kEps = 1.0 / (1 << 24);
constexpr double kTiny = 1e-30;
enum class Mode { kKernel, kModuleHost, kModuleDevice };
// An address aligned as the test's device images are (for can_implement checks before the operands exist).
const float* fake_dev_ptr() { return reinterpret_cast<const float*>(uintptr_t(1) << 20) + g_dev_shift; }
const char* mode_name(Mode m) {
  return m == Mode::kKernel ? "kernel" : m == Mode::kModuleHost ? "module/host" : "module/device";
}

// ---------------------------------------------------------------- snrm2
struct Nrm2Result {
  Image img;
  float r;
};

Nrm2Result run_nrm2(Mode mode, const bo_kernel_entry* k, const Image& x, int64_t n, int64_t incx) {
  Nrm2Result res{x, std::nanf("")};
  if (mode == Mode::kModuleHost) {
    EXPECT_EQ(module().mod->snrm2(n, res.img.p(), incx, &res.r), BO_CUDA_OK);
    return res;
  }
  DevImage dx(x);
  float* dr = nullptr;
  EXPECT_EQ(cudaMalloc(&dr, 4), cudaSuccess);
  if (mode == Mode::kModuleDevice) {
    EXPECT_EQ(module().mod->snrm2(n, dx.p(), incx, &res.r), BO_CUDA_OK);
  } else {
    bo_kernel_args a{};
    a.n = n;
    a.b = dx.p();
    a.incx = incx;
    a.c = dr;
    run_entry(k, a);
    EXPECT_EQ(cudaMemcpy(&res.r, dr, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  cudaFree(dr);
  res.img = dx.back();
  return res;
}

void check_nrm2(Mode mode, const bo_kernel_entry* k, int64_t n, int64_t incx, int kind) {
  SCOPED_TRACE(std::string(mode_name(mode)) + " " + (k ? k->name : "default") + " n=" + std::to_string(n) +
               " incx=" + std::to_string(incx) + " kind=" + std::to_string(kind));
  Image x(vspan(n, incx));
  double scale = kind == 1 ? 1e30 : kind == 2 ? 1e-30 : 1.0;
  for (int64_t i = 0; i < n; ++i) x.p()[i * incx] = float(uni() * scale);
  if (kind == 3) x.p()[(n / 2) * incx] = INFINITY;
  if (kind == 4) x.p()[(n / 3) * incx] = NAN;
  if (kind == 5) {
    x.p()[(n / 3) * incx] = -INFINITY;
    x.p()[(n - 1) * incx] = NAN;
  }
  double s = 0;
  bool inf = false, nan = false;
  for (int64_t i = 0; i < n; ++i) {
    double v = x.p()[i * incx];
    inf |= std::isinf(v);
    nan |= std::isnan(v);
    s += (v / scale) * (v / scale);
  }
  const double ref = nan ? NAN : inf ? INFINITY : std::sqrt(s) * scale;
  // A reference-only vendor entry is never chosen because its special values differ: check finite data only.
  if (k && k->vendor == 2 && (inf || nan)) return;
  Nrm2Result r = run_nrm2(mode, k, x, n, incx);
  if (std::isnan(ref))
    EXPECT_TRUE(std::isnan(r.r)) << r.r;
  else if (std::isinf(ref))
    EXPECT_EQ(r.r, INFINITY);
  else if (k && k->vendor)  // cuBLAS: not ours to hold to 2 eps; BLAS's own bound is O(sqrt(n) eps)
    EXPECT_LE(std::fabs(r.r - ref), (2 * std::sqrt(double(n)) + 2) * kEps * ref + kTiny) << "got " << r.r << " want " << ref;
  else
    EXPECT_LE(std::fabs(r.r - ref), 2 * kEps * ref + kTiny) << "got " << r.r << " want " << ref;
  EXPECT_TRUE(check_image(x, r.img, {}));
  // Deterministic: the same input gives the same bits.
  Nrm2Result r2 = run_nrm2(mode, k, x, n, incx);
  EXPECT_EQ(bits(r.r), bits(r2.r));
}

TEST(GpuSnrm2, AllConfigs) {
  GPU_TEST_PREAMBLE();
  for (const bo_kernel_entry* k : configs(BO_K_SNRM2))
    for (int64_t n : {1, 2, 3, 31, 1000, 1027, 65537, 1000003})
      for (int64_t incx : {1, 3})
        for (int kind = 0; kind < 6; ++kind)
          if (kind == 0 || n > 2) check_nrm2(Mode::kKernel, k, n, incx, kind);
}
TEST(GpuSnrm2, Large) {
  GPU_TEST_PREAMBLE();
  for (const bo_kernel_entry* k : configs(BO_K_SNRM2)) check_nrm2(Mode::kKernel, k, (1 << 24) + 5, 1, 0);
}
TEST(GpuSnrm2, Module) {
  GPU_TEST_PREAMBLE();
  for (Mode m : {Mode::kModuleHost, Mode::kModuleDevice})
    for (int64_t n : {1, 7, 4099, 300001})
      for (int64_t incx : {1, 2})
        for (int kind : {0, 1, 2, 3, 4}) check_nrm2(m, nullptr, n, incx, kind);
}

// ---------------------------------------------------------------- sgemv
struct GemvCase {
  char t;
  int64_t m, n, lda, incx, incy;
  float alpha, beta;
};

void check_gemv(Mode mode, const bo_kernel_entry* k, const GemvCase& c, bool nan_in_y = false) {
  SCOPED_TRACE(std::string(mode_name(mode)) + " " + (k ? k->name : "default") + " " + c.t + " m=" +
               std::to_string(c.m) + " n=" + std::to_string(c.n) + " lda=" + std::to_string(c.lda) +
               " incx=" + std::to_string(c.incx) + " incy=" + std::to_string(c.incy) +
               " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta));
  const int64_t lenx = c.t == 'N' ? c.n : c.m, leny = c.t == 'N' ? c.m : c.n;
  Image a(mspan(c.m, c.n, c.lda)), x(vspan(lenx, c.incx)), y(vspan(leny, c.incy));
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) a.p()[i + j * c.lda] = uni();
  for (int64_t i = 0; i < lenx; ++i) x.p()[vi(i, lenx, c.incx)] = uni();
  for (int64_t i = 0; i < leny; ++i) y.p()[vi(i, leny, c.incy)] = nan_in_y ? NAN : uni();
  if (c.alpha == 0.0f && c.m > 0 && c.n > 0) a.p()[0] = NAN;  // alpha = 0: A is not read
  std::vector<Expect> out(leny);
  parallel_for(leny, [&](int64_t r) {
    double s = 0, sa = 0;
    if (c.alpha != 0.0f)
      for (int64_t l = 0; l < lenx; ++l) {
        double av = c.t == 'N' ? a.p()[r + l * c.lda] : a.p()[l + r * c.lda];
        double p = av * x.p()[vi(l, lenx, c.incx)];
        s += p;
        sa += std::fabs(p);
      }
    double y0 = y.p()[vi(r, leny, c.incy)];
    double v = c.alpha * s + (c.beta != 0.0f ? c.beta * y0 : 0.0);
    double bound = (lenx + 3) * kEps * (std::fabs(c.alpha) * sa + (c.beta != 0.0f ? std::fabs(c.beta * y0) : 0)) + kTiny;
    out[r] = {size_t(vi(r, leny, c.incy)), v, bound};
  });
  auto run = [&](Image& ra, Image& rx, Image& ry) {
    if (mode == Mode::kModuleHost) {
      EXPECT_EQ(module().mod->sgemv(c.t, c.m, c.n, c.alpha, ra.p(), c.lda, rx.p(), c.incx, c.beta, ry.p(), c.incy),
                BO_CUDA_OK);
      return;
    }
    DevImage da(ra), dx(rx), dy(ry);
    if (mode == Mode::kModuleDevice) {
      EXPECT_EQ(module().mod->sgemv(c.t, c.m, c.n, c.alpha, da.p(), c.lda, dx.p(), c.incx, c.beta, dy.p(), c.incy),
                BO_CUDA_OK);
    } else {
      bo_kernel_args g{c.t, 0, 0, c.m, c.n, 0, c.alpha, c.beta, da.p(), c.lda, dx.p(), 0, dy.p(), 0, c.incx, c.incy};
      ASSERT_TRUE(k->can_implement(&g));
      run_entry(k, g);
    }
    ra = da.back();
    rx = dx.back();
    ry = dy.back();
  };
  Image ra = a, rx = x, ry = y;
  run(ra, rx, ry);
  EXPECT_TRUE(check_image(a, ra, {})) << "A";
  EXPECT_TRUE(check_image(x, rx, {})) << "x";
  EXPECT_TRUE(check_image(y, ry, out)) << "y";
  Image ra2 = a, rx2 = x, ry2 = y;
  run(ra2, rx2, ry2);
  EXPECT_TRUE(same_bits(ry, ry2));
}

std::vector<GemvCase> gemv_cases(char t, bool big) {
  std::vector<GemvCase> v;
  if (!big) {
    const int64_t sizes[] = {1, 2, 7, 32, 33, 97, 256, 1031};
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t pad : {0, 3}) {
          const int64_t inc[][2] = {{1, 1}, {-1, 2}, {3, -2}};
          const float ab[][2] = {{1.5f, 0.0f}, {-0.5f, 2.0f}, {0.0f, 0.5f}, {0.0f, 0.0f}};
          // Not the full product at every size: rotate increments and alpha/beta.
          size_t h = size_t(m * 131 + n * 7 + pad);
          auto& in = inc[h % 3];
          auto& s = ab[(h / 3) % 4];
          v.push_back({t, m, n, m + pad, in[0], in[1], s[0], s[1]});
          if (m <= 33 && n <= 33)
            for (auto& in2 : inc)
              for (auto& s2 : ab) v.push_back({t, m, n, m + pad, in2[0], in2[1], s2[0], s2[1]});
        }
  } else {
    v.push_back({t, 4096, 4096, 4099, 1, 1, 1.0f, 0.0f});
    v.push_back({t, 16384, 7, 16384, 1, -1, 2.0f, 1.0f});
    v.push_back({t, 7, 16384, 9, -2, 1, 1.0f, -1.0f});
    v.push_back({t, 100003, 3, 100003, 1, 1, 1.0f, 0.0f});
    v.push_back({t, 3, 100003, 3, 1, 1, 1.0f, 0.0f});
  }
  return v;
}

// A tuning space compiles many configurations of one template: each case runs on at least kShare of them
// (and each configuration on 1/stride of the cases, every kind of case included), so the suite stays
// minutes long while every configuration meets tails, increments and alpha/beta cases.
constexpr size_t kShare = 6;
bool shared_case(size_t config, size_t ncase, size_t nconfigs) {
  const size_t stride = (nconfigs + kShare - 1) / kShare;
  return stride <= 1 || ncase % stride == config % stride;
}

TEST(GpuSgemv, AllConfigs) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(BO_K_SGEMV);
  for (size_t ki = 0; ki < ks.size(); ++ki) {
    int ran = 0;
    for (char t : {'N', 'T'}) {
      const auto cases = gemv_cases(t, false);
      for (size_t ci = 0; ci < cases.size(); ++ci) {
        const GemvCase& c = cases[ci];
        bo_kernel_args g{c.t, 0, 0, c.m, c.n, 0, c.alpha, c.beta, nullptr, c.lda, nullptr, 0, nullptr, 0, 1, 1};
        if (!ks[ki]->can_implement(&g) || !shared_case(ki, ci, ks.size())) continue;
        check_gemv(Mode::kKernel, ks[ki], c);
        ++ran;
      }
    }
    EXPECT_GT(ran, 20) << ks[ki]->name;
  }
}
TEST(GpuSgemv, LargeAndShapes) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(BO_K_SGEMV);
  for (size_t ki = 0; ki < ks.size(); ++ki)
    for (char t : {'N', 'T'}) {
      const auto cases = gemv_cases(t, true);
      for (size_t ci = 0; ci < cases.size(); ++ci) {
        const GemvCase& c = cases[ci];
        bo_kernel_args g{c.t, 0, 0, c.m, c.n, 0, c.alpha, c.beta, nullptr, c.lda, nullptr, 0, nullptr, 0, 1, 1};
        if (ks[ki]->can_implement(&g) && shared_case(ki, ci, ks.size() / 2)) check_gemv(Mode::kKernel, ks[ki], c);
      }
    }
}
TEST(GpuSgemv, BetaZeroNeverReadsY) {
  GPU_TEST_PREAMBLE();
  for (char t : {'N', 'T'})
    for (Mode m : {Mode::kKernel, Mode::kModuleHost, Mode::kModuleDevice})
      for (const bo_kernel_entry* k : configs(BO_K_SGEMV)) {
        GemvCase c{t, 45, 37, 50, 2, -3, 1.0f, 0.0f};
        bo_kernel_args g{c.t, 0, 0, c.m, c.n, 0, c.alpha, c.beta, nullptr, c.lda, nullptr, 0, nullptr, 0, 1, 1};
        if (!k->can_implement(&g)) continue;
        check_gemv(m, m == Mode::kKernel ? k : nullptr, c, true);
        c.alpha = 0.0f;  // y = 0 exactly
        check_gemv(m, m == Mode::kKernel ? k : nullptr, c, true);
      }
}
TEST(GpuSgemv, Module) {
  GPU_TEST_PREAMBLE();
  for (Mode m : {Mode::kModuleHost, Mode::kModuleDevice})
    for (char t : {'N', 'T'}) {
      for (const GemvCase& c : gemv_cases(t, false))
        if (c.m % 5 == 2 || c.n == 1031) check_gemv(m, nullptr, c);
      check_gemv(m, nullptr, {t, 2000, 3000, 2001, -1, 2, 0.5f, 0.25f});
    }
}

// ---------------------------------------------------------------- strsv
struct TrsvCase {
  char uplo, trans, diag;
  int64_t n, lda, incx;
};

void check_trsv(Mode mode, const bo_kernel_entry* k, const TrsvCase& c) {
  SCOPED_TRACE(std::string(mode_name(mode)) + " " + (k ? k->name : "default") + " " + c.uplo + c.trans + c.diag +
               " n=" + std::to_string(c.n) + " lda=" + std::to_string(c.lda) + " incx=" + std::to_string(c.incx));
  const int64_t n = c.n;
  Image a(mspan(n, n, c.lda)), x(vspan(n, c.incx));
  // Diagonally dominant: off-diagonal entries U(-1,1)/n, diagonal 1.5..2.5 (or unit). The other
  // triangle, and the diagonal when diag = 'U', hold NaN: they must never be read.
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const bool stored = c.uplo == 'U' ? i < j : i > j;
      float v = NAN;
      if (stored) v = uni() / float(n);
      if (i == j && c.diag == 'N') v = uni(1.5f, 2.5f) * (uni() < 0 ? -1.0f : 1.0f);
      a.p()[i + j * c.lda] = v;
    }
  for (int64_t i = 0; i < n; ++i) x.p()[vi(i, n, c.incx)] = uni();
  // Reference in double (column-oriented, as the reference BLAS).
  std::vector<double> xr(n);
  for (int64_t i = 0; i < n; ++i) xr[i] = x.p()[vi(i, n, c.incx)];
  auto A = [&](int64_t i, int64_t j) -> double { return a.p()[i + j * c.lda]; };
  const bool unit = c.diag == 'U';
  const bool lower_eff = (c.uplo == 'L') == (c.trans == 'N');
  auto op = [&](int64_t i, int64_t j) { return c.trans == 'N' ? A(i, j) : A(j, i); };
  if (lower_eff) {
    for (int64_t i = 0; i < n; ++i) {
      double s = xr[i];
      for (int64_t j = 0; j < i; ++j) s -= op(i, j) * xr[j];
      xr[i] = unit ? s : s / op(i, i);
    }
  } else {
    for (int64_t i = n - 1; i >= 0; --i) {
      double s = xr[i];
      for (int64_t j = i + 1; j < n; ++j) s -= op(i, j) * xr[j];
      xr[i] = unit ? s : s / op(i, i);
    }
  }
  double xmax = 0;
  for (double v : xr) xmax = std::max(xmax, std::fabs(v));
  std::vector<Expect> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = {size_t(vi(i, n, c.incx)), xr[i], 8 * (n + 2) * kEps * xmax + kTiny};
  auto run = [&](Image& ra, Image& rx) {
    if (mode == Mode::kModuleHost) {
      EXPECT_EQ(module().mod->strsv(c.uplo, c.trans, c.diag, n, ra.p(), c.lda, rx.p(), c.incx), BO_CUDA_OK);
      return;
    }
    DevImage da(ra), dx(rx);
    if (mode == Mode::kModuleDevice) {
      EXPECT_EQ(module().mod->strsv(c.uplo, c.trans, c.diag, n, da.p(), c.lda, dx.p(), c.incx), BO_CUDA_OK);
    } else {
      bo_kernel_args g{c.uplo, c.trans, c.diag, 0, n, 0, 0, 0, da.p(), c.lda, nullptr, 0, dx.p(), 0, c.incx, 0};
      ASSERT_TRUE(k->can_implement(&g)) << "the test's can-check and the real operands disagree";
      run_entry(k, g);
    }
    ra = da.back();
    rx = dx.back();
  };
  Image ra = a, rx = x;
  run(ra, rx);
  EXPECT_TRUE(check_image(a, ra, {})) << "A";
  EXPECT_TRUE(check_image(x, rx, out)) << "x";
  Image ra2 = a, rx2 = x;
  run(ra2, rx2);
  EXPECT_TRUE(same_bits(rx, rx2));
}

bool trsv_can(const bo_kernel_entry* k, const TrsvCase& c) {
  bo_kernel_args g{c.uplo, c.trans, c.diag, 0, c.n, 0, 0, 0, fake_dev_ptr(), c.lda, nullptr, 0, nullptr, 0, c.incx, 0};
  return k->can_implement(&g);
}

TEST(GpuStrsv, AllConfigsAllCombinations) {
  GPU_TEST_PREAMBLE();
  for (const bo_kernel_entry* k : configs(BO_K_STRSV)) {
    int ran = 0;
    for (char uplo : {'U', 'L'})
      for (char trans : {'N', 'T', 'C'})
        for (char diag : {'N', 'U'})
          for (int64_t n : {1, 2, 31, 32, 33, 63, 64, 65, 100, 128, 129, 256, 257, 1000})
            for (int64_t lda : {n + (n % 3), (n + 3) / 4 * 4 + 4})
              for (int64_t incx : {1, -2}) {
                const TrsvCase c{uplo, trans, diag, n, lda, incx};
                if (!trsv_can(k, c)) continue;
                check_trsv(Mode::kKernel, k, c);
                ++ran;
              }
    EXPECT_GT(ran, 200) << k->name << " ran too few cases";
  }
}
TEST(GpuStrsv, Large) {
  GPU_TEST_PREAMBLE();
  const auto ks = configs(BO_K_STRSV);
  for (size_t ki = 0; ki < ks.size(); ++ki) {
    size_t ci = 0;
    for (char uplo : {'U', 'L'})
      for (char trans : {'N', 'T'})
        for (TrsvCase c : {TrsvCase{uplo, trans, 'N', 4099, 4100, 1}, TrsvCase{uplo, trans, 'N', 4100, 4104, 1}})
          if (trsv_can(ks[ki], c) && shared_case(ki, ci++, 2 * ks.size())) check_trsv(Mode::kKernel, ks[ki], c);
  }
  check_trsv(Mode::kKernel, configs(BO_K_STRSV)[0], {'L', 'N', 'U', 16384, 16384, -1});
  check_trsv(Mode::kKernel, configs(BO_K_STRSV)[0], {'U', 'T', 'N', 16384, 16385, 1});
}
TEST(GpuStrsv, Module) {
  GPU_TEST_PREAMBLE();
  for (Mode m : {Mode::kModuleHost, Mode::kModuleDevice})
    for (char uplo : {'U', 'L'})
      for (char trans : {'N', 'T'})
        for (char diag : {'N', 'U'}) check_trsv(m, nullptr, {uplo, trans, diag, 517, 520, trans == 'N' ? 1 : -3});
}

// ---------------------------------------------------------------- sgemm
struct GemmCase {
  char ta, tb;
  int64_t m, n, k, pad;
  float alpha, beta;
};

void check_gemm(Mode mode, const bo_kernel_entry* kern, const GemmCase& c, bool nan_in_c = false) {
  SCOPED_TRACE(std::string(mode_name(mode)) + " " + (kern ? kern->name : "default") + " " + c.ta + c.tb + " m=" +
               std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
               " pad=" + std::to_string(c.pad) + " alpha=" + std::to_string(c.alpha) +
               " beta=" + std::to_string(c.beta));
  const int64_t ar = c.ta == 'N' ? c.m : c.k, ac = c.ta == 'N' ? c.k : c.m;
  const int64_t br = c.tb == 'N' ? c.k : c.n, bc = c.tb == 'N' ? c.n : c.k;
  const int64_t lda = std::max<int64_t>(1, ar + c.pad), ldb = std::max<int64_t>(1, br + 2 * c.pad),
                ldc = std::max<int64_t>(1, c.m + c.pad);
  Image a(mspan(ar, ac, lda)), b(mspan(br, bc, ldb)), cc(mspan(c.m, c.n, ldc));
  for (int64_t j = 0; j < ac; ++j)
    for (int64_t i = 0; i < ar; ++i) a.p()[i + j * lda] = uni();
  for (int64_t j = 0; j < bc; ++j)
    for (int64_t i = 0; i < br; ++i) b.p()[i + j * ldb] = uni();
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) cc.p()[i + j * ldc] = nan_in_c ? NAN : uni();
  std::vector<Expect> out(size_t(c.m * c.n));
  parallel_for(c.n, [&](int64_t j) {
    std::vector<double> s(c.m, 0.0), sa(c.m, 0.0);
    if (c.alpha != 0.0f)
      for (int64_t l = 0; l < c.k; ++l) {
        const double bv = c.tb == 'N' ? b.p()[l + j * ldb] : b.p()[j + l * ldb];
        for (int64_t i = 0; i < c.m; ++i) {
          const double av = c.ta == 'N' ? a.p()[i + l * lda] : a.p()[l + i * lda];
          s[i] += av * bv;
          sa[i] += std::fabs(av * bv);
        }
      }
    for (int64_t i = 0; i < c.m; ++i) {
      const double c0 = c.beta != 0.0f ? double(c.beta) * cc.p()[i + j * ldc] : 0.0;
      out[size_t(i + j * c.m)] = {size_t(i + j * ldc), c.alpha * s[i] + c0,
                                  (c.k + 3) * kEps * (std::fabs(c.alpha) * sa[i] + std::fabs(c0)) + kTiny};
    }
  });
  auto run = [&](Image& ra, Image& rb, Image& rc) {
    if (mode == Mode::kModuleHost) {
      EXPECT_EQ(
          module().mod->sgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, ra.p(), lda, rb.p(), ldb, c.beta, rc.p(), ldc, 0.0),
          BO_CUDA_OK);
      return;
    }
    DevImage da(ra), db(rb), dc(rc);
    if (mode == Mode::kModuleDevice) {
      EXPECT_EQ(
          module().mod->sgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, da.p(), lda, db.p(), ldb, c.beta, dc.p(), ldc, 0.0),
          BO_CUDA_OK);
    } else {
      bo_kernel_args g{c.ta, c.tb, 0, c.m, c.n, c.k, c.alpha, c.beta, da.p(), lda, db.p(), ldb, dc.p(), ldc, 0, 0};
      ASSERT_TRUE(kern->can_implement(&g)) << "the test's can-check and the real operands disagree";
      run_entry(kern, g);
    }
    ra = da.back();
    rb = db.back();
    rc = dc.back();
  };
  Image ra = a, rb = b, rc = cc;
  run(ra, rb, rc);
  EXPECT_TRUE(check_image(a, ra, {})) << "A";
  EXPECT_TRUE(check_image(b, rb, {})) << "B";
  EXPECT_TRUE(check_image(cc, rc, out)) << "C";
}

// Whether the configuration runs these arguments, with the leading dimensions check_gemm uses and
// operand addresses aligned as the test's device images are (configurations with vector fast paths
// decline misaligned operands; another configuration runs those).
bool gemm_can(const bo_kernel_entry* k, const GemmCase& c) {
  const int64_t ar = c.ta == 'N' ? c.m : c.k, br = c.tb == 'N' ? c.k : c.n;
  const int64_t lda = std::max<int64_t>(1, ar + c.pad), ldb = std::max<int64_t>(1, br + 2 * c.pad),
                ldc = std::max<int64_t>(1, c.m + c.pad);
  float* p = const_cast<float*>(fake_dev_ptr());
  bo_kernel_args g{c.ta, c.tb, 0, c.m, c.n, c.k, c.alpha, c.beta, p, lda, p, ldb, p, ldc, 0, 0};
  return k->can_implement(&g);
}

TEST(GpuSgemm, AllConfigsAllTransposes) {
  GPU_TEST_PREAMBLE();
  // Odd sizes (tails, misaligned leading dimensions) and multiples of 4 (the aligned vector fast paths).
  const int64_t sizes[] = {1, 2, 5, 17, 64, 67, 128, 131, 257, 4, 36, 132, 260};
  for (const bo_kernel_entry* k : configs(BO_K_SGEMM)) {
    int ran = 0;
    for (char ta : {'N', 'T', 'C'})
      for (char tb : {'N', 'T', 'C'}) {
        size_t h = 0;
        for (int64_t m : sizes)
          for (int64_t n : sizes) {
            ++h;
            const int64_t kk = sizes[(h * 5) % 13] + (h % 4 == 0 || sizes[(h * 5) % 13] % 4 == 0 ? 0 : 1);
            const float ab[][2] = {{1.0f, 0.0f}, {-1.5f, 0.5f}, {0.0f, 2.0f}, {0.0f, 0.0f}, {2.0f, 1.0f}};
            const GemmCase c{ta, tb, m, n, kk, m % 4 == 0 ? int64_t(h % 2) * 4 : int64_t(h % 3), ab[h % 5][0],
                             ab[h % 5][1]};
            if (!gemm_can(k, c)) continue;
            check_gemm(Mode::kKernel, k, c);
            ++ran;
          }
      }
    EXPECT_GT(ran, 60) << k->name << " ran too few cases";
  }
}
TEST(GpuSgemm, TallWideAndK0) {
  GPU_TEST_PREAMBLE();
  for (const bo_kernel_entry* k : configs(BO_K_SGEMM))
    for (GemmCase c : {GemmCase{'N', 'N', 3001, 3, 129, 1, 1.0f, 0.0f}, GemmCase{'N', 'N', 3, 3001, 129, 0, 1.0f, 1.0f},
                       GemmCase{'N', 'N', 300, 200, 0, 2, 1.0f, 0.5f}, GemmCase{'N', 'N', 1, 1, 5000, 0, 1.0f, 0.0f},
                       GemmCase{'N', 'N', 77, 65, 1, 1, 1.0f, 0.0f}, GemmCase{'N', 'N', 3000, 4, 132, 0, 1.0f, 0.0f},
                       GemmCase{'N', 'N', 4, 3000, 132, 0, -1.0f, 1.0f}, GemmCase{'N', 'N', 300, 200, 0, 4, 1.0f, 0.5f}})
      for (char ta : {'N', 'T'})
        for (char tb : {'N', 'T'}) {
          c.ta = ta;
          c.tb = tb;
          if (gemm_can(k, c)) check_gemm(Mode::kKernel, k, c);
        }
}
TEST(GpuSgemm, BetaZeroNeverReadsC) {
  GPU_TEST_PREAMBLE();
  for (Mode m : {Mode::kKernel, Mode::kModuleHost, Mode::kModuleDevice})
    for (const bo_kernel_entry* k : configs(BO_K_SGEMM)) {
      GemmCase c{'N', 'T', 72, 45, 36, 0, 1.0f, 0.0f};
      if (m == Mode::kKernel && !gemm_can(k, c)) c = {'N', 'T', 70, 45, 33, 3, 1.0f, 0.0f};
      if (m == Mode::kKernel && !gemm_can(k, c)) continue;
      check_gemm(m, m == Mode::kKernel ? k : nullptr, c, true);
      c.alpha = 0.0f;
      check_gemm(m, m == Mode::kKernel ? k : nullptr, c, true);
      if (m != Mode::kKernel) break;
    }
}
TEST(GpuSgemm, Large) {
  GPU_TEST_PREAMBLE();
  for (const bo_kernel_entry* k : configs(BO_K_SGEMM))
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'}) {
        for (GemmCase c : {GemmCase{ta, tb, 1000, 1001, 999, 3, 1.0f, 0.5f}, GemmCase{ta, tb, 1024, 1000, 996, 4, 1.0f, 0.5f}})
          if (gemm_can(k, c)) check_gemm(Mode::kKernel, k, c);
      }
  check_gemm(Mode::kModuleHost, nullptr, {'N', 'N', 2048, 2048, 2048, 0, 1.0f, 0.0f});
  check_gemm(Mode::kModuleHost, nullptr, {'T', 'N', 2053, 2047, 2049, 5, -1.0f, 1.0f});
}
TEST(GpuSgemm, Module) {
  GPU_TEST_PREAMBLE();
  for (Mode m : {Mode::kModuleHost, Mode::kModuleDevice})
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'}) {
        check_gemm(m, nullptr, {ta, tb, 33, 65, 17, 3, 1.0f, 0.0f});
        check_gemm(m, nullptr, {ta, tb, 513, 257, 129, 1, 0.5f, -1.0f});
      }
}

// ---------------------------------------------------------------- misaligned operands
// Operands one float past a 16-byte boundary: the vector paths must notice and fall back.
struct Shift {
  Shift() { g_dev_shift = 1; }
  ~Shift() { g_dev_shift = 0; }
};
TEST(GpuMisaligned, AllRoutinesAllConfigs) {
  GPU_TEST_PREAMBLE();
  Shift shift;
  for (const bo_kernel_entry* k : configs(BO_K_SNRM2)) check_nrm2(Mode::kKernel, k, 100003, 1, 0);
  for (const bo_kernel_entry* k : configs(BO_K_SGEMV))
    for (char t : {'N', 'T'}) {
      GemvCase c{t, 1024, 515, 1024, 1, 1, 1.0f, 0.5f};
      bo_kernel_args g{c.t, 0, 0, c.m, c.n, 0, c.alpha, c.beta, nullptr, c.lda, nullptr, 0, nullptr, 0, 1, 1};
      if (k->can_implement(&g)) check_gemv(Mode::kKernel, k, c);
    }
  for (const bo_kernel_entry* k : configs(BO_K_SGEMM))
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'}) {
        GemmCase c{ta, tb, 256, 131, 64, 0, 1.0f, 0.0f};
        if (gemm_can(k, c)) check_gemm(Mode::kKernel, k, c);
      }
  for (const bo_kernel_entry* k : configs(BO_K_STRSV))
    if (trsv_can(k, {'L', 'T', 'N', 300, 300, 1})) check_trsv(Mode::kKernel, k, {'L', 'T', 'N', 300, 300, 1});
  check_gemm(Mode::kModuleDevice, nullptr, {'N', 'N', 256, 256, 256, 0, 1.0f, 1.0f});
}

// ---------------------------------------------------------------- registry, runtime
TEST(GpuRegistry, EveryRoutineHasNamedConfigs) {
  if (!module().reg) GTEST_SKIP() << "module not loadable: " << module().error;
  std::vector<std::string> names;
  for (int r = 0; r < 4; ++r) {
    auto v = configs(r);
    EXPECT_FALSE(v.empty()) << "routine " << r;
    for (auto* e : v) names.push_back(e->name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate configuration names";
  for (auto& n : names) std::printf("  config %s\n", n.c_str());
}

TEST(GpuRuntime, ManyThreadsShareTheModule) {
  GPU_TEST_PREAMBLE();
  std::vector<std::thread> th;
  std::atomic<int> bad{0};
  for (int t = 0; t < 12; ++t)
    th.emplace_back([&, t] {
      const int64_t n = 200 + t;
      std::vector<float> x(n);
      for (int i = 0; i < n; ++i) x[i] = float(i % 7) - 3.0f;
      double s = 0;
      for (float v : x) s += double(v) * v;
      for (int rep = 0; rep < 50; ++rep) {
        float r = 0;
        if (module().mod->snrm2(n, x.data(), 1, &r) != BO_CUDA_OK || std::fabs(r - std::sqrt(s)) > 1e-5 * std::sqrt(s))
          ++bad;
      }
    });
  for (auto& t : th) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(GpuRuntime, ForkedChildNeverTouchesCuda) {
  GPU_TEST_PREAMBLE();
  pid_t pid = fork();
  if (pid == 0) {
    module().mod->forked_child();
    float x[3] = {1, 2, 3}, r = -1;
    int st = module().mod->snrm2(3, x, 1, &r);
    _exit(st == BO_CUDA_FORKED_CHILD && r == -1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  float x[3] = {3, 4, 0}, r = 0;  // the parent is unaffected
  EXPECT_EQ(module().mod->snrm2(3, x, 1, &r), BO_CUDA_OK);
  EXPECT_FLOAT_EQ(r, 5.0f);
}

}  // namespace
