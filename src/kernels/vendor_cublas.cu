// Opens libcublas with dlopen on first use and calls it with one handle per thread and device (handles are not
// thread-safe); cuBLAS is a tuning candidate, so its absence only removes that candidate.
#include <cublas_api.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "kernels/vendor_cublas.h"
#include "kernels/vendor_dl.h"
#include "kernels/vendor_handles.h"
#include "kernels/vendor_ops.h"

namespace bok::vendor {
namespace {

// The routines of one element type (cuBLAS S, D, C or Z); R is the real type of nrm2's result and herk's scalars.
template <class T, class R = T>
struct Routines {
  cublasStatus_t (*nrm2)(cublasHandle_t, int, const T*, int, R*);
  cublasStatus_t (*gemv)(cublasHandle_t, cublasOperation_t, int, int, const T*, const T*, int, const T*, int, const T*,
                         T*, int);
  cublasStatus_t (*trsv)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, cublasDiagType_t, int, const T*, int, T*,
                         int);
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const T*, const T*, int,
                         const T*, int, const T*, T*, int);
  cublasStatus_t (*trsm)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t, cublasDiagType_t, int,
                         int, const T*, const T*, int, T*, int);
  cublasStatus_t (*syrk)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int, const T*, const T*, int,
                         const T*, T*, int);
  cublasStatus_t (*herk)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int, const R*, const T*, int,
                         const R*, T*, int);  // complex only
};

struct Api {
  cublasStatus_t (*create)(cublasHandle_t*);
  cublasStatus_t (*destroy)(cublasHandle_t);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*set_pointer_mode)(cublasHandle_t, cublasPointerMode_t);
  cublasStatus_t (*get_version)(cublasHandle_t, int*);
  Routines<float> s;
  Routines<double> d;
  Routines<cuComplex, float> c;
  Routines<cuDoubleComplex, double> z;
  const Routines<float>& of(float) const { return s; }
  const Routines<double>& of(double) const { return d; }
  const Routines<cuComplex, float>& of(cuComplex) const { return c; }
  const Routines<cuDoubleComplex, double>& of(cuDoubleComplex) const { return z; }
};
Api g_api{};
bool g_ok = false;
bool g_complex_ok = false;
std::string g_desc = "cuBLAS: not opened yet";
std::once_flag g_once;
std::string g_setting;
bool g_setting_given = false;

void open_cublas() {
  // Without the module's configuration (blasoffload-tune reaches the kernels through the registry alone, with no
  // init): the environment, read as the configuration layer reads it (nothing in a set-user-ID program).
  const char* cfg = g_setting_given ? g_setting.c_str() : secure_getenv("BLASOFFLOAD_CUBLAS");
  if (cfg && std::string(cfg) == "off") {
    g_desc = "cuBLAS: disabled by BLASOFFLOAD_CUBLAS=off";
    return;
  }
  std::string tried;
  void* h = nullptr;
  const char* names[] = {cfg && *cfg ? cfg : nullptr, "libcublas.so.13", "libcublas.so",
                         "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so"};
  std::string used;
  h = open_first(names, sizeof names / sizeof names[0], &used, &tried);
  if (!h) {
    g_desc = "cuBLAS: not found (tried " + tried + ")";
    return;
  }
  Api a{};
  if (!sym(h, "cublasCreate_v2", a.create) || !sym(h, "cublasDestroy_v2", a.destroy) ||
      !sym(h, "cublasSetStream_v2", a.set_stream) || !sym(h, "cublasSetPointerMode_v2", a.set_pointer_mode) ||
      !sym(h, "cublasGetVersion_v2", a.get_version) || !sym(h, "cublasSnrm2_v2", a.s.nrm2) ||
      !sym(h, "cublasSgemv_v2", a.s.gemv) || !sym(h, "cublasStrsv_v2", a.s.trsv) ||
      !sym(h, "cublasSgemm_v2", a.s.gemm) || !sym(h, "cublasStrsm_v2", a.s.trsm) ||
      !sym(h, "cublasSsyrk_v2", a.s.syrk) || !sym(h, "cublasDnrm2_v2", a.d.nrm2) ||
      !sym(h, "cublasDgemv_v2", a.d.gemv) || !sym(h, "cublasDtrsv_v2", a.d.trsv) ||
      !sym(h, "cublasDgemm_v2", a.d.gemm) || !sym(h, "cublasDtrsm_v2", a.d.trsm) ||
      !sym(h, "cublasDsyrk_v2", a.d.syrk)) {
    g_desc = "cuBLAS: " + used + " lacks a needed symbol";
    return;
  }
  // The complex routines are a group of their own: a library without one keeps the real routines.
  const bool complex_ok =
      sym(h, "cublasScnrm2_v2", a.c.nrm2) && sym(h, "cublasCgemv_v2", a.c.gemv) && sym(h, "cublasCtrsv_v2", a.c.trsv) &&
      sym(h, "cublasCgemm_v2", a.c.gemm) && sym(h, "cublasCtrsm_v2", a.c.trsm) && sym(h, "cublasCsyrk_v2", a.c.syrk) &&
      sym(h, "cublasCherk_v2", a.c.herk) && sym(h, "cublasDznrm2_v2", a.z.nrm2) && sym(h, "cublasZgemv_v2", a.z.gemv) &&
      sym(h, "cublasZtrsv_v2", a.z.trsv) && sym(h, "cublasZgemm_v2", a.z.gemm) && sym(h, "cublasZtrsm_v2", a.z.trsm) &&
      sym(h, "cublasZsyrk_v2", a.z.syrk) && sym(h, "cublasZherk_v2", a.z.herk);
  g_api = a;
  cublasHandle_t t = nullptr;
  int v = 0;
  if (g_api.create(&t) != CUBLAS_STATUS_SUCCESS || g_api.get_version(t, &v) != CUBLAS_STATUS_SUCCESS) {
    g_desc = "cuBLAS: " + used + " failed to create a handle";
    return;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "cuBLAS %d.%d.%d (%s)", v / 10000, (v / 100) % 100, v % 100, used.c_str());
  g_desc = buf;
  if (!complex_ok) g_desc += " without its complex routines";
  g_ok = true;
  g_complex_ok = complex_ok;
}

