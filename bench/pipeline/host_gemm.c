// blasoffload_host_gemm: times dgemm_ (or sgemm_, cgemm_, zgemm_; with --routine, trsm_ or syrk_ of the same
// precisions) on host operands as a user's program calls it,
// through whatever BLAS the dynamic linker and LD_PRELOAD provide (libblasoffload.so in BLASOFFLOAD_MODE=auto, as the
// issues' "host dgemm (zgemm, cgemm) n = 8192" points ask), against the CPU BLAS's own symbol called directly in the
// same process, with the same threads and the same operands: median, min, max over repetitions, and the ratio with its
// spread.
//
// Linked with -lblas by its Debian name (libblas.so.3), so the runner chooses the stack at run time; the CPU BLAS is
// that libblas.so.3 (OpenBLAS from LD_LIBRARY_PATH), its symbols found with dlopen(RTLD_NOLOAD) + dlsym. One JSON
// object per line on stdout (bench/common/reports/host_gemm.py); progress on stderr.
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../hash_uniform.h"

typedef void gemm_fn(const char* ta, const char* tb, const int* m, const int* n, const int* k, const void* alpha,
                     const void* a, const int* lda, const void* b, const int* ldb, const void* beta, void* c,
                     const int* ldc, size_t lta, size_t ltb);
// The symbols the dynamic linker binds for this program: libblasoffload.so's when it is preloaded. Complex scalars
// and arrays are passed by address like real ones (the Fortran ABI), so one pointer type serves the four.
gemm_fn sgemm_, dgemm_, cgemm_, zgemm_;
typedef void trsm_fn(const char* side, const char* uplo, const char* ta, const char* diag, const int* m, const int* n,
                     const void* alpha, const void* a, const int* lda, void* b, const int* ldb, size_t l1, size_t l2,
                     size_t l3, size_t l4);
typedef void syrk_fn(const char* uplo, const char* trans, const int* n, const int* k, const void* alpha, const void* a,
                     const int* lda, const void* beta, void* c, const int* ldc, size_t l1, size_t l2);
trsm_fn strsm_, dtrsm_, ctrsm_, ztrsm_;
syrk_fn ssyrk_, dsyrk_, csyrk_, zsyrk_;
// Precision p: 0 s, 1 d, 2 c, 3 z; its real part is double for odd p, complex from 2 on.
static gemm_fn* const kLib[4] = {sgemm_, dgemm_, cgemm_, zgemm_};
static trsm_fn* const kLibTrsm[4] = {strsm_, dtrsm_, ctrsm_, ztrsm_};
static syrk_fn* const kLibSyrk[4] = {ssyrk_, dsyrk_, csyrk_, zsyrk_};
// --routine: 0 gemm (C = A B), 1 trsm (B := L^-1 B, L lower, A's diagonal n: well conditioned), 2 syrk (C's lower
// triangle := A A^T, beta 0).
static const char* const kRoutine[3] = {"gemm", "trsm", "syrk"};
static const char kLetter[] = "sdcz";

static const char kUsage[] =
    "usage: blasoffload_host_gemm [--routine=gemm|trsm|syrk] [--precision=d,s,c,z] [--n=8192,...] [--reps=7]\n"
    "                             [--cpu-reps=3] [--warmup-calls=3]\n"
    "                             [--warmup-s=3] [--same-operands] [--stack=NAME] [--round=R] [--budget-s=S]\n"
    "                             [--no-check]\n"
    "  C = A B (NN, alpha 1, beta 0, square n, lda = n) on malloc'd host operands, through the program's gemm_\n"
    "  (--routine=trsm: B := L^-1 B, side L, lower, N, non-unit, L's diagonal n; syrk: C's lower triangle := A A^T,\n"
    "  trans N, beta 0; both square n; syrk's comparison with the CPU BLAS is relative to sqrt(|A_i.|^2 |A_j.|^2);\n"
    "  with --cpu-reps=0 their check is trsm's residual L x - b of two columns of B,\n"
    "  syrk's two columns of C against A A^T, summed in long double)\n"
    "  (the library under test) and the CPU BLAS's own gemm_: per repetition the library's call and, in the first\n"
    "  cpu-reps repetitions, the CPU BLAS's, each side first in turn. Before every repetition A and B are rewritten\n"
    "  with new values (untimed), so that no device copy can be reused and each call moves its operands, as a\n"
    "  program's would after computing them; --same-operands keeps them (the residency cache may then serve them).\n"
    "  The warm-up calls the library until warmup-calls calls and warmup-s seconds have passed (the library's\n"
    "  adaptive GPU start-up).\n"
    "  Check: max |C_lib - C_cpu| / (k eps) of the last repetition both ran (operands in (-1, 1); complex: each part\n"
    "  apart, k = 2n real products), limit 30. --cpu-reps=0: the CPU BLAS is not called (a size it would take\n"
    "  minutes for); the check is then of 2 columns of C against A times B's column, summed in double.\n"
    "  --round: printed in every line (the runner's A/A repeats).\n"
    "  Exit status: 0 all checks passed, 1 a check failed, 2 usage or allocation error.\n";

