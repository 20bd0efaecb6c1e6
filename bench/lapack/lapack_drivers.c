// blasoffload_lapack_drivers: times LAPACK factorizations (sgetrf, sgesv, sgeqrf, spotrf) on random host matrices
// under whatever BLAS/LAPACK stack the dynamic linker and LD_PRELOAD provide, and checks each result cheaply.
//
// Linked with -llapack -lblas by their Debian names, so bench/lapack/run.sh chooses the stack at run time. One JSON
// object per line on stdout; the checks are O(n^2), in double precision, and call no BLAS (the stack under test).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../hash_uniform.h"

void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b, const int* ldb, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t luplo);

static const char kUsage[] =
    "usage: blasoffload_lapack_drivers [--stack=NAME] [--drivers=getrf,getrf_dominant,gesv,geqrf,potrf] [--reps=R]\n"
    "                                  [--budget-s=S] [N ...]\n"
    "  N: matrix orders (default 1024 2048 4096 8192 16384); 9 timed repetitions up to 2048, 5 at 4096, 2 at 8192, 1 "
    "above (--reps\n"
    "  overrides); --budget-s: no new factorization starts once S seconds have passed (reported as skipped).\n";

// The check's pass threshold on the scaled error ratios below (LAPACK's test suites use 30 for theirs).
static const double kThreshold = 30.0;

// Whether a comma-separated list holds `name` as a whole item.
static int has_token(const char* list, const char* name) {
  const size_t len = strlen(name);
  for (const char* p = list; (p = strstr(p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Matrices whose elimination really pivots: hash_uniform (bench/hash_uniform.h) entries.
static void fill_uniform(float* a, size_t count, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) a[i] = hash_uniform(i, seed);
}

// Symmetric, off-diagonal uniform in (-1, 1), diagonal n + 1: strictly diagonally dominant, hence SPD; built
// element by element (no BLAS: the stack under test must not be trusted to build its own input).
static void fill_spd(float* a, int n) {
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      const size_t lo = i < j ? i : j, hi = i < j ? j : i;
      a[i + j * n] = i == j ? (float)n + 1.0f : hash_uniform(lo + hi * (size_t)n, 3);
    }
}

static void* xmalloc(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 256, bytes ? bytes : 256)) return NULL;
  return p;
}

static uint64_t lcg(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 17;
}

// getrf: sampled entries of L*U against the same entries of P*A, each relative to sum_k |L_ik||U_kj| (the
// componentwise backward-error bound, about n eps).
static double check_getrf(const float* lu, const float* a0, const int* ipiv, int n, int samples) {
  int* perm = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = 0; i < n; ++i) {
    const int p = ipiv[i] - 1, t = perm[i];
    if (p < i || p >= n) {  // LAPACK only swaps with a later row: anything else is a wrong result
      free(perm);
      return NAN;
    }
    perm[i] = perm[p];
    perm[p] = t;
  }
  uint64_t seed = 12345;
  double worst = 0;
  const double eps = FLT_EPSILON * 0.5;
  for (int s = 0; s < samples; ++s) {
    int i = (int)(lcg(&seed) % (uint64_t)n), j = (int)(lcg(&seed) % (uint64_t)n);
    if (s == 0) i = j = n - 1;  // the last pivot sees every update
    if (s == 1) i = n - 1, j = 0;
    const int kmax = i < j ? i : j;
    double sum = 0, mag = 0;
    for (int k = 0; k <= kmax; ++k) {
      const double l = k == i ? 1.0 : lu[i + (size_t)k * n];
      const double u = lu[k + (size_t)j * n];
      sum += l * u;
      mag += fabs(l * u);
    }
    const double ref = a0[perm[i] + (size_t)j * n];
    const double r = fabs(sum - ref) / ((mag > 0 ? mag : 1.0) * n * eps);
    if (!(r <= worst)) worst = r;  // a NaN stays
  }
  free(perm);
  return worst;
}

