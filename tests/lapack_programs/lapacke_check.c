// A user program through LAPACKE (column-major): every intercepted LAPACK routine, ?getrf ?getrs ?gesv ?potrf
// ?potrs ?posv ?trtrs in s and d, checked against LAPACK's residual bounds; one line per check, non-zero exit on any
// failure. Usage: lapacke_check [N ...] (default 300 2000).
//
// The checks use no BLAS or LAPACK: residuals and factor reconstructions are computed here in long double.
// Every matrix and right-hand side sits in a larger array (lda > n, ldb > n) whose padding, and every part LAPACK
// does not reference (the other triangle of ?potrf/?potrs/?posv/?trtrs, the diagonal with diag = 'U'), holds NaN:
// a routine that reads them poisons its result, one that writes them is caught by a bitwise comparison.
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// LAPACK's residual threshold (its test programs' THRESH) and the size above which factor reconstructions check a
// sample of columns instead of all: a full one costs about m n min(m,n) / 3 long double operations (2 ns each
// here, n = 2000: 5 s a factorization). Every factor is also checked whole by the solve that uses it (?getrs,
// ?potrs after ?getrf, ?potrf), whose residual a wrong entry anywhere spoils.
#define THRESH 30.0L
#define FULL_RECONSTRUCTION_OPS (1100.0 * 1100.0 * 1100.0)
#define SAMPLED_COLUMNS 96

static int passed, failed;

// One line per check; resid < 0 means the check has no residual (an INFO or bitwise check).
static void report(int ok, const char* what, long double resid, const char* detail) {
  if (ok) {
    passed++;
  } else {
    failed++;
  }
  if (resid >= 0) {
    printf("%s %-44s resid %8.3Lf %s\n", ok ? "PASS" : "FAIL", what, resid, detail);
  } else {
    printf("%s %-44s %s\n", ok ? "PASS" : "FAIL", what, detail);
  }
  fflush(stdout);
}

// xorshift64*: deterministic, so a failure reproduces; one stream per check (seeded from the check's number).
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; }
static double rng_uniform(void) {  // in [-1, 1)
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
  return (double)(r >> 11) * 0x1.0p-52 - 1.0;
}

// Which columns a factor reconstruction checks: all, or the first, the last and SAMPLED_COLUMNS - 2 random ones.
static int pick_columns(int m, int n, int* cols) {
  int k = m < n ? m : n;
  if ((double)m * n * k <= FULL_RECONSTRUCTION_OPS || n <= SAMPLED_COLUMNS) {
    for (int j = 0; j < n; j++) cols[j] = j;
    return n;
  }
  cols[0] = 0;
  cols[1] = n - 1;
  for (int c = 2; c < SAMPLED_COLUMNS; c++) cols[c] = (int)((rng_uniform() + 1.0) * 0.5 * n) % n;
  return SAMPLED_COLUMNS;
}

static void detail_columns(char* buf, size_t len, int checked, int n, const char* extra) {
  if (checked == n) {
    snprintf(buf, len, "(all %d columns)%s", n, extra);
  } else {
    snprintf(buf, len, "(%d of %d columns)%s", checked, n, extra);
  }
}

// How a routine reads A: general, symmetric or triangular (uplo), and as op(A) (trans) with diag.
enum { KIND_GE, KIND_SY, KIND_TR };
typedef struct {
  int kind;
  char uplo, trans, diag;
} Op;

// What a routine must leave bitwise unchanged besides the padding rows.
enum { KEEP_PAD = 0, KEEP_STRICT_LOWER = 1, KEEP_STRICT_UPPER = 2, KEEP_ALL = 4 };

#define T float
#define P(name) name##_s
#define LAPACKE(name) LAPACKE_s##name
#define PNAME "s"
#define EPS (FLT_EPSILON * 0.5L)
#include "lapacke_check_body.h"
#undef T
#undef P
#undef LAPACKE
#undef PNAME
#undef EPS

#define T double
#define P(name) name##_d
#define LAPACKE(name) LAPACKE_d##name
#define PNAME "d"
#define EPS (DBL_EPSILON * 0.5L)
#include "lapacke_check_body.h"

int main(int argc, char** argv) {
  int sizes[16] = {300, 2000};
  int nsizes = 2;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 16; i++) {
      sizes[nsizes] = atoi(argv[i]);
      if (sizes[nsizes] < 8) {
        fprintf(stderr, "lapacke_check: size '%s' must be at least 8\n", argv[i]);
        return 2;
      }
      nsizes++;
    }
  }
  for (int i = 0; i < nsizes; i++) {
    run_all_s(sizes[i]);
    run_all_d(sizes[i]);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
