// Opens libcublas with dlopen on first use and calls it with one handle per thread (handles are not
// thread-safe); cuBLAS is a tuning candidate, so its absence only removes that candidate.
#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/vendor_cublas.h"

namespace bok::vendor {
namespace {

struct Api {
  cublasStatus_t (*create)(cublasHandle_t*);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*set_pointer_mode)(cublasHandle_t, cublasPointerMode_t);
  cublasStatus_t (*get_version)(cublasHandle_t, int*);
  cublasStatus_t (*snrm2)(cublasHandle_t, int, const float*, int, float*);
  cublasStatus_t (*sgemv)(cublasHandle_t, cublasOperation_t, int, int, const float*, const float*, int, const float*,
                          int, const float*, float*, int);
  cublasStatus_t (*strsv)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, cublasDiagType_t, int, const float*,
                          int, float*, int);
  cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
                          const float*, int, const float*, int, const float*, float*, int);
  cublasStatus_t (*strsm)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t, cublasDiagType_t, int,
                          int, const float*, const float*, int, float*, int);
  cublasStatus_t (*ssyrk)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int, const float*, const float*,
                          int, const float*, float*, int);
};
Api g_api{};
bool g_ok = false;
std::string g_desc = "cuBLAS: not opened yet";
std::once_flag g_once;
std::string g_setting;
bool g_setting_given = false;

template <class F>
bool sym(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

void open_cublas() {
  const char* cfg = g_setting_given ? g_setting.c_str() : std::getenv("BLASOFFLOAD_CUBLAS");
  if (cfg && std::string(cfg) == "off") {
    g_desc = "cuBLAS: disabled by BLASOFFLOAD_CUBLAS=off";
    return;
  }
  std::string tried;
  void* h = nullptr;
  const char* names[] = {cfg && *cfg ? cfg : nullptr, "libcublas.so.13", "libcublas.so",
                         "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so"};
  std::string used;
  for (const char* n : names) {
    if (!n) continue;
    h = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (h) {
      used = n;
      break;
    }
    tried += std::string(tried.empty() ? "" : ", ") + n;
  }
  if (!h) {
    g_desc = "cuBLAS: not found (tried " + tried + ")";
    return;
  }
  Api a{};
  if (!sym(h, "cublasCreate_v2", a.create) || !sym(h, "cublasSetStream_v2", a.set_stream) ||
      !sym(h, "cublasSetPointerMode_v2", a.set_pointer_mode) || !sym(h, "cublasGetVersion_v2", a.get_version) ||
      !sym(h, "cublasSnrm2_v2", a.snrm2) || !sym(h, "cublasSgemv_v2", a.sgemv) || !sym(h, "cublasStrsv_v2", a.strsv) ||
      !sym(h, "cublasSgemm_v2", a.sgemm) || !sym(h, "cublasStrsm_v2", a.strsm) || !sym(h, "cublasSsyrk_v2", a.ssyrk)) {
    g_desc = "cuBLAS: " + used + " lacks a needed symbol";
    return;
  }
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
  g_ok = true;
}

// One handle per thread, created on first use and kept for the process (the driver reclaims it).
cublasHandle_t handle(cudaStream_t st) {
  thread_local cublasHandle_t h = nullptr;
  thread_local int dev = -1;
  int cur = 0;
  cudaGetDevice(&cur);
  if (!h || dev != cur) {
    if (g_api.create(&h) != CUBLAS_STATUS_SUCCESS) return nullptr;
    dev = cur;
  }
  g_api.set_stream(h, st);
  return h;
}

int status(cublasStatus_t s) {
  if (s == CUBLAS_STATUS_SUCCESS) return cudaSuccess;
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return cudaErrorMemoryAllocation;
  return cudaErrorUnknown;
}
bool fits(int64_t v) { return v >= -2147483647 && v <= 2147483647; }
cublasOperation_t op(char t) { return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T; }

}  // namespace

void set_cublas_setting(const char* value) {
  g_setting = value ? value : "";
  g_setting_given = value != nullptr;
}

bool cublas_available() {
  std::call_once(g_once, open_cublas);
  return g_ok;
}
const char* cublas_description() {
  cublas_available();
  return g_desc.c_str();
}

int cublas_snrm2(int64_t n, const float* x, int64_t incx, float* result_dev, cudaStream_t st) {
  if (!cublas_available() || !fits(n) || !fits(incx)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  g_api.set_pointer_mode(h, CUBLAS_POINTER_MODE_DEVICE);
  const int r = status(g_api.snrm2(h, int(n), x, int(incx), result_dev));
  g_api.set_pointer_mode(h, CUBLAS_POINTER_MODE_HOST);
  return r;
}
int cublas_sgemv(char trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
                 int64_t incx, float beta, float* y, int64_t incy, cudaStream_t st) {
  if (!cublas_available() || !fits(m) || !fits(n) || !fits(lda)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.sgemv(h, op(trans), int(m), int(n), &alpha, a, int(lda), x, int(incx), &beta, y, int(incy)));
}
int cublas_strsv(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda, float* x, int64_t incx,
                 cudaStream_t st) {
  if (!cublas_available() || !fits(n) || !fits(lda)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.strsv(h, uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, op(trans),
                            diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, int(n), a, int(lda), x, int(incx)));
}
int cublas_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t st) {
  if (!cublas_available() || !fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb) || !fits(ldc))
    return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.sgemm(h, op(ta), op(tb), int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb), &beta, c,
                            int(ldc)));
}

int cublas_strsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, float alpha, const float* a,
                 int64_t lda, float* b, int64_t ldb, cudaStream_t st) {
  if (!cublas_available() || !fits(m) || !fits(n) || !fits(lda) || !fits(ldb)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.strsm(h, side == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                            uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, op(transa),
                            diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, int(m), int(n), &alpha, a, int(lda),
                            b, int(ldb)));
}

int cublas_ssyrk(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, float beta,
                 float* c, int64_t ldc, cudaStream_t st) {
  if (!cublas_available() || !fits(n) || !fits(k) || !fits(lda) || !fits(ldc)) return cudaErrorNotSupported;
  cublasHandle_t h = handle(st);
  if (!h) return cudaErrorMemoryAllocation;
  return status(g_api.ssyrk(h, uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, op(trans), int(n), int(k),
                            &alpha, a, int(lda), &beta, c, int(ldc)));
}

}  // namespace bok::vendor
