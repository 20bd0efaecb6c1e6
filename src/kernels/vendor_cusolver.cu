// Opens libcusolver with dlopen on first use and calls its dense LAPACK routines with one handle per thread
// and device (handles are not thread-safe); without it the module's LAPACK path declines and the CPU LAPACK runs.
#include <cusolverDn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/vendor_cusolver.h"
#include "kernels/vendor_dl.h"
#include "kernels/vendor_handles.h"
#include "kernels/vendor_ops.h"
#include "offload/one_time_cost.h"

namespace bok::vendor {
namespace {

// Part 1 (LU and Cholesky), of every element type (cuSOLVER's S, D, C, Z).
template <class T>
struct Part1 {
  cusolverStatus_t (*getrf_work)(cusolverDnHandle_t, int, int, T*, int, int*);
  cusolverStatus_t (*getrf)(cusolverDnHandle_t, int, int, T*, int, T*, int*, int*);
  cusolverStatus_t (*getrs)(cusolverDnHandle_t, cublasOperation_t, int, int, const T*, int, const int*, T*, int, int*);
  cusolverStatus_t (*potrf_work)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, int*);
  cusolverStatus_t (*potrf)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, T*, int, int*);
  cusolverStatus_t (*potrs)(cusolverDnHandle_t, cublasFillMode_t, int, int, const T*, int, T*, int, int*);
};
// Part 2, of every element type; R is the real type of the eigenvalues, singular values and gesvd's RWORK. The complex
// names differ where LAPACK's do: ungqr, unmqr, heevd for orgqr, ormqr, syevd.
template <class T, class R>
struct Part2 {
  cusolverStatus_t (*geqrf_work)(cusolverDnHandle_t, int, int, T*, int, int*);
  cusolverStatus_t (*geqrf)(cusolverDnHandle_t, int, int, T*, int, T*, T*, int, int*);
  cusolverStatus_t (*orgqr_work)(cusolverDnHandle_t, int, int, int, const T*, int, const T*, int*);
  cusolverStatus_t (*orgqr)(cusolverDnHandle_t, int, int, int, T*, int, const T*, T*, int, int*);
  cusolverStatus_t (*ormqr_work)(cusolverDnHandle_t, cublasSideMode_t, cublasOperation_t, int, int, int, const T*, int,
                                 const T*, const T*, int, int*);
  cusolverStatus_t (*ormqr)(cusolverDnHandle_t, cublasSideMode_t, cublasOperation_t, int, int, int, const T*, int,
                            const T*, T*, int, T*, int, int*);
  cusolverStatus_t (*syevd_work)(cusolverDnHandle_t, cusolverEigMode_t, cublasFillMode_t, int, const T*, int, const R*,
                                 int*);
  cusolverStatus_t (*syevd)(cusolverDnHandle_t, cusolverEigMode_t, cublasFillMode_t, int, T*, int, R*, T*, int, int*);
  cusolverStatus_t (*gesvd_work)(cusolverDnHandle_t, int, int, int*);
  cusolverStatus_t (*gesvd)(cusolverDnHandle_t, signed char, signed char, int, int, T*, int, R*, T*, int, T*, int, T*,
                            int, R*, int*);
  cusolverStatus_t (*potri_work)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, int*);
  cusolverStatus_t (*potri)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, T*, int, int*);
};
template <class T, class R>
struct Routines : Part1<T>, Part2<T, R> {};

