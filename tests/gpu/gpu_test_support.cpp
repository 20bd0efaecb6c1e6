// See gpu_test_support.h: the module as the tests load it, the host services they lend it, the generic call runner
// and the image checks, for float, double, bo_cfloat and bo_cdouble.
#include "gpu_test_support.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>

namespace gt {

int g_dev_shift = 0;

namespace {
std::atomic<int64_t> g_cpu_calls{0}, g_cpu_bad_calls{0}, g_multi_gpu_calls{0}, g_split1{0}, g_split2{0}, g_qr1{0},
    g_qr2{0}, g_a_shared{0};

void host_log(int level, const char* msg) {
  if (std::strstr(msg, "(cuSOLVERMg)")) ++g_multi_gpu_calls;
  if (std::strstr(msg, "split over 1 GPU (cuBLAS)")) ++g_split1;
  if (std::strstr(msg, "split over 2 GPUs (cuBLAS)")) ++g_split2;
  if (std::strstr(msg, "split over 2 GPUs (cuBLAS), A staged once")) ++g_a_shared;
  if (std::strstr(msg, "on 1 GPU (tiled QR")) ++g_qr1;
  if (std::strstr(msg, "on 2 GPUs (tiled QR")) ++g_qr2;
  if (level <= BO_LOG_SUMMARY || bo_gpu::env_config("BO_GPU_TEST_VERBOSE")) std::fprintf(stderr, "[module] %s\n", msg);
}

// The CPU BLAS's gemm as the module borrows it: plain column-major, accumulating in Real<T>::Acc so that the CPU's
// share of a result is as exact as the test's reference. As in the reference BLAS, beta == 0 never reads C and
// alpha == 0 never reads A or B. Complex: the scalars' imaginary parts, and 'C' the conjugate transpose (tiles of a
// complex gemm finished on the CPU after a GPU failure come here too).
template <typename T>
void cpu_gemm(const bo_call& g) {
  using Acc = typename Real<T>::Acc;
  const char ta = g.op[0], tb = g.op[1];
  const int64_t m = g.m, n = g.n, k = g.k, lda = g.lda, ldb = g.ldb, ldc = g.ldc;
  auto op_ok = [](char t) { return t == 'N' || t == 'T' || t == 'C'; };
  const int64_t a_rows = ta == 'N' ? m : k, b_rows = tb == 'N' ? k : n;
  if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0 || lda < std::max<int64_t>(1, a_rows) ||
      ldb < std::max<int64_t>(1, b_rows) || ldc < std::max<int64_t>(1, m) || !g.c) {
    g_cpu_bad_calls.fetch_add(1);
    return;
  }
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const Acc alpha = from_scalar<Acc>({g.alpha, g.alpha_i}), beta = from_scalar<Acc>({g.beta, g.beta_i});
  const bool alpha0 = g.alpha == 0.0 && g.alpha_i == 0.0, beta0 = g.beta == 0.0 && g.beta_i == 0.0;
  std::vector<Acc> acc(size_t(std::max<int64_t>(m, 0)));
  for (int64_t j = 0; j < n; ++j) {
    std::fill(acc.begin(), acc.end(), Acc(0));
    if (!alpha0) {
      for (int64_t i = 0; i < m; ++i) {
        Acc s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += conj_if(Acc(ta == 'N' ? a[i + l * lda] : a[l + i * lda]), ta == 'C') *
               conj_if(Acc(tb == 'N' ? b[l + j * ldb] : b[j + l * ldb]), tb == 'C');
        acc[i] = s;
      }
    }
    T* cj = c + j * ldc;
    for (int64_t i = 0; i < m; ++i) cj[i] = beta0 ? T(alpha * acc[i]) : T(alpha * acc[i] + beta * Acc(cj[i]));
  }
}

void host_cpu_call(const bo_call* g) {
  g_cpu_calls.fetch_add(1);
  if (!g || g->routine < 0 || g->routine >= BO_R_COUNT || bo_routine_kind_of(g->routine) != BO_KIND_GEMM) {
    g_cpu_bad_calls.fetch_add(1);
    return;
  }
  switch (bo_routine_precision(g->routine)) {
    case BO_PREC_S:
      return cpu_gemm<float>(*g);
    case BO_PREC_D:
      return cpu_gemm<double>(*g);
    case BO_PREC_C:
      return cpu_gemm<bo_cfloat>(*g);
    default:
      return cpu_gemm<bo_cdouble>(*g);
  }
}

const bo_cuda_host_services kHost = {
    BO_CUDA_API_VERSION, bo_gpu::env_config, host_log, host_cpu_call, nullptr, nullptr};
}  // namespace

