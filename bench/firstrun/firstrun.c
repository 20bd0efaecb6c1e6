// blasoffload_firstrun: one short program of the first-run sequence (bench/firstrun/bench.ini): one BLAS or LAPACK
// routine the library intercepts, called a few times on host matrices as a program would, each call timed and the
// last one checked; or, with --load, the CPU load that runs beside the sequence (a threaded dgemm loop).
//
// Linked with -llapack -lblas by their Debian names, so the runner chooses the stack at run time. One JSON object per
// line on stdout: a context line (which libraries answered, the policy file the library's default path held at the
// start), then the program's line. Inputs come from a counter hash on several threads (bench/hash_uniform.h); inputs a
// call overwrites are made again before the next call, outside its timing. The check is O(n^2), in double precision,
// on several threads, and calls no BLAS (the stack under test). Exit status: 0 ok, 1 a check failed, 2 usage, 3 out
// of memory.
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../hash_uniform.h"
#include "../openblas_context.h"

static const char kUsage[] =
    "usage: blasoffload_firstrun --routine=NAME --n=N [--calls=K] [--nrhs=R] [--stack=S] [--pass=P] [--part=X]\n"
    "       blasoffload_firstrun --spec=NAME-NxK[-R] [...]     (the same: dgemm-4096x3, dpotrs-8192x3-64)\n"
    "       blasoffload_firstrun --load [--n=4096] [--seconds=S]\n"
    "  NAME: [sd]gemm (m = n = k), [sd]gemv, [sd]trsm (left, lower, m = n), [sd]syrk (lower, n = k), [sd]getrf,\n"
    "  [sd]gesv, [sd]potrf (lower), [sd]potrs, [sd]getrs (on factors made directly; nrhs default 1). --threads=T:\n"
    "  the threads that make inputs and check (default: the cores, at most 16). --load: dgemm on N x N until SIGTERM\n"
    "  (or S seconds, default 3600: a load left behind ends by itself), then one line: calls, seconds, GFLOP/s.\n";

enum { kMaxCalls = 64, kMaxThreads = 64 };
static const double kThreshold = 30.0;  // a check's ratio passes below this (LAPACK's test suites use 30)

enum { kGemm, kGemv, kTrsm, kSyrk, kGetrf, kGesv, kPotrf, kPotrs, kGetrs, kNumOps };
static const char* const kOpNames[kNumOps] = {"gemm", "gemv",  "trsm",  "syrk", "getrf",
                                              "gesv", "potrf", "potrs", "getrs"};

// What an input holds (bench/firstrun/firstrun_typed.h's fill): uniform in (-1, 1); symmetric with diagonal n + 1
// (strictly diagonally dominant, hence SPD); lower triangular with diagonal 2 and off-diagonal uniform / n (well
// conditioned at every order: trsm's A, potrs's factor); an LU factor pair in one matrix, unit lower L and upper U
// with diagonal 2, off-diagonal uniform / n (getrs's); zeros (outputs, touched before the first call).
enum { kUniform, kSpd, kLowerTri, kLuPacked, kZero };
// Which part of a matrix a product reads (the checks' matvec): all, the lower or upper triangle with the diagonal,
// the strict lower one with a unit diagonal.
enum { kFull, kLower, kUpper, kUnitLower };

static int g_threads = 1;

// ---- Work on several threads: [0, total) cut into one contiguous range per thread ----

typedef void (*RangeFn)(void* ctx, size_t lo, size_t hi);
typedef struct {
  RangeFn fn;
  void* ctx;
  size_t lo, hi;
} Slice;

static void* slice_main(void* p) {
  Slice* s = p;
  s->fn(s->ctx, s->lo, s->hi);
  return NULL;
}