struct Api {
  cusolverStatus_t (*create)(cusolverDnHandle_t*);
  cusolverStatus_t (*destroy)(cusolverDnHandle_t);
  cusolverStatus_t (*set_stream)(cusolverDnHandle_t, cudaStream_t);
  cusolverStatus_t (*get_version)(int*);
  Routines<float, float> s;
  Routines<double, double> d;
  Routines<cuComplex, float> c;
  Routines<cuDoubleComplex, double> z;
  const Routines<float, float>& of(float) const { return s; }
  const Routines<double, double>& of(double) const { return d; }
  const Routines<cuComplex, float>& of(cuComplex) const { return c; }
  const Routines<cuDoubleComplex, double>& of(cuDoubleComplex) const { return z; }
};
Api g_api{};
bool g_ok = false;
bool g_complex_ok = false;  // the complex routines (C, Z) resolved too: an optional group
// The polar-decomposition SVD of the 64-bit API (cuSOLVER 11.1 and later): optional, the SVD falls back to gesvd.
struct PolarApi {
  cusolverStatus_t (*create_params)(cusolverDnParams_t*);
  cusolverStatus_t (*destroy_params)(cusolverDnParams_t);
  cusolverStatus_t (*work)(cusolverDnHandle_t, cusolverDnParams_t, cusolverEigMode_t, int, int64_t, int64_t,
                           cudaDataType, const void*, int64_t, cudaDataType, const void*, cudaDataType, const void*,
                           int64_t, cudaDataType, const void*, int64_t, cudaDataType, size_t*, size_t*);
  cusolverStatus_t (*run)(cusolverDnHandle_t, cusolverDnParams_t, cusolverEigMode_t, int, int64_t, int64_t,
                          cudaDataType, void*, int64_t, cudaDataType, void*, cudaDataType, void*, int64_t, cudaDataType,
                          void*, int64_t, cudaDataType, void*, size_t, void*, size_t, int*, double*);
};
PolarApi g_polar{};
bool g_polar_ok = false;
std::atomic<bool> g_tried{false};
std::string g_desc = "cuSOLVER: not opened yet";
std::once_flag g_once;
std::string g_setting;
bool g_setting_given = false;

template <class T>
bool part1(void* h, char p, Part1<T>* r) {
  auto name = [p](const char* rest) { return std::string("cusolverDn") + p + rest; };
  return sym(h, name("getrf_bufferSize").c_str(), r->getrf_work) && sym(h, name("getrf").c_str(), r->getrf) &&
         sym(h, name("getrs").c_str(), r->getrs) && sym(h, name("potrf_bufferSize").c_str(), r->potrf_work) &&
         sym(h, name("potrf").c_str(), r->potrf) && sym(h, name("potrs").c_str(), r->potrs);
}
template <class T, class R>
bool routines(void* h, char p, Routines<T, R>* r) {
  auto name = [p](const char* rest) { return std::string("cusolverDn") + p + rest; };
  const bool cx = kCuComplex<T>;
  return part1(h, p, r) && sym(h, name("geqrf_bufferSize").c_str(), r->geqrf_work) &&
         sym(h, name("geqrf").c_str(), r->geqrf) &&
         sym(h, name(cx ? "ungqr_bufferSize" : "orgqr_bufferSize").c_str(), r->orgqr_work) &&
         sym(h, name(cx ? "ungqr" : "orgqr").c_str(), r->orgqr) &&
         sym(h, name(cx ? "unmqr_bufferSize" : "ormqr_bufferSize").c_str(), r->ormqr_work) &&
         sym(h, name(cx ? "unmqr" : "ormqr").c_str(), r->ormqr) &&
         sym(h, name(cx ? "heevd_bufferSize" : "syevd_bufferSize").c_str(), r->syevd_work) &&
         sym(h, name(cx ? "heevd" : "syevd").c_str(), r->syevd) &&
         sym(h, name("gesvd_bufferSize").c_str(), r->gesvd_work) && sym(h, name("gesvd").c_str(), r->gesvd) &&
         sym(h, name("potri_bufferSize").c_str(), r->potri_work) && sym(h, name("potri").c_str(), r->potri);
}

