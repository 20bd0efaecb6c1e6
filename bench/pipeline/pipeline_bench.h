// The parts of blasoffload_bench_pipeline that its files share: the options, the JSON lines, the CPU BLAS and the
// module, host operands, and what one measured point is.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "offload/cuda_module_api.h"

namespace bo_bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Options {
  std::vector<std::string> cases = {"sgemm_host", "rank_update", "out_of_core", "multi_gpu"};
  std::vector<int64_t> sizes = {4096, 8192, 16384};
  int64_t cpu_max_n = 8192;
  bool direct = true;
  int64_t rank_n = 16384;
  std::vector<int64_t> rank_k = {64, 256};
  std::vector<double> shares = {0.2, 0.3, 0.4, 0.5, 0.6};
  int hybrid_cpu_threads = 0;
  double pcie_gbs = 55;
  int64_t ooc_n = 49152;
  std::string ooc_limit = "8G";
  int64_t multi_n = 32768;
  std::string multi_devices = "0,1";
  int reps = 0;
  int sets = 0;
  double budget_s = 480;
  bool check = true;
  std::string module_path, cpu_blas_path;
  bool stand_in = false;
  std::string args;
};

// ---- Output (pipeline_bench_report.cpp) ----

std::string json_escape(const std::string& s);

// One JSON object, built field by field (non-finite numbers become null, which JSON has and NaN is not).
class Json {
 public:
  Json& num(const char* key, double v) {
    char buf[40];
    if (std::isfinite(v))
      std::snprintf(buf, sizeof buf, "%.6g", v);
    else
      std::snprintf(buf, sizeof buf, "null");
    return raw(key, buf);
  }
  Json& integer(const char* key, int64_t v) { return raw(key, std::to_string(v)); }
  Json& boolean(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  Json& str(const char* key, const std::string& v) { return raw(key, "\"" + json_escape(v) + "\""); }
  Json& nums(const char* key, const std::vector<double>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
      s += buf;
    }
    return raw(key, s + "]");
  }
  Json& raw(const char* key, const std::string& json) {
    body_ += (body_.empty() ? "\"" : ", \"") + json_escape(key) + "\": " + json;
    return *this;
  }
  std::string text() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

// Lines go out as they are measured: run.sh stops a process at its budget and keeps what was printed.
void emit(const Json& j);

// ---- The CPU BLAS, the host services lent to the module, the GPUs, the module (pipeline_bench_host.cpp) ----

// The CPU BLAS's Fortran ABI: everything by reference, 32-bit sizes, hidden string lengths last.
using sgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                          const int*, const float*, const int*, const float*, float*, const int*, size_t, size_t);

struct CpuBlas {
  std::string path, error;
  sgemm_fn sgemm = nullptr;
  char* (*corename)() = nullptr;
  char* (*config)() = nullptr;
  int (*get_threads)() = nullptr;
  void (*set_threads)(int) = nullptr;
};
extern CpuBlas g_cpu;
extern std::atomic<int64_t> g_cpu_sgemm_calls;

bool load_cpu_blas(const std::string& wanted);
void cpu_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

extern bool g_verbose;

struct Gpus {
  std::string error;  // empty when at least one device is there
  int count = 0;
  int driver_version = 0;
  std::vector<std::string> names;
  std::vector<double> memory_gib;
};

Gpus probe_gpus();

struct Module {
  const bo_cuda_module* mod = nullptr;
  std::string path, error;
  int init_status = -1;
};

Module load_module(const std::string& wanted);
const char* status_name(int s);

// ---- Host matrices (pipeline_bench_measure.cpp) ----

unsigned hw_threads();

// Page-aligned malloc'd storage (pageable, as a program's own matrices are); std::vector would zero every byte first.
class Buffer {
 public:
  explicit Buffer(size_t floats) : n_(floats) {
    const size_t bytes = std::max<size_t>(4096, (floats * sizeof(float) + 4095) / 4096 * 4096);
    p_ = static_cast<float*>(std::aligned_alloc(4096, bytes));
    if (!p_) throw std::bad_alloc();
  }
  Buffer(Buffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { std::free(p_); }
  float* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  float* p_;
  size_t n_;
};

void fill_random(const Buffer& b, uint64_t seed);
void fill_nan(const Buffer& b);

// A, B, C of one NN product (lda = m, ldb = k, ldc = m), in `sets` copies used in turn.
struct Operands {
  int64_t m, n, k;
  std::vector<Buffer> a, b, c;
  double fill_s = 0;

