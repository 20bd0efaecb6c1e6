// blasoffload_residency_bench: times repeated Level 2 calls on one large host matrix that a program keeps (power
// iteration with sgemv_, many right-hand sides with strsv_) or rewrites before every call, under whatever BLAS the
// dynamic linker and LD_PRELOAD provide: the workloads that blasoffload's residency cache is for, and the one it
// must not slow down.
//
// Linked with -lblas by its Debian name, so bench/residency/run.sh chooses the stack at run time. One JSON object per
// line on stdout; the checks are in double precision and call no BLAS (the stack under test).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../hash_uniform.h"

// gfortran's calling convention: hidden string lengths after the arguments.
void sgemv_(const char* trans, const int* m, const int* n, const float* alpha, const float* a, const int* lda,
            const float* x, const int* incx, const float* beta, float* y, const int* incy, size_t ltrans);
void strsv_(const char* uplo, const char* trans, const char* diag, const int* n, const float* a, const int* lda,
            float* x, const int* incx, size_t luplo, size_t ltrans, size_t ldiag);

static const char kUsage[] =
    "usage: blasoffload_residency_bench [--scenarios=power,strsv,rewrite] [--stack=NAME] [--n=N] [--strsv-n=N]\n"
    "                                   [--iters=K] [--power-iters=K] [--strsv-iters=K] [--rewrite-iters=K]\n"
    "                                   [--thp] [--budget-s=S]\n"
    "  power    K sgemv_('N') calls y = A x on one n x n host matrix (x = y / ||y|| between calls)\n"
    "  strsv    K strsv_('L','N','N') solves with one lower-triangular strsv-n x strsv-n factor, a new rhs each\n"
    "  rewrite  power, but every element of A is rewritten (new values) before each call\n"
    "  defaults: n 16384 (1 GiB), strsv-n 8192 (256 MiB), K 100 for every scenario (--iters; the per-scenario\n"
    "  options override it); --thp: A aligned to 2 MiB and madvise(MADV_HUGEPAGE) before it is filled (power and\n"
    "  rewrite); --budget-s: no iteration starts once S seconds have passed since the program started (the line\n"
    "  says how many ran; a scenario that could not start is reported as skipped). --stack only labels the output.\n"
    "  Exit status: 0 all checks passed, 1 a check failed, 2 usage or allocation error.\n";

// Per-element error of y = A x relative to sum_j |A_ij| |x_j|: float accumulation gives about sqrt(n) eps (1e-5 at
// n = 16384); 1e-4 still passes a reordered or blocked sum and fails a stale or wrong matrix by orders of magnitude.
static const double kGemvLimit = 1e-4;
// strsv: ||L x - b||_inf / (||L||_inf ||x||_inf n eps), LAPACK's test suites' threshold for their ratios.
static const double kTrsvLimit = 30.0;

typedef struct {
  const char* stack;
  int power, strsv, rewrite;
  int n, strsv_n;
  int power_iters, strsv_iters, rewrite_iters;
  int thp;
  double budget_s;
} Options;

static double g_start;
static char g_sgemv_from[512], g_strsv_from[512];

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int budget_left(const Options* o) { return o->budget_s <= 0 || now_s() - g_start < o->budget_s; }

