/* policy_probe's BLAS calls: for each routine, operands with NaN where nothing may be read and a sentinel where
 * nothing may be written, a double-precision reference, the Fortran or CBLAS call, and the check of every element
 * (the step syntax and exit statuses: the comment at the top of policy_probe.c). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_probe.h"

typedef void sgemm_t(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                     const int*, const float*, const int*, const float*, float*, const int*, size_t, size_t);
typedef void sgemv_t(const char*, const int*, const int*, const float*, const float*, const int*, const float*,
                     const int*, const float*, float*, const int*, size_t);
typedef void strsv_t(const char*, const char*, const char*, const int*, const float*, const int*, float*, const int*,
                     size_t, size_t, size_t);
typedef float snrm2_t(const int*, const float*, const int*);
typedef void strsm_t(const char*, const char*, const char*, const char*, const int*, const int*, const float*,
                     const float*, const int*, float*, const int*, size_t, size_t, size_t, size_t);
typedef void ssyrk_t(const char*, const char*, const int*, const int*, const float*, const float*, const int*,
                     const float*, float*, const int*, size_t, size_t);

/* The Fortran entry points, taking the hidden string lengths gfortran passes. Declared through typedefs so the
 * prototypes match what the reference BLAS (and blasoffload) really define. */
extern sgemm_t sgemm_;
extern sgemv_t sgemv_;
extern strsv_t strsv_;
extern snrm2_t snrm2_;
extern strsm_t strsm_;
extern ssyrk_t ssyrk_;

