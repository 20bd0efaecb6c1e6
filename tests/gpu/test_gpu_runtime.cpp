// GPU tests across the routines: every configuration on operands one element past a 16-byte boundary (all four element
// types), the kernel registry's names and what select() picks for the complex routines (the module file only, no GPU),
// and the module's runtime shared by many threads and in a forked child (real types: the runtime does not depend on
// the element type). Without a CUDA device the GPU tests report SKIPPED.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "kernel_support.h"

using namespace gt;
using namespace gt::kernels;

namespace {

// ---------------------------------------------------------------- misaligned operands
// Operands one element past a 16-byte boundary (bo_cdouble: 16 bytes past a 256-byte one): the vector paths must notice
// and fall back.
struct Shift {
  Shift() { g_dev_shift = 1; }
  ~Shift() { g_dev_shift = 0; }
};
GPU_TYPED_SUITE_ALL(GpuMisaligned);

TYPED_TEST(GpuMisaligned, AllRoutinesAllConfigs) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_GEMM));
  Shift shift;
  const auto nk = configs(routine_of<T>(BO_KIND_NRM2));
  const bo_call ng = make_call(routine_of<T>(BO_KIND_NRM2), "", 0, 100003, 0, 0.0, 0.0, 0, 0, 0, 1);
  check_nrm2<T>(takers(nk, nullptr, [&](size_t ki) { return takes<T>(nk[ki], ng); }), 100003, 1, 0);
  const auto gv = configs(routine_of<T>(BO_KIND_GEMV));
  for (char t : transposes<T>()) {
    const GemvCase c{t, 1024, 515, 1024, 1, 1, sc<T>(kI, 1.0), 0.5};
    const auto rs = takers(gv, nullptr, [&](size_t ki) { return gemv_can<T>(gv[ki], c); });
    if (!rs.empty()) check_gemv<T>(rs, c);
  }
  const auto gm = configs(routine_of<T>(BO_KIND_GEMM));
  for (char ta : transposes<T>())
    for (char tb : transposes<T>()) {
      const GemmCase c{ta, tb, 256, 131, 64, 0, sc<T>({0.5, 1}, 1.0), 0.0};
      const auto rs = takers(gm, nullptr, [&](size_t ki) { return gemm_can<T>(gm[ki], c); });
      if (!rs.empty()) check_gemm<T>(rs, c);
    }
  const auto tv = configs(routine_of<T>(BO_KIND_TRSV));
  const TrsvCase tc{'L', is_complex_v<T> ? 'C' : 'T', 'N', 300, 300, 1};
  if (const auto rs = takers(tv, nullptr, [&](size_t ki) { return trsv_can<T>(tv[ki], tc); }); !rs.empty())
    check_trsv<T>(rs, tc);
  check_gemm<T>({kDevice}, {'N', 'N', 256, 256, 256, 0, 1.0, 1.0});
}

// ---------------------------------------------------------------- registry, runtime
// Every BLAS routine in every precision has named configurations, all names distinct, each entry's name saying its
// routine and precision ("dgemm_...", "cublas_dgemm", "cublas_zherk", "scnrm2_..."); LAPACK routines have none
// (cuSOLVER runs them). Real routines have own entries; complex ones only cuBLAS's (vendor 1: candidates the module
// may choose), except the norms: our own on the real kernels, cuBLAS's timed as the reference only (vendor 2: it gives
// Inf for a vector holding Inf and NaN). Needs the module file only (no GPU).
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
    const bool complex = bo_is_complex(bo_routine_precision(r)), norm = bo_routine_kind_of(r) == BO_KIND_NRM2;
    int own = 0;
    for (const bo_kernel_entry* e : v) {
      ASSERT_NE(e->name, nullptr);
      names.push_back(e->name);
      EXPECT_NE(names.back().find(bo_routine_name(r)), std::string::npos)
          << names.back() << " listed as " << bo_routine_name(r);
      EXPECT_NE(e->family, nullptr) << e->name;
      EXPECT_TRUE(e->can_implement && e->workspace_bytes && e->launch) << e->name;
      own += e->vendor == 0;
      if (complex && e->vendor) {
        EXPECT_EQ(e->vendor, norm ? 2 : 1) << e->name;
      }
      std::printf("  %s config %s%s\n", bo_routine_name(r), e->name, e->vendor ? " (vendor)" : "");
    }
    if (complex && !norm)
      EXPECT_EQ(own, 0) << bo_routine_name(r) << ": complex routines other than the norms run on cuBLAS only";
    else
      EXPECT_GT(own, 0) << "no own " << bo_routine_name(r) << " configuration";
  }
  for (size_t i = 0; i < module().reg->count; ++i) {
    const int r = module().reg->entries[i].routine;
    EXPECT_TRUE(r >= 0 && r < BO_R_COUNT) << module().reg->entries[i].name << ": routine " << r;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate configuration names";
}

