// GPU tests of the module's tiled, pipelined gemm engine for host operands (partial tiles, out-of-core schedules,
// the hybrid CPU share, a GPU failure midway, 16 threads on shared operands, several GPUs, registered host memory,
// determinism), in both precisions (typed suites .../float and .../double: sgemm and dgemm through the module's
// call()), each against a reference accumulated in Real<T>::Acc and each asserting through last_gemm_stats that the
// engine path it means to exercise really ran. Without a CUDA device every test reports SKIPPED.
//
// Error bound (as in test_gpu.cpp, u = unit roundoff of the element type, u_acc the reference's):
//   |c_ij - ref| <= ((k+3) u + (k+2) u_acc) (|alpha| sum_l |a_il b_lj| + |beta c_ij|) + tiny
// Every element of C's image outside its m x n window (the rows between m and ldc, the guard zones) must be
// bit-identical afterwards, and A and B must not change at all.
//
// The engine's knobs are environment variables the module reads at each call (the host services' config is getenv
// here); a test sets the ones it needs through Knobs, which clears the others and restores them all at its end.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_test_support.h"

using namespace gt;

namespace {

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------- knobs
constexpr const char* kKnobNames[] = {"BLASOFFLOAD_PIPELINE",
                                      "BLASOFFLOAD_PIPELINE_MIN_MB",
                                      "BLASOFFLOAD_TILE",
                                      "BLASOFFLOAD_DEVICE_MEMORY_LIMIT",
                                      "BLASOFFLOAD_PINNED_MB",
                                      "BLASOFFLOAD_DEVICES",
                                      "BLASOFFLOAD_STAGING_THREADS",
                                      "BLASOFFLOAD_PIN_HOST",
                                      "BLASOFFLOAD_TEST_FAIL_AFTER_TILES"};

// The engine's knobs for one test. All are cleared first, so that a knob left in the environment of the run cannot
// change the schedule a test asserts on. Only the main thread changes them, and only while no call is in flight:
// setenv races with the module's getenv.
class Knobs {
 public:
  // pipeline: BLASOFFLOAD_PIPELINE (nullptr: unset); tile > 0: BLASOFFLOAD_TILE. One device unless the test asks
  // for more, so that the exact tile and panel counts hold on a multi-GPU host too.
  explicit Knobs(int64_t tile, const char* pipeline = "always") {
    for (const char* k : kKnobNames) {
      const char* v = std::getenv(k);
      saved_.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(k);
    }
    if (pipeline) set("BLASOFFLOAD_PIPELINE", pipeline);
    if (tile > 0) set("BLASOFFLOAD_TILE", std::to_string(tile));
    set("BLASOFFLOAD_DEVICES", "0");
  }
  ~Knobs() {
    for (const auto& [k, v] : saved_)
      if (v)
        setenv(k.c_str(), v->c_str(), 1);
      else
        unsetenv(k.c_str());
  }
  Knobs(const Knobs&) = delete;
  Knobs& operator=(const Knobs&) = delete;