/* The CBLAS twins (Debian's reference libblas.so.3 carries them); enum arguments are plain ints. */
enum {
  kColMajor = 102,
  kNoTrans = 111,
  kTrans = 112,
  kUpper = 121,
  kLower = 122,
  kNonUnit = 131,
  kUnit = 132,
  kLeft = 141,
  kRight = 142
};
extern void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
extern void cblas_sgemv(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
extern void cblas_strsv(int, int, int, int, int, const float*, int, float*, int);
extern float cblas_snrm2(int, const float*, int);
extern void cblas_strsm(int, int, int, int, int, int, int, float, const float*, int, float*, int);
extern void cblas_ssyrk(int, int, int, int, int, float, const float*, int, float, float*, int);

static const float kSentinel = 12345.0f; /* where nothing may be written */

static uint64_t g_rng = 88172645463325252ull;
void seed(uint64_t s) { g_rng = s * 2654435761ull + 88172645463325252ull; }
static float uniform(void) { /* in [-1, 1) */
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (float)((double)(g_rng >> 11) / 4503599627370496.0 - 1.0);
}

static void* xmalloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "policy_probe: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

/* Position of element i of a strided vector of len entries, as BLAS walks it. */
static size_t vpos(int i, int len, int inc) { return inc > 0 ? (size_t)i * inc : (size_t)(len - 1 - i) * (size_t)-inc; }
static size_t vspan(int len, int inc) { return 1 + (size_t)(len - 1) * (size_t)abs(inc); }

/* Reports one element outside its bound; returns 1 so callers can count. Only the first few are printed. */
static int g_printed;
static int mismatch(const char* what, const char* call, long idx, double got, double want, double bound) {
  if (g_printed++ < 10)
    fprintf(stderr, "policy_probe: MISMATCH %s: %s[%ld] = %.9g, expected %.9g (bound %.3g)\n", call, what, idx, got,
            want, bound);
  return 1;
}

/* ---- sgemm ---------------------------------------------------------------------------------------------- */

int run_sgemm(const Step* s, const char* call) {
  const int ta = s->op[0] == 'T', tb = s->op[1] == 'T';
  const int m = s->m, n = s->n, k = s->k;
  const int ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
  const int lda = (ra > 1 ? ra : 1) + s->pad, ldb = (rb > 1 ? rb : 1) + s->pad, ldc = (m > 1 ? m : 1) + s->pad;
  float* a = xmalloc(sizeof(float) * (size_t)lda * ca);
  float* b = xmalloc(sizeof(float) * (size_t)ldb * cb);
  float* c0 = xmalloc(sizeof(float) * (size_t)ldc * n);
  float* c = xmalloc(sizeof(float) * (size_t)ldc * n);
  for (size_t j = 0; j < (size_t)ca; ++j)
    for (size_t i = 0; i < (size_t)lda; ++i) a[i + j * lda] = (int)i < ra ? uniform() : NAN;
  for (size_t j = 0; j < (size_t)cb; ++j)
    for (size_t i = 0; i < (size_t)ldb; ++i) b[i + j * ldb] = (int)i < rb ? uniform() : NAN;
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)ldc; ++i)
      c0[i + j * ldc] = (int)i >= m ? kSentinel : s->beta == 0.0f ? NAN : uniform();

  /* op(A) (m x k) and op(B) (k x n) in double, then C by columns: ref and the rounding-error scale |.||.|. */
  double* oa = xmalloc(sizeof(double) * (size_t)m * k);
  double* ob = xmalloc(sizeof(double) * (size_t)k * n);
  for (size_t l = 0; l < (size_t)k; ++l)
    for (size_t i = 0; i < (size_t)m; ++i) oa[i + l * m] = ta ? a[l + i * lda] : a[i + l * lda];
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t l = 0; l < (size_t)k; ++l) ob[l + j * k] = tb ? b[j + l * ldb] : b[l + j * ldb];
  double* ref = xmalloc(sizeof(double) * (size_t)m * n);
  double* mag = xmalloc(sizeof(double) * (size_t)m * n);
  for (size_t j = 0; j < (size_t)n; ++j) {
    double* r = ref + j * m;
    double* g = mag + j * m;
    for (size_t i = 0; i < (size_t)m; ++i) r[i] = g[i] = 0;
    for (size_t l = 0; l < (size_t)k; ++l) {
      const double blj = ob[l + j * k];
      const double* al = oa + l * m;
      for (size_t i = 0; i < (size_t)m; ++i) {
        r[i] += al[i] * blj;
        g[i] += fabs(al[i] * blj);
      }
    }
    for (size_t i = 0; i < (size_t)m; ++i) {
      r[i] *= s->alpha;
      g[i] *= fabs(s->alpha);
      if (s->beta != 0.0f) {
        r[i] += (double)s->beta * c0[i + j * ldc];
        g[i] += fabs((double)s->beta * c0[i + j * ldc]);
      }
    }
  }
  free(oa);
  free(ob);

  int wrong_calls = 0;
  const double gamma = 2.0 * (k + 2) * FLT_EPSILON;
  for (int rep = 0; rep < s->reps; ++rep) {
    memcpy(c, c0, sizeof(float) * (size_t)ldc * n);
    if (s->cblas)
      cblas_sgemm(kColMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, s->alpha, a, lda, b, ldb, s->beta,
                  c, ldc);
    else
      sgemm_(&s->op[0], &s->op[1], &m, &n, &k, &s->alpha, a, &lda, b, &ldb, &s->beta, c, &ldc, 1, 1);
    int bad = 0;
    for (size_t j = 0; j < (size_t)n; ++j)
      for (size_t i = 0; i < (size_t)ldc; ++i) {
        const double got = c[i + j * ldc];
        if ((int)i >= m) {
          if (got != kSentinel) bad += mismatch("C padding", call, (long)(i + j * ldc), got, kSentinel, 0);
          continue;
        }
        const double want = ref[i + j * m], bound = gamma * mag[i + j * m] + FLT_MIN;
        if (!(fabs(got - want) <= bound)) bad += mismatch("C", call, (long)(i + j * ldc), got, want, bound);
      }
    wrong_calls += bad > 0;
  }
  free(a);
  free(b);
  free(c0);
  free(c);
  free(ref);
  free(mag);
  return wrong_calls;
}

/* ---- sgemv ---------------------------------------------------------------------------------------------- */

