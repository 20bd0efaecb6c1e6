// GPU tests of the module's tiled, pipelined gemm engine for host operands, in both precisions (typed suites
// Pipeline/float and Pipeline/double: sgemm and dgemm through the module's call()): partial tiles, out-of-core
// schedules, the operand size picking the path, the hybrid CPU share and a GPU failure midway, each against a wide
// reference and each asserting through last_gemm_stats that the engine path it means to exercise really ran
// (pipeline_support.h: the bound, the knobs). Threads, several GPUs, registered memory, determinism and staging are
// test_pipeline_staging.cpp's. Without a CUDA device every test reports SKIPPED.
#include <string>
#include <utility>

#include "pipeline_support.h"

using namespace gt;
using namespace gt::pipe;

namespace {

GPU_TYPED_SUITE(Pipeline);

// ---------------------------------------------------------------- 1. partial tiles
// m, n, k not multiples of the tile (last row, column and corner tiles partial), all alpha/beta special cases.
// alpha == 0 has no operands to tile: the module may scale C on the direct path even with the pipeline forced, so
// there the test asserts what matters on any path, that A and B were never staged (BLAS does not read them).
template <typename T>
void partial_tiles(char ta, char tb, int64_t tile, int64_t m, int64_t n, int64_t k) {
  Knobs knobs(tile);
  const struct {
    double alpha, beta;
    bool nan_c;
  } cases[] = {{1.5f, -0.5f, false}, {1.0f, 0.0f, true}, {0.0f, 2.0f, false}, {0.0f, 0.0f, true}, {-1.0f, 1.0f, false}};
  for (const auto& x : cases) {
    const Gemm<T> g(ta, tb, m, n, k, x.alpha, x.beta, x.nan_c);
    SCOPED_TRACE(g.name());
    const Result<T> r = run(g);
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(gpu_only(r));
    if (x.alpha == 0.0f) {
      EXPECT_LE(r.st.bytes_h2d, x.beta != 0.0f ? double(sizeof(T)) * m * n : 0.0)
          << "alpha = 0 staged A or B " << describe(r.st);
      continue;
    }
    EXPECT_TRUE(pipeline_ran(g, r, tile));
    EXPECT_EQ(r.st.k_passes, 1) << "no memory limit: no K split " << describe(r.st);
    EXPECT_EQ(r.st.panel_uploads, cdiv(m, tile) + cdiv(n, tile))
        << "with no memory limit every A and B panel moves once " << describe(r.st);
  }
}

TYPED_TEST(Pipeline, PartialTiles_AllTransposes_tile37_tile64) {
  GPU_TEST_PREAMBLE();
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'}) {
      SCOPED_TRACE(std::string("transposes ") + ta + tb);
      partial_tiles<TypeParam>(ta, tb, 37, 101, 83, 59);
      partial_tiles<TypeParam>(ta, tb, 64, 200, 130, 300);
    }
}

// The path the stats report is the one taken: with the pipeline off, the direct path runs.
TYPED_TEST(Pipeline, Off_TakesDirectPath) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64, "off");
  const Gemm<T> g('N', 'T', 200, 130, 300, 1.5f, -0.5f, false);
  EXPECT_TRUE(direct_ran(g, run(g)));
}

// ---------------------------------------------------------------- 2. out of core

