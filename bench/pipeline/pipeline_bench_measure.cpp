// How blasoffload_bench_pipeline measures one point: host operands, the timed calls within the budget, and the
// randomized check of the result.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../hash_uniform.h"
#include "pipeline_bench.h"

namespace bo_bench {

// ---- Host matrices ----

unsigned hw_threads() {
  static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

namespace {

// Splits [0, n) into one contiguous range per hardware thread (fills of tens of GB must use every core).
void parallel_for(size_t n, const std::function<void(size_t, size_t, unsigned)>& body) {
  const size_t parts = std::max<size_t>(1, std::min<size_t>(hw_threads(), n / 4096));
  std::vector<std::thread> threads;
  for (size_t p = 1; p < parts; ++p)
    threads.emplace_back(body, n * p / parts, n * (p + 1) / parts, static_cast<unsigned>(p));
  body(0, n / parts, 0);
  for (auto& t : threads) t.join();
}

}  // namespace

void fill_random(const Buffer& b, uint64_t seed) {
  float* p = b.get();
  parallel_for(b.size(), [&](size_t lo, size_t hi, unsigned) {
    for (size_t i = lo; i < hi; ++i) p[i] = hash_uniform(i, seed);
  });
}

void fill_nan(const Buffer& b) {
  float* p = b.get();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  parallel_for(b.size(), [&](size_t lo, size_t hi, unsigned) { std::fill(p + lo, p + hi, nan); });
}

int sets_for(double set_bytes, int wanted, int minimum) {
  if (wanted > 0) return wanted;
  return std::max(minimum, int(std::ceil(256.0 * 1048576.0 / set_bytes)));
}

double mem_available_gib() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kb;
  std::string unit;
  while (f >> key >> kb) {
    std::getline(f, unit);
    if (key == "MemAvailable:") return kb / 1048576.0;
  }
  return -1;
}

// ---- The randomized check: C r against alpha A (B r) + beta C0 r, in double ----

namespace {

// y = M x for a column-major rows x cols matrix; columns split over the threads, partial sums added at the end.
std::vector<double> matvec(const float* M, int64_t rows, int64_t cols, int64_t ld, const std::vector<double>& x) {
  const size_t parts = std::max<size_t>(1, std::min<size_t>(hw_threads(), size_t(cols)));
  std::vector<std::vector<double>> partial(parts, std::vector<double>(size_t(rows), 0.0));
  std::vector<std::thread> threads;
  auto body = [&](size_t p) {
    double* y = partial[p].data();
    const int64_t j0 = int64_t(size_t(cols) * p / parts), j1 = int64_t(size_t(cols) * (p + 1) / parts);
    for (int64_t j = j0; j < j1; ++j) {
      const float* col = M + j * ld;
      const double xj = x[size_t(j)];
      for (int64_t i = 0; i < rows; ++i) y[i] += double(col[i]) * xj;
    }
  };
  for (size_t p = 1; p < parts; ++p) threads.emplace_back(body, p);
  body(0);
  for (auto& t : threads) t.join();
  std::vector<double> y(size_t(rows), 0.0);
  for (const auto& v : partial)
    for (size_t i = 0; i < v.size(); ++i) y[i] += v[i];
  return y;
}

double norm2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

struct CheckPrep {
  std::vector<double> r, y0;
};

// Before the checked call: beta 0 poisons C with NaN (an element the engine leaves unwritten, or reads although
// beta is 0, shows up as NaN); otherwise y0 = C r of the C it starts from.
CheckPrep prepare_check(const Operands& o, int set, float beta) {
  CheckPrep p;
  p.r.resize(size_t(o.n));
  for (int64_t j = 0; j < o.n; ++j) p.r[size_t(j)] = hash_uniform(uint64_t(j), 977);
  if (beta == 0.0f)
    fill_nan(o.c[size_t(set)]);
  else
    p.y0 = matvec(o.c[size_t(set)].get(), o.m, o.n, o.m, p.r);
  return p;
}

// Normwise: ||C r - ref|| / (|alpha| ||A (B r)|| + |beta| ||C0 r||) <= k eps. FP32 rounding gives about sqrt(k) eps
// here; a wrong or missing tile gives 1e-3 and more, TF32 arithmetic about sqrt(k) 5e-4.
CheckResult finish_check(const Operands& o, int set, float alpha, float beta, const CheckPrep& p) {
  const auto t0 = Clock::now();
  CheckResult r;
  r.done = true;
  const size_t s = size_t(set);
  const std::vector<double> br = matvec(o.b[s].get(), o.k, o.n, o.k, p.r);
  const std::vector<double> abr = matvec(o.a[s].get(), o.m, o.k, o.m, br);
  const std::vector<double> cr = matvec(o.c[s].get(), o.m, o.n, o.m, p.r);
  std::vector<double> diff(cr.size());
  for (size_t i = 0; i < cr.size(); ++i)
    diff[i] = cr[i] - (double(alpha) * abr[i] + (p.y0.empty() ? 0.0 : double(beta) * p.y0[i]));
  const double den =
      std::fabs(double(alpha)) * norm2(abr) + (p.y0.empty() ? 0.0 : std::fabs(double(beta)) * norm2(p.y0));
  r.rel_err = norm2(diff) / (den > 0 ? den : 1.0);
  r.bound = double(std::max<int64_t>(o.k, 1)) * double(FLT_EPSILON);
  r.pass = std::isfinite(r.rel_err) && r.rel_err <= r.bound;
  r.ms = ms_since(t0);
  return r;
}

}  // namespace

// ---- Measuring one point ----

double flops(const Operands& o) { return 2.0 * double(o.m) * double(o.n) * double(o.k); }

namespace {

// Sets an environment variable for one scope (the engine reads its knobs at each call) and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    const char* old = std::getenv(name_.c_str());
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name_.c_str(), value.c_str(), 1);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// A first guess at one call, only to skip a point whose warm-up alone would overrun the budget.
double guess_ms(const Variant& v, const Operands& o) {
  const double bytes = 4.0 * double(o.m * o.k + o.k * o.n + 2 * o.m * o.n);
  if (!v.engine) return 1e3 * std::max(flops(o) / 0.8e12, bytes / 30e9);
  return 1e3 * std::max(flops(o) / 30e12, bytes / 15e9);
}

int run_call(const Context& ctx, const Variant& v, const Operands& o, int set, int64_t sub_n, float alpha, float beta,
             double* ms, bo_gemm_stats* st, bool* have_st) {
  const size_t s = size_t(set);
  const int64_t m = sub_n > 0 ? std::min(sub_n, o.m) : o.m, n = sub_n > 0 ? std::min(sub_n, o.n) : o.n,
                k = sub_n > 0 ? std::min(sub_n, o.k) : o.k;
  *have_st = false;
  int status = BO_CUDA_OK;
  const auto t0 = Clock::now();
  if (!v.engine || ctx.opt.stand_in) {
    cpu_sgemm('N', 'N', m, n, k, alpha, o.a[s].get(), o.m, o.b[s].get(), o.k, beta, o.c[s].get(), o.m);
  } else {
    bo_call call{};
    call.routine = BO_R_SGEMM;
    call.op[0] = call.op[1] = 'N';
    call.m = m, call.n = n, call.k = k;
    call.alpha = alpha, call.beta = beta;
    call.a = o.a[s].get(), call.lda = o.m;
    call.b = o.b[s].get(), call.ldb = o.k;
    call.c = o.c[s].get(), call.ldc = o.m;
    status = ctx.module.mod->call(&call, v.cpu_share);
  }
  *ms = ms_since(t0);
  if (status == BO_CUDA_OK && v.engine && !ctx.opt.stand_in) {
    *st = bo_gemm_stats{};
    *have_st = ctx.module.mod->last_gemm_stats(st) == 0;
  }
  return status;
}

}  // namespace