int run_sgemv(const Step* s, const char* call) {
  const int t = s->op[0] == 'T';
  const int m = s->m, n = s->n, lx = t ? m : n, ly = t ? n : m;
  const int lda = (m > 1 ? m : 1) + s->pad;
  const size_t sx = vspan(lx, s->incx), sy = vspan(ly, s->incy);
  float* a = xmalloc(sizeof(float) * (size_t)lda * n);
  float* x = xmalloc(sizeof(float) * sx);
  float* y0 = xmalloc(sizeof(float) * sy);
  float* y = xmalloc(sizeof(float) * sy);
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)lda; ++i) a[i + j * lda] = (int)i < m ? uniform() : NAN;
  for (size_t i = 0; i < sx; ++i) x[i] = NAN;
  for (int i = 0; i < lx; ++i) x[vpos(i, lx, s->incx)] = uniform();
  for (size_t i = 0; i < sy; ++i) y0[i] = kSentinel;
  for (int i = 0; i < ly; ++i) y0[vpos(i, ly, s->incy)] = s->beta == 0.0f ? NAN : uniform();

  double* ref = xmalloc(sizeof(double) * ly);
  double* mag = xmalloc(sizeof(double) * ly);
  for (int i = 0; i < ly; ++i) ref[i] = mag[i] = 0;
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)m; ++i) {
      const double aij = a[i + j * lda];
      const size_t out = t ? j : i, in = t ? i : j;
      const double p = aij * x[vpos((int)in, lx, s->incx)];
      ref[out] += p;
      mag[out] += fabs(p);
    }
  for (int i = 0; i < ly; ++i) {
    ref[i] *= s->alpha;
    mag[i] *= fabs(s->alpha);
    if (s->beta != 0.0f) {
      const double yi = y0[vpos(i, ly, s->incy)];
      ref[i] += (double)s->beta * yi;
      mag[i] += fabs((double)s->beta * yi);
    }
  }

  int wrong_calls = 0;
  const double gamma = 2.0 * (lx + 2) * FLT_EPSILON;
  for (int rep = 0; rep < s->reps; ++rep) {
    memcpy(y, y0, sizeof(float) * sy);
    if (s->cblas)
      cblas_sgemv(kColMajor, t ? kTrans : kNoTrans, m, n, s->alpha, a, lda, x, s->incx, s->beta, y, s->incy);
    else
      sgemv_(s->op, &m, &n, &s->alpha, a, &lda, x, &s->incx, &s->beta, y, &s->incy, 1);
    int bad = 0;
    for (size_t p = 0; p < sy; ++p) /* the gaps between y's entries */
      if (y0[p] == kSentinel && y[p] != kSentinel) bad += mismatch("y gap", call, (long)p, y[p], kSentinel, 0);
    for (int i = 0; i < ly; ++i) {
      const double got = y[vpos(i, ly, s->incy)], bound = gamma * mag[i] + FLT_MIN;
      if (!(fabs(got - ref[i]) <= bound)) bad += mismatch("y", call, i, got, ref[i], bound);
    }
    wrong_calls += bad > 0;
  }
  free(a);
  free(x);
  free(y0);
  free(y);
  free(ref);
  free(mag);
  return wrong_calls;
}

/* ---- strsv ---------------------------------------------------------------------------------------------- */

int run_strsv(const Step* s, const char* call) {
  const int upper = s->op[0] == 'U', trans = s->op[1] == 'T', unit = s->op[2] == 'U';
  const int n = s->n, lda = (n > 1 ? n : 1) + s->pad;
  const size_t sx = vspan(n, s->incx);
  float* a = xmalloc(sizeof(float) * (size_t)lda * n);
  float* x0 = xmalloc(sizeof(float) * sx);
  float* x = xmalloc(sizeof(float) * sx);
  /* Diagonally dominant, so the solve is well conditioned and the float answer close to the double one. */
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)lda; ++i) {
      const int in_triangle = (int)i < n && (upper ? i < j : i > j);
      a[i + j * lda] = i == j ? (unit ? NAN : 2.0f + 0.5f * uniform()) : in_triangle ? uniform() / (float)n : NAN;
    }
  for (size_t i = 0; i < sx; ++i) x0[i] = kSentinel;
  for (int i = 0; i < n; ++i) x0[vpos(i, n, s->incx)] = uniform();

  /* op(A) is lower triangular for (L, N) and (U, T): forward substitution; otherwise backward. */
  double* ref = xmalloc(sizeof(double) * n);
  for (int i = 0; i < n; ++i) ref[i] = x0[vpos(i, n, s->incx)];
  const int lower = upper ? trans : !trans;