// Whether a comma-separated list holds `name` as a whole item.
static int has_token(const char* list, const char* name) {
  const size_t len = strlen(name);
  for (const char* p = list; (p = strstr(p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

// A positive int option value, or -1 (atoi would take "16k" or "" silently).
static int parse_positive(const char* s) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v <= 0 || v > 1000000) return -1;
  return (int)v;
}

// A JSON string (quotes included): library paths and LD_PRELOAD come from outside.
static void print_json_str(const char* s) {
  putchar('"');
  for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; ++p) {
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  }
  putchar('"');
}

static void find_providers(void) {
  Dl_info info;
  void* gemv = dlsym(RTLD_DEFAULT, "sgemv_");
  void* trsv = dlsym(RTLD_DEFAULT, "strsv_");
  snprintf(g_sgemv_from, sizeof g_sgemv_from, "%s",
           gemv && dladdr(gemv, &info) && info.dli_fname ? info.dli_fname : "?");
  snprintf(g_strsv_from, sizeof g_strsv_from, "%s",
           trsv && dladdr(trsv, &info) && info.dli_fname ? info.dli_fname : "?");
}

static void read_first_line(const char* path, char* out, size_t size) {
  out[0] = '\0';
  FILE* f = fopen(path, "r");
  if (!f) return;
  if (fgets(out, (int)size, f)) out[strcspn(out, "\n")] = '\0';
  fclose(f);
}

// Where the stack's symbols came from: the context line and every scenario line carry it.
static void print_resolution(void) {
  printf(", \"ld_preload\": ");
  print_json_str(getenv("LD_PRELOAD"));
  printf(", \"sgemv_from\": ");
  print_json_str(g_sgemv_from);
  printf(", \"strsv_from\": ");
  print_json_str(g_strsv_from);
}

static void print_context(const Options* o) {
  typedef char* (*str_fn)(void);
  typedef int (*int_fn)(void);
  str_fn corename = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_corename");
  str_fn config = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_config");
  int_fn threads = (int_fn)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  char thp[128], host[128] = "";
  read_first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp);
  gethostname(host, sizeof host - 1);
  static const char* const kEnv[] = {"BLASOFFLOAD_MODE",    "BLASOFFLOAD_RESIDENCY",   "BLASOFFLOAD_RESIDENCY_MEM",
                                     "BLASOFFLOAD_STARTUP", "BLASOFFLOAD_POLICY_FILE", "OPENBLAS_CORETYPE",
                                     "OPENBLAS_NUM_THREADS"};
  printf("{\"context\": {\"program\": \"blasoffload_residency_bench\", \"stack\": ");
  print_json_str(o->stack);
  print_resolution();
  for (size_t i = 0; i < sizeof kEnv / sizeof kEnv[0]; ++i) {
    printf(", \"%s\": ", kEnv[i]);
    print_json_str(getenv(kEnv[i]));
  }
  printf(", \"openblas_corename\": ");
  print_json_str(corename ? corename() : "");
  printf(", \"openblas_config\": ");
  print_json_str(config ? config() : "");
  printf(", \"openblas_threads\": %d, \"thp_enabled\": ", threads ? threads() : 0);
  print_json_str(thp);
  printf(", \"host\": ");
  print_json_str(host);
  printf(", \"pid\": %d}}\n", (int)getpid());
  fflush(stdout);
}

// The fields every scenario line starts with; the line is closed by end_line.
static void begin_line(const char* scenario, const Options* o, int n) {
  printf("{\"scenario\": \"%s\", \"stack\": ", scenario);
  print_json_str(o->stack);
  printf(", \"n\": %d", n);
}

static void end_line(const Options* o) {
  print_resolution();
  printf(", \"thp\": %s}\n", o->thp ? "true" : "false");
  fflush(stdout);
}

static void print_skip(const char* scenario, const Options* o, int n, const char* why) {
  begin_line(scenario, o, n);
  printf(", \"skipped\": ");
  print_json_str(why);
  end_line(o);
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median_of(const double* t, int count) {
  double* s = malloc(sizeof(double) * (size_t)count);
  if (!s) return NAN;
  memcpy(s, t, sizeof(double) * (size_t)count);
  qsort(s, (size_t)count, sizeof(double), cmp_double);
  const double m = count % 2 ? s[count / 2] : 0.5 * (s[count / 2 - 1] + s[count / 2]);
  free(s);
  return m;
}

// Per-call statistics of `count` times (ms) under the name prefix (e.g. "" or "iter_"): the median over the last half
// is the steady state (the first calls pay for start-up, the device copy's creation and the policy's learning), the
// first call and the extremes show those costs.
static void print_stats(const char* prefix, const double* t, int count) {
  const int from = count >= 2 ? count / 2 : 0;
  double lo = t[0], hi = t[0], sum = 0;
  for (int i = 0; i < count; ++i) {
    lo = t[i] < lo ? t[i] : lo;
    hi = t[i] > hi ? t[i] : hi;
    sum += t[i];
  }
  printf(", \"%smedian_ms\": %.4f, \"%smin_ms\": %.4f, \"%smax_ms\": %.4f, \"%sfirst_ms\": %.4f, \"%smean_ms\": %.4f",
         prefix, median_of(t + from, count - from), prefix, lo, prefix, hi, prefix, t[0], prefix, sum / count);
}

static void print_times(const char* name, const double* t, int count) {
  printf(", \"%s\": [", name);
  for (int i = 0; i < count; ++i) printf(i ? ", %.3f" : "%.3f", t[i]);
  putchar(']');
}

static void print_check(double value, double limit, int ok, const char* what) {
  printf(", \"check_value\": %.4g, \"check_limit\": %g, \"check\": \"%s\", \"check_what\": ",
         isfinite(value) ? value : -1.0, limit, ok ? "ok" : "FAIL");
  print_json_str(what);
}

// Malloc's large blocks are private anonymous mappings, the memory residency caches; with --thp the block is
// 2 MiB-aligned (so that whole huge pages fit) and advised before the first touch, which is when THP allocates.
static float* alloc_matrix(size_t bytes, int thp, const char** why) {
  *why = NULL;
  if (!thp) return malloc(bytes);
  void* p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, bytes)) return NULL;
  if (madvise(p, bytes, MADV_HUGEPAGE) != 0) *why = strerror(errno);
  return p;
}