// Units of k eps: LAPACK's test suites' threshold for their ratios.
static const double kCheckLimit = 30.0;

typedef struct {
  int precs[4], nprec;
  int ns[16], nn;
  int reps, cpu_reps, warmup_calls, round;
  double warmup_s, budget_s;
  int rewrite, check;
  const char* stack;
  int routine;  // kRoutine's index
} Options;

static double median_of(const double* v, int n) {
  double s[256];
  memcpy(s, v, sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

// ---- Filling: all cores, counter-based values (the same whatever the thread count) ----

typedef struct {
  void* p;
  uint64_t seed;
  int dbl;
} FillJob;

static void fill_range(size_t lo, size_t hi, void* ctx) {
  const FillJob* j = (const FillJob*)ctx;
  for (size_t i = lo; i < hi; ++i) {
    const float v = hash_uniform((uint64_t)i, j->seed);
    if (j->dbl)
      ((double*)j->p)[i] = v;
    else
      ((float*)j->p)[i] = v;
  }
}

static void fill(void* p, int64_t count, uint64_t seed, int dbl) {
  FillJob job = {p, seed, dbl};
  parallel_ranges((size_t)count, (size_t)count, fill_range, &job);
}

// ---- The CPU BLAS and the context line ----

static gemm_fn* g_cpu[4];  // sgemm_, dgemm_, cgemm_, zgemm_ of libblas.so.3 itself
static trsm_fn* g_cpu_trsm[4];
static syrk_fn* g_cpu_syrk[4];
static char g_cpu_from[512], g_lib_from[512], g_zlib_from[512], g_corename[64], g_config[256];
static int g_threads = -1;

static const char* where(void* sym, char* buf, size_t size) {
  Dl_info info;
  snprintf(buf, size, "%s", dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?");
  return buf;
}

static int find_cpu_blas(void) {
  void* h = dlopen("libblas.so.3", RTLD_NOW | RTLD_NOLOAD);
  if (!h) h = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
  static const char* const names[4] = {"sgemm_", "dgemm_", "cgemm_", "zgemm_"};
  static const char* const trsm_names[4] = {"strsm_", "dtrsm_", "ctrsm_", "ztrsm_"};
  static const char* const syrk_names[4] = {"ssyrk_", "dsyrk_", "csyrk_", "zsyrk_"};
  for (int p = 0; p < 4; ++p)
    if (!(g_cpu[p] = (gemm_fn*)dlsym(h, names[p])) || !(g_cpu_trsm[p] = (trsm_fn*)dlsym(h, trsm_names[p])) ||
        !(g_cpu_syrk[p] = (syrk_fn*)dlsym(h, syrk_names[p])))
      return 0;
  where((void*)g_cpu[1], g_cpu_from, sizeof g_cpu_from);
  where((void*)&dgemm_, g_lib_from, sizeof g_lib_from);
  where((void*)&zgemm_, g_zlib_from, sizeof g_zlib_from);
  char* (*corename)(void) = (char* (*)(void))dlsym(h, "openblas_get_corename");
  char* (*config)(void) = (char* (*)(void))dlsym(h, "openblas_get_config");
  int (*threads)(void) = (int (*)(void))dlsym(h, "openblas_get_num_threads");
  snprintf(g_corename, sizeof g_corename, "%s", corename ? corename() : "");
  snprintf(g_config, sizeof g_config, "%s", config ? config() : "");
  if (threads) g_threads = threads();
  return 1;
}

static void json_str(const char* key, const char* v, int comma) {
  printf("\"%s\": \"", key);
  for (const char* p = v ? v : ""; *p; ++p) {
    if (*p == '"' || *p == '\\') putchar('\\');
    if ((unsigned char)*p >= 0x20) putchar(*p);
  }
  printf("\"%s", comma ? ", " : "");
}

static void print_context(const Options* o) {
  extern char** environ;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  printf("{\"context\": {\"program\": \"blasoffload_host_gemm\", ");
  json_str("stack", o->stack, 1);
  json_str("host", host, 1);
  json_str("dgemm_from", g_lib_from, 1);
  json_str("zgemm_from", g_zlib_from, 1);
  json_str("cpu_dgemm_from", g_cpu_from, 1);
  json_str("ld_preload", getenv("LD_PRELOAD"), 1);
  json_str("commit", getenv("BO_COMMIT"), 1);
  json_str("openblas_corename", g_corename, 1);
  json_str("openblas_config", g_config, 1);
  printf("\"openblas_threads\": %d, \"round\": %d, \"env\": {", g_threads, o->round);
  int first = 1;
  for (char** e = environ; *e; ++e) {
    if (strncmp(*e, "BLASOFFLOAD_", 12) != 0 && strncmp(*e, "OPENBLAS_", 9) != 0) continue;
    const char* eq = strchr(*e, '=');
    if (!eq) continue;
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
    if (!first) printf(", ");
    json_str(key, eq + 1, 0);
    first = 0;
  }
  printf("}}}\n");
  fflush(stdout);
}

// ---- One point: precision x n (x round) ----

static void print_times(const char* key, const double* t, int n) {
  printf("\"%s\": [", key);
  for (int i = 0; i < n; ++i) printf("%s%.4g", i ? ", " : "", t[i]);
  printf("], ");
}

static void print_stats(const char* side, const double* t, int n, double flops) {
  char key[64];
  if (n == 0) {  // that side did not run (--cpu-reps=0)
    printf("\"%s_median_ms\": null, \"%s_reps\": 0, ", side, side);
    return;
  }
  const double med = median_of(t, n);
  double lo = t[0], hi = t[0];
  for (int i = 1; i < n; ++i) {
    lo = t[i] < lo ? t[i] : lo;
    hi = t[i] > hi ? t[i] : hi;
  }
  printf("\"%s_median_ms\": %.6g, \"%s_min_ms\": %.6g, \"%s_max_ms\": %.6g, \"%s_reps\": %d, \"%s_gflops\": %.6g, ",
         side, med, side, lo, side, hi, side, n, side, flops / (med * 1e6));
  snprintf(key, sizeof key, "%s_times_ms", side);
  print_times(key, t, n);
}

// The check without the CPU BLAS: columns 0 and n - 1 of C against A times B's column summed in double (long double
// for a double-precision routine), in the same units as the full check (worst difference over k eps).
static double probe_columns(const void* a, const void* b, const void* c, int n, int prec) {
  const int dbl = prec & 1, parts = prec >= 2 ? 2 : 1;
  double worst = 0;
  long double* ref = (long double*)malloc(sizeof(long double) * (size_t)n * (size_t)parts);
  if (!ref) return NAN;
  const int cols[2] = {0, n - 1};
  for (int q = 0; q < 2; ++q) {
    const int64_t j = cols[q];
    for (int64_t i = 0; i < (int64_t)n * parts; ++i) ref[i] = 0;
    for (int64_t l = 0; l < n; ++l) {
      const int64_t bi = (j * n + l) * parts;
      const long double br = dbl ? ((const double*)b)[bi] : ((const float*)b)[bi];
      const long double bm = parts == 2 ? (dbl ? ((const double*)b)[bi + 1] : ((const float*)b)[bi + 1]) : 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t ai = (l * n + i) * parts;
        const long double ar = dbl ? ((const double*)a)[ai] : ((const float*)a)[ai];
        if (parts == 1) {
          ref[i] += ar * br;
        } else {
          const long double am = dbl ? ((const double*)a)[ai + 1] : ((const float*)a)[ai + 1];
          ref[2 * i] += ar * br - am * bm;
          ref[2 * i + 1] += ar * bm + am * br;
        }
      }
    }
    for (int64_t i = 0; i < (int64_t)n * parts; ++i) {
      const int64_t ci = j * n * parts + i;
      const long double v = dbl ? ((const double*)c)[ci] : ((const float*)c)[ci];
      const double d = (double)fabsl(v - ref[i]);
      if (!(d <= worst)) worst = d;  // NaN sticks
    }
  }
  free(ref);
  return worst / ((double)n * parts * (dbl ? DBL_EPSILON : FLT_EPSILON));
}

// Element i of an array of precision prec as a long double complex (imaginary part 0 for real precisions).
static long double complex elem_at(const void* p, int64_t i, int prec) {
  switch (prec) {
    case 0:
      return ((const float*)p)[i];
    case 1:
      return ((const double*)p)[i];
    case 2:
      return ((const float*)p)[2 * i] + I * (long double)((const float*)p)[2 * i + 1];
    default:
      return ((const double*)p)[2 * i] + I * (long double)((const double*)p)[2 * i + 1];
  }
}

// trsm and syrk without the CPU BLAS, in units of k eps relative to each element's magnitudes (|L| |x| + |b| for the
// residual, |A| |A|^T for C): trsm the residual L x - b of B's columns 0 and n - 1 (out holds X, b the original B);
// syrk C's columns 0 and n / 2 (lower triangle) against A A^T summed in long double. Rows on all cores (at n = 32768
// a column is 10^9 products); real precisions in real arithmetic.
typedef struct {
  int routine, n, prec;
  const void *a, *b, *out;
  int64_t j;
  double* worst;  // per row
} ProbeJob;

static void probe_rows(size_t lo, size_t hi, void* ctx) {
  const ProbeJob* p = (const ProbeJob*)ctx;
  const int64_t n = p->n, j = p->j;
  const int cplx = p->prec >= 2;
  for (int64_t i = (int64_t)lo; i < (int64_t)hi; ++i) {
    p->worst[i] = 0;
    if (p->routine == 2 && i < j) continue;  // syrk: the lower triangle of column j
    const int64_t l1 = p->routine == 1 ? i + 1 : n;
    long double complex s = 0;
    long double mag = 0;
    if (!cplx) {
      long double sr = 0;
      for (int64_t l = 0; l < l1; ++l) {
        const long double x = creall(elem_at(p->a, i + l * n, p->prec));
        const long double y =
            creall(p->routine == 1 ? elem_at(p->out, l + j * n, p->prec) : elem_at(p->a, j + l * n, p->prec));
        sr += x * y;
        mag += fabsl(x * y);
      }
      s = sr;
    } else {
      for (int64_t l = 0; l < l1; ++l) {
        const long double complex x = elem_at(p->a, i + l * n, p->prec);
        const long double complex y =
            p->routine == 1 ? elem_at(p->out, l + j * n, p->prec) : elem_at(p->a, j + l * n, p->prec);
        const long double xr = creall(x), xi = cimagl(x), yr = creall(y), yi = cimagl(y);
        s += (xr * yr - xi * yi) + I * (xr * yi + xi * yr);
        mag += (fabsl(xr) + fabsl(xi)) * (fabsl(yr) + fabsl(yi));
      }
    }
    const long double complex ref =
        p->routine == 1 ? elem_at(p->b, i + j * n, p->prec) : elem_at(p->out, i + j * n, p->prec);
    s -= ref;
    if (p->routine == 1) mag += cabsl(ref);
    p->worst[i] = mag > 0 ? (double)(cabsl(s) / mag) : (double)cabsl(s);
  }
}

static double probe_level3(int routine, const void* a, const void* b, const void* out, int n, int prec) {
  const int dbl = prec & 1, parts = prec >= 2 ? 2 : 1;
  const int cols[2] = {0, routine == 1 ? n - 1 : n / 2};
  double* w = (double*)malloc(sizeof(double) * (size_t)n);
  if (!w) return NAN;
  double worst = 0;
  for (int q = 0; q < 2; ++q) {
    ProbeJob job = {routine, n, prec, a, b, out, cols[q], w};
    // Work: trsm row i has i + 1 products, syrk's rows n each; the ranges split rows, not products (good enough).
    parallel_ranges((size_t)n, (size_t)n * (size_t)n, probe_rows, &job);
    for (int64_t i = 0; i < n; ++i)
      if (!(w[i] <= worst)) worst = w[i];  // NaN sticks
  }
  free(w);
  return worst / ((double)n * parts * (dbl ? DBL_EPSILON : FLT_EPSILON));
}

// |A_i.|^2 for every row i of the n x n A (malloc'd; NULL when out of memory, and then no scaling).
static double* row_norms2(const void* a, int n, int prec) {
  double* r = (double*)calloc((size_t)n, sizeof(double));
  if (!r) return NULL;
  for (int64_t l = 0; l < n; ++l)
    for (int64_t i = 0; i < n; ++i) {
      const long double complex v = elem_at(a, i + l * (int64_t)n, prec);
      r[i] += (double)(creall(v) * creall(v) + cimagl(v) * cimagl(v));
    }
  return r;
}

// trsm's L: diagonal n (real part), so that L^-1 B stays of the size of B.
static void make_dominant(void* a, int n, int dbl, int parts) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = (i + i * (int64_t)n) * parts;
    if (dbl)
      ((double*)a)[at] = n;
    else
      ((float*)a)[at] = (float)n;
  }
}

