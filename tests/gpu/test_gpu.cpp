// GPU tests of nrm2, gemv, trsv and gemm in all four element types (float, double, bo_cfloat, bo_cdouble): every
// registered kernel configuration (through the registry, on device memory) and the module's call() (host operands
// staged by the runtime, and device operands used in place) against references accumulated in a wider type
// (Real<T>::Acc), with guard zones around every operand and poisoned outputs. One typed test per routine kind, run for
// each type (complex: cuBLAS's entries, and our own norms). Each case's data and reference are made once and run on
// every runner that takes the case (the references of the double suites accumulate in long double, which costs several
// times a double one). Without a CUDA device every test reports SKIPPED. The cases, their checks and error bounds:
// kernel_support.h; misaligned operands, the registry and the runtime: test_gpu_runtime.cpp.
#include <algorithm>
#include <vector>

#include "kernel_support.h"

using namespace gt;
using namespace gt::kernels;

namespace {

// ---------------------------------------------------------------- nrm2
GPU_TYPED_SUITE_ALL(GpuNrm2);

// The entries that take a vector of n elements at stride incx (our complex norms take incx >= 1; cuBLAS's none when
// it is missing).
template <typename T>
std::vector<Runner> nrm2_takers(int64_t n, int64_t incx, std::vector<int>* ran = nullptr) {
  const auto ks = configs(routine_of<T>(BO_KIND_NRM2));
  const bo_call g = make_call(routine_of<T>(BO_KIND_NRM2), "", 0, n, 0, 0.0, 0.0, 0, 0, 0, incx);
  return takers(ks, ran, [&](size_t ki) { return takes<T>(ks[ki], g); });
}
// Kinds of data (check_nrm2): 6 real, 7 complex (Inf and NaN in one element).
template <typename T>
constexpr int kNrm2Kinds = is_complex_v<T> ? 7 : 6;

TYPED_TEST(GpuNrm2, AllConfigs) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_NRM2));
  const auto ks = configs(routine_of<T>(BO_KIND_NRM2));
  std::vector<int> ran(ks.size());
  for (int64_t n : {1, 2, 3, 31, 1000, 1027, 65537, 1000003})
    for (int64_t incx : {1, 3}) {
      const auto rs = nrm2_takers<T>(n, incx, &ran);
      ASSERT_FALSE(rs.empty()) << "no entry takes n = " << n << ", incx = " << incx;
      for (int kind = 0; kind < kNrm2Kinds<T>; ++kind)
        if (kind == 0 || n > 2) check_nrm2<T>(rs, n, incx, kind);
    }
  // Our entries must take cases; cuBLAS's take all of them or, without cuBLAS, none.
  for (size_t ki = 0; ki < ks.size(); ++ki)
    if (!ks[ki]->vendor) {
      EXPECT_GT(ran[ki], 0) << ks[ki]->name << " took no case";
    }
}
TYPED_TEST(GpuNrm2, Large) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_NRM2));
  check_nrm2<T>(nrm2_takers<T>((1 << 24) + 5, 1), (1 << 24) + 5, 1, 0);
}
TYPED_TEST(GpuNrm2, Module) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_NRM2));
  for (int64_t n : {1, 7, 4099, 300001})
    for (int64_t incx : {1, 2})
      for (int kind : {0, 1, 2, 3, 4, 6})
        if (kind < kNrm2Kinds<T>) check_nrm2<T>({kHost, kDevice}, n, incx, kind);
}

