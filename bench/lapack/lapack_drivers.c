// blasoffload_lapack_drivers: times LAPACK factorizations and solves (getrf, gesv, getrs, geqrf, potrf, potrs; real
// or complex, single or double precision) on random host matrices under whatever BLAS/LAPACK stack the dynamic linker
// and LD_PRELOAD provide, and checks each result cheaply.
//
// Linked with -llapack -lblas by their Debian names, so the runner (bench/lapack/bench.ini) chooses the stack at run
// time. One JSON object per line on stdout; the checks are O(n^2), in double precision, and call no BLAS (the stack
// under test). The element-typed half is lapack_drivers_typed.h, included once per precision (s, d, c, z).
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../hash_uniform.h"

static const char kUsage[] =
    "usage: blasoffload_lapack_drivers [--stack=NAME] [--drivers=getrf,getrf_dominant,gesv,getrs,geqrf,potrf,potrs]\n"
    "                                  [--reps=R] [--warm=K] [--min-time=S] [--round=R] [--precision=s,d,c,z]\n"
    "                                  [--budget-s=S] [N[,N:N...] ...]\n"
    "  N: matrix orders (default 1024 2048 4096 8192 16384); 9 timed repetitions up to 2048, 5 at 4096, 2 at 8192, 1\n"
    "  above (--reps overrides; getrs and potrs at least 5); --warm: K calls before those, outside the statistics "
    "(the\n"
    "  first one's time is printed as first_s); --min-time: more repetitions (at most 400) until they took S seconds;\n"
    "  --round: printed in every line; --precision: s (default), d, c, z or a list, each order in that order;\n"
    "  --budget-s: no new driver starts once S seconds have passed (reported as skipped).\n";

// The most timed repetitions --min-time adds up to.
enum { kMaxReps = 400 };
static int g_warm = 0;         // calls before the timed ones, outside the statistics
static double g_min_time = 0;  // seconds the timed repetitions of a point take at least (within kMaxReps)
static int g_round = 0;        // printed when > 0: the runner's round

// The check's pass threshold on the scaled error ratios below (LAPACK's test suites use 30 for theirs).
static const double kThreshold = 30.0;

