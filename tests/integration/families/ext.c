/* A stand-in for a Python extension module built against a pip wheel's OpenBLAS: it calls the wheel's scipy_-prefixed
 * names (linked to fake_wheel.c's library) and checks what comes back: results against a long double product or the
 * reference LAPACK called directly, 64-bit pivots and INFO, and the family's own XERBLA on bad arguments. Loaded
 * RTLD_LOCAL by host.c, as Python loads extensions. Prints one line per check and "PASS" or "FAIL". */
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scipy_dgemm_64_(const char*, const char*, const int64_t*, const int64_t*, const int64_t*, const double*,
                     const double*, const int64_t*, const double*, const int64_t*, const double*, double*,
                     const int64_t*, size_t, size_t);
void scipy_sgemm_64_(const char*, const char*, const int64_t*, const int64_t*, const int64_t*, const float*,
                     const float*, const int64_t*, const float*, const int64_t*, const float*, float*, const int64_t*,
                     size_t, size_t);
void scipy_dgemm_(const char*, const char*, const int32_t*, const int32_t*, const int32_t*, const double*,
                  const double*, const int32_t*, const double*, const int32_t*, const double*, double*, const int32_t*,
                  size_t, size_t);
void scipy_dgetrf_64_(const int64_t*, const int64_t*, double*, const int64_t*, int64_t*, int64_t*);
void scipy_dgetrf_(const int32_t*, const int32_t*, double*, const int32_t*, int32_t*, int32_t*);
void scipy_fake_lwork_query_(const int32_t*, float*);
void scipy_cblas_dgemm64_(int, int, int, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                          int64_t, double, double*, int64_t);

static int failures;
static void check(int ok, const char* what) {
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  if (!ok) ++failures;
}
static double rnd(void) { return (double)rand() / RAND_MAX - 0.5; }

/* max |C - alpha A B - beta C0| / (|A| |B| k) over a column-major m x n product with leading dimension ld. */
static double gemm_error(int m, int n, int k, const double* a, const double* b, const double* c0, const double* c,
                         int ld, double alpha, double beta) {
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double s = 0;
      for (int p = 0; p < k; ++p) s += (long double)a[i + p * ld] * b[p + j * ld];
      const double want = (double)(alpha * s + beta * (long double)c0[i + j * ld]);
      worst = fmax(worst, fabs(c[i + j * ld] - want) / k);
    }
  return worst;
}