// The limits hold a few panel pairs but far fewer panels than the call has (and less than all of A or all of B
// plus one panel, so that no order of the tiles avoids moving a panel twice).
TYPED_TEST(Pipeline, OutOfCore_PanelEviction_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  for (const OocCase& c : {OocCase{'N', 'N', 640, 640, 512, 1.0f, 0.5f, false, "1M"},
                           OocCase{'T', 'N', 700, 450, 400, -1.0f, 0.0f, true, "600K"}}) {
    Knobs knobs(64);
    const Gemm<T> g(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.nan_c);
    SCOPED_TRACE(g.name() + " limit " + scaled_limit<T>(c.limit));
    const Result<T> all_fit = run(g);
    knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>(c.limit));
    const Result<T> r = run(g);
    std::printf("  %s limit %s: %s\n", g.name().c_str(), scaled_limit<T>(c.limit).c_str(), describe(r.st).c_str());
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 64));
    EXPECT_TRUE(gpu_only(r));
    const int64_t panels = cdiv(c.m, 64) + cdiv(c.n, 64);
    EXPECT_EQ(r.st.k_passes, 1) << "a panel pair fits in the limit: no K split " << describe(r.st);
    EXPECT_GT(r.st.panel_uploads, panels) << "the limit holds fewer panels than the call has " << describe(r.st);
    // Control: without the limit each panel moves once, and the same tiles run the same kernels.
    EXPECT_TRUE(correct(g, all_fit));
    EXPECT_EQ(all_fit.st.panel_uploads, panels) << describe(all_fit.st);
    EXPECT_TRUE(same_bits(all_fit.c, r.c)) << "evicting panels changed the result bits";
  }
}

// Not even one pair of full-K panels fits: K is split into passes accumulating into C (beta on the first only;
// beta = 0 with NaN in C checks that the first pass never reads C and the later ones add to it).
TYPED_TEST(Pipeline, OutOfCore_KPasses_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  for (const OocCase& c : {OocCase{'N', 'T', 200, 150, 4000, 1.0f, 0.0f, true, "1M"},
                           OocCase{'T', 'T', 190, 170, 3000, 0.5f, -0.5f, false, "1000000"},
                           OocCase{'N', 'N', 133, 201, 3500, -1.0f, 0.5f, false, "800K", Data::kIntegers}}) {
    Knobs knobs(64);
    knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>(c.limit));
    const Gemm<T> g(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.nan_c, c.data);
    SCOPED_TRACE(g.name() + " limit " + scaled_limit<T>(c.limit));
    const Result<T> r = run(g);
    std::printf("  %s limit %s: %s\n", g.name().c_str(), scaled_limit<T>(c.limit).c_str(), describe(r.st).c_str());
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 64));
    EXPECT_TRUE(gpu_only(r));
    EXPECT_GT(r.st.k_passes, 1) << describe(r.st);
    EXPECT_GE(r.st.panel_uploads, cdiv(c.m, 64) + cdiv(c.n, 64)) << describe(r.st);
  }
}

// In auto mode the operands' size picks the path (BLASOFFLOAD_PIPELINE_MIN_MB): 4 MiB of A, B and C (read and
// written) go through the pipeline above a 1 MiB threshold and are staged whole below a 64 MiB one.
TYPED_TEST(Pipeline, Auto_OperandSizePicksThePath_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64, "auto");
  const Gemm<T> g('N', 'N', 512, 512, 512, 1.0f, 0.25f, false);
  knobs.set("BLASOFFLOAD_PIPELINE_MIN_MB", "1");
  const Result<T> big = run(g);
  EXPECT_TRUE(correct(g, big));
  EXPECT_TRUE(pipeline_ran(g, big, 64));
  EXPECT_TRUE(gpu_only(big));
  knobs.set("BLASOFFLOAD_PIPELINE_MIN_MB", "64");
  EXPECT_TRUE(direct_ran(g, run(g)));
}

// ---------------------------------------------------------------- 3. hybrid
struct HybridCase {
  char ta, tb;
  double alpha, beta;
  bool nan_c;
};