// This thread's handle on the current device (vendor_handles.h), bound to `st`.
cublasHandle_t handle(cudaStream_t st) {
  thread_local ThreadHandles<cublasHandle_t> hs([](cublasHandle_t x) {
    if (g_api.destroy) g_api.destroy(x);
  });
  cublasHandle_t h = hs.current([](cublasHandle_t* x) { return g_api.create(x) == CUBLAS_STATUS_SUCCESS; });
  if (h) g_api.set_stream(h, st);
  return h;
}

int status(cublasStatus_t s) {
  if (s == CUBLAS_STATUS_SUCCESS) return cudaSuccess;
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return cudaErrorMemoryAllocation;
  return cudaErrorUnknown;
}
bool fits(int64_t v) { return v >= -2147483647 && v <= 2147483647; }
cublasFillMode_t fill(char uplo) { return uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }
cublasDiagType_t diag_type(char diag) { return diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }
template <class T>
bool available() {
  return kCuComplex<T> ? cublas_complex_available() : cublas_available();
}
}  // namespace

void set_cublas_setting(const char* value) {
  g_setting = value ? value : "";
  g_setting_given = value != nullptr;
}

bool cublas_available() {
  std::call_once(g_once, open_cublas);
  return g_ok;
}
bool cublas_complex_available() { return cublas_available() && g_complex_ok; }
const char* cublas_description() {
  cublas_available();
  return g_desc.c_str();
}