void open_cusolver() {
  bo::one_time::Timer one_time;  // once per process, in the first LAPACK call that reaches the GPU
  const char* cfg = g_setting_given && !g_setting.empty() ? g_setting.c_str() : nullptr;  // the module's config layer
  if (cfg && std::string(cfg) == "off") {
    g_desc = "cuSOLVER: disabled by BLASOFFLOAD_CUSOLVER=off";
    return;
  }
  std::string tried, used;
  void* h = nullptr;
  const char* names[] = {cfg && *cfg ? cfg : nullptr,
                         "libcusolver.so.12",
                         "libcusolver.so.11",
                         "libcusolver.so",
                         "/usr/local/cuda/lib64/libcusolver.so.12",
                         "/usr/local/cuda/lib64/libcusolver.so"};
  h = open_first(names, sizeof names / sizeof names[0], &used, &tried);
  if (!h) {
    g_desc = "cuSOLVER: not found (tried " + tried + "); LAPACK calls run on the CPU LAPACK";
    return;
  }
  Api a{};
  if (!sym(h, "cusolverDnCreate", a.create) || !sym(h, "cusolverDnDestroy", a.destroy) ||
      !sym(h, "cusolverDnSetStream", a.set_stream) || !sym(h, "cusolverGetVersion", a.get_version) ||
      !routines(h, 'S', &a.s) || !routines(h, 'D', &a.d)) {
    g_desc = "cuSOLVER: " + used + " lacks a needed symbol; LAPACK calls run on the CPU LAPACK";
    return;
  }
  g_api = a;
  int v = 0;
  g_api.get_version(&v);
  char buf[512];
  std::snprintf(buf, sizeof buf, "cuSOLVER %d.%d.%d (%s)", v / 1000, (v / 100) % 10, v % 100, used.c_str());
  g_desc = buf;
  g_ok = true;
  g_complex_ok = routines(h, 'C', &g_api.c) && routines(h, 'Z', &g_api.z);
  if (!g_complex_ok) g_desc += " without its complex routines";
  PolarApi p{};
  g_polar_ok = sym(h, "cusolverDnCreateParams", p.create_params) &&
               sym(h, "cusolverDnDestroyParams", p.destroy_params) && sym(h, "cusolverDnXgesvdp_bufferSize", p.work) &&
               sym(h, "cusolverDnXgesvdp", p.run);
  if (g_polar_ok) g_polar = p;
}

// This thread's handle on the current device (vendor_handles.h), bound to `st`.
cusolverDnHandle_t handle(cudaStream_t st) {
  thread_local ThreadHandles<cusolverDnHandle_t> hs([](cusolverDnHandle_t x) {
    if (g_api.destroy) g_api.destroy(x);
  });
  cusolverDnHandle_t h = hs.current([](cusolverDnHandle_t* x) { return g_api.create(x) == CUSOLVER_STATUS_SUCCESS; });
  if (h) g_api.set_stream(h, st);
  return h;
}

int status(cusolverStatus_t s) {
  if (s == CUSOLVER_STATUS_SUCCESS) return cudaSuccess;
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) return cudaErrorMemoryAllocation;
  return cudaErrorUnknown;
}
// The complex group is optional: without it a complex routine is refused here (cudaErrorNotSupported), never called
// through its unresolved pointer, and the real ones still run.
template <class T>
int refused() {
  return kCuComplex<T> && !cusolver_complex_available() ? int(cudaErrorNotSupported) : 0;
}
cublasFillMode_t fill(char uplo) { return uplo == 'L' ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

template <class T>
int64_t getrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {
  if ((*err = refused<T>())) return 0;
  cusolverDnHandle_t h = cusolver_available() ? handle(st) : nullptr;
  int lw = 0;
  *err = h ? status(g_api.of(T()).getrf_work(h, int(m), int(n), a, int(lda), &lw)) : int(cudaErrorUnknown);
  return *err ? 0 : lw;
}
template <class T>
int64_t potrf_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {
  if ((*err = refused<T>())) return 0;
  cusolverDnHandle_t h = cusolver_available() ? handle(st) : nullptr;
  int lw = 0;
  *err = h ? status(g_api.of(T()).potrf_work(h, fill(uplo), int(n), a, int(lda), &lw)) : int(cudaErrorUnknown);
  return *err ? 0 : lw;
}
template <class T>
int getrf(int64_t m, int64_t n, T* a, int64_t lda, T* work, int* ipiv, int* info, cudaStream_t st) {
  if (int r = refused<T>()) return r;
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).getrf(h, int(m), int(n), a, int(lda), work, ipiv, info)) : int(cudaErrorUnknown);
}
template <class T>
int getrs(char trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb, int* info,
          cudaStream_t st) {
  if (int r = refused<T>()) return r;
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).getrs(h, op<T>(trans), int(n), int(nrhs), a, int(lda), ipiv, b, int(ldb), info))
           : int(cudaErrorUnknown);
}
template <class T>
int potrf(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* info, cudaStream_t st) {
  if (int r = refused<T>()) return r;
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).potrf(h, fill(uplo), int(n), a, int(lda), work, int(lwork), info))
           : int(cudaErrorUnknown);
}
template <class T>
int potrs(char uplo, int64_t n, int64_t nrhs, const T* a, int64_t lda, T* b, int64_t ldb, int* info, cudaStream_t st) {
  if (int r = refused<T>()) return r;
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).potrs(h, fill(uplo), int(n), int(nrhs), a, int(lda), b, int(ldb), info))
           : int(cudaErrorUnknown);
}

