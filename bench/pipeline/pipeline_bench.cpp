// blasoffload_bench_pipeline: times the CUDA module's sgemm engine on host (pageable) operands against the CPU BLAS,
// with the engine's per-stage statistics, as JSON lines for bench/common/reports/pipeline.py.
//
// The module is dlopen'ed and driven through its C table (src/offload/cuda_module_api.h, one generic call) as the core
// drives it, with host services whose cpu_call (an sgemm here) runs the CPU BLAS named by BO_CPU_BLAS: the hybrid
// share runs on the same library as the CPU-alone baseline. Nothing here links CUDA, so the program builds (and says
// why it cannot measure) on a machine without one.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "../hash_uniform.h"
#include "offload/cuda_module_api.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

constexpr int kExitOk = 0, kExitFailed = 1, kExitSetup = 2, kExitNoGpu = 3;

const char kUsage[] =
    "usage: blasoffload_bench_pipeline [options]\n"
    "Times the CUDA module's sgemm on host (malloc'd) operands; one JSON line of context, then one per measured\n"
    "point (and per case a \"summary\" line with its ratios) on stdout. NN products only.\n"
    "  --case=LIST          sgemm_host,rank_update,out_of_core,multi_gpu or all (default all, in that order)\n"
    "  --sizes=LIST         sgemm_host: n of the square products (default 4096,8192,16384), beta 0 and beta 1\n"
    "  --cpu-max-n=N        sgemm_host: CPU BLAS baseline up to this n (default 8192: about 1 s a call there)\n"
    "  --no-direct          sgemm_host: leave out engine_direct (the engine with BLASOFFLOAD_PIPELINE=off)\n"
    "  --rank-n=N           rank_update: m = n (default 16384)\n"
    "  --rank-k=LIST        rank_update: k values (default 64,256); alpha -1, beta 1 as sgetrf's trailing update\n"
    "  --shares=LIST        rank_update: hybrid cpu_share sweep (default 0.2,0.3,0.4,0.5,0.6)\n"
    "  --hybrid-cpu-threads=N  openblas_set_num_threads(N) around the hybrid points (default: unchanged)\n"
    "  --pcie-gbs=G         rank_update: PCIe rate of the floor, GB/s per direction (default 55)\n"
    "  --ooc-n=N            out_of_core: n (default 49152: 29 GB of host operands; smaller for a dry run)\n"
    "  --ooc-memory-limit=S out_of_core: BLASOFFLOAD_DEVICE_MEMORY_LIMIT for it (default 8G)\n"
    "  --multi-n=N          multi_gpu: n (default 32768)\n"
    "  --multi-devices=L    multi_gpu: BLASOFFLOAD_DEVICES of the multi-GPU variant (default 0,1; the single-GPU\n"
    "                       variant uses its first entry); skipped when the driver shows fewer devices\n"
    "  --reps=N             timed calls per point for every case (defaults: sgemm_host 5 up to n = 8192, else 3;\n"
    "                       rank_update 7; multi_gpu 3; out_of_core 1)\n"
    "  --sets=N             operand sets rotated per call (default: enough to span 256 MB, at least 2; out_of_core\n"
    "                       and multi_gpu 1)\n"
    "  --budget-s=S         the whole run's time budget: a point whose warm-up does not fit is skipped, its\n"
    "                       repetitions are cut to what fits (default 480)\n"
    "  --no-check           skip the randomized result checks\n"
    "  --quick              small sizes for a dry run (sgemm 1024,2048; rank 4096; out_of_core 8192; multi 4096)\n"
    "  --module=PATH        the module (default $BO_CUDA_MODULE, else next to the build tree or the carry's lib/)\n"
    "  --cpu-blas=PATH      the CPU BLAS (default $BO_CPU_BLAS, else libopenblas.so.0 from the library path)\n"
    "  --cpu-stand-in       testing the benchmark itself without a GPU: \"engine\" calls run the CPU BLAS\n"
    "Environment: BO_CPU_BLAS, BO_CUDA_MODULE, BO_COMMIT (copied into every line), BO_BENCH_VERBOSE (module log),\n"
    "the engine's BLASOFFLOAD_* knobs (recorded; cases set BLASOFFLOAD_PIPELINE, _DEVICE_MEMORY_LIMIT and _DEVICES\n"
    "for their own points only), OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS (recorded).\n"
    "Exit status: 0 all points measured and checked, 1 a point failed (engine error or check), 2 setup or usage\n"
    "error, 3 no GPU (nothing measured).\n";

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

// ---- Output ----

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

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
void emit(const Json& j) {
  std::printf("%s\n", j.text().c_str());
  std::fflush(stdout);
}

// ---- The CPU BLAS (Fortran ABI: everything by reference, 32-bit sizes, hidden string lengths last) ----

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
CpuBlas g_cpu;
std::atomic<int64_t> g_cpu_sgemm_calls{0};

