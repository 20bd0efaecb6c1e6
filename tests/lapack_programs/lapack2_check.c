// A user program calling LAPACK's Fortran symbols directly for "LAPACK part 2" (?geqrf ?orgqr ?ormqr ?gels ?syevd
// ?syev ?syevr ?gesvd ?gesdd ?getri ?potri, and ?gelsd ?geqp3 ?geev) in s and d, checking every result against LAPACK's
// residual and orthogonality bounds; one line per check, non-zero exit on any failure.
// Usage: lapack2_check [N ...] (default 300 1000; N >= 8).
//
// Why each piece:
// - Every option letter combination, every workspace-query answer (printed as QUERY lines, which query_parity.sh
//   compares between runs with and without blasoffload) and the documented minimum workspace run at small fixed
//   shapes (0, 1, 2, 17, 20, 40 rows/columns), where they are cheap; each given N runs the main options at sizes that
//   reach LAPACK's blocked code (and the GPU's paths), plus ill-conditioned, rank-deficient, repeated-eigenvalue and
//   singular cases.
// - Inputs and outputs sit in larger arrays (lda > m ...) filled with NaN first: a routine that reads what it must not
//   poisons its result, one that writes outside its outputs is caught by a bitwise comparison.
// - Residuals are LAPACK's test ratios, threshold 30: in eps (xLAMCH('E')) for QR, least squares and inverses as its
//   LIN tests, in ulp (2 eps) for eigenvalues and the SVD as its EIG tests. Loops accumulate in long double, O(n^3)
//   products go through dgemm_ in double (so through blasoffload when preloaded), and large products and reflector
//   applications check a sample of columns (the first, the last, random ones) to keep the run short.
// - A program-defined xerbla_ records invalid-argument reports instead of stopping, as LAPACK's error-exit tests do.
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// LAPACK test programs' threshold; -DTHRESH=2 shows how close each check comes.
#ifndef THRESH
#define THRESH 30.0L
#endif
// Products and reflector applications cheaper than this many multiply-adds check every column; larger ones a sample,
// so that the whole run at 300 1000 stays within a minute or two with reference BLAS.
#define FULL_CHECK_OPS (360.0 * 360.0 * 360.0)
#define CHECK_BUDGET_OPS 3.0e8
#define MAX_SAMPLED 64
#define MIN_SAMPLED 8
#define INT_POISON (-987654321)

// ---- reporting ------------------------------------------------------------------------------------------------

static int passed, failed;

typedef struct {
  int ok;
  long double resid;  // the worst ratio of the check (0 when it has none)
  char note[240];     // what went wrong or how much was checked
} Result;

static void note_add(Result* r, const char* fmt, const char* what) {
  size_t len = strlen(r->note);
  snprintf(r->note + len, sizeof r->note - len, fmt, what);
}

// A ratio that must stay below THRESH; NaN and Inf count as failures.
static void check_ratio(Result* r, const char* name, long double ratio) {
  if (!isfinite(ratio)) ratio = INFINITY;
  if (ratio > r->resid) r->resid = ratio;
  if (!(ratio < THRESH)) {
    r->ok = 0;
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, " %s=%.3Lg", name, ratio);
  }
}

static void check_true(Result* r, int cond, const char* what) {
  if (!cond) {
    r->ok = 0;
    note_add(r, " %s", what);
  }
}

static void check_info(Result* r, int info, int expected) {
  if (info != expected) {
    r->ok = 0;
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, " INFO=%d (expected %d)", info, expected);
  }
}

static Result result_new(void) {
  Result r = {1, 0.0L, ""};
  return r;
}

static void report(const Result* r, const char* what) {
  if (r->ok) {
    passed++;
  } else {
    failed++;
  }
  printf("%s %-62s resid %8.3Lf%s\n", r->ok ? "PASS" : "FAIL", what, r->resid, r->note);
  fflush(stdout);
}

