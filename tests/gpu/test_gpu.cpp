// GPU tests of nrm2, gemv, trsv and gemm in both precisions: every registered kernel configuration (through the
// registry, on device memory) and the module's call() (host operands staged by the runtime, and device operands used
// in place) against references accumulated in a wider type (Real<T>::Acc), with guard zones around every operand and
// poisoned outputs. One typed test per routine kind, run for float and double. Each case's data and reference are made
// once and run on every runner that takes the case (the references of the double suites accumulate in long double,
// which costs several times a double one). Without a CUDA device every test reports SKIPPED. The cases, their checks
// and error bounds: kernel_support.h; misaligned operands, the registry and the runtime: test_gpu_runtime.cpp.
#include <algorithm>
#include <vector>

#include "kernel_support.h"

using namespace gt;
using namespace gt::kernels;

namespace {

// ---------------------------------------------------------------- nrm2
GPU_TYPED_SUITE(GpuNrm2);

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

}  // namespace