// ---------------------------------------------------------------- gemv
template <typename T>
std::vector<GemvCase> gemv_cases(char t, bool big) {
  std::vector<GemvCase> v;
  if (!big) {
    const int64_t sizes[] = {1, 2, 7, 32, 33, 97, 256, 1031};
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t pad : {0, 3}) {
          const int64_t inc[][2] = {{1, 1}, {-1, 2}, {3, -2}};
          // Complex: alpha = i, general complex scalars, alpha = 0 with a complex beta.
          const Scalar ab[][2] = {{sc<T>(kI, 1.5), 0.0},
                                  {sc<T>({-0.5, 0.75}, -0.5), sc<T>({2, -1}, 2.0)},
                                  {0.0, sc<T>({0.5, 0.5}, 0.5)},
                                  {0.0, 0.0}};
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
    v.push_back({t, 4096, 4096, 4099, 1, 1, sc<T>(kI, 1.0), 0.0});
    v.push_back({t, 16384, 7, 16384, 1, -1, sc<T>({2, 1}, 2.0), 1.0});
    v.push_back({t, 7, 16384, 9, -2, 1, 1.0, sc<T>({-1, 0.5}, -1.0)});
    v.push_back({t, 100003, 3, 100003, 1, 1, 1.0, 0.0});
    v.push_back({t, 3, 100003, 3, 1, 1, sc<T>({0, -1}, 1.0), 0.0});
  }
  return v;
}
// m or n = 0 (BLAS: y unchanged whatever beta): for the registry entries of the complex routines, cuBLAS's, whose
// contract is BLAS's (the core answers such calls itself and never hands them to the module).
template <typename T>
std::vector<GemvCase> gemv_zero_cases(char t) {
  if constexpr (!is_complex_v<T>) return {};
  return {{t, 0, 5, 1, 1, 1, kI, 0.5}, {t, 5, 0, 5, -1, 2, kI, 0.0}, {t, 0, 0, 1, 1, 1, 1.0, 1.0}};
}

GPU_TYPED_SUITE_ALL(GpuGemv);

TYPED_TEST(GpuGemv, AllConfigs) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMV));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMV));
  std::vector<int> ran(ks.size());
  for (char t : transposes<T>()) {
    auto cases = gemv_cases<T>(t, false);
    for (const GemvCase& z : gemv_zero_cases<T>(t)) cases.push_back(z);
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const auto rs =
          takers(ks, &ran, [&](size_t ki) { return gemv_can<T>(ks[ki], cases[ci]) && shared_case(ki, ci, ks.size()); });
      if (!rs.empty()) check_gemv<T>(rs, cases[ci]);
    }
  }
  for (size_t ki = 0; ki < ks.size(); ++ki) EXPECT_GT(ran[ki], 20) << ks[ki]->name;
}
TYPED_TEST(GpuGemv, LargeAndShapes) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMV));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMV));
  for (char t : transposes<T>()) {
    const auto cases = gemv_cases<T>(t, true);
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const auto rs = takers(
          ks, nullptr, [&](size_t ki) { return gemv_can<T>(ks[ki], cases[ci]) && shared_case(ki, ci, ks.size() / 2); });
      if (!rs.empty()) check_gemv<T>(rs, cases[ci]);
    }
  }
}
TYPED_TEST(GpuGemv, BetaZeroNeverReadsY) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMV));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMV));
  for (char t : transposes<T>()) {
    GemvCase c{t, 45, 37, 50, 2, -3, sc<T>(kI, 1.0), 0.0};
    auto rs = takers(ks, nullptr, [&](size_t ki) { return gemv_can<T>(ks[ki], c); });
    rs.push_back(kHost);
    rs.push_back(kDevice);
    check_gemv<T>(rs, c, true);
    c.alpha = 0.0;  // y = 0 exactly
    check_gemv<T>(rs, c, true);
  }
}
// A NaN in one row of op(A) and an Inf in another reach only their own element of y; with alpha = 0 neither is read.
TYPED_TEST(GpuGemv, NanAndInfInAStayInTheirRow) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMV));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMV));
  for (char t : transposes<T>())
    for (GemvCase c : {GemvCase{t, 45, 37, 50, 2, -3, sc<T>({0.5, -1}, 1.5), sc<T>(kI, 0.5)},
                       GemvCase{t, 300, 257, 301, 1, 1, 1.0, 0.0}, GemvCase{t, 64, 64, 64, 1, 1, 0.0, 0.25}}) {
      auto rs = takers(ks, nullptr, [&](size_t ki) { return gemv_can<T>(ks[ki], c); });
      rs.push_back(kHost);
      rs.push_back(kDevice);
      check_gemv<T>(rs, c, false, true);
    }
}
TYPED_TEST(GpuGemv, Module) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMV));
  for (char t : transposes<T>()) {
    for (const GemvCase& c : gemv_cases<T>(t, false))
      if (c.m % 5 == 2 || c.n == 1031) check_gemv<T>({kHost, kDevice}, c);
    check_gemv<T>({kHost, kDevice}, {t, 2000, 3000, 2001, -1, 2, sc<T>({0.5, 0.5}, 0.5), sc<T>({0.25, -1}, 0.25)});
  }
}