// select() (the module's choice: a tuned table's, else the built-in one) picks cuBLAS's entry for a complex routine
// where cuBLAS's complex routines are available, and nothing where they are not (the module then declines and the core
// runs the call on the CPU library); our own entry for the complex norms in every case (cuBLAS's is the reference
// only). Needs the module file only: without a GPU cuBLAS cannot make a handle, which is the unavailable case.
TEST(GpuRegistry, ComplexRoutinesSelectCublasOrOurNorms) {
  if (!module().reg) GTEST_SKIP() << "module not loadable: " << module().error;
  const bo_kernel_registry* reg = module().reg;
  std::printf("  %s\n", reg->vendor_info());
  std::vector<bool> lapack(BO_R_COUNT, false);
#define BO_LAPACK_ENTRY(p, P, name, NAME, T) lapack[BO_R_##P##NAME] = true;
#include "routines/routine_list.h"
#undef BO_LAPACK_ENTRY
  for (int r = 0; r < BO_R_COUNT; ++r) {
    if (lapack[size_t(r)] || !bo_is_complex(bo_routine_precision(r))) continue;
    const bo_routine_kind kind = bo_routine_kind_of(r);
    const char* ops = kind == BO_KIND_GEMM   ? "NC"
                      : kind == BO_KIND_GEMV ? "C"
                      : kind == BO_KIND_TRSV ? "UCN"
                      : kind == BO_KIND_TRSM ? "LUCN"
                      : kind == BO_KIND_HERK ? "UC"
                      : kind == BO_KIND_SYRK ? "UT"
                                             : "";
    bo_call g = make_call(r, ops, 64, 64, 64, kI, 0.0, 64, 64, 64, 1, 1);
    g.a = g.b = g.c = fake_dev_ptr<bo_cdouble>();
    const int idx = reg->select(r, &g);
    SCOPED_TRACE(bo_routine_name(r));
    if (kind == BO_KIND_NRM2 || gpu_runs(r)) {
      ASSERT_GE(idx, 0);
      EXPECT_EQ(reg->entries[idx].routine, r) << reg->entries[idx].name;
      EXPECT_EQ(reg->entries[idx].vendor, kind == BO_KIND_NRM2 ? 0 : 1) << reg->entries[idx].name;
      EXPECT_TRUE(reg->entries[idx].can_implement(&g)) << reg->entries[idx].name;
    } else {
      EXPECT_EQ(idx, -1) << "chose " << reg->entries[idx].name << " without cuBLAS's complex routines";
    }
  }
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

// A call reports what it spent on one-time costs (cuda_module_api.h last_one_time_us): a new thread's first call
// creates its stream and buffers, a larger call grows them; the same calls again cost nothing one-time. The policy
// subtracts the report from what it learns, so a report on a steady call would hide real time from it. growth_us
// foretells the growth before such a call, and nothing once the buffers hold it.
TYPED_TEST(GpuRuntime, OneTimeCostsAreReportedOnlyWhenPaid) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  std::thread([] {
    const int routine = routine_of<T>(BO_KIND_NRM2);
    std::vector<T> x(int64_t(4) << 20, T(1));
    auto one_time_us = [&](int64_t n) {
      T r = 0;
      const bo_call c = nrm2_host_call(routine, n, x.data(), &r);
      EXPECT_EQ(module().mod->call(&c, 0.0), BO_CUDA_OK);
      EXPECT_NEAR(r, std::sqrt(double(n)), 1e-3 * std::sqrt(double(n)));
      return module().mod->last_one_time_us();
    };
    auto growth_us = [&](int64_t n) { return module().mod->growth_us(double(sizeof(T)) * double(n)); };
    EXPECT_GT(growth_us(1000), 0.0) << "a new thread: no buffers yet";
    EXPECT_GT(one_time_us(1000), 0.0) << "a new thread's first call: its stream and buffers";
    EXPECT_EQ(growth_us(1000), 0.0) << "the buffers hold the call now";
    EXPECT_EQ(one_time_us(1000), 0.0) << "the same call again";
    const int64_t big = int64_t(x.size());
    // 16-32 MiB pinned: milliseconds at the measured rate (0.1-5 ns a byte on any machine).
    EXPECT_GT(growth_us(big), 1e3) << "16-32 MiB more staging than any call before on this thread";
    EXPECT_LT(growth_us(big), 2e5);
    EXPECT_GT(one_time_us(big), 0.0) << "16-32 MiB more staging than any call before on this thread";
    EXPECT_EQ(growth_us(big), 0.0);
    EXPECT_EQ(one_time_us(big), 0.0) << "the same call again";
    EXPECT_EQ(one_time_us(1000), 0.0) << "a smaller call after a larger one";
  }).join();
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

// The start-up's link measurement (tens of MiB) lands near blasoffload-calibrate's (hundreds): the first run of a
// program without a calibration decides with it. Three rounds of each, alternating, compared by their medians: a
// shared host's memory bandwidth moves either measurement by a third from one second to the next (the lent H200:
// the calibration's staged rate read 21.8 to 30.5 GB/s in one process), which one pair would compare instead of the
// two methods. Each printed, with the start-up's time.
TEST(GpuRuntimeLink, TheStartUpsLinkMeasurementAgreesWithTheCalibrations) {
  GPU_TEST_PREAMBLE();
  std::vector<double> quick_h2d, quick_d2h, quick_staged, full_h2d, full_d2h, full_staged;
  for (int round = 0; round < 3; ++round) {
    bo_cuda_rates quick{}, full{};
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(module().mod->measure_link(&quick), BO_CUDA_OK);
    const double quick_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(module().mod->measure(&full), BO_CUDA_OK);
    std::printf("measure_link: %.1f / %.1f GB/s pinned, %.1f staged, in %.0f ms; measure: %.1f / %.1f, %.1f\n",
                quick.h2d_gbs, quick.d2h_gbs, quick.pageable_gbs, quick_ms, full.h2d_gbs, full.d2h_gbs,
                full.pageable_gbs);
    EXPECT_STREQ(quick.gpu, full.gpu);
    EXPECT_EQ(quick.call_overhead_us, 0.0);
    EXPECT_LT(quick_ms, 1000.0) << "the start-up's measurement must stay small beside the start-up itself";
    quick_h2d.push_back(quick.h2d_gbs);
    quick_d2h.push_back(quick.d2h_gbs);
    quick_staged.push_back(quick.pageable_gbs);
    full_h2d.push_back(full.h2d_gbs);
    full_d2h.push_back(full.d2h_gbs);
    full_staged.push_back(full.pageable_gbs);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  EXPECT_NEAR(median(quick_h2d), median(full_h2d), 0.15 * median(full_h2d));
  EXPECT_NEAR(median(quick_d2h), median(full_d2h), 0.15 * median(full_d2h));
  EXPECT_NEAR(median(quick_staged), median(full_staged), 0.3 * median(full_staged));
}

}  // namespace