// potrf (lower): sampled entries of L*L^T against A.
static double check_potrf(const float* l, const float* a0, int n, int samples) {
  uint64_t seed = 777;
  double worst = 0;
  const double eps = FLT_EPSILON * 0.5;
  for (int s = 0; s < samples; ++s) {
    int i = (int)(lcg(&seed) % (uint64_t)n), j = (int)(lcg(&seed) % (uint64_t)n);
    if (s == 0) i = j = n - 1;
    if (j > i) {
      const int t = i;
      i = j;
      j = t;
    }
    double sum = 0, mag = 0;
    for (int k = 0; k <= j; ++k) {
      const double p = (double)l[i + (size_t)k * n] * l[j + (size_t)k * n];
      sum += p;
      mag += fabs(p);
    }
    const double r = fabs(sum - a0[i + (size_t)j * n]) / ((mag > 0 ? mag : 1.0) * n * eps);
    if (!(r <= worst)) worst = r;
  }
  return worst;
}

// geqrf: Q is orthogonal, so column j of R has the 2-norm of column j of A; every column is compared (O(n^2)).
static double check_geqrf(const float* qr, const float* a0, int n) {
  double worst = 0;
  const double eps = FLT_EPSILON * 0.5;
  for (size_t j = 0; j < (size_t)n; ++j) {
    double na = 0, nr = 0;
    for (size_t i = 0; i < (size_t)n; ++i) na += (double)a0[i + j * n] * a0[i + j * n];
    for (size_t i = 0; i <= j; ++i) nr += (double)qr[i + j * n] * qr[i + j * n];
    const double r = fabs(sqrt(nr) - sqrt(na)) / (sqrt(na) * n * eps);
    if (!(r <= worst)) worst = r;
  }
  return worst;
}

// gesv: ||b - A x||_inf / (||A||_inf ||x||_inf n eps), the residual in double.
static double check_gesv(const float* a0, const float* x, const float* b0, int n) {
  double* r = calloc((size_t)n, sizeof(double));
  double* rowsum = calloc((size_t)n, sizeof(double));
  for (int i = 0; i < n; ++i) r[i] = b0[i];
  for (size_t j = 0; j < (size_t)n; ++j) {
    const double xj = x[j];
    const float* col = a0 + j * n;
    for (size_t i = 0; i < (size_t)n; ++i) {
      r[i] -= col[i] * xj;
      rowsum[i] += fabs(col[i]);
    }
  }
  double rn = 0, an = 0, xn = 0;
  for (int i = 0; i < n; ++i) {
    if (!(fabs(r[i]) <= rn)) rn = fabs(r[i]);
    if (rowsum[i] > an) an = rowsum[i];
    if (!(fabs((double)x[i]) <= xn)) xn = fabs((double)x[i]);
  }
  free(r);
  free(rowsum);
  return rn / (an * xn * n * (FLT_EPSILON * 0.5));
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static const char* g_stack = "unknown";

static void print_point(const char* driver, int n, int reps, const double* t, int info, double ratio,
                        const char* note) {
  double sorted[16];
  memcpy(sorted, t, sizeof(double) * (size_t)reps);
  qsort(sorted, (size_t)reps, sizeof(double), cmp_double);
  const double median = reps % 2 ? sorted[reps / 2] : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);
  const double nn = (double)n;
  const double flops = strcmp(driver, "potrf") == 0   ? nn * nn * nn / 3.0
                       : strcmp(driver, "geqrf") == 0 ? 4.0 * nn * nn * nn / 3.0
                                                      : 2.0 * nn * nn * nn / 3.0;
  const int ok = info == 0 && ratio <= kThreshold;
  printf(
      "{\"driver\": \"%s\", \"n\": %d, \"stack\": \"%s\", \"seconds\": %.6f, \"min_s\": %.6f, \"max_s\": %.6f, "
      "\"reps\": %d, \"gflops\": %.1f, \"info\": %d, \"check\": \"%s\", \"check_ratio\": %.3g, "
      "\"check_what\": \"%s\"}\n",
      driver, n, g_stack, median, sorted[0], sorted[reps - 1], reps, flops / median * 1e-9, info, ok ? "ok" : "FAIL",
      isfinite(ratio) ? ratio : -1.0, note);
  fflush(stdout);
}

static void print_skip(const char* driver, int n, const char* why) {
  printf("{\"driver\": \"%s\", \"n\": %d, \"stack\": \"%s\", \"skipped\": \"%s\"}\n", driver, n, g_stack, why);
  fflush(stdout);
}

