// blasoffload-calibrate's CPU LAPACK side (see cpu_lapack.h).
#include "cpu_lapack.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "measure.h"
#include "routines/all.h"

namespace blasoffload::calibrate {
namespace {

namespace br = bo::routines;
using br::blas_int;

// The CPU LAPACK's entry points in one precision.
struct Routines {
  void *getrf, *getrs, *gesv, *potrf, *potrs, *posv, *trtrs;
};
Routines lookup(void* h, const std::string& p, std::string* missing) {
  auto f = [&](const char* name) {
    void* s = dlsym(h, (p + name + "_").c_str());
    if (!s) *missing += (missing->empty() ? "" : " ") + p + name + "_";
    return s;
  };
  return {f("getrf"), f("getrs"), f("gesv"), f("potrf"), f("potrs"), f("posv"), f("trtrs")};
}

// Times the call of descriptor D with the Fortran arguments x and adds its rate. The descriptor's own checks build
// the normalised call, so the class and its size are those the policy computes for the same call. `restore` runs
// untimed before each call: it puts back what the call overwrites. False when the call reports INFO != 0.
template <class D>
bool time_routine(policy::Calibration& c, const std::string& p, void* fn, const typename D::Args& x,
                  const std::function<void()>& restore) {
  bo_call call{};
  blas_int xerbla = 0;
  if (D::prepare(x, &call, &xerbla) != br::Prep::kRun) return false;  // not reached: the sizes are valid
  auto* f = reinterpret_cast<typename D::Fortran*>(fn);
  const Timing s = time_call([&] { D::call_fortran(f, call); }, restore);
  const std::string cls = p + D::kClasses[D::shape_class(call)].suffix;
  char args[96];
  D::describe(call, args, sizeof args);
  if (const blas_int info = *static_cast<const blas_int*>(call.info); info != 0) {
    std::fprintf(stderr, "blasoffload-calibrate: %s (%s) returned INFO = %d: not measured\n", cls.c_str(), args,
                 int(info));
    return false;
  }
  add(c, cls, D::class_size(call), s, 1.0);
  return true;
}

bool among(const std::vector<int>& v, int n) { return std::find(v.begin(), v.end(), n) != v.end(); }

template <class T>
void measure(const Routines& r, const std::string& p, bool quick, policy::Calibration& c) {
  using V = std::vector<int>;
  // The factorizations over the range where the GPU starts to win; the solves on the factors the timed
  // factorization of the same order left, with one right-hand side (the .vec classes, by the bytes of the factors
  // read), 64 (.narrow, by flops) and 256 (.mat); the one-call solvers at a few orders.
  const V factor = quick ? V{64, 128} : V{128, 256, 512, 1024, 2048, 4096, 8192};
  const V vec = quick ? V{128} : V{256, 1024, 4096, 8192};
  const V block = quick ? V{128} : V{512, 2048, 8192};
  const V solver = quick ? V{64, 128} : V{256, 1024, 4096};
  const char N = 'N', L = 'L';
  const blas_int one = 1, narrow = 64, many = 256;
  // The orders each solve width is measured at.
  auto solved = [&](blas_int k, blas_int n) { return among(k == one ? vec : block, n); };
  blas_int info = 0;
  auto copy = [](const std::vector<T>& from, std::vector<T>& to) { std::copy(from.begin(), from.end(), to.begin()); };
  // Uniform entries: the pivots of getrf are real row interchanges, and the matrix is almost surely regular.
  auto general = [](blas_int n) { return random_vector<T>(size_t(n) * n, 20 + unsigned(n)); };
  // Symmetric, n added to a diagonal of uniform entries: diagonally dominant, hence positive definite.
  auto spd = [](blas_int n) {
    std::vector<T> a = random_vector<T>(size_t(n) * n, 40 + unsigned(n));
    for (size_t j = 0; j < size_t(n); ++j) {
      for (size_t i = 0; i < j; ++i) a[i + j * n] = a[j + i * n];
      a[j + j * n] += T(n);
    }
    return a;
  };
  auto rhs = [](blas_int n, blas_int k) { return random_vector<T>(size_t(n) * k, 60 + unsigned(n + k)); };
  for (const blas_int n : factor) {
    if (busy()) break;  // measuring stopped: no operands made
    std::vector<blas_int> ipiv(n);
    {
      const std::vector<T> A0 = general(n);
      std::vector<T> A(A0.size());
      if (time_routine<br::Getrf<T>>(c, p, r.getrf, {&n, &n, A.data(), &n, ipiv.data(), &info}, [&] { copy(A0, A); }))
        for (const blas_int k : {one, narrow, many}) {
          if (!solved(k, n)) continue;
          const std::vector<T> B0 = rhs(n, k);
          std::vector<T> B(B0.size());
          time_routine<br::Getrs<T>>(c, p, r.getrs, {&N, &n, &k, A.data(), &n, ipiv.data(), B.data(), &n, &info, 1},
                                     [&] { copy(B0, B); });
        }
    }
    const std::vector<T> S0 = spd(n);
    std::vector<T> S(S0.size());
    if (time_routine<br::Potrf<T>>(c, p, r.potrf, {&L, &n, S.data(), &n, &info, 1}, [&] { copy(S0, S); }))
      for (const blas_int k : {one, narrow, many}) {
        if (!solved(k, n)) continue;
        const std::vector<T> B0 = rhs(n, k);
        std::vector<T> B(B0.size());
        time_routine<br::Potrs<T>>(c, p, r.potrs, {&L, &n, &k, S.data(), &n, B.data(), &n, &info, 1},
                                   [&] { copy(B0, B); });
        // The triangle: the Cholesky factor L (its diagonal about sqrt(n), its other entries small), well
        // conditioned, so the one solve per call stays far from overflow.
        time_routine<br::Trtrs<T>>(c, p, r.trtrs, {&L, &N, &N, &n, &k, S.data(), &n, B.data(), &n, &info, 1, 1, 1},
                                   [&] { copy(B0, B); });
      }
  }
  for (const blas_int n : solver) {
    if (busy()) break;  // measuring stopped: no operands made
    std::vector<blas_int> ipiv(n);
    const std::vector<T> A0 = general(n), S0 = spd(n), B0 = rhs(n, one);
    std::vector<T> A(A0.size()), B(B0.size());
    time_routine<br::Gesv<T>>(c, p, r.gesv, {&n, &one, A.data(), &n, ipiv.data(), B.data(), &n, &info}, [&] {
      copy(A0, A);
      copy(B0, B);
    });
    time_routine<br::Posv<T>>(c, p, r.posv, {&L, &n, &one, A.data(), &n, B.data(), &n, &info, 1}, [&] {
      copy(S0, A);
      copy(B0, B);
    });
  }
}

}  // namespace

bool measure_cpu_lapack(const std::string& path, void* blas, bool quick, policy::Calibration* c, std::string* why) {
  void* h = nullptr;
  if (!path.empty()) {
    h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      *why = "cannot load the CPU LAPACK " + path + ": " + dlerror();
      return false;
    }
  } else if (blas && dlsym(blas, "sgetrf_") && dlsym(blas, "dgetrf_")) {
    h = blas;
  } else if (!(h = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL))) {
    std::fprintf(stderr,
                 "blasoffload-calibrate: no CPU LAPACK (liblapack.so.3: %s): the LAPACK classes are left to the "
                 "policy, which derives them from the BLAS rates (--lapack=PATH names one)\n",
                 dlerror());
    return true;
  }
  std::string missing_s, missing_d;
  const Routines s = lookup(h, "s", &missing_s), d = lookup(h, "d", &missing_d);
  Dl_info info{};
  void* any = s.getrf ? s.getrf : d.getrf;
  std::fprintf(
      stderr, "blasoffload-calibrate: CPU LAPACK %s\n",
      any && dladdr(any, &info) && info.dli_fname ? info.dli_fname : (path.empty() ? "liblapack.so.3" : path.c_str()));
  for (const auto& [missing, p] : {std::pair{&missing_s, "s"}, std::pair{&missing_d, "d"}})
    if (!missing->empty())
      std::fprintf(stderr,
                   "blasoffload-calibrate: the CPU LAPACK lacks %s: its %s classes are left to the policy, which "
                   "derives them from the BLAS rates\n",
                   missing->c_str(), p);
  if (missing_s.empty()) measure<float>(s, "s", quick, *c);
  if (missing_d.empty()) measure<double>(d, "d", quick, *c);
  return true;
}

}  // namespace blasoffload::calibrate