// Sweeps over many small shapes report one PASS line per option set (the worst ratio), and one FAIL line per shape
// that fails.
typedef struct {
  int count, nfailed;
  long double worst;
  char worst_at[48];
} Sweep;

static void sweep_add(Sweep* s, const Result* r, const char* what, const char* shape) {
  s->count++;
  if (!r->ok) {
    char line[160];
    snprintf(line, sizeof line, "%s %s", what, shape);
    report(r, line);
    s->nfailed++;
  } else if (r->resid >= s->worst) {
    s->worst = r->resid;
    snprintf(s->worst_at, sizeof s->worst_at, "%s", shape);
  }
}

static void sweep_end(const Sweep* s, const char* what) {
  if (s->nfailed > 0) return;
  Result r = result_new();
  r.resid = s->worst;
  snprintf(r.note, sizeof r.note, " (%d shapes, worst at %s)", s->count, s->worst_at);
  report(&r, what);
}

// ---- random numbers, column samples ------------------------------------------------------------------------------

// xorshift64*: deterministic, so a failure reproduces and every call of a case regenerates the same matrix.
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; }
static double rng_uniform(void) {  // in [-1, 1)
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
  return (double)(r >> 11) * 0x1.0p-52 - 1.0;
}

// The columns a check visits when each costs ops_per_column: all of them when the total is small, else the first,
// the last and random ones, as many as the budget allows (MIN_SAMPLED to MAX_SAMPLED). A separate stream, so that
// sampling does not change the matrices that follow.
static int pick_columns(int n, double ops_per_column, int* cols) {
  if (n <= MIN_SAMPLED || ops_per_column * n <= FULL_CHECK_OPS) {
    for (int j = 0; j < n; j++) cols[j] = j;
    return n;
  }
  int count = (int)(CHECK_BUDGET_OPS / (ops_per_column > 1 ? ops_per_column : 1));
  count = count < MIN_SAMPLED ? MIN_SAMPLED : count > MAX_SAMPLED ? MAX_SAMPLED : count;
  if (count >= n) count = n;
  uint64_t saved = rng_state;
  rng_seed((uint64_t)n * 7919u + (uint64_t)ops_per_column);
  cols[0] = 0;
  cols[1] = n - 1;
  for (int c = 2; c < count; c++) cols[c] = (int)((rng_uniform() + 1.0) * 0.5 * n) % n;
  rng_state = saved;
  return count;
}

// One seed per case (routine, shape, variant, precision): the opt and min workspace runs of a case, and the runs of
// different options on "the same matrix", regenerate identical inputs.
static uint64_t seed_of(int a, int b, int c, int d, size_t precision) {
  return (((uint64_t)a * 1000003u + (uint64_t)b) * 10007u + (uint64_t)c) * 101u + (uint64_t)d * 7u + precision;
}

static void* xmalloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "lapack2_check: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static int* int_poison(int count) {
  int* p = xmalloc((size_t)(count > 0 ? count : 1) * sizeof(int));
  for (int i = 0; i < (count > 0 ? count : 1); i++) p[i] = INT_POISON;
  return p;
}

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

// ---- BLAS for the checks ----------------------------------------------------------------------------------------

void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, size_t, size_t);

// c (m x n) -= x (m x k, or its transpose when tx = 'T') * y (k x n), then the largest column 1-norm of c.
static long double gemm_resid(char tx, int m, int n, int k, const double* x, int ldx, const double* y, int ldy,
                              double* c, int ldc) {
  const double minus = -1.0, one = 1.0;
  if (m > 0 && n > 0 && k > 0) dgemm_(&tx, "N", &m, &n, &k, &minus, x, &ldx, y, &ldy, &one, c, &ldc, 1, 1);
  long double worst = 0;
  for (int j = 0; j < n; j++) {
    long double s = 0;
    for (int i = 0; i < m; i++) s += fabsl((long double)c[i + (size_t)j * ldc]);
    if (!(s <= worst)) worst = s;  // NaN propagates
  }
  return worst;
}