namespace {

// Each takes cuBLAS's element type T (float, double, cuComplex, cuDoubleComplex).
template <class T, class R>
int nrm2(int64_t n, const T* x, int64_t incx, R* result_dev, cudaStream_t st) {
  if (!available<T>() || !fits(n) || !fits(incx)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  g_api.set_pointer_mode(h, CUBLAS_POINTER_MODE_DEVICE);
  const int r = status(g_api.of(T()).nrm2(h, int(n), x, int(incx), result_dev));
  g_api.set_pointer_mode(h, CUBLAS_POINTER_MODE_HOST);
  return r;
}
template <class T>
int gemv(char trans, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta, T* y,
         int64_t incy, cudaStream_t st) {
  if (!available<T>() || !fits(m) || !fits(n) || !fits(lda)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(
      g_api.of(T()).gemv(h, op<T>(trans), int(m), int(n), &alpha, a, int(lda), x, int(incx), &beta, y, int(incy)));
}
template <class T>
int trsv(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx, cudaStream_t st) {
  if (!available<T>() || !fits(n) || !fits(lda)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.of(T()).trsv(h, fill(uplo), op<T>(trans), diag_type(diag), int(n), a, int(lda), x, int(incx)));
}
template <class T>
int gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
         T beta, T* c, int64_t ldc, cudaStream_t st) {
  if (!available<T>() || !fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb) || !fits(ldc))
    return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.of(T()).gemm(h, op<T>(ta), op<T>(tb), int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb),
                                   &beta, c, int(ldc)));
}
template <class T>
int trsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, T* b,
         int64_t ldb, cudaStream_t st) {
  if (!available<T>() || !fits(m) || !fits(n) || !fits(lda) || !fits(ldb)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.of(T()).trsm(h, side == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill(uplo), op<T>(transa),
                                   diag_type(diag), int(m), int(n), &alpha, a, int(lda), b, int(ldb)));
}
template <class T>
int syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta, T* c, int64_t ldc,
         cudaStream_t st) {
  if (!available<T>() || !fits(n) || !fits(k) || !fits(lda) || !fits(ldc)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  // A complex syrk's 'T' is the plain transpose (op<T> would keep it so; only herk takes 'C').
  return status(
      g_api.of(T()).syrk(h, fill(uplo), op<T>(trans), int(n), int(k), &alpha, a, int(lda), &beta, c, int(ldc)));
}
template <class T, class R>
int herk(char uplo, char trans, int64_t n, int64_t k, R alpha, const T* a, int64_t lda, R beta, T* c, int64_t ldc,
         cudaStream_t st) {
  if (!available<T>() || !fits(n) || !fits(k) || !fits(lda) || !fits(ldc)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.of(T()).herk(h, fill(uplo), trans == 'N' ? CUBLAS_OP_N : CUBLAS_OP_C, int(n), int(k), &alpha, a,
                                   int(lda), &beta, c, int(ldc)));
}

}  // namespace

// One set per element type of ours (T; R its real type) on the templates above, with cuBLAS's element types.
#define BO_CUBLAS_TYPED(T, R)                                                                                         \
  int cublas_nrm2(int64_t n, const T* x, int64_t incx, R* r, cudaStream_t st) { return nrm2(n, cu(x), incx, r, st); } \
  int cublas_gemv(char trans, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,       \
                  T beta, T* y, int64_t incy, cudaStream_t st) {                                                      \
    return gemv(trans, m, n, *cu(&alpha), cu(a), lda, cu(x), incx, *cu(&beta), cu(y), incy, st);                      \
  }                                                                                                                   \
  int cublas_trsv(char uplo, char trans, char diag, int64_t n, const T* a, int64_t lda, T* x, int64_t incx,           \
                  cudaStream_t st) {                                                                                  \
    return trsv(uplo, trans, diag, n, cu(a), lda, cu(x), incx, st);                                                   \
  }                                                                                                                   \
  int cublas_gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,    \
                  int64_t ldb, T beta, T* c, int64_t ldc, cudaStream_t st) {                                          \
    return gemm(ta, tb, m, n, k, *cu(&alpha), cu(a), lda, cu(b), ldb, *cu(&beta), cu(c), ldc, st);                    \
  }                                                                                                                   \
  int cublas_trsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T* a,            \
                  int64_t lda, T* b, int64_t ldb, cudaStream_t st) {                                                  \
    return trsm(side, uplo, transa, diag, m, n, *cu(&alpha), cu(a), lda, cu(b), ldb, st);                             \
  }                                                                                                                   \
  int cublas_syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta, T* c,        \
                  int64_t ldc, cudaStream_t st) {                                                                     \
    return syrk(uplo, trans, n, k, *cu(&alpha), cu(a), lda, *cu(&beta), cu(c), ldc, st);                              \
  }
BO_CUBLAS_TYPED(float, float)
BO_CUBLAS_TYPED(double, double)
BO_CUBLAS_TYPED(bo_cfloat, float)
BO_CUBLAS_TYPED(bo_cdouble, double)
#undef BO_CUBLAS_TYPED
int cublas_herk(char uplo, char trans, int64_t n, int64_t k, float alpha, const bo_cfloat* a, int64_t lda, float beta,
                bo_cfloat* c, int64_t ldc, cudaStream_t st) {
  return herk(uplo, trans, n, k, alpha, cu(a), lda, beta, cu(c), ldc, st);
}
int cublas_herk(char uplo, char trans, int64_t n, int64_t k, double alpha, const bo_cdouble* a, int64_t lda,
                double beta, bo_cdouble* c, int64_t ldc, cudaStream_t st) {
  return herk(uplo, trans, n, k, alpha, cu(a), lda, beta, cu(c), ldc, st);
}

}  // namespace bok::vendor
