// blasoffload_mix: a program's mixed sequence of host BLAS and LAPACK calls (issue 20, "never slower out of the box"):
// every intercepted routine in both precisions at sizes from tiny to large, and reference LAPACK's drivers (geqrf,
// getri: not intercepted, their BLAS calls reach whatever BLAS the process has), each point timed and checked.
//
// Linked with -llapack -lblas by their Debian names, so the runner (bench/mix/bench.ini) chooses the stack at run
// time. One JSON object per line on stdout: a context line, one per point (median of its repetitions after a first
// call), one total per part. The checks are O(n^2), in double precision, and call no BLAS (the stack under test).
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench_util.h"
#include "../core_probe.h"
#include "../hash_uniform.h"
#include "../openblas_context.h"
#include "../thread_cpu.h"

static const char kUsage[] =
    "usage: blasoffload_mix [--stack=NAME] [--round=R] [--part=calls|drivers] [--precision=s,d] [--min-time=S]\n"
    "                       [--budget-s=S] [--gemm=N:N..] [--gemv=..] [--nrm2=..] [--trsv=..] [--l3=..] [--fact=..]\n"
    "                       [--solve=..] [--drv=..] [--ref=..] [--nrhs=1:64] [--pause-ms=MS]\n"
    "  calls: gemm (m=n=k), gemv, nrm2 (length), trsv, trsm and syrk (--l3), getrf and potrf (--fact), getrs, potrs\n"
    "  and trtrs on factors (--solve), gesv and posv (--drv), each solve at every --nrhs; drivers: geqrf and getri\n"
    "  (--ref). An empty list (--gemm=) leaves the routine out. --min-time: a point's repetitions take at least S\n"
    "  seconds (default 0.05; at least 3 repetitions, 2 when the first call took over 0.5 s); --budget-s: no point\n"
    "  starts after S seconds (printed as skipped). --pause-ms: sleep MS after the first point (a GPU start-up it "
    "began\n"
    "  ends before the rest).\n";

enum { kMaxReps = 200, kMaxSets = 16, kMaxSizes = 32 };
// Small operands are copied into enough sets to pass this many bytes, used in turn: no call finds its data in L2.
static const size_t kRotateBytes = (size_t)16 << 20;
// A call shorter than this is timed in batches of calls (each on its own set): see time_point.
static const double kBatchS = 20e-6;
static const double kThreshold = 30.0;  // the checks' ratios pass below this (LAPACK's test suites use 30)

// The routines a point may run.
enum { kGemm, kGemv, kTrsv, kNrm2, kTrsm, kSyrk, kGetrf, kPotrf, kGetrs, kPotrs, kTrtrs, kGesv, kPosv, kGeqrf, kGetri };

static const char* g_stack = "unknown";
static const char* g_part = "calls";
static char g_prec = 's';
static int g_round = 0;
static double g_min_time = 0.05;
static double g_calls_s = 0;  // every timed call of the part, first calls included: the sequence's time
static int g_failures = 0;
// What ran beside the point's timed samples (thread_cpu.h): snapshots after its first call and after its last sample.
static CpuSnapshot g_cpu_before, g_cpu_after;
static OthersSnapshot g_others_before, g_others_after;  // with BO_BENCH_WHO=1 only
static int g_who;
// With BO_BENCH_PROBE=1: the main thread's core before and after the samples (core_probe.h).
static CoreProbe g_probe_before, g_probe_after;
static int g_probe;
static int g_vzeroupper;  // BO_BENCH_VZEROUPPER=1: a vzeroupper before every timed call

