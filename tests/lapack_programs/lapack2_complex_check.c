// A user program calling the complex LAPACK part-2 routines' Fortran symbols directly (c and z: ?geqrf ?ungqr ?unmqr
// ?gels ?heevd ?heev ?heevr ?gesvd ?gesdd ?getri ?potri), checking each result against LAPACK's residual and
// orthogonality bounds; one line per check, non-zero exit on any failure.
// Usage: lapack2_complex_check [N ...] (default 60 200; N >= 8).
//
// Why each piece (as lapack2_check.c for s and d):
// - Every option letter (TRANS C, SIDE, UPLO, JOBZ, RANGE, every SVD job) at m > n, m < n and square shapes, with the
//   workspace the CPU LAPACK's query answers and with the documented minimum; the queries (LWORK, LRWORK, LIWORK = -1)
//   are printed as QUERY lines.
// - Matrices sit in arrays with lda > m whose padding holds a NaN pattern: a routine reading it poisons its result, one
//   writing it is caught bitwise.
// - Ratios are LAPACK's (threshold 30): in eps for QR, least squares and inverses, in ulp (2 eps) for eigenvalues and
//   the SVD; sums in long double.
// - A program-defined xerbla_ records invalid-argument reports: a bad argument must give LAPACK's INFO and leave every
//   output as it was.
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef THRESH
#define THRESH 30.0L
#endif

typedef long double complex LC;

static int passed, failed, xerbla_info;
static char xerbla_name[8];

// LAPACK's error handler, replaced: the report is recorded for the check, the program goes on.
void xerbla_(const char* name, const int* info, size_t len) {
  size_t n = len < sizeof xerbla_name - 1 ? len : sizeof xerbla_name - 1;
  memcpy(xerbla_name, name, n);
  xerbla_name[n] = 0;
  xerbla_info = *info;
}

static void report(int ok, long double ratio, const char* what) {
  if (ok)
    ++passed;
  else
    ++failed;
  printf("%s %-60s ratio %.3Lg\n", ok ? "ok  " : "FAIL", what, ratio);
}

static unsigned long long rng = 88172645463325252ull;
static double uniform(void) {  // in [-1, 1)
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static void* xmalloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) abort();
  return p;
}
static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

// The two precisions from one body: c (float complex) and z (double complex).
#define CT float complex
#define RT float
#define F(name) c##name##_
#define PN "c"
#define EPS FLT_EPSILON
#define SFX _c
#include "lapack2_complex_check_body.inc"
#undef CT
#undef RT
#undef F
#undef PN
#undef EPS
#undef SFX
#define CT double complex
#define RT double
#define F(name) z##name##_
#define PN "z"
#define EPS DBL_EPSILON
#define SFX _z
#include "lapack2_complex_check_body.inc"

int main(int argc, char** argv) {
  int sizes[8] = {60, 200}, nsizes = 2;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 8; ++i) sizes[nsizes++] = imax(8, atoi(argv[i]));
  }
  run_all_c(sizes, nsizes);
  run_all_z(sizes, nsizes);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