// Whether a comma-separated list holds `name` as a whole item.
static int has_token(const char* list, const char* name) {
  const size_t len = strlen(name);
  for (const char* p = list; (p = strstr(p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

static uint64_t lcg(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 17;
}

static const char* g_stack = "unknown";
static char g_prec = 's';  // the precision of the lines being printed

typedef struct {
  int getrf, getrf_dominant, gesv, getrs, geqrf, potrf, potrs;
} Wanted;

// t holds every call of a point: g_warm warm-up calls, then the timed repetitions (calls - g_warm of them).
static void print_point(const char* driver, int n, int calls, const double* t, int info, double ratio,
                        const char* note) {
  const int warm = calls > g_warm ? g_warm : 0, reps = calls - warm;
  double* sorted = malloc(sizeof(double) * (size_t)reps);
  memcpy(sorted, t + warm, sizeof(double) * (size_t)reps);
  qsort(sorted, (size_t)reps, sizeof(double), cmp_double);
  const double median = reps % 2 ? sorted[reps / 2] : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);
  // A complex multiply-add is 4 real multiplications and 4 additions: 4 times the real count.
  const double nn = (double)n, scale = g_prec == 'c' || g_prec == 'z' ? 4.0 : 1.0;
  const int solve = strcmp(driver, "getrs") == 0 || strcmp(driver, "potrs") == 0;
  const double flops = scale * (solve                          ? 2.0 * nn * nn
                                : strcmp(driver, "potrf") == 0 ? nn * nn * nn / 3.0
                                : strcmp(driver, "geqrf") == 0 ? 4.0 * nn * nn * nn / 3.0
                                                               : 2.0 * nn * nn * nn / 3.0);
  const int ok = info == 0 && ratio <= kThreshold;
  char round[32] = "";
  if (g_round > 0) snprintf(round, sizeof round, ", \"round\": %d", g_round);
  printf(
      "{\"driver\": \"%s\", \"precision\": \"%c\", \"n\": %d, \"stack\": \"%s\"%s, \"seconds\": %.6f, "
      "\"min_s\": %.6f, \"max_s\": %.6f, \"q1_s\": %.6f, \"q3_s\": %.6f, \"first_s\": %.6f, \"warm\": %d, "
      "\"reps\": %d, \"gflops\": %.1f, \"info\": %d, \"check\": \"%s\", \"check_ratio\": %.3g, "
      "\"check_what\": \"%s\"}\n",
      driver, g_prec, n, g_stack, round, median, sorted[0], sorted[reps - 1], sorted[(reps - 1) / 4],
      sorted[(3 * (reps - 1) + 3) / 4], t[0], warm, reps, median > 0 ? flops / median * 1e-9 : 0.0, info,
      ok ? "ok" : "FAIL", isfinite(ratio) ? ratio : -1.0, note);
  fflush(stdout);
  free(sorted);
}

static void print_skip(const char* driver, int n, const char* why) {
  printf("{\"driver\": \"%s\", \"precision\": \"%c\", \"n\": %d, \"stack\": \"%s\", \"skipped\": \"%s\"}\n", driver,
         g_prec, n, g_stack, why);
  fflush(stdout);
}

#define BO_TYPED_BODY "../lapack/lapack_drivers_typed.h"
#define BO_TYPED_COMPLEX  // c and z too (cgetrf_ ... zpotrs_)
#include "../common/each_precision.h"

static void print_context(void) {
  typedef char* (*str_fn)(void);
  typedef int (*int_fn)(void);
  str_fn corename = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_corename");
  str_fn config = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_config");
  int_fn threads = (int_fn)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  Dl_info getrf = {0}, gemm = {0}, dgetrf = {0}, cgetrf = {0}, zgetrf = {0};
  dladdr((void*)&sgetrf_, &getrf);
  dladdr((void*)&dgetrf_, &dgetrf);
  dladdr((void*)&cgetrf_, &cgetrf);
  dladdr((void*)&zgetrf_, &zgetrf);
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  if (sgemm) dladdr(sgemm, &gemm);
  const char* preload = getenv("LD_PRELOAD");
  printf(
      "{\"context\": {\"program\": \"blasoffload_lapack_drivers\", \"stack\": \"%s\", \"sgetrf_from\": \"%s\", "
      "\"dgetrf_from\": \"%s\", \"cgetrf_from\": \"%s\", \"zgetrf_from\": \"%s\", "
      "\"sgemm_from\": \"%s\", \"ld_preload\": \"%s\", \"blasoffload_mode\": \"%s\", \"openblas_corename\": "
      "\"%s\", \"openblas_config\": \"%s\", \"openblas_threads\": %d, \"policy_file\": \"%s\", \"round\": %d}}\n",
      g_stack, getrf.dli_fname ? getrf.dli_fname : "", dgetrf.dli_fname ? dgetrf.dli_fname : "",
      cgetrf.dli_fname ? cgetrf.dli_fname : "", zgetrf.dli_fname ? zgetrf.dli_fname : "",
      gemm.dli_fname ? gemm.dli_fname : "", preload ? preload : "",
      getenv("BLASOFFLOAD_MODE") ? getenv("BLASOFFLOAD_MODE") : "", corename ? corename() : "", config ? config() : "",
      threads ? threads() : 0, getenv("BLASOFFLOAD_POLICY_FILE") ? getenv("BLASOFFLOAD_POLICY_FILE") : "", g_round);
  fflush(stdout);
}

int main(int argc, char** argv) {
  int ns[32], count = 0, reps_override = 0;
  double budget = 0;
  char drivers[128] = "getrf,gesv,geqrf,potrf", precisions[16] = "s";
  // Orders may come as several arguments or lists separated by , or : (one runner argument for a whole sweep).
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--stack=", 8) == 0) {
      g_stack = argv[i] + 8;
    } else if (strncmp(argv[i], "--drivers=", 10) == 0) {
      snprintf(drivers, sizeof drivers, "%s", argv[i] + 10);
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      reps_override = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--precision=", 12) == 0 && strlen(argv[i] + 12) < sizeof precisions &&
               strspn(argv[i] + 12, "sdcz,") == strlen(argv[i] + 12) && argv[i][12]) {
      snprintf(precisions, sizeof precisions, "%s", argv[i] + 12);
    } else if (strncmp(argv[i], "--budget-s=", 11) == 0) {
      budget = atof(argv[i] + 11);
    } else if (strncmp(argv[i], "--warm=", 7) == 0 && atoi(argv[i] + 7) >= 0) {
      g_warm = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--min-time=", 11) == 0) {
      g_min_time = atof(argv[i] + 11);
    } else if (strncmp(argv[i], "--round=", 8) == 0) {
      g_round = atoi(argv[i] + 8);
    } else if (argv[i][0] != '-' && atoi(argv[i]) > 0) {
      for (char* p = argv[i]; *p && count < 32; p += strcspn(p, ",:"), p += *p != '\0')
        if (atoi(p) > 0) ns[count++] = atoi(p);
    } else {
      fputs(kUsage, stderr);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (count == 0) {
    const int def[] = {1024, 2048, 4096, 8192, 16384};
    for (count = 0; count < 5; ++count) ns[count] = def[count];
  }
  Wanted w;
  w.getrf = has_token(drivers, "getrf"), w.gesv = has_token(drivers, "gesv");
  w.geqrf = has_token(drivers, "geqrf"), w.potrf = has_token(drivers, "potrf");
  // getrs / potrs: the factorization once, untimed, then repeated solves with one right-hand side on those factors.
  w.getrs = has_token(drivers, "getrs"), w.potrs = has_token(drivers, "potrs");
  // getrf_dominant: random + n I, a matrix on which partial pivoting never swaps rows (the anchors' "no pivoting").
  w.getrf_dominant = has_token(drivers, "getrf_dominant");
  print_context();
  const double start = now_s();
  int failures = 0;
  for (int c = 0; c < count; ++c) {
    const int n = ns[c];
    // Small orders take milliseconds and OpenBLAS's threads make them noisy: more repetitions there.
    int reps = reps_override > 0 ? reps_override : (n >= 16384 ? 1 : n >= 8192 ? 2 : n >= 4096 ? 5 : 9);
    if (reps > kMaxReps) reps = kMaxReps;
    for (const char* p = precisions; *p; ++p) {
      if (*p == ',') continue;
      g_prec = *p;
      failures += *p == 's'   ? srun_order(n, reps, &w, budget, start)
                  : *p == 'd' ? drun_order(n, reps, &w, budget, start)
                  : *p == 'c' ? crun_order(n, reps, &w, budget, start)
                              : zrun_order(n, reps, &w, budget, start);
    }
  }
  return failures ? 1 : 0;
}