// t: the per-call seconds of the timed samples; calls and sum: every call of the point, the first included.
static void print_point(const char* routine, int n, int nrhs, const double* t, int reps, double first, int calls,
                        double sum, int info, double ratio, const char* what, int sets) {
  double* s = malloc(sizeof(double) * (size_t)reps);
  memcpy(s, t, sizeof(double) * (size_t)reps);
  qsort(s, (size_t)reps, sizeof(double), cmp_double);
  const double median = reps % 2 ? s[reps / 2] : 0.5 * (s[reps / 2 - 1] + s[reps / 2]);
  g_calls_s += sum;
  const int ok = info == 0 && ratio <= kThreshold;
  g_failures += !ok;
  char beside[2048];
  cpu_describe(&g_cpu_before, &g_cpu_after, beside, sizeof beside);
  if (g_who) {
    const size_t used = strlen(beside);
    cpu_describe_others(&g_others_before, &g_others_after, beside + used, sizeof beside - used);
  }
  if (g_probe) {
    const size_t used = strlen(beside);
    if (used + 2 < sizeof beside) {
      strcpy(beside + used, ", ");
      probe_describe(&g_probe_before, &g_probe_after, beside + used + 2, sizeof beside - used - 2);
    }
  }
  printf(
      "{\"routine\": \"%s\", \"precision\": \"%c\", \"n\": %d, \"nrhs\": %d, \"part\": \"%s\", \"stack\": \"%s\", "
      "\"round\": %d, \"seconds\": %.9f, \"min_s\": %.9f, \"max_s\": %.9f, \"first_s\": %.9f, \"reps\": %d, "
      "\"calls\": %d, \"all_s\": %.9f, \"sets\": %d, \"info\": %d, \"check\": \"%s\", \"check_ratio\": %.3g, "
      "\"check_what\": \"%s\", %s}\n",
      routine, g_prec, n, nrhs, g_part, g_stack, g_round, median, s[0], s[reps - 1], first, reps, calls, sum, sets,
      info, ok ? "ok" : "FAIL", isfinite(ratio) ? ratio : -1.0, what, beside);
  fflush(stdout);
  free(s);
}

static void print_skip(const char* routine, int n, int nrhs, const char* why) {
  printf(
      "{\"routine\": \"%s\", \"precision\": \"%c\", \"n\": %d, \"nrhs\": %d, \"part\": \"%s\", \"stack\": \"%s\", "
      "\"round\": %d, \"skipped\": \"%s\"}\n",
      routine, g_prec, n, nrhs, g_part, g_stack, g_round, why);
  fflush(stdout);
}

#define BO_TYPED_BODY "../mix/mix_typed.h"
#include "../common/each_precision.h"

static void print_context(void) {
  const char* preload = getenv("LD_PRELOAD");
  const char* policy = getenv("BLASOFFLOAD_POLICY_FILE");
  const char* mode = getenv("BLASOFFLOAD_MODE");
  char openblas[1024];
  openblas_fields(openblas, sizeof openblas);
  printf(
      "{\"context\": {\"program\": \"blasoffload_mix\", \"stack\": \"%s\", \"part\": \"%s\", \"round\": %d, "
      "\"sgemm_from\": \"%s\", \"dgetrf_from\": \"%s\", \"dgeqrf_from\": \"%s\", \"ld_preload\": \"%s\", "
      "\"blasoffload_mode\": \"%s\", \"policy_file\": \"%s\", %s}}\n",
      g_stack, g_part, g_round, symbol_from("sgemm_"), symbol_from("dgetrf_"), symbol_from("dgeqrf_"),
      preload ? preload : "", mode ? mode : "", policy ? policy : "", openblas);
  fflush(stdout);
}

typedef struct {
  const char* key;
  int n[kMaxSizes];
  int count;
} Sizes;

// The default sizes (bench.ini passes its own).
static Sizes g_sizes[] = {
    {"gemm", {8, 64, 512, 2048, 8192}, 5},
    {"gemv", {64, 1024, 4096, 16384}, 4},
    {"nrm2", {100, 100000, 10000000}, 3},
    {"trsv", {64, 1024, 8192}, 3},
    {"l3", {64, 512, 4096}, 3},
    {"fact", {64, 512, 2048, 8192}, 4},
    {"solve", {64, 1024, 8192}, 3},
    {"drv", {64, 1024, 4096}, 3},
    {"ref", {256, 1024, 2048}, 3},
    {"nrhs", {1, 64}, 2},
};
enum { kNumLists = sizeof g_sizes / sizeof g_sizes[0] };

static Sizes* list(const char* key) {
  for (int i = 0; i < kNumLists; ++i)
    if (strcmp(g_sizes[i].key, key) == 0) return &g_sizes[i];
  return NULL;
}

static int parse_list(const char* arg) {
  for (int i = 0; i < kNumLists; ++i) {
    const size_t len = strlen(g_sizes[i].key);
    if (strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, g_sizes[i].key, len) == 0 && arg[2 + len] == '=') {
      Sizes* s = &g_sizes[i];
      s->count = 0;
      for (const char* p = arg + 3 + len; *p && s->count < kMaxSizes; p += strcspn(p, ",:"), p += *p != '\0')
        if (atof(p) >= 1) s->n[s->count++] = (int)atof(p);  // 1e7 is accepted
      return 1;
    }
  }
  return 0;
}