  Operands(int64_t m_, int64_t n_, int64_t k_, int sets, bool c_random) : m(m_), n(n_), k(k_) {
    const auto t0 = Clock::now();
    for (int s = 0; s < sets; ++s) {
      a.emplace_back(size_t(m) * size_t(k));
      b.emplace_back(size_t(k) * size_t(n));
      c.emplace_back(size_t(m) * size_t(n));
      fill_random(a.back(), 3 * s + 1);
      fill_random(b.back(), 3 * s + 2);
      if (c_random)
        fill_random(c.back(), 3 * s + 3);
      else
        fill_nan(c.back());
    }
    fill_s = ms_since(t0) / 1e3;
  }
  int sets() const { return int(a.size()); }
  double set_bytes() const { return 4.0 * double(m * k + k * n + m * n); }
};

// Enough sets to span 256 MB (so a short call reads memory, not the previous call's cache lines), and at least
// `minimum`: 2 where memory allows, so that consecutive calls never see the same pointers.
int sets_for(double set_bytes, int wanted, int minimum);
double mem_available_gib();

// ---- Measuring one point (pipeline_bench_measure.cpp) ----

struct CheckResult {
  bool done = false, pass = false;
  double rel_err = NAN, bound = NAN, ms = 0;
};

struct Context {
  Options opt;
  Gpus gpus;
  Module module;
  std::string gpu, date, commit;
  Clock::time_point deadline;
  int failures = 0;

  double left_s() const { return std::chrono::duration<double>(deadline - Clock::now()).count(); }
};

struct Variant {
  std::string name;
  bool engine = true;  // the module's sgemm; false: the CPU BLAS alone
  double cpu_share = 0;
  std::vector<std::pair<std::string, std::string>> env;  // engine knobs for this point only
};

struct Point {
  std::string case_name;
  Variant v;
  float alpha = 1, beta = 0;
  int reps = 5;
  int64_t warmup_sub_n = 0;  // > 0: warm up on the leading sub-block of this order (same ld) instead of a full call
  bool check_timed = false;  // check the last timed call (C poisoned before it when beta = 0) instead of an extra call
};

struct Result {
  std::vector<double> ms;
  std::vector<bo_gemm_stats> stats;
  std::vector<char> have_stats;
  int status = BO_CUDA_OK;
  std::string skipped;
  CheckResult check;
  double warmup_ms = NAN;
  int64_t cpu_calls = 0;
  int reps_wanted = 0;

  bool ok() const { return skipped.empty() && status == BO_CUDA_OK && !ms.empty(); }
  double median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    return s.empty() ? NAN : s[(s.size() - 1) / 2];
  }
  double min() const { return ok() ? *std::min_element(ms.begin(), ms.end()) : NAN; }
  double max() const { return ok() ? *std::max_element(ms.begin(), ms.end()) : NAN; }
  // The repetition whose time is the median: its stats explain the median time.
  int median_rep() const {
    std::vector<int> idx(ms.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = int(i);
    std::sort(idx.begin(), idx.end(), [&](int x, int y) { return ms[size_t(x)] < ms[size_t(y)]; });
    return idx.empty() ? -1 : idx[(idx.size() - 1) / 2];
  }
};

double flops(const Operands& o);
Result measure(Context& ctx, const Point& pt, const Operands& o);

// ---- Reporting a point (pipeline_bench_report.cpp) ----

Json line_start(const std::string& case_name, const std::string& variant);
void line_end(const Context& ctx, Json& j);
// One measured point as a JSON line; `extra` adds the case's own fields (targets, ratios).
void emit_point(Context& ctx, const Point& pt, const Operands& o, const Result& r,
                const std::function<void(Json&)>& extra = nullptr);
void emit_case_skip(Context& ctx, const std::string& case_name, const std::string& why);
double med_or_nan(const Result& r);
void emit_context(const Context& ctx, const CpuBlas& cpu);

// ---- Cases (pipeline_bench_cases.cpp) ----

void case_sgemm_host(Context& ctx);
void case_rank_update(Context& ctx);
void case_out_of_core(Context& ctx);
void case_multi_gpu(Context& ctx);

// ---- Arguments and context (pipeline_bench.cpp) ----

std::string env_or(const char* name, const char* fallback);

}  // namespace bo_bench