// One call, timed in ms, through the library (cpu_side 0: the program's symbol) or the CPU BLAS's own, into out: gemm
// C = A B, trsm out := L^-1 out with out a copy of b made first (untimed: the solve is in place), syrk out's lower
// triangle := A A^T. alpha 1, beta 0 (a complex routine reads the imaginary parts too).
static double timed_call(int routine, int prec, int cpu_side, int n, const void* a, const void* b, void* out) {
  static const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  static const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const int dbl = prec & 1;
  const void* one = dbl ? (const void*)one_d : (const void*)one_f;
  const void* zero = dbl ? (const void*)zero_d : (const void*)zero_f;
  if (routine == 1) par_copy(out, b, (dbl ? 8 : 4) * (size_t)(prec >= 2 ? 2 : 1) * (size_t)n * (size_t)n);
  const double t0 = now_s();
  if (routine == 0)
    (cpu_side ? g_cpu[prec] : kLib[prec])("N", "N", &n, &n, &n, one, a, &n, b, &n, zero, out, &n, 1, 1);
  else if (routine == 1)
    (cpu_side ? g_cpu_trsm[prec] : kLibTrsm[prec])("L", "L", "N", "N", &n, &n, one, a, &n, out, &n, 1, 1, 1, 1);
  else
    (cpu_side ? g_cpu_syrk[prec] : kLibSyrk[prec])("L", "N", &n, &n, one, a, &n, zero, out, &n, 1, 1);
  return 1e3 * (now_s() - t0);
}