bool load_cpu_blas(const std::string& wanted) {
  const char* env = std::getenv("BO_CPU_BLAS");
  g_cpu.path = !wanted.empty() ? wanted : (env && *env ? env : "libopenblas.so.0");
  // RTLD_LOCAL: the module must not find a sgemm_ of ours by accident; it gets the CPU BLAS through cpu_call only.
  void* h = dlopen(g_cpu.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    g_cpu.error = std::string("cannot load the CPU BLAS: ") + dlerror();
    return false;
  }
  g_cpu.sgemm = reinterpret_cast<sgemm_fn>(dlsym(h, "sgemm_"));
  if (!g_cpu.sgemm) {
    g_cpu.error = g_cpu.path + " has no sgemm_";
    return false;
  }
  g_cpu.corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
  g_cpu.config = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_config"));
  g_cpu.get_threads = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
  g_cpu.set_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(g_cpu.sgemm), &info) && info.dli_fname) g_cpu.path = info.dli_fname;
  return true;
}

void cpu_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (std::max({m, n, k, lda, ldb, ldc}) > INT_MAX) {
    // An LP64 CPU BLAS cannot take it; a silent truncation would time (and check) a different product.
    std::fprintf(stderr, "blasoffload_bench_pipeline: sgemm size over 2^31 for the CPU BLAS\n");
    std::abort();
  }
  const int im = int(m), in = int(n), ik = int(k), ila = int(lda), ilb = int(ldb), ilc = int(ldc);
  g_cpu.sgemm(&ta, &tb, &im, &in, &ik, &alpha, a, &ila, b, &ilb, &beta, c, &ilc, 1, 1);
}

// ---- Host services lent to the module ----

bool g_verbose = false;

const char* host_config(const char* key) { return std::getenv(key); }

void host_log(int level, const char* message) {
  // Level 0 is what the module says whatever BLASOFFLOAD_LOG is (a refused device, an abort).
  if (level <= BO_LOG_OFF || g_verbose) std::fprintf(stderr, "blasoffload: %s\n", message);
}

// The module's CPU share of a hybrid sgemm (and the tiles a failing GPU left) arrive as one normalised call.
void host_cpu_call(const bo_call* c) {
  if (c->routine != BO_R_SGEMM) {
    std::fprintf(stderr, "blasoffload_bench_pipeline: the module asked the CPU for %s; only sgemm is benchmarked\n",
                 bo_routine_name(c->routine));
    std::abort();
  }
  g_cpu_sgemm_calls.fetch_add(1, std::memory_order_relaxed);
  cpu_sgemm(c->op[0], c->op[1], c->m, c->n, c->k, float(c->alpha), static_cast<const float*>(c->a), c->lda,
            static_cast<const float*>(c->b), c->ldb, float(c->beta), static_cast<float*>(c->c), c->ldc);
}

const bo_cuda_host_services kHost = {BO_CUDA_API_VERSION, host_config, host_log, host_cpu_call};

// ---- GPUs as the driver sees them (libcuda.so.1 through dlopen: no CUDA at build time) ----

struct Gpus {
  std::string error;  // empty when at least one device is there
  int count = 0;
  int driver_version = 0;
  std::vector<std::string> names;
  std::vector<double> memory_gib;
};

Gpus probe_gpus() {
  Gpus g;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    g.error = std::string("no NVIDIA driver (") + dlerror() + ")";
    return g;
  }
  auto cu_init = reinterpret_cast<int (*)(unsigned)>(dlsym(h, "cuInit"));
  auto cu_count = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDeviceGetCount"));
  auto cu_get = reinterpret_cast<int (*)(int*, int)>(dlsym(h, "cuDeviceGet"));
  auto cu_name = reinterpret_cast<int (*)(char*, int, int)>(dlsym(h, "cuDeviceGetName"));
  auto cu_version = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDriverGetVersion"));
  auto cu_mem = reinterpret_cast<int (*)(size_t*, int)>(dlsym(h, "cuDeviceTotalMem_v2"));
  if (!cu_init || !cu_count || !cu_get || !cu_name) {
    g.error = "libcuda.so.1 lacks the driver API entry points";
    return g;
  }
  if (cu_version) cu_version(&g.driver_version);
  const int rc = cu_init(0);
  if (rc != 0) {
    g.error = rc == 100 ? "the NVIDIA driver sees no device" : "cuInit failed (CUDA error " + std::to_string(rc) + ")";
    return g;
  }
  if (cu_count(&g.count) != 0 || g.count <= 0) {
    g.count = 0;
    g.error = "the NVIDIA driver sees no device";
    return g;
  }
  for (int i = 0; i < g.count; ++i) {
    int dev = 0;
    char name[256] = "?";
    size_t bytes = 0;
    if (cu_get(&dev, i) == 0) {
      cu_name(name, sizeof name, dev);
      if (cu_mem) cu_mem(&bytes, dev);
    }
    g.names.push_back(name);
    g.memory_gib.push_back(double(bytes) / double(1ull << 30));
  }
  return g;
}