// The kB of transparent huge pages backing the mapping that holds p (/proc/self/smaps), or -1 if unknown.
static long anon_huge_kb(const void* p) {
  FILE* f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0;
  long kb = -1;
  const uintptr_t addr = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      if (inside) break;
      inside = addr >= lo && addr < hi;
    } else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) {
      break;
    }
  }
  fclose(f);
  return kb;
}

// A cheap new matrix: a program that recomputes its operand before each call. One xorshift of the index per element
// (shifts and xors only, so that it vectorizes with the baseline x86-64 instruction set: about 4x faster than a
// multiplicative hash there); values in (-1, 1), never zero, different for every seed.
static void rewrite_matrix(float* a, size_t count, uint32_t seed) {
  const uint32_t s = seed * 0x85EBCA6Bu + 0x27D4EB2Fu;
  for (size_t i = 0; i < count; ++i) {
    uint32_t h = (uint32_t)i ^ s;
    h ^= h << 13;
    h ^= h >> 17;
    h ^= h << 5;
    a[i] = (float)(int32_t)(2 * (h >> 9) + 1) * (1.0f / 8388608.0f) - 1.0f;
  }
}

// max_i |y_i - (A x)_i| / sum_j |A_ij| |x_j|, with A x in double (column by column, as A is stored).
static double check_gemv(const float* a, int n, const float* x, const float* y) {
  double* ref = calloc((size_t)n, sizeof(double));
  double* mag = calloc((size_t)n, sizeof(double));
  if (!ref || !mag) {
    free(ref), free(mag);
    return NAN;
  }
  for (size_t j = 0; j < (size_t)n; ++j) {
    const double xj = x[j], axj = fabs(xj);
    const float* col = a + j * (size_t)n;
    for (size_t i = 0; i < (size_t)n; ++i) {
      ref[i] += col[i] * xj;
      mag[i] += fabs((double)col[i]) * axj;
    }
  }
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double r = fabs((double)y[i] - ref[i]) / (mag[i] > 0 ? mag[i] : 1.0);
    if (!(r <= worst)) worst = r;  // a NaN stays
  }
  free(ref), free(mag);
  return worst;
}

// The same ratio for row i alone (n strided reads, cheap enough for every call).
static double check_row(const float* a, int n, int i, const float* x, const float* y) {
  double ref = 0, mag = 0;
  for (size_t j = 0; j < (size_t)n; ++j) {
    const double v = a[(size_t)i + j * (size_t)n];
    ref += v * x[j];
    mag += fabs(v * x[j]);
  }
  return fabs((double)y[i] - ref) / (mag > 0 ? mag : 1.0);
}