  void set(const char* key, const std::string& value) {
    // A knob outside the list would outlive the test.
    EXPECT_TRUE(std::any_of(std::begin(kKnobNames), std::end(kKnobNames), [&](const char* k) {
      return std::string(k) == key;
    })) << key;
    setenv(key, value.c_str(), 1);
  }
  void unset(const char* key) { unsetenv(key); }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A device memory limit written for float operands ("600K", "1M", "1000000"), scaled to T's element size: the same
// number of panels then fits, and a double call runs the schedule (panel evictions, K passes) its test asserts.
template <typename T>
std::string scaled_limit(const char* float_limit) {
  if (!*float_limit) return "";
  char* suffix = nullptr;
  const long long v = std::strtoll(float_limit, &suffix, 10);
  return std::to_string(v * static_cast<long long>(sizeof(T) / sizeof(float))) + suffix;
}

// ---------------------------------------------------------------- operands and reference
// kIntegers: -1, 0 or 1, so that every product and partial sum of k < 2^24 terms is exact in either precision in any
// order: the result must then be exact, where the error bound of random data grows with k until it hides whole
// missing terms.
enum class Data { kRandom, kIntegers };

template <typename T>
void fill_random(Image<T>& im, int64_t rows, int64_t cols, int64_t ld, Data data = Data::kRandom) {
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) im.p()[i + j * ld] = data == Data::kIntegers ? std::round(uni<T>()) : uni<T>();
}

// Appends to `out` what C = alpha op(A) op(B) + beta C must give for the m x n block `c` (at offset c_off of its
// image), with the error bound of each element.
template <typename T>
void reference(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda, const T* b,
               int64_t ldb, double beta, const T* c, int64_t ldc, size_t c_off, std::vector<Expect>& out) {
  using Acc = typename Real<T>::Acc;
  const size_t base = out.size();
  out.resize(base + size_t(m * n));
  const long double rel = (k + 3) * Real<T>::u + (k + 2) * Real<T>::u_acc;
  parallel_for(n, [&](int64_t j) {
    std::vector<Acc> s(size_t(m), 0), sa(size_t(m), 0);
    auto bv = [&](int64_t l) { return Acc(tb == 'N' ? b[l + j * ldb] : b[j + l * ldb]); };
    if (alpha != 0.0) {
      if (ta == 'N') {
        for (int64_t l = 0; l < k; ++l) {
          const Acc x = bv(l);
          for (int64_t i = 0; i < m; ++i) {
            const Acc p = Acc(a[i + l * lda]) * x;
            s[i] += p;
            sa[i] += std::fabs(p);
          }
        }
      } else {  // op(A) rows are columns of A: walk them contiguously (deep K would thrash the cache otherwise)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t l = 0; l < k; ++l) {
            const Acc p = Acc(a[l + i * lda]) * bv(l);
            s[i] += p;
            sa[i] += std::fabs(p);
          }
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      const Acc c0 = beta != 0.0 ? Acc(beta) * Acc(c[i + j * ldc]) : Acc(0);
      out[base + size_t(i + j * m)] = {c_off + size_t(i + j * ldc), Acc(alpha) * s[i] + c0,
                                       rel * (std::fabs(Acc(alpha)) * sa[i] + std::fabs(c0)) + tiny<T>()};
    }
  });
}

// One gemm on host operands: guarded images, leading dimensions larger than the rows (so that C has rows the call
// must not touch), A and B random, C random or NaN (beta == 0 must not read it), and the expected C. With
// Data::kIntegers (and alpha, beta powers of two) the expected C is exact and the bound zero.
template <typename T>
struct Gemm {
  char ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  int64_t lda, ldb, ldc;
  Image<T> a, b, c;
  std::vector<Expect> want;
  bool exact = false;

  Gemm(char ta_, char tb_, int64_t m_, int64_t n_, int64_t k_, double alpha_, double beta_, bool nan_c,
       Data data = Data::kRandom)
      : ta(ta_),
        tb(tb_),
        m(m_),
        n(n_),
        k(k_),
        alpha(alpha_),
        beta(beta_),
        lda(a_rows() + 3),
        ldb(b_rows() + 5),
        ldc(m_ + 7),
        a(mspan(a_rows(), a_cols(), lda)),
        b(mspan(b_rows(), b_cols(), ldb)),
        c(mspan(m, n, ldc)) {
    fill_random(a, a_rows(), a_cols(), lda, data);
    fill_random(b, b_rows(), b_cols(), ldb, data);
    fill_random(c, m, n, ldc, data);
    if (nan_c)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) c.p()[i + j * ldc] = NAN;
    reference(ta, tb, m, n, k, alpha, a.p(), lda, b.p(), ldb, beta, c.p(), ldc, 0, want);
    if (data == Data::kIntegers) {
      exact = true;
      for (Expect& e : want) e.bound = 0;
    }
  }
  int64_t a_rows() const { return ta == 'N' ? m : k; }
  int64_t a_cols() const { return ta == 'N' ? k : m; }
  int64_t b_rows() const { return tb == 'N' ? k : n; }
  int64_t b_cols() const { return tb == 'N' ? n : k; }
  std::string name() const {
    std::ostringstream o;
    o << ta << tb << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha << " beta=" << beta << " lda=" << lda
      << " ldb=" << ldb << " ldc=" << ldc << (exact ? " (integer data, exact)" : "");
    return o.str();
  }
};

