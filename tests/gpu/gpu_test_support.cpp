#include "gpu_test_support.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <sstream>

namespace gt {

int g_dev_shift = 0;

namespace {
const char* host_config(const char* key) { return std::getenv(key); }
void host_log(int level, const char* msg) {
  if (level <= BO_LOG_SUMMARY || std::getenv("BO_GPU_TEST_VERBOSE")) std::fprintf(stderr, "[module] %s\n", msg);
}

std::atomic<int64_t> g_cpu_calls{0}, g_cpu_bad_calls{0};

// The CPU BLAS the module lends work to: a plain column-major sgemm accumulating in double, so that the CPU's
// share of a result is as exact as the test's reference. As in the reference BLAS, beta == 0 never reads C and
// alpha == 0 never reads A or B.
void host_cpu_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                    const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  g_cpu_calls.fetch_add(1);
  auto op_ok = [](char t) { return t == 'N' || t == 'T' || t == 'C'; };
  const int64_t a_rows = ta == 'N' ? m : k, b_rows = tb == 'N' ? k : n;
  if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0 || lda < std::max<int64_t>(1, a_rows) ||
      ldb < std::max<int64_t>(1, b_rows) || ldc < std::max<int64_t>(1, m) || !c) {
    g_cpu_bad_calls.fetch_add(1);
    return;
  }
  std::vector<double> acc(size_t(std::max<int64_t>(m, 0)));
  for (int64_t j = 0; j < n; ++j) {
    std::fill(acc.begin(), acc.end(), 0.0);
    if (alpha != 0.0f) {
      if (ta == 'N') {
        for (int64_t l = 0; l < k; ++l) {
          const double bv = tb == 'N' ? b[l + j * ldb] : b[j + l * ldb];
          for (int64_t i = 0; i < m; ++i) acc[i] += double(a[i + l * lda]) * bv;
        }
      } else {
        for (int64_t i = 0; i < m; ++i) {
          double s = 0;
          for (int64_t l = 0; l < k; ++l) s += double(a[l + i * lda]) * (tb == 'N' ? b[l + j * ldb] : b[j + l * ldb]);
          acc[i] = s;
        }
      }
    }
    float* cj = c + j * ldc;
    for (int64_t i = 0; i < m; ++i)
      cj[i] = beta == 0.0f ? float(double(alpha) * acc[i]) : float(double(alpha) * acc[i] + double(beta) * cj[i]);
  }
}

const bo_cuda_host_services kHost = {BO_CUDA_API_VERSION, host_config, host_log, host_cpu_sgemm};

std::string module_path() {
  if (const char* p = std::getenv("BO_GPU_TEST_MODULE")) return p;
  // The test lives in <build>/tests/gpu, the module in <build>.
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len > 0) {
    self[len] = '\0';
    std::string s(self);
    s = s.substr(0, s.rfind('/'));
    return s + "/../../libblasoffload_cuda.so";
  }
  return BO_CUDA_MODULE_PATH;
}
}  // namespace

std::atomic<int64_t>& cpu_sgemm_calls() { return g_cpu_calls; }
std::atomic<int64_t>& cpu_sgemm_bad_calls() { return g_cpu_bad_calls; }

bool have_gpu() {
  static const bool yes = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return yes;
}

const Module& module() {
  static Module m = [] {
    Module r;
    std::string path = module_path();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      r.error = std::string("dlopen: ") + dlerror();
      return r;
    }
    auto e = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY));
    auto re = reinterpret_cast<bo_kernel_registry_fn>(dlsym(h, BO_KERNEL_REGISTRY_ENTRY));
    if (!e || !re) {
      r.error = "module lacks its entry points";
      return r;
    }
    r.mod = e();
    r.reg = re();
    if (have_gpu()) r.init_status = r.mod->init(&kHost);
    return r;
  }();
  return m;
}

std::vector<const bo_kernel_entry*> configs(int routine) {
  std::vector<const bo_kernel_entry*> v;
  const bo_kernel_registry* reg = module().reg;
  for (size_t i = 0; reg && i < reg->count; ++i)
    if (reg->entries[i].routine == routine) v.push_back(&reg->entries[i]);
  return v;
}

void run_entry(const bo_kernel_entry* k, const bo_kernel_args& args) {
  void* ws = nullptr;
  if (const size_t wb = k->workspace_bytes(&args)) EXPECT_EQ(cudaMalloc(&ws, wb), cudaSuccess);
  EXPECT_EQ(k->launch(&args, ws, nullptr), 0) << k->name;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << k->name;
  cudaFree(ws);
}

::testing::AssertionResult check_image(const Image& before, const Image& after, const std::vector<Expect>& out) {
  std::vector<char> is_out(before.size(), 0);
  size_t bad = 0;
  std::ostringstream msg;
  for (const Expect& e : out) {
    const size_t pos = e.off + kGuard;
    is_out[pos] = 1;
    const double got = after.v[pos];
    bool ok;
    if (std::isnan(e.value))
      ok = std::isnan(got);
    else if (std::isinf(e.value))
      ok = got == e.value;
    else
      ok = std::isfinite(got) && std::fabs(got - e.value) <= e.bound;
    if (!ok && bad++ < 5)
      msg << " [out " << e.off << ": got " << got << " want " << e.value << " +- " << e.bound << "]";
  }
  size_t touched = 0;
  for (size_t i = 0; i < before.size(); ++i)
    if (!is_out[i] && bits(before.v[i]) != bits(after.v[i]) && touched++ < 5)
      msg << " [byte outside the output changed at image index " << i << " (operand offset "
          << (long long)(i) - (long long)kGuard << ")]";
  if (bad || touched)
    return ::testing::AssertionFailure() << bad << " wrong outputs, " << touched << " foreign elements written:"
                                         << msg.str();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_bits(const Image& a, const Image& b) {
  if (a.size() != b.size() || std::memcmp(a.v.data(), b.v.data(), 4 * a.size()) != 0)
    return ::testing::AssertionFailure() << "results differ between two identical runs";
  return ::testing::AssertionSuccess();
}

std::mt19937_64& rng() {
  static std::mt19937_64 r(12345);
  return r;
}
float uni(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng()); }

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  const int64_t t = std::max<int64_t>(1, std::min<int64_t>(n, std::thread::hardware_concurrency()));
  std::vector<std::thread> th;
  for (int64_t w = 0; w < t; ++w)
    th.emplace_back([&, w] {
      for (int64_t j = w; j < n; j += t) f(j);
    });
  for (auto& x : th) x.join();
}

}  // namespace gt