// Part 2: a workspace size, then the routine, each with this thread's handle on `st`, on cuSOLVER's element type
// (vendor_ops.h's CuType); a complex one is refused without the complex group.
template <class T, class Q>
int64_t ask_work(cudaStream_t st, int* err, Q&& q) {
  if ((*err = refused<CuType<T>>())) return 0;
  cusolverDnHandle_t h = cusolver_available() ? handle(st) : nullptr;
  int lw = 0;
  *err = h ? status(q(h, g_api.of(CuType<T>()), &lw)) : int(cudaErrorUnknown);
  return *err ? 0 : lw;
}
template <class T, class Q>
int run_routine(cudaStream_t st, Q&& q) {
  if (int r = refused<CuType<T>>()) return r;
  cusolverDnHandle_t h = handle(st);
  return h ? status(q(h, g_api.of(CuType<T>()))) : int(cudaErrorUnknown);
}
cublasSideMode_t side_of(char s) { return s == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
cusolverEigMode_t eig_mode(char jobz) { return jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR; }

}  // namespace

template <class T>
int64_t cusolver_geqrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {
  return ask_work<T>(st, err,
                     [&](auto h, auto& r, int* lw) { return r.geqrf_work(h, int(m), int(n), cu(a), int(lda), lw); });
}
template <class T>
int cusolver_geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau, T* work, int64_t lwork, int* info,
                   cudaStream_t st) {
  return run_routine<T>(st, [&](auto h, auto& r) {
    return r.geqrf(h, int(m), int(n), cu(a), int(lda), cu(tau), cu(work), int(lwork), info);
  });
}
template <class T>
int64_t cusolver_orgqr_work(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* tau, cudaStream_t st,
                            int* err) {
  return ask_work<T>(st, err, [&](auto h, auto& r, int* lw) {
    return r.orgqr_work(h, int(m), int(n), int(k), cu(a), int(lda), cu(tau), lw);
  });
}
template <class T>
int cusolver_orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau, T* work, int64_t lwork, int* info,
                   cudaStream_t st) {
  return run_routine<T>(st, [&](auto h, auto& r) {
    return r.orgqr(h, int(m), int(n), int(k), cu(a), int(lda), cu(tau), cu(work), int(lwork), info);
  });
}
template <class T>
int64_t cusolver_ormqr_work(char side, char trans, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                            const T* tau, const T* c, int64_t ldc, cudaStream_t st, int* err) {
  return ask_work<T>(st, err, [&](auto h, auto& r, int* lw) {
    return r.ormqr_work(h, side_of(side), op<CuType<T>>(trans), int(m), int(n), int(k), cu(a), int(lda), cu(tau), cu(c),
                        int(ldc), lw);
  });
}
template <class T>
int cusolver_ormqr(char side, char trans, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* tau, T* c,
                   int64_t ldc, T* work, int64_t lwork, int* info, cudaStream_t st) {
  return run_routine<T>(st, [&](auto h, auto& r) {
    return r.ormqr(h, side_of(side), op<CuType<T>>(trans), int(m), int(n), int(k), cu(a), int(lda), cu(tau), cu(c),
                   int(ldc), cu(work), int(lwork), info);
  });
}
template <class T>
int64_t cusolver_syevd_work(char jobz, char uplo, int64_t n, const T* a, int64_t lda, const SolverReal<T>* w,
                            cudaStream_t st, int* err) {
  return ask_work<T>(st, err, [&](auto h, auto& r, int* lw) {
    return r.syevd_work(h, eig_mode(jobz), fill(uplo), int(n), cu(a), int(lda), w, lw);
  });
}
template <class T>
int cusolver_syevd(char jobz, char uplo, int64_t n, T* a, int64_t lda, SolverReal<T>* w, T* work, int64_t lwork,
                   int* info, cudaStream_t st) {
  return run_routine<T>(st, [&](auto h, auto& r) {
    return r.syevd(h, eig_mode(jobz), fill(uplo), int(n), cu(a), int(lda), w, cu(work), int(lwork), info);
  });
}
template <class T>
int64_t cusolver_gesvd_work(int64_t m, int64_t n, cudaStream_t st, int* err) {
  return ask_work<T>(st, err, [&](auto h, auto& r, int* lw) { return r.gesvd_work(h, int(m), int(n), lw); });
}
template <class T>
int cusolver_gesvd(char jobu, char jobvt, int64_t m, int64_t n, T* a, int64_t lda, SolverReal<T>* s, T* u, int64_t ldu,
                   T* vt, int64_t ldvt, T* work, int64_t lwork, SolverReal<T>* rwork, int* info, cudaStream_t st) {
  return run_routine<T>(st, [&](auto h, auto& r) {
    return r.gesvd(h, static_cast<signed char>(jobu), static_cast<signed char>(jobvt), int(m), int(n), cu(a), int(lda),
                   s, cu(u), int(ldu), cu(vt), int(ldvt), cu(work), int(lwork), rwork, info);
  });
}
template <class T>
int64_t cusolver_potri_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {
  return ask_work<T>(
      st, err, [&](auto h, auto& r, int* lw) { return r.potri_work(h, fill(uplo), int(n), cu(a), int(lda), lw); });
}
template <class T>
int cusolver_potri(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* info, cudaStream_t st) {
  return run_routine<T>(
      st, [&](auto h, auto& r) { return r.potri(h, fill(uplo), int(n), cu(a), int(lda), cu(work), int(lwork), info); });
}

