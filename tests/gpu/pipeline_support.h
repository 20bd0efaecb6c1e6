// The GPU pipeline tests' common part (test_pipeline.cpp, test_pipeline_staging.cpp): the engine's knobs, a gemm on
// guarded host images with its reference (accumulated in Real<T>::Acc), one module call through call() with the
// stats it reports, and the assertions on C and on the path the engine took.
//
// Error bound (as in kernel_support.h, u = unit roundoff of the element type, u_acc the reference's):
//   |c_ij - ref| <= ((k+3) u + (k+2) u_acc) (|alpha| sum_l |a_il b_lj| + |beta c_ij|) + tiny
// Every element of C's image outside its m x n window (the rows between m and ldc, the guard zones) must be
// bit-identical afterwards, and A and B must not change at all.
//
// The engine's knobs are environment variables the module reads at each call (the host services' config is getenv
// here); a test sets the ones it needs through Knobs, which clears the others and restores them all at its end.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_support.h"

namespace gt::pipe {

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------- knobs
inline constexpr const char* kKnobNames[] = {"BLASOFFLOAD_PIPELINE",
                                             "BLASOFFLOAD_PIPELINE_MIN_MB",
                                             "BLASOFFLOAD_TILE",
                                             "BLASOFFLOAD_DEVICE_MEMORY_LIMIT",
                                             "BLASOFFLOAD_PINNED_MB",
                                             "BLASOFFLOAD_PIN_AFTER",
                                             "BLASOFFLOAD_PIN_AFTER_MIN",
                                             "BLASOFFLOAD_DEVICES",
                                             "BLASOFFLOAD_STAGING_THREADS",
                                             "BLASOFFLOAD_PIN_HOST",
                                             "BLASOFFLOAD_MULTI_GPU_MIN_N",
                                             "BLASOFFLOAD_PINNED_MAX_MB",
                                             "BLASOFFLOAD_TEST_FAIL_AFTER_TILES",
                                             "BLASOFFLOAD_TEST_PIPELINE_ORDER",
                                             "BLASOFFLOAD_TEST_PEER_PANELS",
                                             "BLASOFFLOAD_TEST_STEAL_DEPTH"};

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

inline std::string describe(const bo_gemm_stats& s) {
  std::ostringstream o;
  o << "[stats: path " << s.path << ", devices " << s.devices << ", tile " << s.tile_m << "x" << s.tile_n
    << ", k_passes " << s.k_passes << ", tiles " << s.tiles << " GPU + " << s.tiles_cpu << " CPU, panel_uploads "
    << s.panel_uploads << " (" << s.bytes_peer << " B copied between GPUs), CPU share " << s.n_cpu_cols << " cols / "
    << s.m_cpu_rows << " rows, h2d " << s.bytes_h2d << " B, d2h " << s.bytes_d2h << " B, wall " << s.wall_ms << " ms]";
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
inline int64_t gpu_tiles(const bo_gemm_stats& s, int64_t m, int64_t n) {
  return cdiv(m, s.tile_m) * cdiv(n, s.tile_n) * s.k_passes;
}

// The tiled pipeline ran on `devices` GPUs in tile x tile tiles (clipped to the GPU's part of C); unless a failure
// moved tiles to the CPU, it ran every tile there and moved at least A, B (and C when beta != 0) in and C out.
// elem: bytes per element.
inline ::testing::AssertionResult pipeline_ran(const bo_gemm_stats& s, int64_t m, int64_t n, int64_t k, double alpha,
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

// An out-of-core case: the device memory limit is written for float operands (scaled_limit).
struct OocCase {
  char ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  bool nan_c;
  const char* limit;
  Data data = Data::kRandom;
};

}  // namespace gt::pipe