static void par_for(size_t total, RangeFn fn, void* ctx) {
  int t = g_threads < 1 ? 1 : g_threads > kMaxThreads ? kMaxThreads : g_threads;
  if ((size_t)t > total) t = total ? (int)total : 1;
  pthread_t th[kMaxThreads];
  Slice s[kMaxThreads];
  int started[kMaxThreads] = {0};
  for (int i = 0; i < t; ++i) {
    s[i] = (Slice){fn, ctx, total * (size_t)i / (size_t)t, total * (size_t)(i + 1) / (size_t)t};
    if (i > 0) started[i] = pthread_create(&th[i], NULL, slice_main, &s[i]) == 0;
  }
  slice_main(&s[0]);
  for (int i = 1; i < t; ++i) {
    if (started[i])
      pthread_join(th[i], NULL);
    else
      slice_main(&s[i]);  // no thread: done here
  }
}

// max |v - w| / (max mag * k * eps): a normwise error ratio (NaN gives NaN).
static double resid_ratio(const double* v, const double* w, const double* mag, int n, double k, double eps) {
  double r = 0, m = 0;
  for (int i = 0; i < n; ++i) {
    const double d = fabs(v[i] - w[i]);
    if (!(d <= r)) r = d;
    if (mag[i] > m) m = mag[i];
  }
  return r / (m * k * eps + 1e-300);
}

// Applies getrf's row interchanges to v (and mag) in reverse order: the factors' P (L U x) from L U x.
static void unpivot(const int* ipiv, int n, double* v, double* mag) {
  for (int i = n - 1; i >= 0; --i) {
    const int p = ipiv[i] - 1;
    double t = v[i];
    v[i] = v[p], v[p] = t;
    t = mag[i];
    mag[i] = mag[p], mag[p] = t;
  }
}

typedef struct {
  const char* stack;
  const char* part;
  int pass;
  char prec;
  const char* name;  // without the precision letter
  int op, n, nrhs, calls;
} Program;

typedef struct {
  double t[kMaxCalls];
  double gen_s, restore_s, check_s, ratio;
  int info;
  const char* what;
  const char* skipped;  // why nothing ran ("out of host memory")
} Result;

// What each routine's operands are: A n x n always; B gemm's and trsm's n x n, gemv's x, the solves' n x nrhs; C
// gemm's and syrk's n x n, gemv's y. The calls overwrite A (factorizations, gesv) or B (trsm, the solves).
static int overwrites_a(int op) { return op == kGetrf || op == kGesv || op == kPotrf; }
static int overwrites_b(int op) { return op == kTrsm || op == kGesv || op == kPotrs || op == kGetrs; }
static int a_kind(int op) {
  return op == kTrsm || op == kPotrs ? kLowerTri : op == kPotrf ? kSpd : op == kGetrs ? kLuPacked : kUniform;
}
static uint64_t a_seed(int op) { return 10 + (uint64_t)op; }
static uint64_t b_seed(int op) { return 30 + (uint64_t)op; }
static size_t b_cols(const Program* g) {
  const int op = g->op;
  return op == kGemv                                   ? 1
         : op == kGemm || op == kTrsm                  ? (size_t)g->n
         : op == kGesv || op == kPotrs || op == kGetrs ? (size_t)g->nrhs
                                                       : 0;
}
static size_t c_cols(const Program* g) {
  return g->op == kGemv ? 1 : g->op == kGemm || g->op == kSyrk ? (size_t)g->n : 0;
}

#define BO_TYPED_BODY "../firstrun/firstrun_typed.h"
#include "../common/each_precision.h"

// The policy file the library reads when BLASOFFLOAD_POLICY_FILE is unset: $XDG_CONFIG_HOME/blasoffload/policy.json,
// else ~/.config/blasoffload/policy.json (src/config/paths.cpp).
static void default_policy(char* path, size_t size) {
  const char* xdg = getenv("XDG_CONFIG_HOME");
  const char* home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(path, size, "%s/blasoffload/policy.json", xdg);
  else
    snprintf(path, size, "%s/.config/blasoffload/policy.json", home && *home ? home : ".");
}

// The "created" value of a policy file (when its calibration measured), "" when there is none.
static void policy_created(const char* path, char* out, size_t size) {
  out[0] = '\0';
  FILE* f = fopen(path, "r");
  if (!f) return;
  char buf[4096];
  const size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = '\0';
  const char* p = strstr(buf, "\"created\"");
  if (p && (p = strchr(p + 9, '"'))) {
    const size_t len = strcspn(p + 1, "\"");
    snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), p + 1);
  }
}