#define OP_A(i, j) (trans ? (double)a[(size_t)(j) + (size_t)(i)*lda] : (double)a[(size_t)(i) + (size_t)(j)*lda])
  for (int step = 0; step < n; ++step) {
    const int i = lower ? step : n - 1 - step;
    double v = ref[i];
    if (lower)
      for (int j = 0; j < i; ++j) v -= OP_A(i, j) * ref[j];
    else
      for (int j = i + 1; j < n; ++j) v -= OP_A(i, j) * ref[j];
    ref[i] = unit ? v : v / OP_A(i, i);
  }
#undef OP_A
  double norm = 0;
  for (int i = 0; i < n; ++i) norm = fmax(norm, fabs(ref[i]));

  int wrong_calls = 0;
  const double bound = 2.0 * (n + 2) * FLT_EPSILON * norm + FLT_MIN;
  for (int rep = 0; rep < s->reps; ++rep) {
    memcpy(x, x0, sizeof(float) * sx);
    if (s->cblas)
      cblas_strsv(kColMajor, upper ? kUpper : kLower, trans ? kTrans : kNoTrans, unit ? kUnit : kNonUnit, n, a, lda, x,
                  s->incx);
    else
      strsv_(&s->op[0], &s->op[1], &s->op[2], &n, a, &lda, x, &s->incx, 1, 1, 1);
    int bad = 0;
    for (size_t p = 0; p < sx; ++p)
      if (x0[p] == kSentinel && x[p] != kSentinel) bad += mismatch("x gap", call, (long)p, x[p], kSentinel, 0);
    for (int i = 0; i < n; ++i) {
      const double got = x[vpos(i, n, s->incx)];
      if (!(fabs(got - ref[i]) <= bound)) bad += mismatch("x", call, i, got, ref[i], bound);
    }
    wrong_calls += bad > 0;
  }
  free(a);
  free(x0);
  free(x);
  free(ref);
  return wrong_calls;
}

/* ---- snrm2 ---------------------------------------------------------------------------------------------- */

int run_snrm2(const Step* s, const char* call) {
  const int n = s->n;
  const size_t sx = vspan(n, s->incx);
  float* x = xmalloc(sizeof(float) * sx);
  for (size_t i = 0; i < sx; ++i) x[i] = NAN;
  /* Entries in {+-1, +-2}: every partial sum of squares is an integer below 2^24, exact in float whatever the
   * order, so any correct implementation returns the correctly rounded norm and a lost or doubled block shows.
   * Longer vectors get uniform entries and a bound that allows float accumulation's drift. */
  const int exact = 4.0 * n < 16777216.0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const float v = exact ? (const float[]){-2, -1, 1, 2}[(int)((uniform() + 1.0f) * 2.0f) & 3] : uniform();
    x[(size_t)i * s->incx] = v;
    sum += (double)v * v;
  }
  const double want = sqrt(sum);
  const double bound = (exact ? 1.0 : 0.25 * n) * FLT_EPSILON * want + FLT_MIN;
  int wrong_calls = 0;
  for (int rep = 0; rep < s->reps; ++rep) {
    const float got = s->cblas ? cblas_snrm2(n, x, s->incx) : snrm2_(&n, x, &s->incx);
    if (!(fabs(got - want) <= bound)) wrong_calls += mismatch("norm", call, 0, got, want, bound);
  }
  free(x);
  return wrong_calls;
}

/* ---- strsm ---------------------------------------------------------------------------------------------- */