// The CPU computes the trailing columns of a wide C (rows of a tall one) through cpu_call while the GPU computes
// the rest; both parts must meet exactly at the seam, which is not a tile boundary. The hybrid split runs in the
// pipeline, so a CPU share takes it in auto mode too.
template <typename T>
void hybrid(bool wide, const char* pipeline) {
  const int64_t m = wide ? 150 : 400, n = wide ? 400 : 150, k = 120, extent = wide ? n : m;
  const char tb = wide ? 'N' : 'T';
  const HybridCase cases[] = {{'N', tb, 1.0f, 0.0f, true}, {'T', tb, -1.0f, 0.5f, false}};
  Knobs knobs(64, pipeline);
  for (const HybridCase& c : cases) {
    int64_t cpu_part[2] = {0, 0};
    for (int s = 0; s < 2; ++s) {
      const double share = s == 0 ? 0.3 : 0.7;
      const Gemm<T> g(c.ta, c.tb, m, n, k, c.alpha, c.beta, c.nan_c);
      SCOPED_TRACE(g.name() + " cpu_share " + std::to_string(share));
      const Result<T> r = run(g, share);
      std::printf("  %s cpu_share %.1f: %s\n", g.name().c_str(), share, describe(r.st).c_str());
      EXPECT_TRUE(correct(g, r));
      EXPECT_TRUE(pipeline_ran(g, r, 64));
      EXPECT_GE(r.cpu_calls, 1) << "the CPU share never reached cpu_call " << describe(r.st);
      EXPECT_EQ(r.st.tiles_cpu, 0) << describe(r.st);
      const int64_t part = wide ? r.st.n_cpu_cols : r.st.m_cpu_rows;
      EXPECT_EQ(wide ? r.st.m_cpu_rows : r.st.n_cpu_cols, 0) << "split along the wrong dimension " << describe(r.st);
      EXPECT_GT(part, 0) << describe(r.st);
      EXPECT_LT(part, extent) << "all on the CPU: nothing of the hybrid was tested " << describe(r.st);
      EXPECT_NEAR(double(part) / double(extent), share, 0.2) << describe(r.st);
      cpu_part[s] = part;
    }
    EXPECT_LT(cpu_part[0], cpu_part[1]) << "a larger cpu_share must give the CPU more of C";
  }
}

// Wide C (trailing columns) and tall C (trailing rows) with the pipeline forced, and wide C in auto mode (a CPU share
// takes the pipeline).
TYPED_TEST(Pipeline, Hybrid_WideTallAndAutoMode_share30_70) {
  GPU_TEST_PREAMBLE();
  for (auto [wide, mode] : {std::pair<bool, const char*>{true, "always"}, {false, "always"}, {true, "auto"}}) {
    SCOPED_TRACE(std::string(wide ? "wide C, pipeline " : "tall C, pipeline ") + mode);
    hybrid<TypeParam>(wide, mode);
  }
}

// ---------------------------------------------------------------- 4. failure midway
// BLASOFFLOAD_TEST_FAIL_AFTER_TILES=N: the GPU "fails" after N tiles; tiles not written back are finished on the CPU
// and C must be complete and right (beta != 0 catches beta applied twice to a tile, NaN C with beta = 0 a tile
// read back before it was written).
TYPED_TEST(Pipeline, Failure_CpuFinishesTiles_after1_after3_tile37) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  const int64_t m = 200, n = 150, k = 90, total = cdiv(m, 37) * cdiv(n, 37);  // 30 tiles
  Knobs knobs(37);
  const struct {
    int fail_after;
    char ta, tb;
    double alpha, beta;
    bool nan_c;
  } cases[] = {{1, 'N', 'N', 1.0f, 0.75f, false}, {3, 'T', 'N', 1.0f, 0.0f, true}, {3, 'N', 'T', -1.0f, 1.0f, false}};
  for (const auto& c : cases) {
    knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", std::to_string(c.fail_after));
    const Gemm<T> g(c.ta, c.tb, m, n, k, c.alpha, c.beta, c.nan_c);
    SCOPED_TRACE(g.name() + " fail after " + std::to_string(c.fail_after));
    const Result<T> r = run(g);
    std::printf("  %s fail after %d: %s\n", g.name().c_str(), c.fail_after, describe(r.st).c_str());
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 37));
    EXPECT_GT(r.st.tiles_cpu, 0) << describe(r.st);
    EXPECT_GE(r.cpu_calls, 1) << describe(r.st);
    EXPECT_LE(r.st.tiles, c.fail_after) << "more tiles ran on the GPU than were issued before the failure "
                                        << describe(r.st);
    EXPECT_GE(r.st.tiles_cpu, total - c.fail_after)
        << "tiles never issued must be finished on the CPU " << describe(r.st);
    EXPECT_LE(r.st.tiles_cpu, total) << describe(r.st);
  }
  // The hook counts the tiles of a call: past the call's last tile it never fires.
  knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", "1000");
  {
    const Gemm<T> g('N', 'N', m, n, k, 1.0f, 0.5f, false);
    const Result<T> r = run(g);
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 37));
    EXPECT_TRUE(gpu_only(r));
  }
  // Not sticky: the next call runs on the GPU again.
  knobs.unset("BLASOFFLOAD_TEST_FAIL_AFTER_TILES");
  const Gemm<T> g('T', 'T', m, n, k, 1.0f, 0.5f, false);
  const Result<T> r = run(g);
  EXPECT_TRUE(correct(g, r));
  EXPECT_TRUE(pipeline_ran(g, r, 37));
  EXPECT_TRUE(gpu_only(r));
  EXPECT_EQ(r.st.tiles, total) << describe(r.st);
}