// A call's images afterwards, what the engine says it did, and the cpu_call calls it made.
template <typename T>
struct Result {
  int status = -1;
  Image<T> a, b, c;
  bo_gemm_stats st{};
  int64_t cpu_calls = 0, cpu_bad_calls = 0;
};

// The gemm of T's precision as the core hands it to the module (host pointers).
template <typename T>
bo_call gemm_call(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda, const T* b,
                  int64_t ldb, double beta, T* c, int64_t ldc) {
  const char ops[] = {ta, tb, 0};
  return with_operands(make_call(routine_of<T>(BO_KIND_GEMM), ops, m, n, k, alpha, beta, lda, ldb, ldc), a, b, c);
}

template <typename T>
Result<T> run(const Gemm<T>& g, double cpu_share = 0.0) {
  Result<T> r{-1, g.a, g.b, g.c};
  const int64_t calls0 = cpu_calls().load(), bad0 = cpu_bad_calls().load();
  const bo_call call =
      gemm_call<T>(g.ta, g.tb, g.m, g.n, g.k, g.alpha, r.a.p(), g.lda, r.b.p(), g.ldb, g.beta, r.c.p(), g.ldc);
  r.status = module().mod->call(&call, cpu_share);
  EXPECT_EQ(module().mod->last_gemm_stats(&r.st), 0) << "no stats after a gemm on this thread";
  r.cpu_calls = cpu_calls().load() - calls0;
  r.cpu_bad_calls = cpu_bad_calls().load() - bad0;
  return r;
}

std::string describe(const bo_gemm_stats& s) {
  std::ostringstream o;
  o << "[stats: path " << s.path << ", devices " << s.devices << ", tile " << s.tile_m << "x" << s.tile_n
    << ", k_passes " << s.k_passes << ", tiles " << s.tiles << " GPU + " << s.tiles_cpu << " CPU, panel_uploads "
    << s.panel_uploads << ", CPU share " << s.n_cpu_cols << " cols / " << s.m_cpu_rows << " rows, h2d " << s.bytes_h2d
    << " B, d2h " << s.bytes_d2h << " B, wall " << s.wall_ms << " ms]";
  return o.str();
}

// The call succeeded, A and B are untouched, C is right inside its window and untouched outside it, and every
// cpu_call the module made was a gemm with legal arguments.
template <typename T>
::testing::AssertionResult correct(const Gemm<T>& g, const Result<T>& r) {
  if (r.status != BO_CUDA_OK)
    return ::testing::AssertionFailure() << "status " << r.status << " (C is then not written) " << describe(r.st);
  if (r.cpu_bad_calls)
    return ::testing::AssertionFailure() << r.cpu_bad_calls << " cpu_call calls broke the BLAS argument rules";
  if (auto x = check_image(g.a, r.a, {}); !x) return ::testing::AssertionFailure() << "A: " << x.message();
  if (auto x = check_image(g.b, r.b, {}); !x) return ::testing::AssertionFailure() << "B: " << x.message();
  if (auto x = check_image(g.c, r.c, g.want); !x)
    return ::testing::AssertionFailure() << "C: " << x.message() << " " << describe(r.st);
  return ::testing::AssertionSuccess();
}

// Tile kernels the engine runs for an m x n part of C: one per tile and K pass (tiles counts per pass, as the
// engine's stats do: each pass is a kernel per tile that accumulates into C).
int64_t gpu_tiles(const bo_gemm_stats& s, int64_t m, int64_t n) {
  return cdiv(m, s.tile_m) * cdiv(n, s.tile_n) * s.k_passes;
}