// power and rewrite: y = A x, x = y / ||y||, `iters` times. Returns 1 when the check failed, 2 on allocation failure.
static int run_power(const Options* o, int rewrite) {
  const char* name = rewrite ? "rewrite" : "power";
  const int n = o->n, iters = rewrite ? o->rewrite_iters : o->power_iters, one = 1;
  const size_t nn = (size_t)n * (size_t)n;
  if (!budget_left(o)) {
    print_skip(name, o, n, "budget");
    return 0;
  }
  const char* madvise_error = NULL;
  float* a = alloc_matrix(nn * sizeof(float), o->thp, &madvise_error);
  float* x = malloc((size_t)n * sizeof(float));
  float* xin = malloc((size_t)n * sizeof(float));
  float* y = malloc((size_t)n * sizeof(float));
  double* call_ms = malloc((size_t)iters * sizeof(double));
  double* iter_ms = malloc((size_t)iters * sizeof(double));
  double* rewrite_ms = malloc((size_t)iters * sizeof(double));
  if (!a || !x || !xin || !y || !call_ms || !iter_ms || !rewrite_ms) {
    print_skip(name, o, n, "allocation failed");
    free(a), free(x), free(xin), free(y), free(call_ms), free(iter_ms), free(rewrite_ms);
    return 2;
  }
  // Filled once, untimed, also in rewrite: its first rewrite then finds the pages present, as a program's would.
  const double fill0 = now_s();
  for (size_t i = 0; i < nn; ++i) a[i] = hash_uniform(i, 1);
  const double fill_s = now_s() - fill0;
  double norm0 = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = hash_uniform((uint64_t)i, 2);
    norm0 += (double)x[i] * x[i];
  }
  for (int i = 0; i < n; ++i) x[i] = (float)(x[i] / sqrt(norm0));

  const float alpha = 1.0f, beta = 0.0f;
  double norm = 0, total_s = 0, probe_worst = 0;
  int done = 0, bad_norm = 0;
  for (int k = 0; k < iters && budget_left(o); ++k) {
    const double t0 = now_s();
    if (rewrite) rewrite_matrix(a, nn, (uint32_t)k + 100u);
    memcpy(xin, x, (size_t)n * sizeof(float));
    const double t1 = now_s();
    sgemv_("N", &n, &n, &alpha, a, &n, x, &one, &beta, y, &one, 1);
    const double t2 = now_s();
    norm = 0;
    for (int i = 0; i < n; ++i) norm += (double)y[i] * y[i];
    norm = sqrt(norm);
    if (!(norm > 0) || !isfinite(norm)) bad_norm = 1;
    const float inv = bad_norm ? 1.0f : (float)(1.0 / norm);
    for (int i = 0; i < n; ++i) x[i] = y[i] * inv;
    rewrite_ms[k] = 1e3 * (t1 - t0);
    call_ms[k] = 1e3 * (t2 - t1);
    iter_ms[k] = 1e3 * (now_s() - t0);
    total_s += iter_ms[k] * 1e-3;
    ++done;
    if (bad_norm) break;
    // Every call is probed on one row (untimed, n strided reads): a call served from a stale device copy (rewrite) or
    // a wrong one anywhere in the loop fails here even if the last call is right.
    const double p = check_row(a, n, (int)((size_t)k * 7919u % (size_t)n), xin, y);
    if (!(p <= probe_worst)) probe_worst = p;
  }
  if (done == 0) {
    print_skip(name, o, n, "budget");
    free(a), free(x), free(xin), free(y), free(call_ms), free(iter_ms), free(rewrite_ms);
    return 0;
  }
  // power: one more (untimed) call on the final x: after 100 calls served from a device copy, that copy must still
  // be the matrix. rewrite: the last timed call itself, which must have seen the last rewrite (a stale device copy
  // of the previous values fails by orders of magnitude).
  if (!rewrite && !bad_norm) {
    memcpy(xin, x, (size_t)n * sizeof(float));
    sgemv_("N", &n, &n, &alpha, a, &n, xin, &one, &beta, y, &one, 1);
  }
  const double full = check_gemv(a, n, xin, y);
  const double err = isnan(full) || full > probe_worst ? full : probe_worst;
  const int ok = !bad_norm && err <= kGemvLimit;
  double calls_s = 0;
  for (int k = 0; k < done; ++k) calls_s += call_ms[k] * 1e-3;
  const int from = done >= 2 ? done / 2 : 0;
  const double median = median_of(call_ms + from, done - from);

  begin_line(name, o, n);
  printf(", \"iterations\": %d, \"iterations_wanted\": %d, \"total_s\": %.4f, \"calls_s\": %.4f", done, iters, total_s,
         calls_s);
  print_stats("", call_ms, done);
  if (rewrite) {
    print_stats("iter_", iter_ms, done);
    print_stats("rewrite_", rewrite_ms, done);
  }
  printf(
      ", \"probe_worst\": %.4g, \"steady_from\": %d, \"gbs\": %.1f, \"matrix_mib\": %.0f, \"fill_s\": %.3f, "
      "\"last_norm\": %.6g",
      isfinite(probe_worst) ? probe_worst : -1.0, from, median > 0 ? (double)nn * 4.0 / (median * 1e-3) * 1e-9 : 0.0,
      (double)nn * 4.0 / 1048576.0, fill_s, isfinite(norm) ? norm : -1.0);
  print_check(err, kGemvLimit, ok,
              bad_norm ? "||y|| was 0 or not finite"
              : rewrite
                  ? "max_i |y_i - (Ax)_i| / sum_j |A_ij||x_j| (A x in double) over the last timed call (after the "
                    "last rewrite) and one row of every call"
                  : "max_i |y_i - (Ax)_i| / sum_j |A_ij||x_j| (A x in double) over one more call on the final x "
                    "and one row of every call");
  if (o->thp) {
    printf(", \"anon_huge_kb\": %ld, \"madvise\": ", anon_huge_kb(a));
    print_json_str(madvise_error ? madvise_error : "ok");
  }
  print_times("times_ms", call_ms, done);
  if (rewrite) print_times("iter_times_ms", iter_ms, done);
  end_line(o);
  free(a), free(x), free(xin), free(y), free(call_ms), free(iter_ms), free(rewrite_ms);
  return ok ? 0 : 1;
}