int run_strsm(const Step* s, const char* call) {
  const int left = s->op[0] == 'L', upper = s->op[1] == 'U', trans = s->op[2] == 'T', unit = s->op[3] == 'U';
  const int m = s->m, n = s->n, t = left ? m : n;
  const int lda = (t > 1 ? t : 1) + s->pad, ldb = (m > 1 ? m : 1) + s->pad;
  float* a = xmalloc(sizeof(float) * (size_t)lda * t);
  float* b0 = xmalloc(sizeof(float) * (size_t)ldb * n);
  float* b = xmalloc(sizeof(float) * (size_t)ldb * n);
  /* Diagonally dominant, as for strsv. */
  for (size_t j = 0; j < (size_t)t; ++j)
    for (size_t i = 0; i < (size_t)lda; ++i) {
      const int in_triangle = (int)i < t && (upper ? i < j : i > j);
      a[i + j * lda] = i == j ? (unit ? NAN : 2.0f + 0.5f * uniform()) : in_triangle ? uniform() / (float)t : NAN;
    }
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)ldb; ++i) b0[i + j * ldb] = (int)i < m ? uniform() : kSentinel;

  /* Side L: op(A) x = alpha b for each column of B; side R: x^T op(A) = alpha b^T, i.e. op(A)^T x = alpha b, for each
   * row. `tr`: whether the matrix of those systems is A^T; it is lower triangular for (L, no tr) and (U, tr). */
  const int tr = trans != !left, lower = upper ? tr : !tr, systems = left ? n : m;
  double* ref = xmalloc(sizeof(double) * (size_t)m * n);
  double* norm = xmalloc(sizeof(double) * (size_t)systems);
  double* v = xmalloc(sizeof(double) * (size_t)t);
#define T_AT(i, j) (tr ? (double)a[(size_t)(j) + (size_t)(i)*lda] : (double)a[(size_t)(i) + (size_t)(j)*lda])
#define B_POS(sys, i) (left ? (size_t)(i) + (size_t)(sys)*ldb : (size_t)(sys) + (size_t)(i)*ldb)
#define R_POS(sys, i) (left ? (size_t)(i) + (size_t)(sys)*m : (size_t)(sys) + (size_t)(i)*m)
  for (int sys = 0; sys < systems; ++sys) {
    for (int i = 0; i < t; ++i) v[i] = (double)s->alpha * b0[B_POS(sys, i)];
    for (int step = 0; step < t; ++step) {
      const int i = lower ? step : t - 1 - step;
      double x = v[i];
      if (lower)
        for (int j = 0; j < i; ++j) x -= T_AT(i, j) * v[j];
      else
        for (int j = i + 1; j < t; ++j) x -= T_AT(i, j) * v[j];
      v[i] = unit ? x : x / T_AT(i, i);
    }
    norm[sys] = 0;
    for (int i = 0; i < t; ++i) {
      ref[R_POS(sys, i)] = v[i];
      norm[sys] = fmax(norm[sys], fabs(v[i]));
    }
  }
#undef T_AT

  int wrong_calls = 0;
  for (int rep = 0; rep < s->reps; ++rep) {
    memcpy(b, b0, sizeof(float) * (size_t)ldb * n);
    if (s->cblas)
      cblas_strsm(kColMajor, left ? kLeft : kRight, upper ? kUpper : kLower, trans ? kTrans : kNoTrans,
                  unit ? kUnit : kNonUnit, m, n, s->alpha, a, lda, b, ldb);
    else
      strsm_(&s->op[0], &s->op[1], &s->op[2], &s->op[3], &m, &n, &s->alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
    int bad = 0;
    for (size_t j = 0; j < (size_t)n; ++j)
      for (size_t i = (size_t)m; i < (size_t)ldb; ++i)
        if (b[i + j * ldb] != kSentinel)
          bad += mismatch("B padding", call, (long)(i + j * ldb), b[i + j * ldb], kSentinel, 0);
    for (int sys = 0; sys < systems; ++sys) {
      const double bound = 2.0 * (t + 2) * FLT_EPSILON * norm[sys] + FLT_MIN;
      for (int i = 0; i < t; ++i) {
        const double got = b[B_POS(sys, i)], want = ref[R_POS(sys, i)];
        if (!(fabs(got - want) <= bound)) bad += mismatch("B", call, (long)B_POS(sys, i), got, want, bound);
      }
    }
    wrong_calls += bad > 0;
  }
#undef B_POS
#undef R_POS
  free(a);
  free(b0);
  free(b);
  free(ref);
  free(norm);
  free(v);
  return wrong_calls;
}

