// blasoffload_cusolver_ref: cuSOLVER's own times on the GPU, the reference bench/lapack's intercept and complex
// benchmarks hold the library's LAPACK against: per precision (s, d, c, z) and order, getrf and potrf (lower) on
// device-resident data (median of the repetitions; the matrix restored by a device-to-device copy before each, outside
// the timing), getrs and potrs with one right-hand side on those factors (B restored the same way), and the pinned
// host-to-device and device-to-host times of the matrix (cudaMallocHost buffer), so that the report can form "device
// time + one transfer each way" for every factorization. One JSON object per line, as blasoffload_lapack_drivers prints
// them.
//
// cuSOLVER is opened at run time (as the CUDA module does), so the binary needs no toolkit library to start and
// says why when there is none (exit status 3, like the other GPU benchmarks without a GPU); cudart and the C++
// runtime are linked in: the GPU machine has no Debian packages.
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <dlfcn.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "../hash_uniform.h"

namespace {

const char kUsage[] =
    "usage: blasoffload_cusolver_ref [--precision=s,d,c,z] [--routines=getrf,potrf,getrs,potrs] [--reps=R]\n"
    "                                [--budget-s=S] N[,N:N...] ...\n"
    "  device-only times of cuSOLVER (median of R repetitions: 21 up to n = 1024, 11 up to 4096, 5 above), the\n"
    "  matrix's pinned transfer times; exit status 3 without a GPU or cuSOLVER. BO_CUSOLVER_LIB: the library to open\n"
    "  (default libcusolver.so.12, then the toolkit's).\n";

// The check's pass threshold on the scaled residual (LAPACK's test suites use 30).
constexpr double kThreshold = 30.0;

// cuSOLVER's entry points of one precision letter P (S, D, C, Z) this program calls: X(field, symbol).
// clang-format off
#define BO_CUSOLVER_ENTRIES(X, P)                                                   \
  X(P##getrf_bs, cusolverDn##P##getrf_bufferSize) X(P##getrf, cusolverDn##P##getrf) \
  X(P##getrs, cusolverDn##P##getrs)                                                 \
  X(P##potrf_bs, cusolverDn##P##potrf_bufferSize) X(P##potrf, cusolverDn##P##potrf) \
  X(P##potrs, cusolverDn##P##potrs)
// clang-format on
#define BO_FIELD(field, symbol) decltype(&symbol) field;
#define BO_PRECISIONS(X, M) M(X, S) M(X, D) M(X, C) M(X, Z)

// cuSOLVER's entry points this program calls, by the header's own types (nothing is linked).
struct Cusolver {
  decltype(&cusolverDnCreate) create;
  decltype(&cusolverDnDestroy) destroy;
  BO_PRECISIONS(BO_FIELD, BO_CUSOLVER_ENTRIES)
  std::string path;
};

bool open_cusolver(Cusolver* c, std::string* why) {
  std::vector<std::string> names;
  if (const char* e = std::getenv("BO_CUSOLVER_LIB"); e && *e) names.push_back(e);
  for (const char* n : {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so",
                        "/usr/local/cuda/lib64/libcusolver.so.12", "/usr/local/cuda/lib64/libcusolver.so"})
    names.push_back(n);
  void* h = nullptr;
  for (const auto& n : names) {
    if ((h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      c->path = n;
      break;
    }
    *why += (why->empty() ? "" : "; ") + std::string(dlerror());
  }
  if (!h) return false;
  bool ok = true;
  auto sym = [&](auto* fn, const char* name) {
    *fn = reinterpret_cast<std::remove_reference_t<decltype(*fn)>>(dlsym(h, name));
    if (!*fn) ok = false, *why = std::string("no ") + name + " in " + c->path;
  };
  sym(&c->create, "cusolverDnCreate");
  sym(&c->destroy, "cusolverDnDestroy");
#define BO_SYM(field, symbol) sym(&c->field, #symbol);
  BO_PRECISIONS(BO_SYM, BO_CUSOLVER_ENTRIES)
#undef BO_SYM
  return ok;
}

// A CUDA or cuSOLVER failure ends the run: a line saying where, exit status 1.
#define CK(call)                                                                                                   \
  do {                                                                                                             \
    const cudaError_t e_ = (call);                                                                                 \
    if (e_ != cudaSuccess) {                                                                                       \
      std::printf("{\"stack\": \"cusolver\", \"skipped\": \"%s: %s (line %d)\"}\n", #call, cudaGetErrorString(e_), \
                  __LINE__);                                                                                       \
      std::exit(1);                                                                                                \
    }                                                                                                              \
  } while (0)
#define CS(call)                                                                                           \
  do {                                                                                                     \
    const cusolverStatus_t s_ = (call);                                                                    \
    if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                                   \
      std::printf("{\"stack\": \"cusolver\", \"skipped\": \"%s: cusolver status %d (line %d)\"}\n", #call, \
                  static_cast<int>(s_), __LINE__);                                                         \
      std::exit(1);                                                                                        \
    }                                                                                                      \
  } while (0)

// The precision's entry points: cuSOLVER's P routines on the host type T's device twin D (std::complex<float> and
// cuComplex share their layout; the host side's arithmetic is std::complex's).
template <typename T>
struct Ops;
#define BO_OPS(T, D, P, LETTER, EPSILON)                                                                              \
  template <>                                                                                                         \
  struct Ops<T> {                                                                                                     \
    static constexpr char kLetter = LETTER;                                                                           \
    static constexpr double kEps = EPSILON * 0.5;                                                                     \
    static D* d(T* p) { return reinterpret_cast<D*>(p); }                                                             \
    static const D* d(const T* p) { return reinterpret_cast<const D*>(p); }                                           \
    static cusolverStatus_t getrf_bs(const Cusolver& c, cusolverDnHandle_t h, int n, T* a, int* lw) {                 \
      return c.P##getrf_bs(h, n, n, d(a), n, lw);                                                                     \
    }                                                                                                                 \
    static cusolverStatus_t getrf(const Cusolver& c, cusolverDnHandle_t h, int n, T* a, T* w, int* ipiv, int* info) { \
      return c.P##getrf(h, n, n, d(a), n, d(w), ipiv, info);                                                          \
    }                                                                                                                 \
    static cusolverStatus_t getrs(const Cusolver& c, cusolverDnHandle_t h, int n, const T* a, const int* ipiv, T* b,  \
                                  int* info) {                                                                        \
      return c.P##getrs(h, CUBLAS_OP_N, n, 1, d(a), n, ipiv, d(b), n, info);                                          \
    }                                                                                                                 \
    static cusolverStatus_t potrf_bs(const Cusolver& c, cusolverDnHandle_t h, int n, T* a, int* lw) {                 \
      return c.P##potrf_bs(h, CUBLAS_FILL_MODE_LOWER, n, d(a), n, lw);                                                \
    }                                                                                                                 \
    static cusolverStatus_t potrf(const Cusolver& c, cusolverDnHandle_t h, int n, T* a, T* w, int lw, int* info) {    \
      return c.P##potrf(h, CUBLAS_FILL_MODE_LOWER, n, d(a), n, d(w), lw, info);                                       \
    }                                                                                                                 \
    static cusolverStatus_t potrs(const Cusolver& c, cusolverDnHandle_t h, int n, const T* a, T* b, int* info) {      \
      return c.P##potrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, d(a), n, d(b), n, info);                                     \
    }                                                                                                                 \
  };
BO_OPS(float, float, S, 's', FLT_EPSILON)
BO_OPS(double, double, D, 'd', DBL_EPSILON)
BO_OPS(std::complex<float>, cuComplex, C, 'c', FLT_EPSILON)
BO_OPS(std::complex<double>, cuDoubleComplex, Z, 'z', DBL_EPSILON)
#undef BO_OPS

template <typename T>
constexpr bool kComplex = !std::is_floating_point_v<T>;
// The checks' arithmetic: double, or std::complex<double>.
template <typename T>
using Wide = std::conditional_t<kComplex<T>, std::complex<double>, double>;

// Element k of a hash_uniform stream, as bench/lapack/lapack_drivers_typed.h makes it: a complex one takes two values.
template <typename T>
T hash_elem(size_t k, uint64_t seed) {
  if constexpr (kComplex<T>)
    return T(hash_uniform(2 * k, seed), hash_uniform(2 * k + 1, seed));
  else
    return hash_uniform(k, seed);
}

// Every column range on its own thread: a 16384^2 matrix is 268 M hash evaluations.
template <typename F>
void parallel_columns(int n, F&& f) {
  const int threads = std::max(1, std::min(16, static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int j = t; j < n; j += threads) f(j);
    });
  for (auto& th : pool) th.join();
}

// The drivers program's matrices (bench/lapack/lapack_drivers_typed.h): uniform entries (getrf), and symmetric
// (Hermitian) with diagonal n + 1 (2n for complex entries, of moduli up to sqrt 2; potrf: strictly diagonally
// dominant, hence positive definite).
template <typename T>
void fill_uniform(T* a, int n) {
  parallel_columns(n, [&](int j) {
    for (size_t i = 0; i < size_t(n); ++i) a[i + size_t(j) * n] = hash_elem<T>(i + size_t(j) * n, 1);
  });
}
template <typename T>
void fill_spd(T* a, int n) {
  const T diag = kComplex<T> ? T(2 * n) : T(n + 1);
  parallel_columns(n, [&](int j) {
    for (size_t i = 0; i < size_t(n); ++i) {
      const size_t lo = std::min(i, size_t(j)), hi = std::max(i, size_t(j));
      const T v = hash_elem<T>(lo + hi * size_t(n), 3);
      T upper = v;
      if constexpr (kComplex<T>) upper = std::conj(v);
      a[i + size_t(j) * n] = i == size_t(j) ? diag : i > size_t(j) ? v : upper;
    }
  });
}

// ||b - A x||_inf / (||A||_inf ||x||_inf n eps), in double precision on the host.
template <typename T>
double residual(const T* a, const T* x, const T* b, int n) {
  using W = Wide<T>;
  std::vector<W> r(b, b + n);
  std::vector<double> rowsum(n, 0.0);
  for (size_t j = 0; j < size_t(n); ++j)
    for (size_t i = 0; i < size_t(n); ++i) {
      r[i] -= W(a[i + j * n]) * W(x[j]);
      rowsum[i] += std::abs(W(a[i + j * n]));
    }
  double rn = 0, an = 0, xn = 0;
  for (int i = 0; i < n; ++i) {
    if (!(std::abs(r[i]) <= rn)) rn = std::abs(r[i]);
    an = std::max(an, rowsum[i]);
    if (!(std::abs(W(x[i])) <= xn)) xn = std::abs(W(x[i]));
  }
  return rn / (an * xn * n * Ops<T>::kEps);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

// Times `reps` device operations: before each, restore() (not timed); the events bracket op() alone.
template <typename R, typename O>
std::vector<double> time_device(int reps, cudaEvent_t e0, cudaEvent_t e1, R&& restore, O&& op) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    restore();
    CK(cudaEventRecord(e0, 0));
    op();
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1e-3);
  }
  return t;
}

void print_point(const char* driver, char prec, int n, const std::vector<double>& t, double bytes, double h2d,
                 double d2h, int info, double ratio, const char* what) {
  const double med = median(t);
  const bool ok = info == 0 && (std::isnan(ratio) || ratio <= kThreshold);
  std::printf(
      "{\"driver\": \"%s\", \"precision\": \"%c\", \"n\": %d, \"stack\": \"cusolver\", \"device_s\": %.6f, "
      "\"min_s\": %.6f, \"max_s\": %.6f, \"reps\": %zu, \"bytes\": %.0f, \"h2d_s\": %.6f, \"d2h_s\": %.6f, "
      "\"h2d_gbs\": %.1f, \"d2h_gbs\": %.1f, \"bound_s\": %.6f, \"info\": %d, \"check\": \"%s\", \"check_ratio\": "
      "%.3g, \"check_what\": \"%s\"}\n",
      driver, prec, n, med, *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()), t.size(),
      bytes, h2d, d2h, h2d > 0 ? bytes / h2d * 1e-9 : 0.0, d2h > 0 ? bytes / d2h * 1e-9 : 0.0, med + h2d + d2h, info,
      ok ? "ok" : "FAIL", std::isfinite(ratio) ? ratio : -1.0, what);
  std::fflush(stdout);
}

struct Wanted {
  bool getrf, potrf, getrs, potrs;
};

// One precision and order: the transfers of the matrix, then the factorizations and solves. Returns failures.
template <typename T>
int run_order(const Cusolver& c, cusolverDnHandle_t h, int n, int reps, const Wanted& w) {
  using O = Ops<T>;
  const size_t nn = size_t(n) * n, bytes = nn * sizeof(T), bbytes = size_t(n) * sizeof(T);
  T *ha = nullptr, *hb = nullptr, *hx = nullptr, *da = nullptr, *da0 = nullptr, *db = nullptr, *db0 = nullptr,
    *work = nullptr;
  int *ipiv = nullptr, *dinfo = nullptr;
  CK(cudaMallocHost(&ha, bytes));
  CK(cudaMallocHost(&hb, bbytes));
  CK(cudaMallocHost(&hx, bbytes));
  CK(cudaMalloc(&da, bytes));
  CK(cudaMalloc(&da0, bytes));
  CK(cudaMalloc(&db, bbytes));
  CK(cudaMalloc(&db0, bbytes));
  CK(cudaMalloc(&ipiv, sizeof(int) * n));
  CK(cudaMalloc(&dinfo, sizeof(int)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < n; ++i) hb[i] = hash_elem<T>(size_t(i), 2);
  CK(cudaMemcpy(db0, hb, bbytes, cudaMemcpyHostToDevice));
  int lw_lu = 0, lw_ch = 0;
  CS(O::getrf_bs(c, h, n, da, &lw_lu));
  CS(O::potrf_bs(c, h, n, da, &lw_ch));
  CK(cudaMalloc(&work, sizeof(T) * size_t(std::max(1, std::max(lw_lu, lw_ch)))));

  // One transfer each way of the matrix from pinned memory: the median of 3.
  fill_uniform(ha, n);
  const auto h2d = time_device(
      3, e0, e1, [] {}, [&] { CK(cudaMemcpyAsync(da0, ha, bytes, cudaMemcpyHostToDevice)); });
  const auto d2h = time_device(
      3, e0, e1, [] {}, [&] { CK(cudaMemcpyAsync(ha, da0, bytes, cudaMemcpyDeviceToHost)); });
  const double th2d = median(h2d), td2h = median(d2h);
  // The small ones too: B of a solve.
  const auto bh2d = time_device(
      5, e0, e1, [] {}, [&] { CK(cudaMemcpyAsync(db, hb, bbytes, cudaMemcpyHostToDevice)); });
  const auto bd2h = time_device(
      5, e0, e1, [] {}, [&] { CK(cudaMemcpyAsync(hx, db, bbytes, cudaMemcpyDeviceToHost)); });
  int failures = 0, info = 0;
  auto restore_a = [&] { CK(cudaMemcpyAsync(da, da0, bytes, cudaMemcpyDeviceToDevice)); };
  auto read_info = [&] {
    CK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
    return info;
  };
  if (w.getrf || w.getrs) {
    auto lu = [&] { CS(O::getrf(c, h, n, da, work, ipiv, dinfo)); };
    time_device(1, e0, e1, restore_a, lu);  // warm-up: the first call loads the kernels
    const auto t = time_device(reps, e0, e1, restore_a, lu);
    const int linfo = read_info();
    if (w.getrf)
      print_point("getrf", O::kLetter, n, t, double(bytes), th2d, td2h, linfo, NAN, "info only (getrs checks)");
    failures += linfo != 0;
    if (w.getrs && linfo == 0) {  // the factors of the last repetition, one right-hand side
      auto restore_b = [&] { CK(cudaMemcpyAsync(db, db0, bbytes, cudaMemcpyDeviceToDevice)); };
      const auto ts = time_device(reps, e0, e1, restore_b, [&] { CS(O::getrs(c, h, n, da, ipiv, db, dinfo)); });
      CK(cudaMemcpy(hx, db, bbytes, cudaMemcpyDeviceToHost));
      const double r = read_info() == 0 ? residual(ha, hx, hb, n) : NAN;
      print_point("getrs", O::kLetter, n, ts, double(bbytes), median(bh2d), median(bd2h), info, r,
                  "||b-Ax||inf/(||A||inf ||x||inf n eps), nrhs 1");
      failures += !(info == 0 && r <= kThreshold);
    }
  }
  if (w.potrf || w.potrs) {
    fill_spd(ha, n);
    CK(cudaMemcpy(da0, ha, bytes, cudaMemcpyHostToDevice));
    auto ch = [&] { CS(O::potrf(c, h, n, da, work, lw_ch, dinfo)); };
    time_device(1, e0, e1, restore_a, ch);
    const auto t = time_device(reps, e0, e1, restore_a, ch);
    const int cinfo = read_info();
    if (w.potrf)
      print_point("potrf", O::kLetter, n, t, double(bytes), th2d, td2h, cinfo, NAN, "info only (potrs checks)");
    failures += cinfo != 0;
    if (w.potrs && cinfo == 0) {
      auto restore_b = [&] { CK(cudaMemcpyAsync(db, db0, bbytes, cudaMemcpyDeviceToDevice)); };
      const auto ts = time_device(reps, e0, e1, restore_b, [&] { CS(O::potrs(c, h, n, da, db, dinfo)); });
      CK(cudaMemcpy(hx, db, bbytes, cudaMemcpyDeviceToHost));
      const double r = read_info() == 0 ? residual(ha, hx, hb, n) : NAN;
      print_point("potrs", O::kLetter, n, ts, double(bbytes), median(bh2d), median(bd2h), info, r,
                  "||b-Ax||inf/(||A||inf ||x||inf n eps), nrhs 1");
      failures += !(info == 0 && r <= kThreshold);
    }
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(work));
  CK(cudaFree(dinfo));
  CK(cudaFree(ipiv));
  CK(cudaFree(db0));
  CK(cudaFree(db));
  CK(cudaFree(da0));
  CK(cudaFree(da));
  CK(cudaFreeHost(hx));
  CK(cudaFreeHost(hb));
  CK(cudaFreeHost(ha));
  return failures;
}

bool has_token(const std::string& list, const std::string& name) {
  return ("," + list + ",").find("," + name + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ns;
  std::string precisions = "s,d", routines = "getrf,potrf,getrs,potrs";
  int reps_override = 0;
  double budget = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--precision=", 0) == 0) {
      precisions = a.substr(12);
    } else if (a.rfind("--routines=", 0) == 0) {
      routines = a.substr(11);
    } else if (a.rfind("--reps=", 0) == 0) {
      reps_override = std::atoi(a.c_str() + 7);
    } else if (a.rfind("--budget-s=", 0) == 0) {
      budget = std::atof(a.c_str() + 11);
    } else if (!a.empty() && a[0] != '-' && std::atoi(a.c_str()) > 0) {
      for (const char* p = a.c_str(); *p; p += std::strcspn(p, ",:"), p += *p != '\0')
        if (std::atoi(p) > 0) ns.push_back(std::atoi(p));
    } else {
      std::fputs(kUsage, stderr);
      return a == "--help" ? 0 : 2;
    }
  }
  if (ns.empty()) ns = {1024, 2048, 4096, 8192, 16384};
  const Wanted w{has_token(routines, "getrf"), has_token(routines, "potrf"), has_token(routines, "getrs"),
                 has_token(routines, "potrs")};
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  Cusolver c{};
  std::string why;
  const bool opened = open_cusolver(&c, &why);  // also without a GPU: the context line says which library
  const bool have = e == cudaSuccess && devices > 0 && opened;
  cudaDeviceProp prop{};
  if (e == cudaSuccess && devices > 0) CK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "{\"context\": {\"program\": \"blasoffload_cusolver_ref\", \"stack\": \"cusolver\", \"gpu\": \"%s\", "
      "\"cusolver\": \"%s\", \"error\": \"%s\"}}\n",
      prop.name, c.path.c_str(),
      e != cudaSuccess ? cudaGetErrorString(e)
      : devices == 0   ? "no GPU"
      : opened         ? ""
                       : why.c_str());
  std::fflush(stdout);
  if (!have) return 3;
  cusolverDnHandle_t h = nullptr;
  CS(c.create(&h));
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int failures = 0;
  for (int n : ns) {
    const int reps = reps_override > 0 ? reps_override : n <= 1024 ? 21 : n <= 4096 ? 11 : 5;
    for (char p : precisions) {
      if (p != 's' && p != 'd' && p != 'c' && p != 'z') continue;
      struct timespec t1;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      if (budget > 0 && double(t1.tv_sec - t0.tv_sec) + 1e-9 * double(t1.tv_nsec - t0.tv_nsec) > budget) {
        std::printf(
            "{\"driver\": \"all\", \"precision\": \"%c\", \"n\": %d, \"stack\": \"cusolver\", \"skipped\": "
            "\"budget\"}\n",
            p, n);
        continue;
      }
      failures += p == 's'   ? run_order<float>(c, h, n, reps, w)
                  : p == 'd' ? run_order<double>(c, h, n, reps, w)
                  : p == 'c' ? run_order<std::complex<float>>(c, h, n, reps, w)
                             : run_order<std::complex<double>>(c, h, n, reps, w);
    }
  }
  c.destroy(h);
  return failures ? 1 : 0;
}