// The tiled pipeline ran on `devices` GPUs in tile x tile tiles (clipped to the GPU's part of C); unless a failure
// moved tiles to the CPU, it ran every tile there and moved at least A, B (and C when beta != 0) in and C out.
// elem: bytes per element.
::testing::AssertionResult pipeline_ran(const bo_gemm_stats& s, int64_t m, int64_t n, int64_t k, double alpha,
                                        double beta, int64_t tile, double elem, int devices = 1) {
  std::ostringstream bad;
  const int64_t mg = m - s.m_cpu_rows, ng = n - s.n_cpu_cols;
  if (s.path != 1) bad << " path " << s.path << ", want 1 (tiled pipeline);";
  if (s.devices != devices) bad << " devices " << s.devices << ", want " << devices << ";";
  if (s.n_cpu_cols < 0 || s.m_cpu_rows < 0 || mg <= 0 || ng <= 0 || (s.n_cpu_cols > 0 && s.m_cpu_rows > 0)) {
    bad << " CPU share out of range;";
  } else {
    if (s.tile_m != std::min(tile, mg) || s.tile_n != std::min(tile, ng))
      bad << " tiles " << s.tile_m << "x" << s.tile_n << ", want " << std::min(tile, mg) << "x" << std::min(tile, ng)
          << ";";
    if (s.k_passes < 1)
      bad << " k_passes " << s.k_passes << ";";
    else if (s.tiles_cpu == 0 && s.tiles != gpu_tiles(s, mg, ng))
      bad << " tiles " << s.tiles << ", want " << gpu_tiles(s, mg, ng) << " (one per C tile and K pass);";
    if (s.tiles_cpu == 0) {
      const double in = (alpha != 0.0 ? elem * double(mg * k + k * ng) : 0.0) + (beta != 0.0 ? elem * mg * ng : 0.0);
      if (s.bytes_h2d < in) bad << " bytes_h2d below the operands' " << in << ";";
      if (s.bytes_d2h < elem * mg * ng) bad << " bytes_d2h below C's " << elem * mg * ng << ";";
    }
  }
  if (!(s.wall_ms > 0) || s.cpu_part_ms < 0 || s.first_kernel_ms < 0 || s.h2d_busy_ms < 0 || s.kernel_busy_ms < 0 ||
      s.d2h_busy_ms < 0 || s.pack_ms < 0 || s.unpack_ms < 0)
    bad << " timings not positive;";
  if (bad.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad.str() << " " << describe(s);
}
template <typename T>
::testing::AssertionResult pipeline_ran(const Gemm<T>& g, const Result<T>& r, int64_t tile, int devices = 1) {
  return pipeline_ran(r.st, g.m, g.n, g.k, g.alpha, g.beta, tile, sizeof(T), devices);
}

// No CPU share, no failure: nothing ran on the CPU.
template <typename T>
::testing::AssertionResult gpu_only(const Result<T>& r) {
  if (r.st.tiles_cpu || r.st.n_cpu_cols || r.st.m_cpu_rows || r.cpu_calls)
    return ::testing::AssertionFailure() << "work on the CPU (" << r.cpu_calls << " cpu_call calls) in a GPU-only "
                                         << "call " << describe(r.st);
  return ::testing::AssertionSuccess();
}

// The direct path (whole operands staged) computed the call right, all on the GPU.
template <typename T>
::testing::AssertionResult direct_ran(const Gemm<T>& g, const Result<T>& r) {
  if (auto x = correct(g, r); !x) return x;
  if (r.st.path != 0) return ::testing::AssertionFailure() << "not the direct path " << describe(r.st);
  return gpu_only(r);
}

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

GPU_TYPED_SUITE(Pipeline);

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
struct OocCase {
  char ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  bool nan_c;
  const char* limit;
  Data data = Data::kRandom;
};

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

// ---------------------------------------------------------------- 5. threads on shared operands
// 16 threads, each computing one block of ONE column-major C (ldc = its full height): every column of the array
// holds pieces of four threads' blocks with gap rows between them, and gap columns separate the block columns, so
// a tile written a row or a column too far lands in a neighbour or a gap. A and B are shared read-only arrays whose
// blocks overlap between threads. Transposes, k, alpha, beta and (for four threads) a hybrid CPU share differ per
// thread. Two rounds from the same start must give the same bits.
TYPED_TEST(Pipeline, Threads16_BlocksOfSharedArrays_tile16) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  constexpr int kThreads = 16;
  constexpr int64_t kTile = 16, kRows = 61, kCols = 45, kRowStride = 64, kColStride = 48, kAb = 300;
  const int64_t ldc = 4 * kRowStride + 3, c_cols = 4 * kColStride, lda = kAb + 1, ldb = kAb + 2;
  Knobs knobs(kTile);
  Image<T> a(mspan(kAb, kAb, lda)), b(mspan(kAb, kAb, ldb)), c(mspan(ldc, c_cols, ldc));
  fill_random(a, kAb, kAb, lda);
  fill_random(b, kAb, kAb, ldb);
  fill_random(c, ldc, c_cols, ldc);
  struct Job {
    char ta, tb;
    int64_t k;
    double alpha, beta;
    double share;
    size_t a_off, b_off, c_off;
  };
  std::vector<Job> jobs;
  for (int t = 0; t < kThreads; ++t) {
    Job j{t & 1 ? 'T' : 'N',
          t & 2 ? 'T' : 'N',
          50 + 3 * t,
          1.0 + 0.25 * t,
          t % 3 == 0 ? 0.0 : 0.5,
          t % 4 == 3 ? 0.4 : 0.0,
          size_t(7 * t + 5 * t * lda),
          size_t(3 * t + 11 * t * ldb),
          size_t((t % 4) * kRowStride + (t / 4) * kColStride * ldc)};
    if (j.beta == 0.0)
      for (int64_t jj = 0; jj < kCols; ++jj)
        for (int64_t i = 0; i < kRows; ++i) c.p()[j.c_off + i + jj * ldc] = NAN;
    jobs.push_back(j);
  }
  std::vector<Expect> want;
  for (const Job& j : jobs)
    reference(j.ta, j.tb, kRows, kCols, j.k, j.alpha, a.p() + j.a_off, lda, b.p() + j.b_off, ldb, j.beta,
              c.p() + j.c_off, ldc, j.c_off, want);

  struct Outcome {
    int status = -1, stats_status = -1;
    bo_gemm_stats st{};
  };
  std::vector<Image<T>> results;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Image<T> ra = a, rb = b, rc = c;
    std::vector<Outcome> out(kThreads);
    std::atomic<int> ready{0};
    const int64_t calls0 = cpu_calls().load(), bad0 = cpu_bad_calls().load();
    std::vector<std::thread> th;
    for (int t = 0; t < kThreads; ++t)
      th.emplace_back([&, t] {
        const Job& j = jobs[t];
        // All start together, so that the calls really overlap.
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        const bo_call call = gemm_call<T>(j.ta, j.tb, kRows, kCols, j.k, j.alpha, ra.p() + j.a_off, lda,
                                          rb.p() + j.b_off, ldb, j.beta, rc.p() + j.c_off, ldc);
        out[t].status = module().mod->call(&call, j.share);
        out[t].stats_status = module().mod->last_gemm_stats(&out[t].st);
      });
    for (auto& x : th) x.join();
    for (int t = 0; t < kThreads; ++t) {
      const Job& j = jobs[t];
      SCOPED_TRACE("thread " + std::to_string(t));
      EXPECT_EQ(out[t].status, BO_CUDA_OK);
      EXPECT_EQ(out[t].stats_status, 0);
      // The stats are the calling thread's own: its k and its share, not another thread's call.
      EXPECT_TRUE(pipeline_ran(out[t].st, kRows, kCols, j.k, j.alpha, j.beta, kTile, sizeof(T)));
      EXPECT_EQ(out[t].st.tiles_cpu, 0) << describe(out[t].st);
      EXPECT_EQ(out[t].st.n_cpu_cols, 0) << describe(out[t].st);
      if (j.share > 0)
        EXPECT_GT(out[t].st.m_cpu_rows, 0) << "tall block: the CPU takes trailing rows " << describe(out[t].st);
      else
        EXPECT_EQ(out[t].st.m_cpu_rows, 0) << describe(out[t].st);
    }
    EXPECT_GE(cpu_calls().load() - calls0, 4) << "four threads had a CPU share";
    EXPECT_EQ(cpu_bad_calls().load() - bad0, 0);
    EXPECT_TRUE(check_image(a, ra, {})) << "A";
    EXPECT_TRUE(check_image(b, rb, {})) << "B";
    EXPECT_TRUE(check_image(c, rc, want)) << "C";
    results.push_back(std::move(rc));
  }
  EXPECT_TRUE(same_bits(results[0], results[1]));
}