// A failure in the first K pass, and one in the second, when the C tiles already written hold partial sums: the CPU
// must finish with the right beta for each part.
TYPED_TEST(Pipeline, Failure_DuringKPasses_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  const int64_t m = 200, n = 150, k = 4000, per_pass = cdiv(m, 64) * cdiv(n, 64);  // 12 tiles a pass
  Knobs knobs(64);
  knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>("1M"));
  const struct {
    int64_t fail_after;
    char ta, tb;
    double beta;
    bool nan_c;
    Data data;
  } cases[] = {{3, 'N', 'N', 0.5f, false, Data::kRandom},
               {per_pass + 2, 'T', 'N', 0.0f, true, Data::kRandom},
               {per_pass + 2, 'N', 'T', -1.0f, false, Data::kIntegers}};
  for (const auto& c : cases) {
    knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", std::to_string(c.fail_after));
    const Gemm<T> g(c.ta, c.tb, m, n, k, 1.0f, c.beta, c.nan_c, c.data);
    SCOPED_TRACE(g.name() + " fail after " + std::to_string(c.fail_after));
    const Result<T> r = run(g);
    std::printf("  %s fail after %lld: %s\n", g.name().c_str(), (long long)c.fail_after, describe(r.st).c_str());
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 64));
    EXPECT_GT(r.st.k_passes, 1) << describe(r.st);
    EXPECT_GT(r.st.tiles_cpu, 0) << "the hook did not fire " << describe(r.st);
    EXPECT_GE(r.cpu_calls, 1) << describe(r.st);
    if (c.fail_after > per_pass) {
      EXPECT_GE(r.st.tiles, per_pass) << "the first pass should have completed on the GPU " << describe(r.st);
    }
  }
}

// A failure while the CPU computes its hybrid share: both CPU parts, and the GPU tiles, must fit together.
TYPED_TEST(Pipeline, Failure_WithHybridShare_tile37) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(37);
  knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", "1");
  const Gemm<T> g('N', 'T', 120, 300, 80, 1.0f, 0.5f, false);
  const Result<T> r = run(g, 0.3);
  std::printf("  %s cpu_share 0.3 fail after 1: %s\n", g.name().c_str(), describe(r.st).c_str());
  EXPECT_TRUE(correct(g, r));
  EXPECT_TRUE(pipeline_ran(g, r, 37));
  EXPECT_GT(r.st.n_cpu_cols, 0) << describe(r.st);
  EXPECT_GT(r.st.tiles_cpu, 0) << describe(r.st);
  EXPECT_GE(r.cpu_calls, 2) << "one for the share, at least one for the unfinished tiles " << describe(r.st);
}

}  // namespace
