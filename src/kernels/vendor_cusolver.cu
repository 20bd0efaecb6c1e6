// Opens libcusolver with dlopen on first use and calls its dense LU and Cholesky routines with one handle per thread
// and device (handles are not thread-safe); without it the module's LAPACK path declines and the CPU LAPACK runs.
#include <cusolverDn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/vendor_cusolver.h"
#include "kernels/vendor_dl.h"
#include "offload/one_time_cost.h"

namespace bok::vendor {
namespace {

template <class T>
struct Routines {
  cusolverStatus_t (*getrf_work)(cusolverDnHandle_t, int, int, T*, int, int*);
  cusolverStatus_t (*getrf)(cusolverDnHandle_t, int, int, T*, int, T*, int*, int*);
  cusolverStatus_t (*getrs)(cusolverDnHandle_t, cublasOperation_t, int, int, const T*, int, const int*, T*, int, int*);
  cusolverStatus_t (*potrf_work)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, int*);
  cusolverStatus_t (*potrf)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, T*, int, int*);
  cusolverStatus_t (*potrs)(cusolverDnHandle_t, cublasFillMode_t, int, int, const T*, int, T*, int, int*);
};

struct Api {
  cusolverStatus_t (*create)(cusolverDnHandle_t*);
  cusolverStatus_t (*set_stream)(cusolverDnHandle_t, cudaStream_t);
  cusolverStatus_t (*get_version)(int*);
  Routines<float> s;
  Routines<double> d;
  const Routines<float>& of(float) const { return s; }
  const Routines<double>& of(double) const { return d; }
};
Api g_api{};
bool g_ok = false;
std::atomic<bool> g_tried{false};
std::string g_desc = "cuSOLVER: not opened yet";
std::once_flag g_once;
std::string g_setting;
bool g_setting_given = false;

template <class T>
bool routines(void* h, char p, Routines<T>* r) {
  auto name = [p](const char* rest) { return std::string("cusolverDn") + p + rest; };
  return sym(h, name("getrf_bufferSize").c_str(), r->getrf_work) && sym(h, name("getrf").c_str(), r->getrf) &&
         sym(h, name("getrs").c_str(), r->getrs) && sym(h, name("potrf_bufferSize").c_str(), r->potrf_work) &&
         sym(h, name("potrf").c_str(), r->potrf) && sym(h, name("potrs").c_str(), r->potrs);
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
  if (!sym(h, "cusolverDnCreate", a.create) || !sym(h, "cusolverDnSetStream", a.set_stream) ||
      !sym(h, "cusolverGetVersion", a.get_version) || !routines(h, 'S', &a.s) || !routines(h, 'D', &a.d)) {
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
}

// One handle per thread, created on first use on the current device and kept for the process.
cusolverDnHandle_t handle(cudaStream_t st) {
  thread_local cusolverDnHandle_t h = nullptr;
  thread_local int dev = -1;
  int cur = 0;
  cudaGetDevice(&cur);
  if (!h || dev != cur) {
    bo::one_time::Timer one_time;  // once per thread and device
    h = nullptr;
    if (g_api.create(&h) != CUSOLVER_STATUS_SUCCESS) return nullptr;
    dev = cur;
  }
  g_api.set_stream(h, st);
  return h;
}

int status(cusolverStatus_t s) {
  if (s == CUSOLVER_STATUS_SUCCESS) return cudaSuccess;
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) return cudaErrorMemoryAllocation;
  return cudaErrorUnknown;
}
cublasOperation_t op(char t) { return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T; }
cublasFillMode_t fill(char uplo) { return uplo == 'L' ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

template <class T>
int64_t getrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {
  cusolverDnHandle_t h = cusolver_available() ? handle(st) : nullptr;
  int lw = 0;
  *err = h ? status(g_api.of(T()).getrf_work(h, int(m), int(n), a, int(lda), &lw)) : int(cudaErrorUnknown);
  return *err ? 0 : lw;
}
template <class T>
int64_t potrf_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {
  cusolverDnHandle_t h = cusolver_available() ? handle(st) : nullptr;
  int lw = 0;
  *err = h ? status(g_api.of(T()).potrf_work(h, fill(uplo), int(n), a, int(lda), &lw)) : int(cudaErrorUnknown);
  return *err ? 0 : lw;
}
template <class T>
int getrf(int64_t m, int64_t n, T* a, int64_t lda, T* work, int* ipiv, int* info, cudaStream_t st) {
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).getrf(h, int(m), int(n), a, int(lda), work, ipiv, info)) : int(cudaErrorUnknown);
}
template <class T>
int getrs(char trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb, int* info,
          cudaStream_t st) {
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).getrs(h, op(trans), int(n), int(nrhs), a, int(lda), ipiv, b, int(ldb), info))
           : int(cudaErrorUnknown);
}
template <class T>
int potrf(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* info, cudaStream_t st) {
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).potrf(h, fill(uplo), int(n), a, int(lda), work, int(lwork), info))
           : int(cudaErrorUnknown);
}
template <class T>
int potrs(char uplo, int64_t n, int64_t nrhs, const T* a, int64_t lda, T* b, int64_t ldb, int* info, cudaStream_t st) {
  cusolverDnHandle_t h = handle(st);
  return h ? status(g_api.of(T()).potrs(h, fill(uplo), int(n), int(nrhs), a, int(lda), b, int(ldb), info))
           : int(cudaErrorUnknown);
}

}  // namespace

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
const char* cusolver_description() {
  cusolver_available();
  return g_desc.c_str();
}

#define BO_CUSOLVER_TYPED(T)                                                                                           \
  int64_t cusolver_getrf_work(int64_t m, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {                    \
    return getrf_work(m, n, a, lda, st, err);                                                                          \
  }                                                                                                                    \
  int64_t cusolver_potrf_work(char uplo, int64_t n, T* a, int64_t lda, cudaStream_t st, int* err) {                    \
    return potrf_work(uplo, n, a, lda, st, err);                                                                       \
  }                                                                                                                    \
  int cusolver_getrf(int64_t m, int64_t n, T* a, int64_t lda, T* work, int* ipiv, int* info, cudaStream_t st) {        \
    return getrf(m, n, a, lda, work, ipiv, info, st);                                                                  \
  }                                                                                                                    \
  int cusolver_getrs(char trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb, \
                     int* info, cudaStream_t st) {                                                                     \
    return getrs(trans, n, nrhs, a, lda, ipiv, b, ldb, info, st);                                                      \
  }                                                                                                                    \
  int cusolver_potrf(char uplo, int64_t n, T* a, int64_t lda, T* work, int64_t lwork, int* info, cudaStream_t st) {    \
    return potrf(uplo, n, a, lda, work, lwork, info, st);                                                              \
  }                                                                                                                    \
  int cusolver_potrs(char uplo, int64_t n, int64_t nrhs, const T* a, int64_t lda, T* b, int64_t ldb, int* info,        \
                     cudaStream_t st) {                                                                                \
    return potrs(uplo, n, nrhs, a, lda, b, ldb, info, st);                                                             \
  }
BO_CUSOLVER_TYPED(float)
BO_CUSOLVER_TYPED(double)
#undef BO_CUSOLVER_TYPED

}  // namespace bok::vendor