static void print_context(const Program* g) {
  const char* preload = getenv("LD_PRELOAD");
  const char* policy = getenv("BLASOFFLOAD_POLICY_FILE");
  const char* mode = getenv("BLASOFFLOAD_MODE");
  char def[1024], created[64], openblas[1024];
  default_policy(def, sizeof def);
  struct stat st;
  const int exists = stat(def, &st) == 0;
  policy_created(def, created, sizeof created);
  openblas_fields(openblas, sizeof openblas);
  printf(
      "{\"context\": {\"program\": \"blasoffload_firstrun\", \"stack\": \"%s\", \"part\": \"%s\", \"pass\": %d, "
      "\"sgemm_from\": \"%s\", \"dgetrf_from\": \"%s\", \"ld_preload\": \"%s\", \"blasoffload_mode\": \"%s\", "
      "\"policy_file\": \"%s\", \"policy_default\": \"%s\", \"policy_at_start\": %s, \"policy_created\": \"%s\", "
      "%s, \"threads\": %d}}\n",
      g->stack, g->part, g->pass, symbol_from("sgemm_"), symbol_from("dgetrf_"), preload ? preload : "",
      mode ? mode : "", policy ? policy : "", def, exists ? "true" : "false", created, openblas, g_threads);
  fflush(stdout);
}

static void print_result(const Program* g, const Result* r, double wall) {
  if (r->skipped) {
    printf(
        "{\"routine\": \"%c%s\", \"n\": %d, \"nrhs\": %d, \"stack\": \"%s\", \"part\": \"%s\", \"pass\": %d, "
        "\"skipped\": \"%s\"}\n",
        g->prec, g->name, g->n, g->nrhs, g->stack, g->part, g->pass, r->skipped);
    fflush(stdout);
    return;
  }
  char list[kMaxCalls * 20] = "";
  double sum = 0;
  for (int k = 0; k < g->calls; ++k) {
    const size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%.6f", k ? ", " : "", r->t[k]);
    sum += r->t[k];
  }
  const int ok = r->info == 0 && r->ratio <= kThreshold;
  printf(
      "{\"routine\": \"%c%s\", \"precision\": \"%c\", \"n\": %d, \"nrhs\": %d, \"stack\": \"%s\", \"part\": \"%s\", "
      "\"pass\": %d, \"calls\": %d, \"call_s\": [%s], \"first_s\": %.6f, \"sum_s\": %.6f, \"gen_s\": %.6f, "
      "\"restore_s\": %.6f, \"check_s\": %.6f, \"wall_s\": %.6f, \"info\": %d, \"check\": \"%s\", "
      "\"check_ratio\": %.3g, \"check_what\": \"%s\"}\n",
      g->prec, g->name, g->prec, g->n, g->nrhs, g->stack, g->part, g->pass, g->calls, list, r->t[0], sum, r->gen_s,
      r->restore_s, r->check_s, wall, r->info, ok ? "ok" : "FAIL", isfinite(r->ratio) ? r->ratio : -1.0, r->what);
  fflush(stdout);  // before the exit handlers (the library's summary at exit)
}

// ---- The load: dgemm on N x N in a loop until SIGTERM ----

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) {
  (void)sig;
  g_stop = 1;
}

static void print_load(int n, long calls, double dt) {
  const double flops = 2.0 * n * (double)n * (double)n * (double)calls;
  printf("{\"load\": {\"routine\": \"dgemm\", \"n\": %d, \"calls\": %ld, \"seconds\": %.3f, \"gflops\": %.1f}}\n", n,
         calls, dt, dt > 0 ? flops / dt * 1e-9 : 0.0);
  fflush(stdout);
}