// ---------------------------------------------------------------- trsv
GPU_TYPED_SUITE_ALL(GpuTrsv);

TYPED_TEST(GpuTrsv, AllConfigsAllCombinations) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_TRSV));
  const auto ks = configs(routine_of<T>(BO_KIND_TRSV));
  std::vector<int> ran(ks.size());
  std::vector<int64_t> ns = {1, 2, 31, 32, 33, 63, 64, 65, 100, 128, 129, 256, 257, 1000};
  // n = 0 (nothing written): the complex routines' entries only (see gemv_zero_cases).
  if (is_complex_v<T>) ns.insert(ns.begin(), 0);
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T', 'C'})
      for (char diag : {'N', 'U'})
        for (int64_t n : ns)
          for (int64_t lda : {std::max<int64_t>(1, n + (n % 3)), (n + 3) / 4 * 4 + 4})
            for (int64_t incx : {1, -2}) {
              const TrsvCase c{uplo, trans, diag, n, lda, incx};
              const auto rs = takers(ks, &ran, [&](size_t ki) { return trsv_can<T>(ks[ki], c); });
              if (!rs.empty()) check_trsv<T>(rs, c);
            }
  for (size_t ki = 0; ki < ks.size(); ++ki) EXPECT_GT(ran[ki], 200) << ks[ki]->name << " ran too few cases";
}
TYPED_TEST(GpuTrsv, Large) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_TRSV));
  const auto ks = configs(routine_of<T>(BO_KIND_TRSV));
  ASSERT_FALSE(ks.empty());
  // Case ci runs on the entries ki with ci % stride == ki % stride among those that take it (each entry counts its
  // own cases: an entry that declines one does not shift the others').
  std::vector<size_t> seen(ks.size());
  for (char uplo : {'U', 'L'})
    for (char trans : transposes<T>())
      for (TrsvCase c : {TrsvCase{uplo, trans, 'N', 4099, 4100, 1}, TrsvCase{uplo, trans, 'N', 4100, 4104, 1}}) {
        const auto rs = takers(ks, nullptr, [&](size_t ki) {
          return trsv_can<T>(ks[ki], c) && shared_case(ki, seen[ki]++, 2 * ks.size());
        });
        if (!rs.empty()) check_trsv<T>(rs, c);
      }
  // Order 16384 on the first entry that takes it.
  for (const TrsvCase c :
       {TrsvCase{'L', 'N', 'U', 16384, 16384, -1}, TrsvCase{'U', is_complex_v<T> ? 'C' : 'T', 'N', 16384, 16385, 1}}) {
    const auto rs = takers(ks, nullptr, [&](size_t ki) { return trsv_can<T>(ks[ki], c); });
    ASSERT_FALSE(rs.empty()) << "no entry takes n = 16384";
    check_trsv<T>({rs[0]}, c);
  }
}
TYPED_TEST(GpuTrsv, Module) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_TRSV));
  for (char uplo : {'U', 'L'})
    for (char trans : transposes<T>())
      for (char diag : {'N', 'U'})
        check_trsv<T>({kHost, kDevice}, {uplo, trans, diag, 517, 520, trans == 'N' ? 1 : -3});
}

// ---------------------------------------------------------------- gemm
GPU_TYPED_SUITE_ALL(GpuGemm);