static double g_start, g_budget, g_pause_ms;

// Runs one point unless the budget is spent.
static void run(int op, int n, int nrhs) {
  static const char* names[] = {"gemm",  "gemv",  "trsv",  "nrm2", "trsm", "syrk",  "getrf", "potrf",
                                "getrs", "potrs", "trtrs", "gesv", "posv", "geqrf", "getri"};
  if (g_budget > 0 && now_s() - g_start > g_budget) {
    char name[16];
    snprintf(name, sizeof name, "%c%s", g_prec, names[op]);
    print_skip(name, n, nrhs, "budget spent");
    return;
  }
  if (g_prec == 'd')
    dpoint(op, n, nrhs);
  else
    spoint(op, n, nrhs);
  static int points;
  if (++points == 1 && g_pause_ms > 0) {
    const struct timespec ts = {(time_t)(g_pause_ms / 1000), (long)(fmod(g_pause_ms, 1000) * 1e6)};
    nanosleep(&ts, NULL);
  }
}

static void each(const char* key, int op, int with_nrhs) {
  const Sizes* s = list(key);
  const Sizes* r = list("nrhs");
  for (int i = 0; i < s->count; ++i)
    for (int j = 0; j < (with_nrhs ? r->count : 1); ++j) run(op, s->n[i], with_nrhs ? r->n[j] : 0);
}

int main(int argc, char** argv) {
  char precisions[8] = "s,d";
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--stack=", 8) == 0) {
      g_stack = argv[i] + 8;
    } else if (strncmp(argv[i], "--part=", 7) == 0 &&
               (strcmp(argv[i] + 7, "calls") == 0 || strcmp(argv[i] + 7, "drivers") == 0)) {
      g_part = argv[i] + 7;
    } else if (strncmp(argv[i], "--round=", 8) == 0) {
      g_round = atoi(argv[i] + 8);
    } else if (strncmp(argv[i], "--precision=", 12) == 0 && strlen(argv[i] + 12) < sizeof precisions && argv[i][12] &&
               strspn(argv[i] + 12, "sd,") == strlen(argv[i] + 12)) {
      snprintf(precisions, sizeof precisions, "%s", argv[i] + 12);
    } else if (strncmp(argv[i], "--min-time=", 11) == 0) {
      g_min_time = atof(argv[i] + 11);
    } else if (strncmp(argv[i], "--budget-s=", 11) == 0) {
      g_budget = atof(argv[i] + 11);
    } else if (strncmp(argv[i], "--pause-ms=", 11) == 0) {
      g_pause_ms = atof(argv[i] + 11);
    } else if (!parse_list(argv[i])) {
      fputs(kUsage, stderr);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  g_who = cpu_who_enabled();
  g_probe = probe_enabled();
  g_vzeroupper = probe_vzeroupper_enabled();
  print_context();
  g_start = now_s();
  for (const char* p = precisions; *p; ++p) {
    if (*p == ',') continue;
    g_prec = *p;
    if (strcmp(g_part, "calls") == 0) {
      each("gemm", kGemm, 0), each("gemv", kGemv, 0), each("nrm2", kNrm2, 0), each("trsv", kTrsv, 0);
      each("l3", kTrsm, 0), each("l3", kSyrk, 0), each("fact", kGetrf, 0), each("fact", kPotrf, 0);
      each("solve", kGetrs, 1), each("solve", kPotrs, 1), each("solve", kTrtrs, 1);
      each("drv", kGesv, 1), each("drv", kPosv, 1);
    } else {
      each("ref", kGeqrf, 0), each("ref", kGetri, 0);
    }
  }
  printf(
      "{\"total\": true, \"part\": \"%s\", \"stack\": \"%s\", \"round\": %d, \"precisions\": \"%s\", "
      "\"calls_s\": %.6f, \"wall_s\": %.6f, \"failures\": %d}\n",
      g_part, g_stack, g_round, precisions, g_calls_s, now_s() - g_start, g_failures);
  fflush(stdout);  // before the exit handlers (a stack's own at exit), so that the line survives whatever they do
  return g_failures ? 1 : 0;
}