static void print_context(void) {
  typedef char* (*str_fn)(void);
  typedef int (*int_fn)(void);
  str_fn corename = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_corename");
  str_fn config = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_config");
  int_fn threads = (int_fn)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  Dl_info getrf = {0}, gemm = {0};
  dladdr((void*)&sgetrf_, &getrf);
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  if (sgemm) dladdr(sgemm, &gemm);
  const char* preload = getenv("LD_PRELOAD");
  printf(
      "{\"context\": {\"program\": \"blasoffload_lapack_drivers\", \"stack\": \"%s\", \"sgetrf_from\": \"%s\", "
      "\"sgemm_from\": \"%s\", \"ld_preload\": \"%s\", \"blasoffload_mode\": \"%s\", \"openblas_corename\": "
      "\"%s\", \"openblas_config\": \"%s\", \"openblas_threads\": %d}}\n",
      g_stack, getrf.dli_fname ? getrf.dli_fname : "", gemm.dli_fname ? gemm.dli_fname : "", preload ? preload : "",
      getenv("BLASOFFLOAD_MODE") ? getenv("BLASOFFLOAD_MODE") : "", corename ? corename() : "", config ? config() : "",
      threads ? threads() : 0);
  fflush(stdout);
}

int main(int argc, char** argv) {
  int ns[32], count = 0, reps_override = 0;
  double budget = 0;
  char drivers[128] = "getrf,gesv,geqrf,potrf";
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--stack=", 8) == 0) {
      g_stack = argv[i] + 8;
    } else if (strncmp(argv[i], "--drivers=", 10) == 0) {
      snprintf(drivers, sizeof drivers, "%s", argv[i] + 10);
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      reps_override = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--budget-s=", 11) == 0) {
      budget = atof(argv[i] + 11);
    } else if (argv[i][0] != '-' && atoi(argv[i]) > 0 && count < 32) {
      ns[count++] = atoi(argv[i]);
    } else {
      fputs(kUsage, stderr);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (count == 0) {
    const int def[] = {1024, 2048, 4096, 8192, 16384};
    for (count = 0; count < 5; ++count) ns[count] = def[count];
  }
  const int want_getrf = has_token(drivers, "getrf"), want_gesv = has_token(drivers, "gesv");
  const int want_geqrf = has_token(drivers, "geqrf"), want_potrf = has_token(drivers, "potrf");
  // getrf_dominant: random + n I, a matrix on which partial pivoting never swaps rows (the anchors' "no pivoting").
  const int want_getrf_dominant = has_token(drivers, "getrf_dominant");
  print_context();
  const double start = now_s();
  int failures = 0;
  for (int c = 0; c < count; ++c) {
    const int n = ns[c], one = 1;
    // Small orders take milliseconds and OpenBLAS's threads make them noisy: more repetitions there.
    int reps = reps_override > 0 ? reps_override : (n >= 16384 ? 1 : n >= 8192 ? 2 : n >= 4096 ? 5 : 9);
    if (reps > 16) reps = 16;
    const size_t nn = (size_t)n * (size_t)n;
    float* a = xmalloc(nn * sizeof(float));
    float* a0 = xmalloc(nn * sizeof(float));
    float* b = xmalloc((size_t)n * sizeof(float));
    float* b0 = xmalloc((size_t)n * sizeof(float));
    float* tau = xmalloc((size_t)n * sizeof(float));
    int* ipiv = xmalloc((size_t)n * sizeof(int));
    if (!a || !a0 || !b || !b0 || !tau || !ipiv) {
      print_skip("all", n, "allocation failed");
      ++failures;
      free(a), free(a0), free(b), free(b0), free(tau), free(ipiv);
      continue;
    }
    fill_uniform(a0, nn, 1);
    fill_uniform(b0, (size_t)n, 2);
    double t[16];
    int info = 0;
    // The matrix is restored from its saved copy before every repetition; only the LAPACK call is timed.
#define BUDGET_LEFT() (budget <= 0 || now_s() - start < budget)
    if (want_getrf) {
      if (!BUDGET_LEFT()) {
        print_skip("getrf", n, "budget");
      } else {
        for (int r = 0; r < reps; ++r) {
          memcpy(a, a0, nn * sizeof(float));
          const double t0 = now_s();
          sgetrf_(&n, &n, a, &n, ipiv, &info);
          t[r] = now_s() - t0;
        }
        const double ratio = info == 0 ? check_getrf(a, a0, ipiv, n, 64) : NAN;
        print_point("getrf", n, reps, t, info, ratio, "max over 64 sampled entries |LU-PA|/(sum|L||U| n eps)");
        failures += !(info == 0 && ratio <= kThreshold);
      }
    }
    if (want_getrf_dominant) {
      if (!BUDGET_LEFT()) {
        print_skip("getrf_dominant", n, "budget");
      } else {
        float* d0 = xmalloc(nn * sizeof(float));
        if (!d0) {
          print_skip("getrf_dominant", n, "allocation failed");
          ++failures;
        } else {
          memcpy(d0, a0, nn * sizeof(float));
          for (int i = 0; i < n; ++i) d0[(size_t)i * (size_t)n + (size_t)i] += (float)n;
          for (int r = 0; r < reps; ++r) {
            memcpy(a, d0, nn * sizeof(float));
            const double t0 = now_s();
            sgetrf_(&n, &n, a, &n, ipiv, &info);
            t[r] = now_s() - t0;
          }
          int swaps = 0;
          for (int i = 0; i < n && info == 0; ++i) swaps += ipiv[i] != i + 1;
          const double ratio = info == 0 ? check_getrf(a, d0, ipiv, n, 64) : NAN;
          print_point("getrf_dominant", n, reps, t, info, ratio,
                      swaps ? "max over 64 sampled entries |LU-PA|/(sum|L||U| n eps); ROWS WERE SWAPPED"
                            : "max over 64 sampled entries |LU-PA|/(sum|L||U| n eps); no row swapped");
          failures += !(info == 0 && ratio <= kThreshold);
          free(d0);
        }
      }
    }
    if (want_gesv) {
      if (!BUDGET_LEFT()) {
        print_skip("gesv", n, "budget");
      } else {
        for (int r = 0; r < reps; ++r) {
          memcpy(a, a0, nn * sizeof(float));
          memcpy(b, b0, (size_t)n * sizeof(float));
          const double t0 = now_s();
          sgesv_(&n, &one, a, &n, ipiv, b, &n, &info);
          t[r] = now_s() - t0;
        }
        const double ratio = info == 0 ? check_gesv(a0, b, b0, n) : NAN;
        print_point("gesv", n, reps, t, info, ratio, "||b-Ax||inf/(||A||inf ||x||inf n eps), nrhs 1");
        failures += !(info == 0 && ratio <= kThreshold);
      }
    }
    if (want_geqrf) {
      if (!BUDGET_LEFT()) {
        print_skip("geqrf", n, "budget");
      } else {
        float query = 0;
        int lwork = -1;
        sgeqrf_(&n, &n, a, &n, tau, &query, &lwork, &info);
        lwork = (int)query > n ? (int)query : n;
        float* work = xmalloc((size_t)lwork * sizeof(float));
        for (int r = 0; r < reps && work; ++r) {
          memcpy(a, a0, nn * sizeof(float));
          const double t0 = now_s();
          sgeqrf_(&n, &n, a, &n, tau, work, &lwork, &info);
          t[r] = now_s() - t0;
        }
        if (!work) {
          print_skip("geqrf", n, "allocation failed");
          ++failures;
        } else {
          const double ratio = info == 0 ? check_geqrf(a, a0, n) : NAN;
          print_point("geqrf", n, reps, t, info, ratio, "max over columns | ||R_j|| - ||A_j|| | / (||A_j|| n eps)");
          failures += !(info == 0 && ratio <= kThreshold);
        }
        free(work);
      }
    }
    if (want_potrf) {
      if (!BUDGET_LEFT()) {
        print_skip("potrf", n, "budget");
      } else {
        fill_spd(a0, n);
        for (int r = 0; r < reps; ++r) {
          memcpy(a, a0, nn * sizeof(float));
          const double t0 = now_s();
          spotrf_("L", &n, a, &n, &info, 1);
          t[r] = now_s() - t0;
        }
        const double ratio = info == 0 ? check_potrf(a, a0, n, 64) : NAN;
        print_point("potrf", n, reps, t, info, ratio, "max over 64 sampled entries |LL^T-A|/(sum|L||L| n eps)");
        failures += !(info == 0 && ratio <= kThreshold);
      }
    }
#undef BUDGET_LEFT
    free(a), free(a0), free(b), free(b0), free(tau), free(ipiv);
  }
  return failures ? 1 : 0;
}