TYPED_TEST(GpuGemm, AllConfigsAllTransposes) {
  using T = TypeParam;
  constexpr bool cx = is_complex_v<T>;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  // Odd sizes (tails, misaligned leading dimensions) and multiples of 4 (the aligned vector fast paths).
  const int64_t sizes[] = {1, 2, 5, 17, 64, 67, 128, 131, 257, 4, 36, 132, 260};
  const auto ks = configs(routine_of<T>(BO_KIND_GEMM));
  std::vector<int> ran(ks.size());
  for (char ta : {'N', 'T', 'C'})
    for (char tb : {'N', 'T', 'C'}) {
      size_t h = 0;
      for (int64_t m : sizes)
        for (int64_t n : sizes) {
          ++h;
          const int64_t kk = sizes[(h * 5) % 13] + (h % 4 == 0 || sizes[(h * 5) % 13] % 4 == 0 ? 0 : 1);
          const Scalar ab[][2] = {{sc<T>(kI, 1.0), 0.0},
                                  {sc<T>({-1.5, 0.5}, -1.5), sc<T>({0.5, -1}, 0.5)},
                                  {0.0, sc<T>({0, 2}, 2.0)},
                                  {0.0, 0.0},
                                  {2.0, 1.0}};
          const GemmCase c{ta,           tb,          m, n, kk, m % 4 == 0 ? int64_t(h % 2) * 4 : int64_t(h % 3),
                           ab[h % 5][0], ab[h % 5][1]};
          const auto rs = takers(ks, &ran, [&](size_t ki) { return gemm_can<T>(ks[ki], c); });
          if (!rs.empty()) check_gemm<T>(rs, c, false, false, cx);
        }
      // m, n or k = 0 (nothing written; k = 0: C = beta C): cuBLAS's entries of the complex routines (see
      // gemv_zero_cases; the module takes k = 0, in TallWideAndK0).
      if constexpr (cx)
        for (const GemmCase& c :
             {GemmCase{ta, tb, 0, 7, 5, 1, kI, 0.5}, GemmCase{ta, tb, 7, 0, 5, 1, kI, 0.5},
              GemmCase{ta, tb, 7, 5, 0, 1, kI, {0.5, -0.5}}, GemmCase{ta, tb, 0, 0, 0, 0, 1.0, 0.0}})
          if (const auto rs = takers(ks, &ran, [&](size_t ki) { return gemm_can<T>(ks[ki], c); }); !rs.empty())
            check_gemm<T>(rs, c, false, false, true);
    }
  for (size_t ki = 0; ki < ks.size(); ++ki) EXPECT_GT(ran[ki], 60) << ks[ki]->name << " ran too few cases";
}
TYPED_TEST(GpuGemm, TallWideAndK0) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMM));
  const Scalar one = sc<T>({0.5, -0.5}, 1.0), half = sc<T>({0, 0.5}, 0.5);
  for (GemmCase c : {GemmCase{'N', 'N', 3001, 3, 129, 1, one, 0.0}, GemmCase{'N', 'N', 3, 3001, 129, 0, 1.0, 1.0},
                     GemmCase{'N', 'N', 300, 200, 0, 2, 1.0, half}, GemmCase{'N', 'N', 1, 1, 5000, 0, one, 0.0},
                     GemmCase{'N', 'N', 77, 65, 1, 1, 1.0, 0.0}, GemmCase{'N', 'N', 3000, 4, 132, 0, 1.0, 0.0},
                     GemmCase{'N', 'N', 4, 3000, 132, 0, -1.0, 1.0}, GemmCase{'N', 'N', 300, 200, 0, 4, one, half}})
    for (char ta : transposes<T>())
      for (char tb : transposes<T>()) {
        c.ta = ta;
        c.tb = tb;
        auto rs = takers(ks, nullptr, [&](size_t ki) { return gemm_can<T>(ks[ki], c); });
        if (c.k == 0) {  // k = 0 with beta != 1 reaches the module too: C = beta C
          rs.push_back(kHost);
          rs.push_back(kDevice);
        }
        if (!rs.empty()) check_gemm<T>(rs, c, false, false, is_complex_v<T>);
      }
}
TYPED_TEST(GpuGemm, BetaZeroNeverReadsC) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  // The aligned case on every entry that takes it and the module; a misaligned one on the entries that take only it.
  const auto ks = configs(routine_of<T>(BO_KIND_GEMM));
  std::vector<char> done(ks.size(), 0);
  for (GemmCase c : {GemmCase{'N', 'T', 72, 45, 36, 0, sc<T>({0.5, -1}, 1.0), 0.0},
                     GemmCase{is_complex_v<T> ? 'C' : 'N', 'T', 70, 45, 33, 3, 1.0, 0.0}}) {
    auto rs = takers(ks, nullptr, [&](size_t ki) { return !done[ki] && gemm_can<T>(ks[ki], c); });
    for (const Runner& r : rs) done[std::find(ks.begin(), ks.end(), r.e) - ks.begin()] = 1;
    if (c.pad == 0) {
      rs.push_back(kHost);
      rs.push_back(kDevice);
    }
    if (rs.empty()) continue;
    check_gemm<T>(rs, c, true);
    c.alpha = 0.0;
    check_gemm<T>(rs, c, true);
  }
}
// A NaN in row i0 of op(A) and an Inf in column j1 of op(B) reach row i0 and column j1 of C only; with alpha = 0
// neither is read.
TYPED_TEST(GpuGemm, NanAndInfReachOnlyTheirRowAndColumn) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMM));
  for (char ta : transposes<T>())
    for (char tb : transposes<T>())
      for (GemmCase c : {GemmCase{ta, tb, 33, 65, 17, 3, sc<T>({-0.5, 1}, 1.5), sc<T>(kI, 0.5)},
                         GemmCase{ta, tb, 132, 67, 129, 0, 1.0, 0.0}, GemmCase{ta, tb, 64, 64, 64, 0, 0.0, 0.5}}) {
        auto rs = takers(ks, nullptr, [&](size_t ki) { return gemm_can<T>(ks[ki], c); });
        rs.push_back(kHost);
        rs.push_back(kDevice);
        check_gemm<T>(rs, c, false, true);
      }
}
TYPED_TEST(GpuGemm, Large) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  const auto ks = configs(routine_of<T>(BO_KIND_GEMM));
  // Four transpose pairs: real N/T x N/T; complex N N, C T, T C, C C.
  const char pairs[2][4][2] = {{{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}},
                               {{'N', 'N'}, {'C', 'T'}, {'T', 'C'}, {'C', 'C'}}};
  for (const auto& p : pairs[is_complex_v<T>])
    for (GemmCase c : {GemmCase{p[0], p[1], 1000, 1001, 999, 3, sc<T>(kI, 1.0), 0.5},
                       GemmCase{p[0], p[1], 1024, 1000, 996, 4, 1.0, sc<T>({0.5, 0.25}, 0.5)}}) {
      const auto rs = takers(ks, nullptr, [&](size_t ki) { return gemm_can<T>(ks[ki], c); });
      if (!rs.empty()) check_gemm<T>(rs, c, false, false, is_complex_v<T>);
    }
  check_gemm<T>({kHost}, {'N', 'N', 2048, 2048, 2048, 0, 1.0, 0.0});
  check_gemm<T>({kHost}, {is_complex_v<T> ? 'C' : 'T', 'N', 2053, 2047, 2049, 5, sc<T>({-1, 0.5}, -1.0), 1.0});
}
TYPED_TEST(GpuGemm, Module) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  for (char ta : transposes<T>())
    for (char tb : transposes<T>()) {
      check_gemm<T>({kHost, kDevice}, {ta, tb, 33, 65, 17, 3, sc<T>(kI, 1.0), 0.0}, false, false, is_complex_v<T>);
      check_gemm<T>({kHost, kDevice}, {ta, tb, 513, 257, 129, 1, 0.5, sc<T>({-1, 0.5}, -1.0)}, false, false,
                    is_complex_v<T>);
    }
}

}  // namespace
