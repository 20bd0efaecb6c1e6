/* A stand-in for a pip wheel's OpenBLAS (scipy-openblas32/64): the scipy_-prefixed LP64 and ILP64 names of a few
 * routines, each passing the call to Debian's reference library of the same integer width, looked up inside that
 * library (RTLD_LOCAL | RTLD_DEEPBIND: the reference LAPACK calls its own BLAS, not the preloaded names) so that
 * nothing of the process's interposes, as inside a real wheel. XERBLA prints which family's handler ran and the INFO it
 * got. */
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void* lib(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!h) {
    fprintf(stderr, "fake wheel: %s\n", dlerror());
    abort();
  }
  return h;
}
static void* fn(int ilp64, int lapack, const char* name) {
  static void* h[2][2];
  static const char* paths[2][2] = {
      {"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3"},
      {"/usr/lib/x86_64-linux-gnu/blas64/libblas64.so.3", "/usr/lib/x86_64-linux-gnu/lapack64/liblapack64.so.3"}};
  if (!h[ilp64][lapack]) h[ilp64][lapack] = lib(paths[ilp64][lapack]);
  void* p = dlsym(h[ilp64][lapack], name);
  if (!p) abort();
  return p;
}

#define GEMM(prefix, suffix, I, ilp, T, p)                                                                            \
  void prefix##p##gemm##suffix(const char* ta, const char* tb, const I* m, const I* n, const I* k, const T* alpha,    \
                               const T* a, const I* lda, const T* b, const I* ldb, const T* beta, T* c, const I* ldc, \
                               size_t la, size_t lb) {                                                                \
    ((void (*)(const char*, const char*, const I*, const I*, const I*, const T*, const T*, const I*, const T*,        \
               const I*, const T*, T*, const I*, size_t, size_t))fn(ilp, 0, #p "gemm_"))(                             \
        ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, la, lb);                                                \
  }
GEMM(scipy_, _64_, int64_t, 1, double, d)
GEMM(scipy_, _64_, int64_t, 1, float, s)
GEMM(scipy_, _, int32_t, 0, double, d)

#define GETRF(prefix, suffix, I, ilp)                                                                           \
  void prefix##dgetrf##suffix(const I* m, const I* n, double* a, const I* lda, I* ipiv, I* info) {              \
    ((void (*)(const I*, const I*, double*, const I*, I*, I*))fn(ilp, 1, "dgetrf_"))(m, n, a, lda, ipiv, info); \
  }
GETRF(scipy_, _64_, int64_t, 1)
GETRF(scipy_, _, int32_t, 0)

/* cblas_dgemm of a wheel: only column-major is used by the test. */
void scipy_cblas_dgemm64_(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  ((void (*)(int, int, int, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*, int64_t, double,
             double*, int64_t))fn(1, 0, "cblas_dgemm"))(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void scipy_xerbla_64_(const char* name, const int64_t* info, size_t len) {
  printf("scipy_xerbla_64_: %.6s %lld\n", name, (long long)*info);
  (void)len;
}
void scipy_xerbla_(const char* name, const int32_t* info, size_t len) {
  printf("scipy_xerbla_: %.6s %d\n", name, *info);
  (void)len;
}

/* What scipy-openblas64 says about itself, under its renamed OpenBLAS names. */
char* scipy_openblas_get_config64_(void) { return (char*)"OpenBLAS 0.3.99.fake USE64BITINT DYNAMIC_ARCH"; }
char* scipy_openblas_get_corename64_(void) { return (char*)"Haswell"; }
int scipy_openblas_get_num_threads64_(void) { return 3; }

/* A routine the wheel leaves unrenamed and calls through its PLT (as scipy-openblas does with sroundup_lwork_): a
 * preloaded library that forwards the reference name must send it to an LP64 library, never to an ILP64 one that
 * defines the same name (fake_openblas64.c, NumPy's wheel in the same process). */
float sroundup_lwork_(const int32_t* lwork) { return (float)*lwork; }
void scipy_fake_lwork_query_(const int32_t* lwork, float* out) { *out = sroundup_lwork_(lwork); }
