// blasoffload_residency_bench: times repeated Level 2 calls on one large host matrix that a program keeps (power
// iteration with sgemv_, many right-hand sides with strsv_) or rewrites before every call, under whatever BLAS the
// dynamic linker and LD_PRELOAD provide: the workloads that blasoffload's residency cache is for, and the one it
// must not slow down.
//
// Linked with -lblas by its Debian name, so the runner (bench/residency/bench.ini) chooses the stack at run time. One
// JSON object per line on stdout; the checks are in double precision and call no BLAS (the stack under test). Single
// or double precision (--precision): the element-typed half is residency_bench_typed.h, included once per precision.
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

static const char kUsage[] =
    "usage: blasoffload_residency_bench [--scenarios=power,strsv,rewrite] [--stack=NAME] [--n=N] [--strsv-n=N]\n"
    "                                   [--iters=K] [--power-iters=K] [--strsv-iters=K] [--rewrite-iters=K]\n"
    "                                   [--thp] [--budget-s=S] [--precision=s,d]\n"
    "  power    K sgemv_('N') calls y = A x on one n x n host matrix (x = y / ||y|| between calls)\n"
    "  strsv    K strsv_('L','N','N') solves with one lower-triangular strsv-n x strsv-n factor, a new rhs each\n"
    "  rewrite  power, but every element of A is rewritten (new values) before each call\n"
    "  defaults: n 16384 (1 GiB), strsv-n 8192 (256 MiB), K 100 for every scenario (--iters; the per-scenario\n"
    "  options override it); --thp: A aligned to 2 MiB and madvise(MADV_HUGEPAGE) before it is filled (power and\n"
    "  rewrite); --budget-s: no iteration starts once S seconds have passed since the program started (the line\n"
    "  says how many ran; a scenario that could not start is reported as skipped). --stack only labels the output.\n"
    "  --precision=s,d: single (sgemv_, strsv_; default), double (dgemv_, dtrsv_) or both, one after the other.\n"
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
static char g_sgemv_from[512], g_strsv_from[512], g_dgemv_from[512], g_dtrsv_from[512];
static char g_prec = 's';  // the precision of the scenario being run

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
  void* dgemv = dlsym(RTLD_DEFAULT, "dgemv_");
  void* dtrsv = dlsym(RTLD_DEFAULT, "dtrsv_");
  snprintf(g_sgemv_from, sizeof g_sgemv_from, "%s",
           gemv && dladdr(gemv, &info) && info.dli_fname ? info.dli_fname : "?");
  snprintf(g_dgemv_from, sizeof g_dgemv_from, "%s",
           dgemv && dladdr(dgemv, &info) && info.dli_fname ? info.dli_fname : "?");
  snprintf(g_strsv_from, sizeof g_strsv_from, "%s",
           trsv && dladdr(trsv, &info) && info.dli_fname ? info.dli_fname : "?");
  snprintf(g_dtrsv_from, sizeof g_dtrsv_from, "%s",
           dtrsv && dladdr(dtrsv, &info) && info.dli_fname ? info.dli_fname : "?");
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
  printf(", \"dgemv_from\": ");
  print_json_str(g_dgemv_from);
  printf(", \"dtrsv_from\": ");
  print_json_str(g_dtrsv_from);
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
  printf("{\"scenario\": \"%s\", \"precision\": \"%c\", \"stack\": ", scenario, g_prec);
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
static void* alloc_matrix(size_t bytes, int thp, const char** why) {
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

#define BO_TYPED_BODY "../residency/residency_bench_typed.h"
#include "../common/each_precision.h"

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
  char precisions[8] = "s";
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
    } else if (strncmp(arg, "--precision=", 12) == 0) {
      bad = !*v || strlen(v) >= sizeof precisions || strspn(v, "sd,") != strlen(v);
      if (!bad) snprintf(precisions, sizeof precisions, "%s", v);
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
  for (const char* p = precisions; *p; ++p) {
    if (*p == ',') continue;
    g_prec = *p;
    const int d = *p == 'd';
    if (o.power && (rc = d ? drun_power(&o, 0) : srun_power(&o, 0)) > worst) worst = rc;
    if (o.strsv && (rc = d ? drun_strsv(&o) : srun_strsv(&o)) > worst) worst = rc;
    if (o.rewrite && (rc = d ? drun_power(&o, 1) : srun_power(&o, 1)) > worst) worst = rc;
  }
  return worst;
}