bool cusolver_polar_available() { return cusolver_available() && g_polar_ok; }

int cusolver_gesvdp(bool vectors, int64_t m, int64_t n, double* a, int64_t lda, double* s, double* u, int64_t ldu,
                    double* v, int64_t ldv, int* info, double* err_sigma, cudaStream_t st) {
  if (!cusolver_polar_available()) return cudaErrorNotSupported;
  cusolverDnHandle_t h = handle(st);
  if (!h) return cudaErrorUnknown;
  cusolverDnParams_t params = nullptr;
  if (g_polar.create_params(&params) != CUSOLVER_STATUS_SUCCESS) return cudaErrorUnknown;
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  size_t dev_bytes = 0, host_bytes = 0;
  int r = status(g_polar.work(h, params, jobz, 1, m, n, CUDA_R_64F, a, lda, CUDA_R_64F, s, CUDA_R_64F, u, ldu,
                              CUDA_R_64F, v, ldv, CUDA_R_64F, &dev_bytes, &host_bytes));
  void* dwork = nullptr;
  std::vector<char> hwork;
  if (!r) r = cudaMallocAsync(&dwork, std::max<size_t>(dev_bytes, 1), st);
  if (!r) {
    hwork.resize(std::max<size_t>(host_bytes, 1));
    r = status(g_polar.run(h, params, jobz, 1, m, n, CUDA_R_64F, a, lda, CUDA_R_64F, s, CUDA_R_64F, u, ldu, CUDA_R_64F,
                           v, ldv, CUDA_R_64F, dwork, dev_bytes, hwork.data(), host_bytes, info, err_sigma));
    cudaFreeAsync(dwork, st);
  }
  g_polar.destroy_params(params);
  return r;
}