// The largest column 1-norm of the double matrix d (m x n, ld).
static long double dnorm1(int m, int n, const double* d, int ld) {
  long double worst = 0;
  for (int j = 0; j < n; j++) {
    long double s = 0;
    for (int i = 0; i < m; i++) s += fabsl((long double)d[i + (size_t)j * ld]);
    if (!(s <= worst)) worst = s;
  }
  return worst;
}

// c (n x count) = the columns cols of the n x n identity.
static double* identity_columns(int n, const int* cols, int count) {
  double* c = calloc((size_t)imax(n, 1) * imax(count, 1), sizeof(double));
  if (!c) exit(2);
  for (int j = 0; j < count; j++) c[cols[j] + (size_t)j * n] = 1.0;
  return c;
}

// Gathers the picked columns of the double matrix d (rows x n, ld rows).
static double* gather_columns(const double* d, int rows, const int* cols, int count) {
  double* g = xmalloc((size_t)imax(rows, 1) * imax(count, 1) * sizeof(double));
  for (int c = 0; c < count; c++) memcpy(g + (size_t)c * rows, d + (size_t)cols[c] * rows, rows * sizeof(double));
  return g;
}

// ||I - A0 X||_1 / (||A0||_1 ||X||_1 n eps) over sampled columns (LAPACK's xGET03, xPOT03); a0 and x full, n x n.
static long double inverse_ratio(int n, const double* a0, const double* x, long double eps, int* checked) {
  int* cols = xmalloc((size_t)imax(n, 1) * sizeof(int));
  int count = pick_columns(n, (double)n * n, cols);
  double *xc = gather_columns(x, n, cols, count), *c = identity_columns(n, cols, count);
  long double res = gemm_resid('N', n, count, n, a0, n, xc, n, c, n);
  long double ratio = res / (fmaxl(dnorm1(n, n, a0, n) * dnorm1(n, n, x, n), LDBL_MIN) * n * eps);
  free(cols), free(xc), free(c);
  *checked = count;
  return ratio;
}

// ---- Householder reflectors for the test matrices ---------------------------------------------------------------

// H = I - 2 v v^T with |v| = 1; a product of a few random ones is a dense random orthogonal matrix, applied in
// O(n) per reflector and vector, so that matrices with chosen singular values or eigenvalues stay cheap at any size.
#define GEN_REFLECTORS 6
typedef struct {
  int n, count;
  long double* v;  // count vectors of length n
} Reflectors;

static Reflectors reflectors_new(int n) {
  Reflectors r = {n, n > 1 ? GEN_REFLECTORS : 0, NULL};
  r.v = xmalloc((size_t)(r.count > 0 ? r.count : 1) * (size_t)(n > 0 ? n : 1) * sizeof(long double));
  for (int k = 0; k < r.count; k++) {
    long double* v = r.v + (size_t)k * n;
    long double s = 0;
    for (int i = 0; i < n; i++) v[i] = rng_uniform(), s += v[i] * v[i];
    s = sqrtl(s);
    for (int i = 0; i < n; i++) v[i] /= s;
  }
  return r;
}

// x (stride inc) = H_0 H_1 ... x, or H_{count-1} ... H_0 x when reverse (the transpose).
static void reflectors_apply(const Reflectors* r, long double* x, size_t inc, int reverse) {
  for (int t = 0; t < r->count; t++) {
    const long double* v = r->v + (size_t)(reverse ? t : r->count - 1 - t) * r->n;
    long double d = 0;
    for (int i = 0; i < r->n; i++) d += v[i] * x[i * inc];
    for (int i = 0; i < r->n; i++) x[i * inc] -= 2 * d * v[i];
  }
}

