// blasoffload_regret's measuring: rotating host operands, the timed calls of one shape (through the exported symbols
// and, in the auto process, the CPU BLAS's own), the grid over shapes and the --tiny decision-overhead cases.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "../hash_uniform.h"
#include "regret.h"

namespace bo_bench {
namespace {

// Splits [0, n) over up to 16 threads when the work (n times grain elements) is worth a thread start.
void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body) {
  // hardware_concurrency() reads /sys on every call: once per process is enough.
  static const unsigned hw = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  const size_t parts = n * grain < (size_t(1) << 20) ? 1 : std::min<size_t>(hw, n);
  std::vector<std::thread> threads;
  for (size_t p = 1; p < parts; ++p) threads.emplace_back(body, n * p / parts, n * (p + 1) / parts);
  body(0, n / parts);
  for (auto& t : threads) t.join();
}

template <typename T>
void fill_random(T* p, size_t n, uint64_t seed) {
  parallel_for(n, 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) p[i] = hash_uniform(i, seed);
  });
}

// 256-byte aligned storage released with free(); std::vector would zero-fill every byte first.
struct Buffer {
  float* p = nullptr;
  explicit Buffer(size_t floats) {
    const size_t bytes = std::max<size_t>(256, (floats * sizeof(float) + 255) / 256 * 256);
    p = static_cast<float*>(std::aligned_alloc(256, bytes));
    if (!p) throw std::bad_alloc();
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

size_t round_up64(size_t floats) { return (floats + 63) / 64 * 64; }

// The CPU BLAS's own entry points, bypassing any preloaded library: libblas.so.3's definitions (dlsym on its handle
// searches that object first). Timed beside the exported ones in the same process, they give the CPU side without
// the process-to-process noise of a multi-threaded CPU BLAS on short calls.
struct Direct {
  decltype(&sgemm_) sgemm = nullptr;
  decltype(&sgemv_) sgemv = nullptr;
  decltype(&strsv_) strsv = nullptr;
  decltype(&snrm2_) snrm2 = nullptr;
  decltype(&dgemm_) dgemm = nullptr;
  decltype(&dgemv_) dgemv = nullptr;
  decltype(&dtrsv_) dtrsv = nullptr;
  decltype(&dnrm2_) dnrm2 = nullptr;
  bool ok() const { return sgemm && sgemv && strsv && snrm2 && dgemm && dgemv && dtrsv && dnrm2; }
};
Direct load_direct() {
  Direct d;
  void* h = dlopen("libblas.so.3", RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return d;
  d.sgemm = reinterpret_cast<decltype(&sgemm_)>(dlsym(h, "sgemm_"));
  d.sgemv = reinterpret_cast<decltype(&sgemv_)>(dlsym(h, "sgemv_"));
  d.strsv = reinterpret_cast<decltype(&strsv_)>(dlsym(h, "strsv_"));
  d.snrm2 = reinterpret_cast<decltype(&snrm2_)>(dlsym(h, "snrm2_"));
  d.dgemm = reinterpret_cast<decltype(&dgemm_)>(dlsym(h, "dgemm_"));
  d.dgemv = reinterpret_cast<decltype(&dgemv_)>(dlsym(h, "dgemv_"));
  d.dtrsv = reinterpret_cast<decltype(&dtrsv_)>(dlsym(h, "dtrsv_"));
  d.dnrm2 = reinterpret_cast<decltype(&dnrm2_)>(dlsym(h, "dnrm2_"));
  return d;
}
const Direct g_direct = load_direct();

struct Stats {
  double median_us = 0, min_us = 0, max_us = 0, total_s = 0;
  int reps = 0;
  int64_t calls_per_rep = 1;
};

Stats summarize(std::vector<double> per_call_s, int64_t batch, double total_s) {
  Stats st;
  std::sort(per_call_s.begin(), per_call_s.end());
  const size_t n = per_call_s.size();
  st.reps = static_cast<int>(n);
  st.calls_per_rep = batch;
  st.total_s = total_s;
  if (n == 0) return st;
  st.median_us = 1e6 * (n % 2 ? per_call_s[n / 2] : 0.5 * (per_call_s[n / 2 - 1] + per_call_s[n / 2]));
  st.min_us = 1e6 * per_call_s.front();
  st.max_us = 1e6 * per_call_s.back();
  return st;
}

// One shape: operand copies laid out back to back (each array 256-byte aligned) and rotated call by call, so that
// small operands come from memory as a program's would, not from a cache warmed by the previous call. Elements are
// float or double after the routine's precision letter; the pool counts 4-byte words.
class Point {
 public:
  Point(const std::string& routine, const Shape& s, double rotate_mb)
      : kind_(kind_of(routine)), dbl_(routine[0] == 'd'), s_(s) {
    const size_t m = s.m, n = s.n, k = s.k;
    if (kind_ == "gemm_nn" || kind_ == "gemm_lu") {
      sizes_ = {m * k, k * n, m * n};
    } else if (kind_ == "gemv_n" || kind_ == "gemv_t") {
      const bool t = kind_ == "gemv_t";
      sizes_ = {m * n, t ? m : n, t ? n : m};
    } else if (kind_ == "trsv_ln" || kind_ == "trsv_lt") {
      sizes_ = {n * n, n};
    } else {
      sizes_ = {n};
    }
    copy_words_ = 0;
    for (size_t v : sizes_) copy_words_ += words(v);
    const double copy_bytes = 4.0 * copy_words_, rotate = rotate_mb * 1048576.0;
    copies_ = static_cast<int64_t>(std::max(1.0, std::ceil(rotate / copy_bytes)));
    if (copy_bytes < rotate / 2) copies_ = std::max<int64_t>(copies_, 2);
    pool_.reset(new Buffer(copy_words_ * copies_));
    if (dbl_)
      fill_random(reinterpret_cast<double*>(pool_->p), copy_words_ * copies_ / 2, 1);
    else
      fill_random(pool_->p, copy_words_ * copies_, 1);
    if (kind_ == "trsv_ln" || kind_ == "trsv_lt") {
      if (dbl_)
        prepare_trsv<double>();
      else
        prepare_trsv<float>();
    }
  }

  int64_t copies() const { return copies_; }
  bool restores() const { return !rhs_.empty(); }

  void* array(int64_t copy, int which) const {
    size_t off = copy_words_ * static_cast<size_t>(copy);
    for (int i = 0; i < which; ++i) off += words(sizes_[i]);
    return pool_->p + off;
  }

  // trsv solves in place: each copy's right-hand side is put back before the copy is used again (untimed), so
  // every timed solve starts from the same well-scaled vector.
  void restore(int64_t first, int64_t count) const {
    for (int64_t i = 0; i < count; ++i) std::memcpy(array((first + i) % copies_, 1), rhs_.data(), rhs_.size());
  }

  // direct: the CPU BLAS's own entry points (see Direct) instead of the exported ones.
  void set_direct(bool d) { direct_ = d; }

  void call(int64_t copy) {
    if (dbl_)
      call_as<double>(copy, direct_ ? g_direct.dgemm : &dgemm_, direct_ ? g_direct.dgemv : &dgemv_,
                      direct_ ? g_direct.dtrsv : &dtrsv_, direct_ ? g_direct.dnrm2 : &dnrm2_);
    else
      call_as<float>(copy, direct_ ? g_direct.sgemm : &sgemm_, direct_ ? g_direct.sgemv : &sgemv_,
                     direct_ ? g_direct.strsv : &strsv_, direct_ ? g_direct.snrm2 : &snrm2_);
  }

 private:
  // 4-byte words of one array of v elements, rounded up to 256 bytes.
  size_t words(size_t v) const { return round_up64(std::max<size_t>(v, 1) * (dbl_ ? 2 : 1)); }

  template <typename T, typename Gemm, typename Gemv, typename Trsv, typename Nrm2>
  void call_as(int64_t copy, Gemm gemm, Gemv gemv, Trsv trsv, Nrm2 nrm2) {
    const int m = static_cast<int>(s_.m), n = static_cast<int>(s_.n), k = static_cast<int>(s_.k), one = 1;
    auto arr = [&](int which) { return static_cast<T*>(array(copy, which)); };
    if (kind_ == "gemm_nn" || kind_ == "gemm_lu") {
      const bool lu = kind_ == "gemm_lu";
      const T alpha = lu ? -1 : 1, beta = lu ? 1 : 0;
      const int lda = std::max(m, 1), ldb = std::max(k, 1), ldc = std::max(m, 1);
      gemm("N", "N", &m, &n, &k, &alpha, arr(0), &lda, arr(1), &ldb, &beta, arr(2), &ldc, 1, 1);
    } else if (kind_ == "gemv_n" || kind_ == "gemv_t") {
      const T alpha = 1, beta = 0;
      const int lda = std::max(m, 1);
      gemv(kind_ == "gemv_t" ? "T" : "N", &m, &n, &alpha, arr(0), &lda, arr(1), &one, &beta, arr(2), &one, 1);
    } else if (kind_ == "trsv_ln" || kind_ == "trsv_lt") {
      const int lda = std::max(n, 1);
      trsv("L", kind_ == "trsv_lt" ? "T" : "N", "N", &n, arr(0), &lda, arr(1), &one, 1, 1, 1);
    } else {
      sink_ = sink_ + nrm2(&n, arr(0), &one);
    }
  }

  template <typename T>
  void prepare_trsv() {
    const size_t n = s_.n;
    rhs_.resize(n * sizeof(T));
    T* rhs = reinterpret_cast<T*>(rhs_.data());
    for (size_t i = 0; i < n; ++i) rhs[i] = hash_uniform(i, 7);
    const T scale = T(1) / static_cast<T>(std::max<size_t>(n, 1));
    // Diagonally dominant lower triangle (diagonal in [1.5, 2.5], off-diagonal below 1/n): the solution stays of
    // the right-hand side's size. The upper triangle keeps its random values; it must not be read.
    for (int64_t c = 0; c < copies_; ++c) {
      T* a = static_cast<T*>(array(c, 0));
      parallel_for(n, n, [&](size_t b, size_t e) {
        for (size_t j = b; j < e; ++j) {
          T* col = a + j * n;
          col[j] = T(2) + T(0.5) * col[j];
          for (size_t i = j + 1; i < n; ++i) col[i] *= scale;
        }
      });
    }
    restore(0, copies_);
  }

  bool direct_ = false;
  std::string kind_;
  bool dbl_;
  Shape s_;
  std::vector<size_t> sizes_;
  size_t copy_words_ = 0;
  int64_t copies_ = 1;
  std::unique_ptr<Buffer> pool_;
  std::vector<char> rhs_;  // the right-hand side's bytes (trsv)
  volatile double sink_ = 0;
};

Stats measure(Point& p, const Options& o) {
  // Warm-up: long enough for the library's adaptive start (GPU initialisation in the background, correction
  // factors) to settle; it also gives the per-call estimate that sizes the timed batches.
  int64_t copy = 0;
  std::vector<double> warm;
  const auto w0 = Clock::now();
  while (static_cast<int>(warm.size()) < o.warmup_calls || seconds_since(w0) < o.warmup_s) {
    if (p.restores()) p.restore(copy, 1);
    const auto t0 = Clock::now();
    p.call(copy);
    warm.push_back(seconds_since(t0));
    copy = (copy + 1) % p.copies();
  }
  std::vector<double> tail(warm.end() - std::max<size_t>(1, warm.size() / 2), warm.end());
  std::nth_element(tail.begin(), tail.begin() + tail.size() / 2, tail.end());
  const double est = std::max(tail[tail.size() / 2], 1e-9);
  int64_t batch = std::max<int64_t>(1, std::llround(o.sample_us * 1e-6 / est));
  if (p.restores()) batch = std::min(batch, p.copies());
  batch = std::min<int64_t>(batch, 1000000);

  std::vector<double> per_call;
  double total = 0;
  const auto m0 = Clock::now();
  while (per_call.size() < 3 || (seconds_since(m0) < o.min_s && static_cast<int>(per_call.size()) < o.max_reps)) {
    if (p.restores()) p.restore(copy, batch);
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < batch; ++i) {
      p.call(copy);
      copy = copy + 1 == p.copies() ? 0 : copy + 1;
    }
    const double s = seconds_since(t0);
    total += s;
    per_call.push_back(s / static_cast<double>(batch));
  }
  return summarize(per_call, batch, total);
}

}  // namespace

int run_grid(const Options& o) {
  std::vector<std::string> list = o.shapes.empty() ? default_shapes(o.routine, o.quick, o.large) : o.shapes;
  if (list.empty()) {
    std::fprintf(stderr, "blasoffload_regret: unknown routine '%s'\n%s", o.routine.c_str(), kUsage);
    return 2;
  }
  std::vector<Shape> shapes;
  for (const auto& t : list) {
    Shape s;
    if (!parse_shape(o.routine, t, &s)) {
      std::fprintf(stderr, "blasoffload_regret: bad shape '%s' for %s\n", t.c_str(), o.routine.c_str());
      return 2;
    }
    shapes.push_back(s);
  }
  int failures = 0;
  for (const auto& s : shapes) {
    const auto t0 = Clock::now();
    try {
      Point p(o.routine, s, o.rotate_mb);
      const Stats st = measure(p, o);
      // In the auto process the CPU side is timed too, right after, through the CPU BLAS's own symbols.
      Stats direct;
      const bool with_direct = mode_name() == std::string("auto") && g_direct.ok();
      if (with_direct) {
        p.set_direct(true);
        direct = measure(p, o);
        p.set_direct(false);
      }
      std::printf(
          "{\"routine\": \"%s\", \"shape\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"mode\": \"%s\", "
          "\"round\": %d, \"median_us\": %.6g, \"min_us\": %.6g, \"max_us\": %.6g, \"reps\": %d, "
          "\"calls_per_rep\": %lld, \"copies\": %lld, \"timed_s\": %.3f, \"wall_s\": %.3f%s}\n",
          o.routine.c_str(), s.text.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
          static_cast<long long>(s.k), json_escape(mode_name()).c_str(), o.round, st.median_us, st.min_us, st.max_us,
          st.reps, static_cast<long long>(st.calls_per_rep), static_cast<long long>(p.copies()), st.total_s,
          seconds_since(t0),
          with_direct ? (", \"direct_median_us\": " + std::to_string(direct.median_us)).c_str() : "");
    } catch (const std::bad_alloc&) {
      ++failures;
      std::printf(
          "{\"routine\": \"%s\", \"shape\": \"%s\", \"mode\": \"%s\", \"round\": %d, "
          "\"error\": \"allocation failed\"}\n",
          o.routine.c_str(), s.text.c_str(), json_escape(mode_name()).c_str(), o.round);
    }
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}

// --tiny: the smallest calls, on hot data, where the decision is all there is to see. Many calls per sample and many
// samples per case; the median is compared across processes (none / cpu / auto) by report.py overhead.
int run_tiny(const Options& o) {
  float a[16], b[16], c[16], x[4], y[4];
  double ad[16], bd[16], cd[16], xd[4], yd[4];
  for (int i = 0; i < 16; ++i) a[i] = ad[i] = 0.25f + 0.01f * i, b[i] = bd[i] = 1.0f - 0.02f * i, c[i] = cd[i] = 0.5f;
  for (int i = 0; i < 4; ++i) x[i] = xd[i] = 1.0f - 0.1f * i, y[i] = yd[i] = 0.5f;
  const int four = 4, one = 1;
  const float alpha = 1.0f, beta = 0.0f;
  const double alphad = 1.0, betad = 0.0;
  volatile double sink = 0;
  struct Case {
    const char* routine;
    const char* shape;
    std::function<void()> f;
  };
  const Case cases[] = {
      {"sgemv_n", "4x4", [&] { sgemv_("N", &four, &four, &alpha, a, &four, x, &one, &beta, y, &one, 1); }},
      {"snrm2", "4", [&] { sink = sink + snrm2_(&four, x, &one); }},
      {"sgemm_nn", "4x4x4",
       [&] { sgemm_("N", "N", &four, &four, &four, &alpha, a, &four, b, &four, &beta, c, &four, 1, 1); }},
      {"dgemv_n", "4x4", [&] { dgemv_("N", &four, &four, &alphad, ad, &four, xd, &one, &betad, yd, &one, 1); }},
      {"dnrm2", "4", [&] { sink = sink + dnrm2_(&four, xd, &one); }},
      {"dgemm_nn", "4x4x4",
       [&] { dgemm_("N", "N", &four, &four, &four, &alphad, ad, &four, bd, &four, &betad, cd, &four, 1, 1); }},
  };
  const double warm_s = std::min(o.warmup_s, 0.2), sample_s = 0.005;
  const int samples = 41;
  for (const auto& cs : cases) {
    const auto w0 = Clock::now();
    int64_t calls = 0;
    while (seconds_since(w0) < warm_s || calls < 1000) {
      for (int i = 0; i < 100; ++i) cs.f();
      calls += 100;
    }
    const int64_t batch = std::max<int64_t>(100, static_cast<int64_t>(sample_s * calls / seconds_since(w0)));
    std::vector<double> per_call;
    double total = 0;
    for (int r = 0; r < samples; ++r) {
      const auto t0 = Clock::now();
      for (int64_t i = 0; i < batch; ++i) cs.f();
      const double s = seconds_since(t0);
      total += s;
      per_call.push_back(s / static_cast<double>(batch));
    }
    const Stats st = summarize(per_call, batch, total);
    std::printf(
        "{\"kind\": \"tiny\", \"routine\": \"%s\", \"shape\": \"%s\", \"mode\": \"%s\", \"round\": %d, "
        "\"median_ns\": %.2f, \"min_ns\": %.2f, \"max_ns\": %.2f, \"reps\": %d, \"calls_per_rep\": %lld}\n",
        cs.routine, cs.shape, json_escape(mode_name()).c_str(), o.round, 1e3 * st.median_us, 1e3 * st.min_us,
        1e3 * st.max_us, st.reps, static_cast<long long>(batch));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace bo_bench