// strsv: `iters` solves L x = b with one lower-triangular factor, a new b each time (as a program solving with a
// factorization it keeps). Returns 1 when the check failed, 2 on allocation failure.
static int run_strsv(const Options* o) {
  const int n = o->strsv_n, iters = o->strsv_iters, one = 1;
  const size_t nn = (size_t)n * (size_t)n;
  if (!budget_left(o)) {
    print_skip("strsv", o, n, "budget");
    return 0;
  }
  float* l = malloc(nn * sizeof(float));
  float* x = malloc((size_t)n * sizeof(float));
  float* b = malloc((size_t)n * sizeof(float));
  double* call_ms = malloc((size_t)iters * sizeof(double));
  if (!l || !x || !b || !call_ms) {
    print_skip("strsv", o, n, "allocation failed");
    free(l), free(x), free(b), free(call_ms);
    return 2;
  }
  // Off-diagonal entries in (-1/n, 1/n) and a diagonal in [1, 2): diagonally dominant by rows, so the solve is well
  // conditioned at any n and its residual measures the solver alone. The strict upper triangle, which strsv must not
  // read, holds O(1) values: a solver that used them would fail the check.
  const double fill0 = now_s();
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      const float u = hash_uniform(i + j * (size_t)n, 5);
      l[i + j * (size_t)n] = i > j ? u / (float)n : i == j ? 1.0f + fabsf(u) : u;
    }
  const double fill_s = now_s() - fill0;
  int done = 0;
  const double loop0 = now_s();
  for (int k = 0; k < iters && budget_left(o); ++k) {
    for (int i = 0; i < n; ++i) b[i] = hash_uniform((uint64_t)i, 1000u + (uint64_t)k);
    memcpy(x, b, (size_t)n * sizeof(float));
    const double t0 = now_s();
    strsv_("L", "N", "N", &n, l, &n, x, &one, 1, 1, 1);
    call_ms[k] = 1e3 * (now_s() - t0);
    ++done;
  }
  const double total_s = now_s() - loop0;
  if (done == 0) {
    print_skip("strsv", o, n, "budget");
    free(l), free(x), free(b), free(call_ms);
    return 0;
  }
  // The last solve's residual in double: ||L x - b||_inf / (||L||_inf ||x||_inf n eps).
  double* r = calloc((size_t)n, sizeof(double));
  double* rowsum = calloc((size_t)n, sizeof(double));
  double ratio = NAN;
  if (r && rowsum) {
    for (int i = 0; i < n; ++i) r[i] = -(double)b[i];
    for (size_t j = 0; j < (size_t)n; ++j) {
      const double xj = x[j];
      const float* col = l + j * (size_t)n;
      for (size_t i = j; i < (size_t)n; ++i) {
        r[i] += col[i] * xj;
        rowsum[i] += fabs((double)col[i]);
      }
    }
    double rn = 0, ln = 0, xn = 0;
    for (int i = 0; i < n; ++i) {
      if (!(fabs(r[i]) <= rn)) rn = fabs(r[i]);
      if (rowsum[i] > ln) ln = rowsum[i];
      if (!(fabs((double)x[i]) <= xn)) xn = fabs((double)x[i]);
    }
    ratio = rn / (ln * xn * n * (FLT_EPSILON * 0.5));
  }
  free(r), free(rowsum);
  const int ok = ratio <= kTrsvLimit;
  double calls_s = 0;
  for (int k = 0; k < done; ++k) calls_s += call_ms[k] * 1e-3;
  const int from = done >= 2 ? done / 2 : 0;
  const double median = median_of(call_ms + from, done - from);
  const double bytes = (double)n * ((double)n + 1) / 2 * 4.0;

  begin_line("strsv", o, n);
  printf(", \"iterations\": %d, \"iterations_wanted\": %d, \"total_s\": %.4f, \"calls_s\": %.4f", done, iters, total_s,
         calls_s);
  print_stats("", call_ms, done);
  printf(", \"steady_from\": %d, \"gbs\": %.1f, \"matrix_mib\": %.0f, \"fill_s\": %.3f", from,
         median > 0 ? bytes / (median * 1e-3) * 1e-9 : 0.0, (double)nn * 4.0 / 1048576.0, fill_s);
  print_check(ratio, kTrsvLimit, ok, "last solve: ||Lx-b||inf/(||L||inf ||x||inf n eps), in double");
  print_times("times_ms", call_ms, done);
  end_line(o);
  free(l), free(x), free(b), free(call_ms);
  return ok ? 0 : 1;
}