// D (m x n, long double, ld m) = L diag(s) R^T with L, R random orthogonal (s has min(m, n) entries).
static long double* with_singular_values(int m, int n, const long double* s, Reflectors* left, Reflectors* right) {
  *left = reflectors_new(m);
  *right = reflectors_new(n);
  long double* d = calloc((size_t)imax(m, 1) * imax(n, 1), sizeof(long double));
  if (!d) exit(2);
  for (int i = 0; i < imin(m, n); i++) d[i + (size_t)i * m] = s[i];
  for (int j = 0; j < n; j++) reflectors_apply(left, d + (size_t)j * m, 1, 0);
  for (int i = 0; i < m; i++) reflectors_apply(right, d + i, (size_t)m, 0);
  return d;
}

static void reflectors_free(Reflectors* r) { free(r->v); }

// ---- xerbla ---------------------------------------------------------------------------------------------------------

// LAPACK's invalid-argument report: recorded, never fatal, so that the error-exit checks can look at it. The
// program's own definition takes precedence over the LAPACK library's (and blasoffload calls it the same way).
static char xerbla_name[16];
static int xerbla_info, xerbla_calls;

void xerbla_(const char* name, const int* info, size_t len) {
  size_t n = 0;
  for (; n < len && n + 1 < sizeof xerbla_name && name[n] != '\0'; n++) {
    xerbla_name[n] = (char)(name[n] >= 'a' && name[n] <= 'z' ? name[n] - 'a' + 'A' : name[n]);
  }
  while (n > 0 && xerbla_name[n - 1] == ' ') n--;
  xerbla_name[n] = '\0';
  xerbla_info = *info;
  xerbla_calls++;
}

static void xerbla_reset(void) {
  xerbla_name[0] = '\0';
  xerbla_info = 0;
  xerbla_calls = 0;
}

// ---- case selectors shared by both precisions ------------------------------------------------------------------

enum { WS_QUERY, WS_MIN };  // run with the query's answer, or with LAPACK's documented minimum
static const char* const ws_names[2] = {"opt", "min"};

enum { SYEVD, SYEV, SYEVR };
static const char* const sy_names[3] = {"syevd", "syev", "syevr"};

enum { GESVD, GESDD };

enum { ARG_ELEMS = 64 };

// ---- the two precisions -------------------------------------------------------------------------------------------

#define T float
#define P(name) name##_s
#define F(name) s##name##_
#define PNAME "s"
#define PUPPER "S"
#define EPS ((long double)FLT_EPSILON * 0.5L)
#define ULP ((long double)FLT_EPSILON)
#define DIGITS 7
// Each header uses the ones before it: keep their order.
// clang-format off
#include "lapack2_check_common.h"
#include "lapack2_check_qr.h"
#include "lapack2_check_eig.h"
#include "lapack2_check_args.h"
#include "lapack2_check_runs.h"
// clang-format on
#undef T
#undef P
#undef F
#undef PNAME
#undef PUPPER
#undef EPS
#undef ULP
#undef DIGITS

#define T double
#define P(name) name##_d
#define F(name) d##name##_
#define PNAME "d"
#define PUPPER "D"
#define EPS ((long double)DBL_EPSILON * 0.5L)
#define ULP ((long double)DBL_EPSILON)
#define DIGITS 16
// Each header uses the ones before it: keep their order.
// clang-format off
#include "lapack2_check_common.h"
#include "lapack2_check_qr.h"
#include "lapack2_check_eig.h"
#include "lapack2_check_args.h"
#include "lapack2_check_runs.h"
// clang-format on

int main(int argc, char** argv) {
  int sizes[16] = {300, 1000};
  int nsizes = 2;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 16; i++) {
      sizes[nsizes] = atoi(argv[i]);
      if (sizes[nsizes] < 8) {
        fprintf(stderr, "lapack2_check: size '%s' must be at least 8\n", argv[i]);
        return 2;
      }
      nsizes++;
    }
  }
  check_args_s();
  check_args_d();
  sweep_qr_s();
  sweep_qr_d();
  sweep_eig_s();
  sweep_eig_d();
  for (int i = 0; i < nsizes; i++) {
    run_qr_s(sizes[i]);
    run_qr_d(sizes[i]);
    run_eig_s(sizes[i]);
    run_eig_d(sizes[i]);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