std::atomic<int64_t>& cpu_calls() { return g_cpu_calls; }
std::atomic<int64_t>& multi_gpu_calls() { return g_multi_gpu_calls; }
std::atomic<int64_t>& split_calls(int lanes) { return lanes == 1 ? g_split1 : g_split2; }
std::atomic<int64_t>& qr_calls(int lanes) { return lanes == 1 ? g_qr1 : g_qr2; }
std::atomic<int64_t>& a_shared_calls() { return g_a_shared; }
std::atomic<int64_t>& cpu_bad_calls() { return g_cpu_bad_calls; }

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}
bool have_gpu() {
  static const bool yes = device_count() > 0;
  return yes;
}

const Module& module() {
  static const Module m = [] {
    Module r;
    const bo_gpu::Loaded l = bo_gpu::load(bo_gpu::module_path());
    r.error = l.error;
    r.mod = l.mod;
    r.reg = l.reg;
    if (r.mod && have_gpu()) r.init_status = r.mod->init(&kHost);
    return r;
  }();
  return m;
}

std::vector<const bo_kernel_entry*> configs(int routine) {
  std::vector<const bo_kernel_entry*> v;
  for (int i : bo_gpu::entries_of(module().reg, routine)) v.push_back(&module().reg->entries[i]);
  return v;
}

bool gpu_runs(int routine) {
  bo_call probe = make_call(routine, "", 1, 1, 1, 1.0, 0.0, 1, 1, 1, 1, 1);
  for (const bo_kernel_entry* e : configs(routine))
    if (!e->vendor || e->can_implement(&probe)) return true;
  return false;
}

std::string scalar_str(const Scalar& s) {
  std::ostringstream o;
  if (s.imag() == 0)
    o << s.real();
  else
    o << s;
  return o.str();
}

void run_entry(const bo_kernel_entry* k, const bo_call& args) {
  void* ws = nullptr;
  if (const size_t wb = k->workspace_bytes(&args)) {
    EXPECT_EQ(cudaMalloc(&ws, wb), cudaSuccess);
  }
  EXPECT_EQ(k->launch(&args, ws, nullptr), 0) << k->name;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << k->name;
  cudaFree(ws);
}

bo_call make_call(int routine, const char* ops, int64_t m, int64_t n, int64_t k, Scalar alpha, Scalar beta, int64_t lda,
                  int64_t ldb, int64_t ldc, int64_t incx, int64_t incy) {
  bo_call g{};
  g.routine = routine;
  for (int i = 0; i < 4 && ops[i]; ++i) g.op[i] = ops[i];
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha.real();
  g.alpha_i = alpha.imag();
  g.beta = beta.real();
  g.beta_i = beta.imag();
  g.lda = lda;
  g.ldb = ldb;
  g.ldc = ldc;
  g.incx = incx;
  g.incy = incy;
  return g;
}

std::string Runner::name() const {
  if (mode == Mode::kEntry) return std::string(e->name) + (e->vendor ? " (vendor)" : "");
  return mode == Mode::kModuleHost ? "module, host operands" : "module, device operands";
}

std::vector<Runner> runners_for(int routine) {
  std::vector<Runner> v;
  for (const bo_kernel_entry* e : configs(routine)) v.push_back(entry_runner(e));
  v.push_back({Mode::kModuleHost, nullptr});
  v.push_back({Mode::kModuleDevice, nullptr});
  return v;
}