// ---- The module ----

struct Module {
  const bo_cuda_module* mod = nullptr;
  std::string path, error;
  int init_status = -1;
};

std::string exe_dir() {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return ".";
  self[len] = '\0';
  std::string s(self);
  return s.substr(0, s.rfind('/'));
}

Module load_module(const std::string& wanted) {
  Module m;
  std::vector<std::string> candidates;
  const char* env = std::getenv("BO_CUDA_MODULE");
  if (!wanted.empty()) {
    candidates = {wanted};
  } else if (env && *env) {
    candidates = {env};
  } else {
    // The build tree (<build>/bench/pipeline/ -> <build>/), the carry (bin/ -> lib/), or beside the binary.
    const std::string d = exe_dir();
    candidates = {d + "/../../libblasoffload_cuda.so", d + "/../lib/libblasoffload_cuda.so",
                  d + "/libblasoffload_cuda.so"};
  }
  m.path = candidates.front();
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) {
      m.path = c;
      break;
    }
  void* h = dlopen(m.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    m.error = std::string("cannot load the module: ") + dlerror();
    return m;
  }
  auto entry = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY));
  if (!entry) {
    m.error = m.path + " has no " BO_CUDA_MODULE_ENTRY " (a module of another API version?)";
    return m;
  }
  const bo_cuda_module* mod = entry();
  if (!mod || mod->version != BO_CUDA_API_VERSION || !mod->call || !mod->last_gemm_stats) {
    m.error = "the module's table is not API version " + std::to_string(BO_CUDA_API_VERSION);
    return m;
  }
  m.mod = mod;
  m.init_status = mod->init(&kHost);
  if (m.init_status != BO_CUDA_OK) m.error = "module init failed with status " + std::to_string(m.init_status);
  return m;
}

const char* status_name(int s) {
  switch (s) {
    case BO_CUDA_OK:
      return "ok";
    case BO_CUDA_NO_DEVICE:
      return "no_device";
    case BO_CUDA_OUT_OF_MEMORY:
      return "out_of_memory";
    case BO_CUDA_LAUNCH_FAILED:
      return "launch_failed";
    case BO_CUDA_UNSUPPORTED:
      return "unsupported";
    case BO_CUDA_FORKED_CHILD:
      return "forked_child";
    default:
      return "unknown";
  }
}

// ---- Host matrices ----