// Whether arg is FLAG=VALUE; then VALUE (a positive int) goes to *field, and *bad says whether it was one.
static int int_option(const char* arg, const char* flag, int* field, int* bad) {
  const size_t len = strlen(flag);
  if (strncmp(arg, flag, len) != 0 || arg[len] != '=') return 0;
  *field = parse_positive(arg + len + 1);
  *bad = *field < 0;
  return 1;
}

int main(int argc, char** argv) {
  g_start = now_s();
  Options o = {"unknown", 1, 1, 1, 16384, 8192, 0, 0, 0, 0, 0};
  int iters = 100;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* v = strchr(arg, '=');
    v = v ? v + 1 : "";
    int bad = 0;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(kUsage, stdout);
      return 0;
    } else if (strncmp(arg, "--stack=", 8) == 0) {
      o.stack = v;
    } else if (strncmp(arg, "--scenarios=", 12) == 0) {
      o.power = has_token(v, "power"), o.strsv = has_token(v, "strsv"), o.rewrite = has_token(v, "rewrite");
      // Every item must be known, so that a typo does not silently run less than asked.
      char list[256];
      snprintf(list, sizeof list, "%s", v);
      for (char* t = strtok(list, ","); t && !bad; t = strtok(NULL, ","))
        bad = strcmp(t, "power") && strcmp(t, "strsv") && strcmp(t, "rewrite");
      bad = bad || !(o.power || o.strsv || o.rewrite);
    } else if (strcmp(arg, "--thp") == 0) {
      o.thp = 1;
    } else if (strncmp(arg, "--budget-s=", 11) == 0) {
      char* end = NULL;
      o.budget_s = strtod(v, &end);
      bad = end == v || *end != '\0' || !(o.budget_s >= 0);
    } else if (int_option(arg, "--n", &o.n, &bad) || int_option(arg, "--strsv-n", &o.strsv_n, &bad) ||
               int_option(arg, "--iters", &iters, &bad) || int_option(arg, "--power-iters", &o.power_iters, &bad) ||
               int_option(arg, "--strsv-iters", &o.strsv_iters, &bad) ||
               int_option(arg, "--rewrite-iters", &o.rewrite_iters, &bad)) {
      // the value was parsed (bad says how)
    } else {
      bad = 1;
    }
    if (bad) {
      fprintf(stderr, "blasoffload_residency_bench: bad argument '%s'\n%s", arg, kUsage);
      return 2;
    }
  }
  if (o.power_iters == 0) o.power_iters = iters;
  if (o.strsv_iters == 0) o.strsv_iters = iters;
  if (o.rewrite_iters == 0) o.rewrite_iters = iters;

  find_providers();
  print_context(&o);
  int worst = 0, rc;
  // Each scenario frees its matrix before the next allocates: a process holds at most one of them.
  if (o.power && (rc = run_power(&o, 0)) > worst) worst = rc;
  if (o.strsv && (rc = run_strsv(&o)) > worst) worst = rc;
  if (o.rewrite && (rc = run_power(&o, 1)) > worst) worst = rc;
  return worst;
}