#define BO_CUSOLVER_PART2(T)                                                                                           \
  template int64_t cusolver_geqrf_work<T>(int64_t, int64_t, T*, int64_t, cudaStream_t, int*);                          \
  template int cusolver_geqrf<T>(int64_t, int64_t, T*, int64_t, T*, T*, int64_t, int*, cudaStream_t);                  \
  template int64_t cusolver_orgqr_work<T>(int64_t, int64_t, int64_t, const T*, int64_t, const T*, cudaStream_t, int*); \
  template int cusolver_orgqr<T>(int64_t, int64_t, int64_t, T*, int64_t, const T*, T*, int64_t, int*, cudaStream_t);   \
  template int64_t cusolver_ormqr_work<T>(char, char, int64_t, int64_t, int64_t, const T*, int64_t, const T*,          \
                                          const T*, int64_t, cudaStream_t, int*);                                      \
  template int cusolver_ormqr<T>(char, char, int64_t, int64_t, int64_t, const T*, int64_t, const T*, T*, int64_t, T*,  \
                                 int64_t, int*, cudaStream_t);                                                         \
  template int64_t cusolver_syevd_work<T>(char, char, int64_t, const T*, int64_t, const SolverReal<T>*, cudaStream_t,  \
                                          int*);                                                                       \
  template int cusolver_syevd<T>(char, char, int64_t, T*, int64_t, SolverReal<T>*, T*, int64_t, int*, cudaStream_t);   \
  template int64_t cusolver_gesvd_work<T>(int64_t, int64_t, cudaStream_t, int*);                                       \
  template int cusolver_gesvd<T>(char, char, int64_t, int64_t, T*, int64_t, SolverReal<T>*, T*, int64_t, T*, int64_t,  \
                                 T*, int64_t, SolverReal<T>*, int*, cudaStream_t);                                     \
  template int64_t cusolver_potri_work<T>(char, int64_t, T*, int64_t, cudaStream_t, int*);                             \
  template int cusolver_potri<T>(char, int64_t, T*, int64_t, T*, int64_t, int*, cudaStream_t);
BO_CUSOLVER_PART2(float)
BO_CUSOLVER_PART2(double)
BO_CUSOLVER_PART2(bo_cfloat)
BO_CUSOLVER_PART2(bo_cdouble)
#undef BO_CUSOLVER_PART2

void set_cusolver_setting(const char* value) {
  g_setting = value ? value : "";
  g_setting_given = value != nullptr;
}
bool cusolver_tried() { return g_tried.load(std::memory_order_acquire); }

bool cusolver_available() {
  std::call_once(g_once, [] {
    open_cusolver();
    g_tried.store(true, std::memory_order_release);
  });
  return g_ok;
}
bool cusolver_complex_available() { return cusolver_available() && g_complex_ok; }
const char* cusolver_description() {
  cusolver_available();
  return g_desc.c_str();
}

// One set per element type T of ours; C is cuSOLVER's (std::complex has cuComplex's layout).
#define BO_CUSOLVER_TYPED(T, C)                                                                                        \
  int64_t cusolver_getrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {                    \
    return getrf_work(m, n, reinterpret_cast<C*>(a), lda, st, err);                                                    \
  }                                                                                                                    \
  int64_t cusolver_potrf_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {                    \
    return potrf_work(uplo, n, reinterpret_cast<C*>(a), lda, st, err);                                                 \
  }                                                                                                                    \
  int cusolver_getrf(int64_t m, int64_t n, T* a, int64_t lda, T* work, int* ipiv, int* info, cudaStream_t st) {        \
    return getrf(m, n, reinterpret_cast<C*>(a), lda, reinterpret_cast<C*>(work), ipiv, info, st);                      \
  }                                                                                                                    \
  int cusolver_getrs(char trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb, \
                     int* info, cudaStream_t st) {                                                                     \
    return getrs(trans, n, nrhs, reinterpret_cast<const C*>(a), lda, ipiv, reinterpret_cast<C*>(b), ldb, info, st);    \
  }                                                                                                                    \
  int cusolver_potrf(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* info, cudaStream_t st) {    \
    return potrf(uplo, n, reinterpret_cast<C*>(a), lda, reinterpret_cast<C*>(work), lwork, info, st);                  \
  }                                                                                                                    \
  int cusolver_potrs(char uplo, int64_t n, int64_t nrhs, const T* a, int64_t lda, T* b, int64_t ldb, int* info,        \
                     cudaStream_t st) {                                                                                \
    return potrs(uplo, n, nrhs, reinterpret_cast<const C*>(a), lda, reinterpret_cast<C*>(b), ldb, info, st);           \
  }
BO_CUSOLVER_TYPED(float, float)
BO_CUSOLVER_TYPED(double, double)
BO_CUSOLVER_TYPED(bo_cfloat, cuComplex)
BO_CUSOLVER_TYPED(bo_cdouble, cuDoubleComplex)
#undef BO_CUSOLVER_TYPED

}  // namespace bok::vendor