unsigned hw_threads() {
  static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

// Splits [0, n) into one contiguous range per hardware thread (fills of tens of GB must use every core).
void parallel_for(size_t n, const std::function<void(size_t, size_t, unsigned)>& body) {
  const size_t parts = std::max<size_t>(1, std::min<size_t>(hw_threads(), n / 4096));
  std::vector<std::thread> threads;
  for (size_t p = 1; p < parts; ++p)
    threads.emplace_back(body, n * p / parts, n * (p + 1) / parts, static_cast<unsigned>(p));
  body(0, n / parts, 0);
  for (auto& t : threads) t.join();
}

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

struct CheckResult {
  bool done = false, pass = false;
  double rel_err = NAN, bound = NAN, ms = 0;
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

// ---- Measuring one point ----

struct Context {
  Options opt;
  Gpus gpus;
  Module module;
  std::string gpu, date, commit;
  Clock::time_point deadline;
  int failures = 0;

  double left_s() const { return std::chrono::duration<double>(deadline - Clock::now()).count(); }
};

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

double flops(const Operands& o) { return 2.0 * double(o.m) * double(o.n) * double(o.k); }

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

std::string stats_json(const bo_gemm_stats& s) {
  Json j;
  j.integer("path", s.path).integer("devices", s.devices).integer("tile_m", s.tile_m).integer("tile_n", s.tile_n);
  j.integer("k_passes", s.k_passes).integer("tiles", s.tiles).integer("tiles_cpu", s.tiles_cpu);
  j.integer("panel_uploads", s.panel_uploads).integer("n_cpu_cols", s.n_cpu_cols).integer("m_cpu_rows", s.m_cpu_rows);
  j.num("bytes_h2d", s.bytes_h2d).num("bytes_d2h", s.bytes_d2h).num("wall_ms", s.wall_ms);
  j.num("cpu_part_ms", s.cpu_part_ms).num("first_kernel_ms", s.first_kernel_ms).num("h2d_busy_ms", s.h2d_busy_ms);
  j.num("kernel_busy_ms", s.kernel_busy_ms).num("d2h_busy_ms", s.d2h_busy_ms).num("pack_ms", s.pack_ms);
  j.num("unpack_ms", s.unpack_ms);
  return j.text();
}

Json line_start(const std::string& case_name, const std::string& variant) {
  Json j;
  j.str("case", case_name).str("variant", variant);
  return j;
}

void line_end(const Context& ctx, Json& j) {
  j.str("gpu", ctx.gpu).str("date", ctx.date).str("commit", ctx.commit);
  if (ctx.opt.stand_in) j.boolean("stand_in", true);
}

// One measured point as a JSON line; `extra` adds the case's own fields (targets, ratios).
void emit_point(Context& ctx, const Point& pt, const Operands& o, const Result& r,
                const std::function<void(Json&)>& extra = nullptr) {
  Json j = line_start(pt.case_name, pt.v.name);
  j.integer("m", o.m).integer("n", o.n).integer("k", o.k).str("ta", "N").str("tb", "N");
  j.num("alpha", pt.alpha).num("beta", pt.beta).num("cpu_share", pt.v.cpu_share).integer("sets", o.sets());
  if (!pt.v.env.empty()) {
    Json e;
    for (const auto& kv : pt.v.env) e.str(kv.first.c_str(), kv.second);
    j.raw("env", e.text());
  }
  if (pt.warmup_sub_n > 0) j.integer("warmup_n", pt.warmup_sub_n);
  j.num("warmup_ms", r.warmup_ms);
  if (!r.skipped.empty()) {
    j.str("skipped", r.skipped);
  } else if (r.status != BO_CUDA_OK) {
    j.integer("status", r.status).str("error", std::string("engine returned ") + status_name(r.status));
    ++ctx.failures;
  } else {
    const double med = r.median();
    j.integer("reps", int64_t(r.ms.size())).integer("reps_wanted", r.reps_wanted);
    j.num("median_ms", med).num("min_ms", r.min()).num("max_ms", r.max()).nums("times_ms", r.ms);
    j.num("gflops", flops(o) / (med * 1e6)).num("gflops_best", flops(o) / (r.min() * 1e6));
    if (pt.v.engine) j.integer("cpu_sgemm_calls", r.cpu_calls);
    const int mr = r.median_rep();
    if (mr >= 0 && r.have_stats[size_t(mr)]) {
      const bo_gemm_stats& s = r.stats[size_t(mr)];
      j.raw("stats", stats_json(s));
      // Busy rates: the link while it moved data; wall rates: what the call as a whole achieved.
      j.num("h2d_gbs", s.h2d_busy_ms > 0 ? s.bytes_h2d / (s.h2d_busy_ms * 1e6) : NAN);
      j.num("d2h_gbs", s.d2h_busy_ms > 0 ? s.bytes_d2h / (s.d2h_busy_ms * 1e6) : NAN);
      j.num("h2d_wall_gbs", s.bytes_h2d / (med * 1e6)).num("d2h_wall_gbs", s.bytes_d2h / (med * 1e6));
    }
    if (r.check.done) {
      Json c;
      c.num("rel_err", r.check.rel_err).num("bound", r.check.bound).boolean("pass", r.check.pass);
      c.num("ms", r.check.ms);
      j.raw("check", c.text());
      if (!r.check.pass) {
        ++ctx.failures;
        std::fprintf(stderr,
                     "blasoffload_bench_pipeline: CHECK FAILED: %s %s m=%lld n=%lld k=%lld beta=%g: "
                     "relative error %.3g > %.3g\n",
                     pt.case_name.c_str(), pt.v.name.c_str(), (long long)o.m, (long long)o.n, (long long)o.k,
                     double(pt.beta), r.check.rel_err, r.check.bound);
      }
    }
  }
  if (extra) extra(j);
  line_end(ctx, j);
  emit(j);
  std::string said;
  if (!r.skipped.empty())
    said = r.skipped;
  else if (r.status != BO_CUDA_OK)
    said = status_name(r.status);
  else
    said = std::to_string(r.median()) + " ms median of " + std::to_string(r.ms.size()) +
           (r.check.done ? (r.check.pass ? ", check ok" : ", CHECK FAILED") : "");
  std::fprintf(stderr, "  %-12s %-14s m=%-6lld n=%-6lld k=%-6lld beta=%g share=%.2f: %s\n", pt.case_name.c_str(),
               pt.v.name.c_str(), (long long)o.m, (long long)o.n, (long long)o.k, double(pt.beta), pt.v.cpu_share,
               said.c_str());
}

void emit_case_skip(Context& ctx, const std::string& case_name, const std::string& why) {
  Json j = line_start(case_name, "case");
  j.str("skipped", why);
  line_end(ctx, j);
  emit(j);
  std::fprintf(stderr, "  %s: skipped: %s\n", case_name.c_str(), why.c_str());
}

double med_or_nan(const Result& r) { return r.ok() ? r.median() : NAN; }

// ---- Cases ----

void case_sgemm_host(Context& ctx) {
  const Options& opt = ctx.opt;
  for (const int64_t n : opt.sizes) {
    if (ctx.left_s() < 5) {
      emit_case_skip(ctx, "sgemm_host", "budget: n=" + std::to_string(n) + " not started");
      continue;
    }
    const double set_bytes = 12.0 * double(n) * double(n);
    Operands o(n, n, n, sets_for(set_bytes, opt.sets, 2), true);
    std::fprintf(stderr, "sgemm_host n=%lld: %d operand sets filled in %.1f s\n", (long long)n, o.sets(), o.fill_s);
    const int reps = opt.reps > 0 ? opt.reps : (n <= 8192 ? 5 : 3);
    for (const float beta : {0.0f, 1.0f}) {
      Point eng{"sgemm_host", {"engine", true, 0, {}}, 1.0f, beta, reps};
      const Result re = measure(ctx, eng, o);
      emit_point(ctx, eng, o, re);
      Result rd;
      if (opt.direct) {
        Point dir{"sgemm_host", {"engine_direct", true, 0, {{"BLASOFFLOAD_PIPELINE", "off"}}}, 1.0f, beta, reps};
        rd = measure(ctx, dir, o);
        emit_point(ctx, dir, o, rd);
      }
      Result rc;
      if (n <= opt.cpu_max_n) {
        Point cpu{"sgemm_host", {"cpu", false, 0, {}}, 1.0f, beta, reps};
        rc = measure(ctx, cpu, o);
        emit_point(ctx, cpu, o, rc);
      }
      Json j = line_start("sgemm_host", "summary");
      j.integer("m", n).integer("n", n).integer("k", n).num("beta", beta);
      j.num("engine_ms", med_or_nan(re)).num("engine_min_ms", re.min()).num("engine_max_ms", re.max());
      j.num("cpu_ms", med_or_nan(rc)).num("cpu_min_ms", rc.min()).num("cpu_max_ms", rc.max());
      j.num("direct_ms", med_or_nan(rd));
      j.num("speedup_vs_cpu", med_or_nan(rc) / med_or_nan(re));
      j.num("speedup_vs_direct", med_or_nan(rd) / med_or_nan(re));
      if (n == 8192 || n == 16384) j.num("target_ms", n == 8192 ? 30.0 : 200.0);
      line_end(ctx, j);
      emit(j);
    }
  }
}

void case_rank_update(Context& ctx) {
  const Options& opt = ctx.opt;
  const int64_t n = opt.rank_n;
  for (const int64_t k : opt.rank_k) {
    if (ctx.left_s() < 5) {
      emit_case_skip(ctx, "rank_update", "budget: k=" + std::to_string(k) + " not started");
      continue;
    }
    const double set_bytes = 4.0 * double(2 * n * k + n * n);
    Operands o(n, n, k, sets_for(set_bytes, opt.sets, 2), true);
    std::fprintf(stderr, "rank_update n=%lld k=%lld: %d operand sets filled in %.1f s\n", (long long)n, (long long)k,
                 o.sets(), o.fill_s);
    const int reps = opt.reps > 0 ? opt.reps : 7;
    Point cpu{"rank_update", {"cpu", false, 0, {}}, -1.0f, 1.0f, reps};
    const Result rc = measure(ctx, cpu, o);
    emit_point(ctx, cpu, o, rc);
    Point gpu{"rank_update", {"gpu", true, 0, {}}, -1.0f, 1.0f, reps};
    const Result rg = measure(ctx, gpu, o);
    emit_point(ctx, gpu, o, rg);
    const int threads0 = g_cpu.get_threads ? g_cpu.get_threads() : 0;
    if (opt.hybrid_cpu_threads > 0 && g_cpu.set_threads) g_cpu.set_threads(opt.hybrid_cpu_threads);
    double best_ms = NAN, best_share = NAN, best_min = NAN, best_max = NAN;
    for (const double share : opt.shares) {
      Point hy{"rank_update", {"hybrid", true, share, {}}, -1.0f, 1.0f, reps};
      const Result rh = measure(ctx, hy, o);
      emit_point(ctx, hy, o, rh, [&](Json& j) {
        if (opt.hybrid_cpu_threads > 0) j.integer("cpu_threads", opt.hybrid_cpu_threads);
      });
      if (rh.ok() && !(rh.median() >= best_ms)) {
        best_ms = rh.median();
        best_share = share;
        best_min = rh.min();
        best_max = rh.max();
      }
    }
    if (opt.hybrid_cpu_threads > 0 && g_cpu.set_threads && threads0 > 0) g_cpu.set_threads(threads0);
    // Minimal traffic: C, A, B in; C out; both directions at once, each at the PCIe rate.
    const double in_bytes = 4.0 * double(n * n + 2 * n * k), out_bytes = 4.0 * double(n * n);
    const double floor_ms = std::max(in_bytes, out_bytes) / (opt.pcie_gbs * 1e6);
    const double single = std::fmin(med_or_nan(rc), med_or_nan(rg));  // fmin: a missing side does not count
    Json j = line_start("rank_update", "summary");
    j.integer("m", n).integer("n", n).integer("k", k).num("pcie_gbs", opt.pcie_gbs).num("floor_ms", floor_ms);
    j.num("cpu_ms", med_or_nan(rc)).num("cpu_min_ms", rc.min()).num("cpu_max_ms", rc.max());
    j.num("gpu_ms", med_or_nan(rg)).num("gpu_min_ms", rg.min()).num("gpu_max_ms", rg.max());
    j.num("gpu_vs_floor", med_or_nan(rg) / floor_ms).num("target_gpu_vs_floor", 1.2);
    j.num("best_share", best_share).num("best_hybrid_ms", best_ms).num("best_hybrid_min_ms", best_min);
    j.num("best_hybrid_max_ms", best_max);
    j.num("best_single_ms", single).str("best_single", single == med_or_nan(rc) ? "cpu" : "gpu");
    j.num("hybrid_speedup", single / best_ms).num("target_hybrid_speedup", 1.5);
    line_end(ctx, j);
    emit(j);
  }
}

void case_out_of_core(Context& ctx) {
  const Options& opt = ctx.opt;
  const int64_t n = opt.ooc_n;
  const double need_gib = 12.0 * double(n) * double(n) / double(1ull << 30);
  const double avail = mem_available_gib();
  if (avail > 0 && need_gib + 2 > avail) {
    char why[160];
    std::snprintf(why, sizeof why, "n=%lld needs %.1f GiB of host operands, %.1f GiB available", (long long)n, need_gib,
                  avail);
    emit_case_skip(ctx, "out_of_core", why);
    return;
  }
  // A, B random; C poisoned with NaN: beta is 0, and an element the engine never writes must show in the check.
  Operands o(n, n, n, 1, false);
  std::fprintf(stderr, "out_of_core n=%lld: %.1f GiB filled in %.1f s\n", (long long)n, need_gib, o.fill_s);
  const int reps = opt.reps > 0 ? opt.reps : 1;
  Point pt{"out_of_core", {"engine", true, 0, {{"BLASOFFLOAD_DEVICE_MEMORY_LIMIT", opt.ooc_limit}}}, 1.0f, 0.0f, reps};
  // A full-size warm-up would double the case's time: the first call's pools are set up on the leading block, with
  // the same leading dimension and knobs.
  pt.warmup_sub_n = std::min<int64_t>(n, 8192);
  pt.check_timed = true;
  const Result r = measure(ctx, pt, o);
  emit_point(ctx, pt, o, r, [&](Json& j) { j.num("fill_s", o.fill_s).num("host_gib", need_gib); });
}

void case_multi_gpu(Context& ctx) {
  const Options& opt = ctx.opt;
  if (ctx.gpus.count < 2 && !opt.stand_in) {
    emit_case_skip(ctx, "multi_gpu", "the driver shows " + std::to_string(ctx.gpus.count) + " GPU(s): needs 2");
    return;
  }
  const int64_t n = opt.multi_n;
  Operands o(n, n, n, sets_for(12.0 * double(n) * double(n), opt.sets, 1), true);
  std::fprintf(stderr, "multi_gpu n=%lld: filled in %.1f s\n", (long long)n, o.fill_s);
  const int reps = opt.reps > 0 ? opt.reps : 3;
  const std::string first = opt.multi_devices.substr(0, opt.multi_devices.find(','));
  Point one{"multi_gpu", {"1gpu", true, 0, {{"BLASOFFLOAD_DEVICES", first}}}, 1.0f, 0.0f, reps};
  const Result r1 = measure(ctx, one, o);
  emit_point(ctx, one, o, r1);
  Point two{"multi_gpu", {"multi", true, 0, {{"BLASOFFLOAD_DEVICES", opt.multi_devices}}}, 1.0f, 0.0f, reps};
  const Result r2 = measure(ctx, two, o);
  emit_point(ctx, two, o, r2);
  Json j = line_start("multi_gpu", "summary");
  j.integer("m", n).integer("n", n).integer("k", n).str("devices", opt.multi_devices);
  j.num("one_ms", med_or_nan(r1)).num("one_min_ms", r1.min()).num("one_max_ms", r1.max());
  j.num("multi_ms", med_or_nan(r2)).num("multi_min_ms", r2.min()).num("multi_max_ms", r2.max());
  const int mr = r2.ok() ? r2.median_rep() : -1;
  if (mr >= 0 && r2.have_stats[size_t(mr)]) j.integer("multi_devices_used", r2.stats[size_t(mr)].devices);
  j.num("speedup", med_or_nan(r1) / med_or_nan(r2)).num("target_speedup", 1.7);
  line_end(ctx, j);
  emit(j);
}

// ---- Arguments and context ----

bool parse_int(const std::string& s, int64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || v < 0 || v > 9e15 || v != std::floor(v)) return false;
  *out = int64_t(v);
  return true;
}

template <typename T>
bool parse_list(const std::string& s, std::vector<T>* out) {
  out->clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (std::is_integral<T>::value) {
      int64_t v;
      if (!parse_int(item, &v) || v < 1) return false;
      out->push_back(T(v));
    } else {
      char* end = nullptr;
      const double v = std::strtod(item.c_str(), &end);
      if (end == item.c_str() || *end || !(v >= 0 && v <= 1)) return false;
      out->push_back(T(v));
    }
  }
  return !out->empty();
}