// ---------------------------------------------------------------- 6. several GPUs
GPU_TYPED_SUITE(PipelineMultiGpu);

#define MULTI_GPU_PREAMBLE()                                                                     \
  do {                                                                                           \
    GPU_TEST_PREAMBLE();                                                                         \
    if (device_count() < 2) GTEST_SKIP() << "one CUDA device: multi-GPU pipeline tests skipped"; \
  } while (0)

// Tiles spread over two GPUs run the same kernels as on one: the same bits, in core, out of core and in K passes.
TYPED_TEST(PipelineMultiGpu, TwoDevices_BitIdenticalToOne) {
  using T = TypeParam;
  MULTI_GPU_PREAMBLE();
  for (const OocCase& c : {OocCase{'N', 'T', 333, 257, 190, 1.0f, 0.5f, false, ""},
                           OocCase{'N', 'N', 640, 640, 512, -1.0f, 0.0f, true, "1M"},
                           OocCase{'T', 'N', 200, 150, 4000, 1.0f, 1.0f, false, "1M"}}) {
    Knobs knobs(64);
    if (*c.limit) knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>(c.limit));
    const Gemm<T> g(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.nan_c);
    SCOPED_TRACE(g.name() + " limit " + scaled_limit<T>(c.limit));
    knobs.set("BLASOFFLOAD_DEVICES", "0,1");
    const Result<T> two = run(g);
    std::printf("  %s limit %s on 0,1: %s\n", g.name().c_str(), scaled_limit<T>(c.limit).c_str(),
                describe(two.st).c_str());
    knobs.set("BLASOFFLOAD_DEVICES", "0");
    const Result<T> one = run(g);
    EXPECT_TRUE(correct(g, two));
    EXPECT_TRUE(pipeline_ran(g, two, 64, 2));
    EXPECT_TRUE(gpu_only(two));
    EXPECT_TRUE(correct(g, one));
    EXPECT_TRUE(pipeline_ran(g, one, 64, 1));
    EXPECT_EQ(one.st.k_passes, two.st.k_passes) << "one plan for all devices";
    if (c.k > 1000) {
      EXPECT_GT(two.st.k_passes, 1) << "the K-split case did not split " << describe(two.st);
    }
    EXPECT_TRUE(same_bits(one.c, two.c)) << "two GPUs gave other bits than one";
  }
}