// Runs one point; returns 0 ok, 1 check failed, 2 not run (allocation or budget).
static int run_point(const Options* o, int prec, int n, double t_start) {
  char routine[8];
  snprintf(routine, sizeof routine, "%c%s", kLetter[prec], kRoutine[o->routine]);
  const int dbl = prec & 1, parts = prec >= 2 ? 2 : 1;  // parts: reals per element
  const size_t es = (dbl ? sizeof(double) : sizeof(float)) * (size_t)parts;
  const int64_t count = (int64_t)n * n, reals = count * parts;
  void *a = malloc(es * (size_t)count), *b = malloc(es * (size_t)count);
  void *c = malloc(es * (size_t)count), *c2 = malloc(es * (size_t)count);
  if (!a || !b || !c || !c2) {
    printf("{\"routine\": \"%s\", \"n\": %d, \"stack\": \"%s\", \"skipped\": \"allocation of 4 x %.1f GiB failed\"}\n",
           routine, n, o->stack, (double)es * (double)count / (1 << 30));
    free(a), free(b), free(c), free(c2);
    return 2;
  }
  uint64_t seed = 1;
  fill(a, reals, seed, dbl);
  fill(b, reals, seed + 1000003, dbl);
  // A complex multiply-add is 4 real multiplications and 4 additions: 4 times the real count. trsm and syrk do half
  // the multiply-adds of a gemm of their sizes.
  const double flops = (o->routine == 0 ? 2.0 : 1.0) * n * (double)n * n * (parts == 2 ? 4 : 1);
  // trsm: L's diagonal n (its real part), so that the solve is well conditioned.
  if (o->routine == 1) make_dominant(a, n, dbl, parts);
  double warm[64];
  int nwarm = 0;
  const double w0 = now_s();
  while (nwarm < 64 && (nwarm < o->warmup_calls || now_s() - w0 < o->warmup_s))
    warm[nwarm++] = timed_call(o->routine, prec, 0, n, a, b, c);
  double tl[256], tc[256];
  int nl = 0, nc = 0, checked = 0;
  double check_value = -1;
  for (int r = 0; r < o->reps && r < 256; ++r) {
    if (o->budget_s > 0 && now_s() - t_start > o->budget_s && nl >= 1 && (nc >= 1 || o->cpu_reps == 0)) break;
    if (o->rewrite) {
      seed += 2;
      fill(a, reals, seed, dbl);
      fill(b, reals, seed + 1000003, dbl);
      if (o->routine == 1) make_dominant(a, n, dbl, parts);
    }
    // The pair's order alternates, so that neither side always runs right after the rewrite or the other's call.
    const int both = r < o->cpu_reps, cpu_first = both && r % 2 == 1;
    if (cpu_first) tc[nc++] = timed_call(o->routine, prec, 1, n, a, b, c2);
    tl[nl++] = timed_call(o->routine, prec, 0, n, a, b, c);
    if (both && !cpu_first) tc[nc++] = timed_call(o->routine, prec, 1, n, a, b, c2);
    if (both) {
      checked = o->check;
      if (checked) {  // two correct summation orders differ by about k eps / 3 at most here; a reduced-precision
                      // product (TF32 in double, a stale operand) by orders of magnitude more. Complex: each part
                      // is a sum of 2n real products, compared as a real result
        double worst = 0;
        // syrk: relative to sqrt(|A_i.|^2 |A_j.|^2), which bounds sum_l |a_il a_jl| (Cauchy-Schwarz): its diagonal is
        // a sum of n squares, of the order of n, where a gemm's entries are of the order of sqrt(n)
        double* rows2 = o->routine == 2 ? row_norms2(a, n, prec) : NULL;
        for (int64_t i = 0; i < reals; ++i) {
          const int64_t row = (i / parts) % n, col = (i / parts) / n;
          // syrk: only C's lower triangle is written (row >= column)
          if (o->routine == 2 && row < col) continue;
          double d =
              dbl ? fabs(((double*)c)[i] - ((double*)c2)[i]) : fabs((double)((float*)c)[i] - (double)((float*)c2)[i]);
          if (rows2) d /= fmax(DBL_MIN, sqrt(rows2[row] * rows2[col]));
          if (!(d <= worst)) worst = d;  // NaN sticks
        }
        free(rows2);
        check_value = worst / ((double)n * parts * (dbl ? DBL_EPSILON : FLT_EPSILON));
      }
    }
  }
#undef CALL_ROUTINE
  if (o->cpu_reps == 0 && o->check && nl > 0) {
    checked = 1;
    check_value = o->routine == 0 ? probe_columns(a, b, c, n, prec) : probe_level3(o->routine, a, b, c, n, prec);
  }
  const int ok = !checked || check_value <= kCheckLimit;
  printf("{\"bench\": \"host_gemm\", \"routine\": \"%s\", \"precision\": \"%c\", \"n\": %d, ", routine, kLetter[prec],
         n);
  if (o->round > 0) printf("\"round\": %d, ", o->round);
  json_str("stack", o->stack, 1);
  json_str("mode", getenv("BLASOFFLOAD_MODE") ? getenv("BLASOFFLOAD_MODE") : "none", 1);
  json_str("policy_file", getenv("BLASOFFLOAD_POLICY_FILE"), 1);
  json_str("operands", o->rewrite ? "fresh" : "same", 1);
  print_times("warmup_times_ms", warm, nwarm);
  print_stats("lib", tl, nl, flops);
  print_stats("cpu", tc, nc, flops);
  printf("\"reps_wanted\": %d, \"check_value\": %.3g, \"check_limit\": %g, \"check\": \"%s\"}\n", o->reps, check_value,
         kCheckLimit,
         !checked ? "not checked"
         : ok     ? "ok"
                  : "FAIL");
  fflush(stdout);
  fprintf(stderr, "host_gemm: %s n=%d: library %.1f ms, CPU BLAS %.1f ms (medians; NaN: not called)\n", routine, n,
          nl ? median_of(tl, nl) : NAN, nc ? median_of(tc, nc) : NAN);
  free(a), free(b), free(c), free(c2);
  return ok ? 0 : 1;
}