// Returns -1 to go on, else the exit status.
int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    o->args += (i > 1 ? " " : "") + a;
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), val = eq == std::string::npos ? "" : a.substr(eq + 1);
    int64_t v = 0;
    bool ok = true;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (key == "--case") {
      std::vector<std::string> c;
      std::stringstream ss(val == "all" ? "sgemm_host,rank_update,out_of_core,multi_gpu" : val);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (item != "sgemm_host" && item != "rank_update" && item != "out_of_core" && item != "multi_gpu") ok = false;
        c.push_back(item);
      }
      ok = ok && !c.empty();
      o->cases = c;
    } else if (key == "--sizes") {
      ok = parse_list(val, &o->sizes);
    } else if (key == "--cpu-max-n") {
      ok = parse_int(val, &o->cpu_max_n);
    } else if (a == "--no-direct") {
      o->direct = false;
    } else if (key == "--rank-n") {
      ok = parse_int(val, &o->rank_n) && o->rank_n > 0;
    } else if (key == "--rank-k") {
      ok = parse_list(val, &o->rank_k);
    } else if (key == "--shares") {
      ok = parse_list(val, &o->shares);
    } else if (key == "--hybrid-cpu-threads") {
      ok = parse_int(val, &v) && v > 0 && v < 4096;
      o->hybrid_cpu_threads = int(v);
    } else if (key == "--pcie-gbs") {
      o->pcie_gbs = std::atof(val.c_str());
      ok = o->pcie_gbs > 0;
    } else if (key == "--ooc-n") {
      ok = parse_int(val, &o->ooc_n) && o->ooc_n > 0;
    } else if (key == "--ooc-memory-limit") {
      o->ooc_limit = val;
      ok = !val.empty();
    } else if (key == "--multi-n") {
      ok = parse_int(val, &o->multi_n) && o->multi_n > 0;
    } else if (key == "--multi-devices") {
      o->multi_devices = val;
      ok = val.find(',') != std::string::npos;
    } else if (key == "--reps") {
      ok = parse_int(val, &v) && v > 0 && v < 100000;
      o->reps = int(v);
    } else if (key == "--sets") {
      ok = parse_int(val, &v) && v > 0 && v < 1000;
      o->sets = int(v);
    } else if (key == "--budget-s") {
      o->budget_s = std::atof(val.c_str());
      ok = o->budget_s > 0;
    } else if (a == "--no-check") {
      o->check = false;
    } else if (a == "--quick") {
      o->sizes = {1024, 2048};
      o->rank_n = 4096;
      o->ooc_n = 8192;
      o->multi_n = 4096;
    } else if (key == "--module") {
      o->module_path = val;
    } else if (key == "--cpu-blas") {
      o->cpu_blas_path = val;
    } else if (a == "--cpu-stand-in") {
      o->stand_in = true;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "blasoffload_bench_pipeline: bad argument '%s'\n%s", a.c_str(), kUsage);
      return kExitSetup;
    }
  }
  return -1;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void emit_context(const Context& ctx, const CpuBlas& cpu) {
  Json c;
  c.str("program", "blasoffload_bench_pipeline").str("args", ctx.opt.args);
  std::string cases;
  for (const auto& s : ctx.opt.cases) cases += (cases.empty() ? "" : ",") + s;
  c.str("cases", cases).str("gpu", ctx.gpu).integer("gpu_count", ctx.gpus.count);
  std::string names = "[";
  for (size_t i = 0; i < ctx.gpus.names.size(); ++i) {
    char mem[32];
    std::snprintf(mem, sizeof mem, "%.1f", ctx.gpus.memory_gib[i]);
    names += std::string(i ? ", " : "") + "\"" + json_escape(ctx.gpus.names[i]) + " (" + mem + " GiB)\"";
  }
  c.raw("gpus", names + "]").integer("driver_version", ctx.gpus.driver_version);
  if (!ctx.gpus.error.empty()) c.str("gpu_error", ctx.gpus.error);
  c.str("module", ctx.module.mod && ctx.module.init_status == BO_CUDA_OK ? ctx.module.mod->name : "");
  c.str("module_path", ctx.module.path);
  if (!ctx.module.error.empty()) c.str("module_error", ctx.module.error);
  c.str("cpu_blas", cpu.path);
  if (!cpu.error.empty()) c.str("cpu_blas_error", cpu.error);
  c.str("openblas_corename", cpu.corename ? cpu.corename() : "");
  c.str("openblas_config", cpu.config ? cpu.config() : "");
  c.integer("openblas_threads", cpu.get_threads ? cpu.get_threads() : 0);
  c.str("OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "(unset)"));
  c.str("OPENBLAS_NUM_THREADS", env_or("OPENBLAS_NUM_THREADS", "(unset)"));
  Json env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("BLASOFFLOAD_", 0) == 0 || kv.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) {
      const size_t eq = kv.find('=');
      env.str(kv.substr(0, eq).c_str(), kv.substr(eq + 1));
    }
  }
  c.raw("env", env.text());
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  c.str("host", host).integer("cores", hw_threads()).num("mem_available_gib", mem_available_gib());
  c.str("date", ctx.date).str("commit", ctx.commit).num("budget_s", ctx.opt.budget_s);
  c.boolean("check", ctx.opt.check).boolean("stand_in", ctx.opt.stand_in);
  Json j;
  j.raw("context", c.text());
  emit(j);
}

}  // namespace