static int run_load(int n, double seconds) {
  // Ends with the runner that started it, however that ends (a runner killed outright runs no clean-up).
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 0;  // the runner ended before the line above
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  const size_t nn = (size_t)n * (size_t)n;
  double* a = xmalloc(3 * nn * sizeof(double));
  if (!a) return 3;
  dfill_par(a, (size_t)n, 3 * (size_t)n, n, kUniform, 21);
  const double one = 1, zero = 0;
  const double t0 = now_s();
  long calls = 0;
  // A line every 10 s as well as at the end: a load killed outright still says what it did.
  for (double next = t0 + 10; !g_stop && now_s() - t0 < seconds;) {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, a + nn, &n, &zero, a + 2 * nn, &n, 1, 1);
    ++calls;
    if (now_s() >= next) {
      print_load(n, calls, now_s() - t0);
      next += 10;
    }
  }
  print_load(n, calls, now_s() - t0);
  free(a);
  return 0;
}

// "dgemm-4096x3" or "dpotrs-8192x3-64": routine, n, calls, nrhs.
static int parse_spec(const char* spec, char* name, size_t size, int* n, int* calls, int* nrhs) {
  const size_t len = strcspn(spec, "-");
  if (!spec[len] || len + 1 > size) return 0;
  snprintf(name, size, "%.*s", (int)len, spec);
  int r = 0;
  const int got = sscanf(spec + len + 1, "%dx%d-%d", n, calls, &r);
  if (got < 2) return 0;
  if (got == 3) *nrhs = r;
  return 1;
}

int main(int argc, char** argv) {
  const double start = now_s();
  Program g = {"unknown", "", 0, 'd', "", -1, 0, 1, 3};
  char routine[32] = "";
  int load = 0;
  double seconds = 3600;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  g_threads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "--routine=", 10) == 0) {
      snprintf(routine, sizeof routine, "%s", a + 10);
    } else if (strncmp(a, "--spec=", 7) == 0) {
      if (!parse_spec(a + 7, routine, sizeof routine, &g.n, &g.calls, &g.nrhs)) routine[0] = '\0';
    } else if (strncmp(a, "--n=", 4) == 0) {
      g.n = atoi(a + 4);
    } else if (strncmp(a, "--calls=", 8) == 0) {
      g.calls = atoi(a + 8);
    } else if (strncmp(a, "--nrhs=", 7) == 0) {
      g.nrhs = atoi(a + 7);
    } else if (strncmp(a, "--stack=", 8) == 0) {
      g.stack = a + 8;
    } else if (strncmp(a, "--pass=", 7) == 0) {
      g.pass = atoi(a + 7);
    } else if (strncmp(a, "--part=", 7) == 0) {
      g.part = a + 7;
    } else if (strncmp(a, "--threads=", 10) == 0) {
      g_threads = atoi(a + 10);
    } else if (strcmp(a, "--load") == 0) {
      load = 1;
    } else if (strncmp(a, "--seconds=", 10) == 0) {
      seconds = atof(a + 10);
    } else {
      fputs(kUsage, stderr);
      return strcmp(a, "--help") == 0 ? 0 : 2;
    }
  }
  if (load) return run_load(g.n > 0 ? g.n : 4096, seconds);
  g.prec = routine[0];
  for (int op = 0; op < kNumOps; ++op)
    if ((g.prec == 's' || g.prec == 'd') && strcmp(routine + 1, kOpNames[op]) == 0) g.op = op, g.name = kOpNames[op];
  if (g.op < 0 || g.n < 1 || g.calls < 1 || g.calls > kMaxCalls || g.nrhs < 1 || g_threads < 1) {
    fprintf(stderr, "blasoffload_firstrun: bad or missing --routine/--spec, --n, --calls or --nrhs\n%s", kUsage);
    return 2;
  }
  print_context(&g);
  Result r;
  memset(&r, 0, sizeof r);
  if (g.prec == 'd')
    dprogram(&g, &r);
  else
    sprogram(&g, &r);
  print_result(&g, &r, now_s() - start);
  if (r.skipped) return 3;
  return r.info == 0 && r.ratio <= kThreshold ? 0 : 1;
}