template <typename T>
int run_call(const Runner& rn, bo_call call, Image<T>* a, Image<T>* b, Image<T>* c, DevImage<T>* da) {
  const bool nrm2 = bo_routine_kind_of(call.routine) == BO_KIND_NRM2;
  if (rn.mode == Mode::kModuleHost) {
    call.a = a ? a->p() : nullptr;
    call.b = b ? b->p() : nullptr;
    call.c = c->p();
    return module().mod->call(&call, 0.0);
  }
  std::optional<DevImage<T>> own_a, db, dc;
  if (a && !da) da = &own_a.emplace(*a);
  if (b) db.emplace(*b);
  dc.emplace(*c);
  call.a = a ? da->p() : nullptr;
  call.b = b ? db->p() : nullptr;
  call.c = dc->p();
  int status = BO_CUDA_OK;
  if (rn.mode == Mode::kModuleDevice) {
    if (nrm2) call.c = c->p();  // the module returns a norm to the host, whatever memory x is in
    status = module().mod->call(&call, 0.0);
    if (nrm2) dc.reset();
  } else {
    if (!rn.e->can_implement(&call)) return -1;
    run_entry(rn.e, call);
  }
  if (own_a) *a = own_a->back();
  if (b) *b = db->back();
  if (dc) *c = dc->back();
  return status;
}
template int run_call<float>(const Runner&, bo_call, Image<float>*, Image<float>*, Image<float>*, DevImage<float>*);
template int run_call<double>(const Runner&, bo_call, Image<double>*, Image<double>*, Image<double>*,
                              DevImage<double>*);
template int run_call<bo_cfloat>(const Runner&, bo_call, Image<bo_cfloat>*, Image<bo_cfloat>*, Image<bo_cfloat>*,
                                 DevImage<bo_cfloat>*);
template int run_call<bo_cdouble>(const Runner&, bo_call, Image<bo_cdouble>*, Image<bo_cdouble>*, Image<bo_cdouble>*,
                                  DevImage<bo_cdouble>*);

namespace {
// One output element against its expectation (see Expect and CExpect).
bool matches(long double got, const Expect& e) {
  if (std::isnan(e.value)) return std::isnan(got);
  if (std::isinf(e.value)) return got == e.value;
  return std::isfinite(got) && std::fabs(got - e.value) <= e.bound;
}
bool matches(const std::complex<long double>& got, const CExpect& e) {
  if (any_nan(e.value)) return any_nan(got);
  if (!all_finite(e.value)) return !all_finite(got);
  return all_finite(got) && std::abs(got - e.value) <= e.bound;
}
}  // namespace

template <typename T>
::testing::AssertionResult check_image(const Image<T>& before, const Image<T>& after,
                                       const std::vector<ExpectOf<T>>& out) {
  using Got = WideOf<T>;
  std::vector<char> is_out(before.size(), 0);
  size_t bad = 0;
  std::ostringstream msg;
  msg.precision(std::numeric_limits<typename Real<T>::Part>::max_digits10);
  for (const ExpectOf<T>& e : out) {
    const size_t pos = e.off + kGuard;
    is_out[pos] = 1;
    const Got got = Got(after.v[pos]);
    const bool ok = matches(got, e);
    if (!ok && bad++ < 5)
      msg << " [out " << e.off << ": got " << got << " want " << e.value << " +- " << e.bound << "]";
  }
  size_t touched = 0;
  for (size_t i = 0; i < before.size(); ++i)
    if (!is_out[i] && bits(before.v[i]) != bits(after.v[i]) && touched++ < 5)
      msg << " [element outside the output changed at image index " << i << " (operand offset "
          << (long long)(i) - (long long)kGuard << ")]";
  if (bad || touched)
    return ::testing::AssertionFailure() << bad << " wrong outputs, " << touched
                                         << " foreign elements written:" << msg.str();
  return ::testing::AssertionSuccess();
}
template ::testing::AssertionResult check_image<float>(const Image<float>&, const Image<float>&,
                                                       const std::vector<Expect>&);
template ::testing::AssertionResult check_image<double>(const Image<double>&, const Image<double>&,
                                                        const std::vector<Expect>&);
template ::testing::AssertionResult check_image<bo_cfloat>(const Image<bo_cfloat>&, const Image<bo_cfloat>&,
                                                           const std::vector<CExpect>&);
template ::testing::AssertionResult check_image<bo_cdouble>(const Image<bo_cdouble>&, const Image<bo_cdouble>&,
                                                            const std::vector<CExpect>&);

std::mt19937_64& rng() {
  static std::mt19937_64 r(12345);
  return r;
}

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