int main(int argc, char** argv) {
  Context ctx;
  const int parsed = parse_args(argc, argv, &ctx.opt);
  if (parsed >= 0) return parsed;
  const auto start = Clock::now();
  ctx.deadline = start + std::chrono::milliseconds(int64_t(ctx.opt.budget_s * 1e3));
  g_verbose = std::getenv("BO_BENCH_VERBOSE") != nullptr;
  ctx.date = utc_now();
  ctx.commit = env_or("BO_COMMIT", "unknown");

  ctx.gpus = probe_gpus();
  ctx.gpu = ctx.opt.stand_in ? "cpu-stand-in" : ctx.gpus.names.empty() ? "none" : ctx.gpus.names[0];
  const bool cpu_ok = load_cpu_blas(ctx.opt.cpu_blas_path);
  if (!ctx.opt.stand_in && ctx.gpus.count > 0 && cpu_ok) ctx.module = load_module(ctx.opt.module_path);
  emit_context(ctx, g_cpu);

  if (!cpu_ok) {
    std::fprintf(stderr,
                 "blasoffload_bench_pipeline: %s (set BO_CPU_BLAS or --cpu-blas to OpenBLAS's "
                 "libopenblas.so.0)\n",
                 g_cpu.error.c_str());
    return kExitSetup;
  }
  if (!ctx.opt.stand_in) {
    if (ctx.gpus.count == 0) {
      for (const auto& c : ctx.opt.cases) emit_case_skip(ctx, c, "no GPU: " + ctx.gpus.error);
      std::fprintf(stderr, "blasoffload_bench_pipeline: no GPU here (%s): nothing to measure\n",
                   ctx.gpus.error.c_str());
      return kExitNoGpu;
    }
    if (!ctx.module.mod || ctx.module.init_status != BO_CUDA_OK) {
      for (const auto& c : ctx.opt.cases) emit_case_skip(ctx, c, ctx.module.error);
      std::fprintf(stderr, "blasoffload_bench_pipeline: %s (module %s; --module or BO_CUDA_MODULE)\n",
                   ctx.module.error.c_str(), ctx.module.path.c_str());
      return ctx.module.init_status == BO_CUDA_NO_DEVICE ? kExitNoGpu : kExitSetup;
    }
  }
  std::fprintf(stderr, "blasoffload_bench_pipeline: %s; CPU BLAS %s (core %s, %d threads); budget %.0f s\n",
               ctx.opt.stand_in ? "CPU stand-in for the engine" : ctx.module.mod->name, g_cpu.path.c_str(),
               g_cpu.corename ? g_cpu.corename() : "?", g_cpu.get_threads ? g_cpu.get_threads() : 0, ctx.opt.budget_s);

  for (const auto& c : ctx.opt.cases) {
    try {
      if (c == "sgemm_host") case_sgemm_host(ctx);
      if (c == "rank_update") case_rank_update(ctx);
      if (c == "out_of_core") case_out_of_core(ctx);
      if (c == "multi_gpu") case_multi_gpu(ctx);
    } catch (const std::bad_alloc&) {
      emit_case_skip(ctx, c, "host memory exhausted");
      ++ctx.failures;
    }
  }
  if (ctx.module.mod && ctx.module.mod->shutdown) ctx.module.mod->shutdown();
  Json end;
  Json e;
  e.num("elapsed_s", ms_since(start) / 1e3).integer("failures", ctx.failures);
  end.raw("end", e.text());
  emit(end);
  return ctx.failures ? kExitFailed : kExitOk;
}