// A failure on two GPUs (the hook counts the call's tiles over both) and a hybrid share with two GPUs.
TYPED_TEST(PipelineMultiGpu, TwoDevices_FailureAndHybrid) {
  using T = TypeParam;
  MULTI_GPU_PREAMBLE();
  Knobs knobs(37);
  knobs.set("BLASOFFLOAD_DEVICES", "0,1");
  {
    knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", "3");
    const Gemm<T> g('N', 'N', 200, 150, 90, 1.0f, 0.75f, false);
    const Result<T> r = run(g);
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 37, 2));
    EXPECT_GT(r.st.tiles_cpu, 0) << describe(r.st);
    knobs.unset("BLASOFFLOAD_TEST_FAIL_AFTER_TILES");
  }
  const Gemm<T> g('T', 'N', 150, 400, 120, -1.0f, 0.0f, true);
  const Result<T> r = run(g, 0.3);
  EXPECT_TRUE(correct(g, r));
  EXPECT_TRUE(pipeline_ran(g, r, 37, 2));
  EXPECT_GT(r.st.n_cpu_cols, 0) << describe(r.st);
  EXPECT_GE(r.cpu_calls, 1) << describe(r.st);
}

// ---------------------------------------------------------------- 7. determinism and staging
// The same call twice gives the same bits (tiles finish in any order; each must still be computed the same way).
// ---------------------------------------------------------------- registered host memory
// Operands in their own mappings (as malloc gives large arrays) move by DMA without staging once registered (the
// mapping's second use); C replaced by a new mapping at the same address is never used through the old
// registration, and a mapping whose pages were discarded (MADV_DONTNEED: they read as zeros afterwards) neither.
template <typename T>
T* map_elems(size_t n, void* at = nullptr) {
  const size_t bytes = (n * sizeof(T) + 4095) / 4096 * 4096;
  // MAP_FIXED at `at` replaces the mapping there in one step (the kernel reports the old one unmapped): no other
  // allocation can take the address in between.
  void* p = mmap(at, bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  if (p == MAP_FAILED) std::abort();
  EXPECT_EQ(mprotect(static_cast<char*>(p) + bytes, 4096, PROT_NONE), 0);  // no merging with a neighbour
  return static_cast<T*>(p);
}
template <typename T>
void unmap_elems(T* p, size_t n) {
  munmap(p, (n * sizeof(T) + 4095) / 4096 * 4096 + 4096);
}

TYPED_TEST(Pipeline, Registered_DirectDmaThenRemappedAndDiscardedOperands_tile64) {
  using T = TypeParam;
  using Acc = typename Real<T>::Acc;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64);
  knobs.set("BLASOFFLOAD_PIN_HOST", "on");  // this process uses CUDA itself, so auto would leave registrations off
  const int64_t m = 300, n = 260, k = 270, lda = 301, ldb = 271, ldc = 303;
  const size_t na = size_t(lda * k), nb = size_t(ldb * n), nc = size_t(ldc * n);
  T *a = map_elems<T>(na), *b = map_elems<T>(nb), *c = map_elems<T>(nc);
  std::vector<T> c0(nc);
  for (size_t i = 0; i < na; ++i) a[i] = uni<T>();
  for (size_t i = 0; i < nb; ++i) b[i] = uni<T>();
  for (size_t i = 0; i < nc; ++i) c0[i] = uni<T>();
  const double alpha = 1.25, beta = 0.5;
  const long double rel = (k + 3) * Real<T>::u + (k + 2) * Real<T>::u_acc;
  auto check = [&](const char* what, const std::vector<T>& cin) {
    long double worst = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < ldc; ++i) {
        if (i >= m) {
          ASSERT_EQ(bits(c[i + j * ldc]), bits(cin[size_t(i + j * ldc)])) << what << ": wrote between rows";
          continue;
        }
        Acc s = 0, sa = 0;
        for (int64_t l = 0; l < k; ++l) {
          s += Acc(a[i + l * lda]) * Acc(b[l + j * ldb]);
          sa += std::fabs(Acc(a[i + l * lda]) * Acc(b[l + j * ldb]));
        }
        const Acc c_in = Acc(beta) * Acc(cin[size_t(i + j * ldc)]);
        const Acc want = Acc(alpha) * s + c_in;
        const Acc bound = rel * (std::fabs(Acc(alpha)) * sa + std::fabs(c_in)) + tiny<T>();
        worst = std::max<long double>(worst, std::fabs(Acc(c[i + j * ldc]) - want) / bound);
      }
    EXPECT_LE(double(worst), 1.0) << what;
  };
  auto gemm = [&](T* cc) {
    const bo_call call = gemm_call<T>('N', 'N', m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc);
    return module().mod->call(&call, 0.0);
  };
  bo_gemm_stats st{};
  for (int call = 0; call < 3; ++call) {
    std::copy(c0.begin(), c0.end(), c);
    ASSERT_EQ(gemm(c), BO_CUDA_OK);
    module().mod->last_gemm_stats(&st);
    check("registered", c0);
    EXPECT_EQ(st.path, 1);
  }
  EXPECT_EQ(st.pinned_operands, 3) << "the third call on the same mappings must move them without staging";
  EXPECT_EQ(module().mod->host_pinned(c, int64_t(nc * sizeof(T))), 1);

  // C replaced at the same address: new pages behind the old registration's addresses.
  T* c2 = map_elems<T>(nc, c);
  ASSERT_EQ(c2, c);
  std::copy(c0.begin(), c0.end(), c2);
  EXPECT_NE(module().mod->host_pinned(c2, int64_t(nc * sizeof(T))), 1);
  ASSERT_EQ(gemm(c2), BO_CUDA_OK);
  module().mod->last_gemm_stats(&st);
  check("after C was remapped", c0);
  EXPECT_EQ(st.pinned_operands, 2) << "A and B still registered, the new C staged";

  // A's pages discarded: they read as zeros now, and the product must see zeros.
  ASSERT_EQ(madvise(a, na * sizeof(T) / 4096 * 4096, MADV_DONTNEED), 0);
  std::copy(c0.begin(), c0.end(), c2);
  ASSERT_EQ(gemm(c2), BO_CUDA_OK);
  module().mod->last_gemm_stats(&st);
  check("after A's pages were discarded", c0);
  unmap_elems(a, na);
  unmap_elems(b, nb);
  unmap_elems(c2, nc);
}