static int parse_list(const char* s, int* out, int max) {
  int n = 0;
  for (char* end; *s && n < max; s = *end ? end + 1 : end) {
    const long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > 1 << 20 || (*end && *end != ',')) return -1;
    out[n++] = (int)v;
  }
  return n;
}

int main(int argc, char** argv) {
  Options o = {{1}, 1, {8192}, 1, 7, 3, 3, 0, 3.0, 0, 1, 1, "unnamed", 0};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    int bad = 0;
    if (strncmp(a, "--precision=", 12) == 0) {
      o.nprec = 0;
      for (const char* p = a + 12; *p; ++p)
        if (*p && strchr(kLetter, *p) && o.nprec < 4)
          o.precs[o.nprec++] = (int)(strchr(kLetter, *p) - kLetter);
        else if (*p != ',')
          bad = 1;
      bad |= o.nprec == 0;
    } else if (strncmp(a, "--routine=", 10) == 0) {
      o.routine = -1;
      for (int r = 0; r < 3; ++r)
        if (strcmp(a + 10, kRoutine[r]) == 0) o.routine = r;
      bad = o.routine < 0;
    } else if (strncmp(a, "--n=", 4) == 0) {
      o.nn = parse_list(a + 4, o.ns, 16);
      bad = o.nn <= 0;
    } else if (strncmp(a, "--reps=", 7) == 0) {
      o.reps = atoi(a + 7);
      bad = o.reps < 1 || o.reps > 256;
    } else if (strncmp(a, "--cpu-reps=", 11) == 0) {
      o.cpu_reps = atoi(a + 11);
      bad = o.cpu_reps < 0;
    } else if (strncmp(a, "--warmup-calls=", 15) == 0) {
      o.warmup_calls = atoi(a + 15);
    } else if (strncmp(a, "--warmup-s=", 11) == 0) {
      o.warmup_s = atof(a + 11);
    } else if (strncmp(a, "--budget-s=", 11) == 0) {
      o.budget_s = atof(a + 11);
    } else if (strcmp(a, "--same-operands") == 0) {
      o.rewrite = 0;
    } else if (strcmp(a, "--no-check") == 0) {
      o.check = 0;
    } else if (strncmp(a, "--round=", 8) == 0) {
      o.round = atoi(a + 8);
    } else if (strncmp(a, "--stack=", 8) == 0) {
      o.stack = a + 8;
    } else {
      bad = 1;
    }
    if (bad) {
      fputs(kUsage, strcmp(a, "--help") == 0 ? stdout : stderr);
      return strcmp(a, "--help") == 0 ? 0 : 2;
    }
  }
  if (o.cpu_reps > o.reps) o.cpu_reps = o.reps;
  if (!find_cpu_blas()) {
    fprintf(stderr, "host_gemm: libblas.so.3 lacks one of ?gemm_, ?trsm_, ?syrk_ (%s)\n", dlerror());
    return 2;
  }
  print_context(&o);
  const double t_start = now_s();
  int status = 0;
  for (int p = 0; p < o.nprec; ++p)
    for (int i = 0; i < o.nn; ++i) {
      const int rc = run_point(&o, o.precs[p], o.ns[i], t_start);
      status = rc > status ? rc : status;
    }
  return status;
}