int run_checks(void) {
  enum { M = 37, N = 29, K = 41, LD = 45 };
  static double a[LD * LD], b[LD * LD], c0[LD * LD], c[LD * LD];
  static float af[LD * LD], bf[LD * LD], cf[LD * LD];
  for (int i = 0; i < LD * LD; ++i) {
    a[i] = rnd(), b[i] = rnd(), c0[i] = rnd();
    af[i] = (float)a[i], bf[i] = (float)b[i];
  }
  const double alpha = 1.5, beta = -0.5;
  const int64_t m = M, n = N, k = K, ld = LD;
  const int32_t m32 = M, n32 = N, k32 = K, ld32 = LD;

  memcpy(c, c0, sizeof c);
  scipy_dgemm_64_("N", "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
  check(gemm_error(M, N, K, a, b, c0, c, LD, alpha, beta) < 1e-14, "scipy_dgemm_64_");

  memcpy(c, c0, sizeof c);
  scipy_dgemm_("N", "N", &m32, &n32, &k32, &alpha, a, &ld32, b, &ld32, &beta, c, &ld32, 1, 1);
  check(gemm_error(M, N, K, a, b, c0, c, LD, alpha, beta) < 1e-14, "scipy_dgemm_");

  memcpy(c, c0, sizeof c);
  scipy_cblas_dgemm64_(102 /* CblasColMajor */, 111, 111, M, N, K, alpha, a, LD, b, LD, beta, c, LD);
  check(gemm_error(M, N, K, a, b, c0, c, LD, alpha, beta) < 1e-14, "scipy_cblas_dgemm64_");

  const float one = 1, zero = 0;
  memset(cf, 0x7f, sizeof cf); /* beta = 0: not read */
  scipy_sgemm_64_("N", "N", &m, &n, &k, &one, af, &ld, bf, &ld, &zero, cf, &ld, 1, 1);
  double worst = 0;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      double s = 0;
      for (int p = 0; p < K; ++p) s += (double)af[i + p * LD] * bf[p + j * LD];
      worst = fmax(worst, fabs(cf[i + j * LD] - s) / K);
    }
  check(worst < 1e-6, "scipy_sgemm_64_");

  /* LU: the ILP64 family's factors, 64-bit pivots and INFO equal those of Debian's ILP64 LAPACK called directly (the
   * library the fake wheel uses), bit for bit; the LP64 family's 32-bit ones are a valid LU's. */
  void* lapack64 = dlopen("/usr/lib/x86_64-linux-gnu/lapack64/liblapack64.so.3", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  void (*dgetrf64)(const int64_t*, const int64_t*, double*, const int64_t*, int64_t*, int64_t*) =
      lapack64 ? (void (*)(const int64_t*, const int64_t*, double*, const int64_t*, int64_t*, int64_t*))dlsym(lapack64,
                                                                                                              "dgetrf_")
               : NULL;
  static double lu64[LD * LD], lu_ref[LD * LD], lu32[LD * LD];
  int64_t ipiv64[LD], ipiv_ref[LD], info64 = 0x7777777777777777, info_ref = -7;
  int32_t ipiv32[LD], info32 = 0x77777777;
  memset(ipiv64, 0x5a, sizeof ipiv64);
  memcpy(lu64, a, sizeof a);
  memcpy(lu_ref, a, sizeof a);
  memcpy(lu32, a, sizeof a);
  scipy_dgetrf_64_(&n, &n, lu64, &ld, ipiv64, &info64);
  if (dgetrf64) dgetrf64(&n, &n, lu_ref, &ld, ipiv_ref, &info_ref);
  check(dgetrf64 && info64 == 0 && info_ref == 0 && memcmp(lu64, lu_ref, sizeof lu64) == 0 &&
            memcmp(ipiv64, ipiv_ref, sizeof(int64_t) * N) == 0,
        "scipy_dgetrf_64_ factors, pivots and INFO");
  scipy_dgetrf_(&n32, &n32, lu32, &ld32, ipiv32, &info32);
  int valid = info32 == 0;
  for (int i = 0; i < N; ++i) valid = valid && ipiv32[i] >= i + 1 && ipiv32[i] <= N;
  check(valid, "scipy_dgetrf_ pivots and INFO");

  /* An unrenamed helper the LP64 wheel calls through its PLT, also defined by an ILP64 library in the process: the
   * forwarded reference name reaches an LP64 definition (32-bit argument read as such). */
  struct {
    int32_t lwork, beside;
  } query = {77, 0x12345678};
  float lwork_out = 0;
  scipy_fake_lwork_query_(&query.lwork, &lwork_out);
  check(lwork_out == 77.0f, "unrenamed sroundup_lwork_ forwarded to the LP64 wheel");

  /* Bad arguments: the family's XERBLA with the reference's INFO, nothing written; LAPACK's INFO = -i. */
  memcpy(c, c0, sizeof c);
  const int64_t bad = -1;
  scipy_dgemm_64_("N", "N", &bad, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
  scipy_dgemm_64_("X", "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
  const int32_t bad32 = -1;
  scipy_dgemm_("N", "N", &m32, &n32, &k32, &alpha, a, &ld32, b, &bad32, &beta, c, &ld32, 1, 1);
  check(memcmp(c, c0, sizeof c) == 0, "bad arguments: C untouched");
  info64 = 0x7777777777777777;
  scipy_dgetrf_64_(&bad, &n, lu64, &ld, ipiv64, &info64);
  check(info64 == -1, "scipy_dgetrf_64_ m = -1: INFO = -1 (64-bit)");
  fflush(stdout);
  return failures;
}