TYPED_TEST(Pipeline, Determinism_SameCallTwice_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  for (const OocCase& c : {OocCase{'N', 'T', 333, 257, 190, 1.0f, 0.5f, false, ""},
                           OocCase{'T', 'N', 200, 150, 4000, 1.0f, 0.0f, true, "1M"}}) {
    Knobs knobs(64);
    if (*c.limit) knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>(c.limit));
    const Gemm<T> g(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.nan_c);
    SCOPED_TRACE(g.name() + " limit " + scaled_limit<T>(c.limit));
    const Result<T> r1 = run(g), r2 = run(g);
    EXPECT_TRUE(correct(g, r1));
    EXPECT_TRUE(pipeline_ran(g, r1, 64));
    EXPECT_TRUE(pipeline_ran(g, r2, 64));
    EXPECT_TRUE(same_bits(r1.c, r2.c));
  }
}

// A small pinned ring (1 MB asked; the engine's smallest chunks) makes operands and results go through many chunk
// reuses; the arithmetic, and so the bits, must not change.
TYPED_TEST(Pipeline, Staging_SmallPinnedRingSameBits_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64);
  const Gemm<T> g('T', 'T', 333, 257, 190, 1.0f, 0.5f, false);
  const Result<T> base = run(g);
  knobs.set("BLASOFFLOAD_PINNED_MB", "1");
  const Result<T> small = run(g);
  EXPECT_TRUE(correct(g, base));
  EXPECT_TRUE(correct(g, small));
  EXPECT_TRUE(pipeline_ran(g, small, 64));
  EXPECT_TRUE(gpu_only(small));
  EXPECT_TRUE(same_bits(base.c, small.c));
}

// Deep K with transposed A: a panel's columns (K long) are longer than a pinned chunk (1 MiB = 262144 floats or
// 131072 doubles), so each column is staged in pieces. Integer data: a piece lost or staged twice changes the exact
// result.
TYPED_TEST(Pipeline, Staging_DeepKColumnsLongerThanAChunk_tile32) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(32);
  knobs.set("BLASOFFLOAD_PINNED_MB", "4");
  const Gemm<T> g('T', 'N', 64, 48, 270000, 1.0f, 0.5f, false, Data::kIntegers);
  const Result<T> r = run(g);
  EXPECT_TRUE(correct(g, r));
  EXPECT_TRUE(pipeline_ran(g, r, 32));
  EXPECT_TRUE(gpu_only(r));
  EXPECT_EQ(r.st.k_passes, 1) << describe(r.st);
}

}  // namespace