/* ---- ssyrk ---------------------------------------------------------------------------------------------- */

int run_ssyrk(const Step* s, const char* call) {
  const int upper = s->op[0] == 'U', trans = s->op[1] == 'T';
  const int n = s->n, k = s->k, ra = trans ? k : n, ca = trans ? n : k;
  const int lda = (ra > 1 ? ra : 1) + s->pad, ldc = (n > 1 ? n : 1) + s->pad;
  float* a = xmalloc(sizeof(float) * (size_t)lda * (ca > 0 ? ca : 1));
  float* c0 = xmalloc(sizeof(float) * (size_t)ldc * n);
  float* c = xmalloc(sizeof(float) * (size_t)ldc * n);
  for (size_t j = 0; j < (size_t)ca; ++j)
    for (size_t i = 0; i < (size_t)lda; ++i) a[i + j * lda] = (int)i < ra ? uniform() : NAN;
#define IN_TRI(i, j) ((int)(i) < n && (upper ? (i) <= (j) : (i) >= (j)))
  /* Only C's uplo triangle may be written; with beta = 0 it must not be read either. */
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)ldc; ++i)
      c0[i + j * ldc] = !IN_TRI(i, j) ? kSentinel : s->beta == 0.0f ? NAN : uniform();
#define OP_A(i, l) (trans ? (double)a[(size_t)(l) + (size_t)(i)*lda] : (double)a[(size_t)(i) + (size_t)(l)*lda])
  double* ref = xmalloc(sizeof(double) * (size_t)n * n);
  double* mag = xmalloc(sizeof(double) * (size_t)n * n);
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      if (!IN_TRI(i, j)) continue;
      double r = 0, g = 0;
      for (int l = 0; l < k; ++l) {
        r += OP_A(i, l) * OP_A(j, l);
        g += fabs(OP_A(i, l) * OP_A(j, l));
      }
      r *= s->alpha;
      g *= fabs(s->alpha);
      if (s->beta != 0.0f) {
        r += (double)s->beta * c0[i + j * ldc];
        g += fabs((double)s->beta * c0[i + j * ldc]);
      }
      ref[i + j * n] = r;
      mag[i + j * n] = g;
    }
#undef OP_A

  int wrong_calls = 0;
  const double gamma = 2.0 * (k + 2) * FLT_EPSILON;
  for (int rep = 0; rep < s->reps; ++rep) {
    memcpy(c, c0, sizeof(float) * (size_t)ldc * n);
    if (s->cblas)
      cblas_ssyrk(kColMajor, upper ? kUpper : kLower, trans ? kTrans : kNoTrans, n, k, s->alpha, a, lda, s->beta, c,
                  ldc);
    else
      ssyrk_(&s->op[0], &s->op[1], &n, &k, &s->alpha, a, &lda, &s->beta, c, &ldc, 1, 1);
    int bad = 0;
    for (size_t j = 0; j < (size_t)n; ++j)
      for (size_t i = 0; i < (size_t)ldc; ++i) {
        const double got = c[i + j * ldc];
        if (!IN_TRI(i, j)) {
          if (got != kSentinel) bad += mismatch("C outside the triangle", call, (long)(i + j * ldc), got, kSentinel, 0);
          continue;
        }
        const double want = ref[i + j * n], bound = gamma * mag[i + j * n] + FLT_MIN;
        if (!(fabs(got - want) <= bound)) bad += mismatch("C", call, (long)(i + j * ldc), got, want, bound);
      }
    wrong_calls += bad > 0;
  }
#undef IN_TRI
  free(a);
  free(c0);
  free(c);
  free(ref);
  free(mag);
  return wrong_calls;
}