Result measure(Context& ctx, const Point& pt, const Operands& o) {
  Result r;
  r.reps_wanted = pt.reps;
  std::vector<std::unique_ptr<ScopedEnv>> env;
  for (const auto& kv : pt.v.env) env.emplace_back(new ScopedEnv(kv.first, kv.second));
  const int64_t calls0 = g_cpu_sgemm_calls.load();
  double ms;
  bo_gemm_stats st{};
  bool have;

  if (guess_ms(pt.v, o) / 1e3 > ctx.left_s()) {
    r.skipped = "budget: " + std::to_string(int(ctx.left_s())) + " s left before the warm-up";
    return r;
  }
  // The first call of a configuration allocates pinned and device pools and starts CPU BLAS threads.
  r.status = run_call(ctx, pt.v, o, 0, pt.warmup_sub_n, pt.alpha, pt.beta, &ms, &st, &have);
  r.warmup_ms = ms;
  if (r.status != BO_CUDA_OK) return r;
  // The warm-up call is the slowest: it bounds what a timed one costs.
  const double per_call_s = (pt.warmup_sub_n > 0 ? guess_ms(pt.v, o) : ms) / 1e3;
  const int extra = ctx.opt.check && pt.v.engine && !pt.check_timed ? 1 : 0;
  const int fit = int(std::floor(ctx.left_s() / per_call_s)) - extra;
  const int reps = std::min(pt.reps, fit);
  if (reps < 1) {
    r.skipped = "budget: " + std::to_string(int(ctx.left_s())) + " s left after the warm-up";
    return r;
  }
  const bool check = ctx.opt.check && pt.v.engine;
  CheckPrep prep;
  // A full warm-up used set 0: the timed calls start at the next one, so no call reuses its predecessor's operands.
  const int offset = pt.warmup_sub_n > 0 ? 0 : 1;
  for (int i = 0; i < reps; ++i) {
    const int set = (i + offset) % o.sets();
    if (check && pt.check_timed && i == reps - 1) prep = prepare_check(o, set, pt.beta);
    r.status = run_call(ctx, pt.v, o, set, 0, pt.alpha, pt.beta, &ms, &st, &have);
    if (r.status != BO_CUDA_OK) return r;
    r.ms.push_back(ms);
    r.stats.push_back(st);
    r.have_stats.push_back(have);
    if (check && pt.check_timed && i == reps - 1) r.check = finish_check(o, set, pt.alpha, pt.beta, prep);
  }
  if (check && !pt.check_timed) {
    const int set = (reps + offset) % o.sets();
    prep = prepare_check(o, set, pt.beta);
    r.status = run_call(ctx, pt.v, o, set, 0, pt.alpha, pt.beta, &ms, &st, &have);
    if (r.status == BO_CUDA_OK) r.check = finish_check(o, set, pt.alpha, pt.beta, prep);
  }
  r.cpu_calls = g_cpu_sgemm_calls.load() - calls0;
  return r;
}

}  // namespace bo_bench
