/* The element-typed half of blasoffload_firstrun, included once per precision by firstrun.c (through
 * bench/common/each_precision.h) with T, P(name) and EPS defined: the routines of that precision, their inputs made on
 * several threads, one program (its calls timed, the last one checked) and the O(n^2) checks, in double precision on
 * several threads, without BLAS (the stack under test). No include guard: it is meant to be included twice. */

#include "../common/typed_routines.h"

// ---- Inputs ----

typedef struct {
  T* a;
  size_t rows;
  int kind, n;
  uint64_t seed;
} P(Fill);

static void P(fill_cols)(void* p, size_t lo, size_t hi) {
  const P(Fill)* f = p;
  const size_t rows = f->rows;
  const T inv = (T)1 / (T)f->n;
  for (size_t j = lo; j < hi; ++j) {
    T* c = f->a + j * rows;
    switch (f->kind) {
      case kUniform:
        for (size_t i = 0; i < rows; ++i) c[i] = hash_uniform(i + j * rows, f->seed);
        break;
      case kSpd:  // element (i, j) from the pair's lower index: symmetric
        for (size_t i = 0; i < rows; ++i)
          c[i] = i == j ? (T)(f->n + 1) : hash_uniform(i < j ? i + j * rows : j + i * rows, f->seed);
        break;
      case kLowerTri:
        for (size_t i = 0; i < rows; ++i)
          c[i] = i < j ? (T)0 : i == j ? (T)2 : hash_uniform(i + j * rows, f->seed) * inv;
        break;
      case kLuPacked:
        for (size_t i = 0; i < rows; ++i) c[i] = i == j ? (T)2 : hash_uniform(i + j * rows, f->seed) * inv;
        break;
      default:
        memset(c, 0, rows * sizeof(T));
        break;
    }
  }
}

// A rows x cols column-major matrix of the kind (n: the order the kinds scale by), one block of columns a thread.
static void P(fill_par)(T* a, size_t rows, size_t cols, int n, int kind, uint64_t seed) {
  P(Fill) f = {a, rows, kind, n, seed};
  par_for(cols, P(fill_cols), &f);
}

// The operands of a program as they are before its first call: all of them (all), else those its calls overwrite.
static void P(inputs)(const Program* g, T* A, T* B, T* C, int* ipiv, int all) {
  const int n = g->n, op = g->op;
  if (all || overwrites_a(op)) P(fill_par)(A, (size_t)n, (size_t)n, n, a_kind(op), a_seed(op));
  if (B && (all || overwrites_b(op))) P(fill_par)(B, (size_t)n, b_cols(g), n, kUniform, b_seed(op));
  if (C && all) P(fill_par)(C, (size_t)n, c_cols(g), n, kZero, 0);
  if (all && op == kGetrs)  // every third row swapped with the next: a valid pivot sequence
    for (int i = 0; i < n; ++i) ipiv[i] = i + 1 + (i % 3 == 0 && i + 1 < n);
}

// One call of the program's routine; LAPACK's info.
static int P(call)(const Program* g, T* A, T* B, T* C, int* ipiv) {
  const int n = g->n, nrhs = g->nrhs, one = 1;
  const T f1 = 1, f0 = 0;
  int info = 0;
  switch (g->op) {
    case kGemm:
      P(gemm_)("N", "N", &n, &n, &n, &f1, A, &n, B, &n, &f0, C, &n, 1, 1);
      break;
    case kGemv:
      P(gemv_)("N", &n, &n, &f1, A, &n, B, &one, &f0, C, &one, 1);
      break;
    case kTrsm:
      P(trsm_)("L", "L", "N", "N", &n, &n, &f1, A, &n, B, &n, 1, 1, 1, 1);
      break;
    case kSyrk:
      P(syrk_)("L", "N", &n, &n, &f1, A, &n, &f0, C, &n, 1, 1);
      break;
    case kGetrf:
      P(getrf_)(&n, &n, A, &n, ipiv, &info);
      break;
    case kGesv:
      P(gesv_)(&n, &nrhs, A, &n, ipiv, B, &n, &info);
      break;
    case kPotrf:
      P(potrf_)("L", &n, A, &n, &info, 1);
      break;
    case kPotrs:
      P(potrs_)("L", &n, &nrhs, A, &n, B, &n, &info, 1);
      break;
    case kGetrs:
      P(getrs_)("N", &n, &nrhs, A, &n, ipiv, B, &n, &info, 1);
      break;
  }
  return info;
}

// ---- The checks ----

typedef struct {
  const T* m;
  size_t rows, cols;
  int shape;
  const double* x;
  double *y, *mag;
} P(Mv);

// The rows of column j that the shape reads, [*a, *b).
static void P(shape_rows)(int shape, size_t j, size_t rows, size_t* a, size_t* b) {
  *a = shape == kLower ? j : shape == kUnitLower ? j + 1 : 0;
  *b = shape == kUpper && j + 1 < rows ? j + 1 : rows;
}

// y = M x and mag = |M| |x| over a block of rows (each thread its own rows; a column's rows are contiguous).
static void P(mv_rows)(void* p, size_t lo, size_t hi) {
  const P(Mv)* v = p;
  for (size_t i = lo; i < hi; ++i) v->y[i] = v->mag[i] = 0;
  for (size_t j = 0; j < v->cols; ++j) {
    size_t a, b;
    P(shape_rows)(v->shape, j, v->rows, &a, &b);
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    const double xj = v->x[j], ax = fabs(xj);
    const T* c = v->m + j * v->rows;
    for (size_t i = a; i < b; ++i) {
      const double e = c[i];
      v->y[i] += e * xj;
      v->mag[i] += fabs(e) * ax;
    }
  }
  if (v->shape == kUnitLower)
    for (size_t i = lo; i < hi && i < v->cols; ++i) v->y[i] += v->x[i], v->mag[i] += fabs(v->x[i]);
}

// y = M^T x and mag = |M^T| |x| over a block of columns.
static void P(mv_cols)(void* p, size_t lo, size_t hi) {
  const P(Mv)* v = p;
  for (size_t j = lo; j < hi; ++j) {
    size_t a, b;
    P(shape_rows)(v->shape, j, v->rows, &a, &b);
    const T* c = v->m + j * v->rows;
    double s = v->shape == kUnitLower ? v->x[j] : 0, m = fabs(s);
    for (size_t i = a; i < b; ++i) {
      s += c[i] * v->x[i];
      m += fabs((double)c[i] * v->x[i]);
    }
    v->y[j] = s, v->mag[j] = m;
  }
}

// y = op(M) x and mag = |op(M)| |x| for the part of the rows x cols matrix M that shape names, on several threads.
static void P(mv)(const T* m, size_t rows, size_t cols, int shape, int trans, const double* x, double* y, double* mag) {
  P(Mv) v = {m, rows, cols, shape, x, y, mag};
  par_for(trans ? cols : rows, trans ? P(mv_cols) : P(mv_rows), &v);
}

// The last call's result against the inputs, made again where the calls overwrote them: for a vector x (one of n,
// or of nrhs for a solve's X), the product the routine computed applied to x, against the same product of the
// inputs, normwise over (|factors| |x|) n eps. A wrong answer gives a ratio near 1 / (n eps); a right one about 1.
static double P(check)(const Program* g, const T* A, const T* B, const T* C, const int* ipiv, const char** what) {
  const int n = g->n, op = g->op;
  const size_t un = (size_t)n, len = un > (size_t)g->nrhs ? un : (size_t)g->nrhs;
  double* w = calloc(11 * len, sizeof(double));
  // Scratch for the inputs made again: A0 (the factorizations, gesv) or B0 (trsm, the solves).
  const size_t cols = overwrites_a(op) && un > b_cols(g) ? un : b_cols(g);
  T* s = xmalloc(un * cols * sizeof(T));
  if (!w || !s) {
    free(w), free(s);
    *what = "no memory to check";
    return NAN;
  }
  double *x = w, *u = w + len, *m1 = w + 2 * len, *v = w + 3 * len, *mag = w + 4 * len, *ref = w + 5 * len;
  double *t1 = w + 6 * len, *t2 = w + 7 * len, *p = w + 8 * len, *pm = w + 9 * len, *xs = w + 10 * len;
  for (size_t i = 0; i < len; ++i) x[i] = hash_uniform(i, 77), xs[i] = hash_uniform(i, 78);
  const int solve = op == kGesv || op == kPotrs || op == kGetrs;
  if (solve) {  // u = X xs, m1 = |X| |xs|, ref = B0 xs
    P(mv)(B, un, b_cols(g), kFull, 0, xs, u, m1);
    P(fill_par)(s, un, b_cols(g), n, kUniform, b_seed(op));
    P(mv)(s, un, b_cols(g), kFull, 0, xs, ref, t2);
  }
  double ratio = NAN;
  switch (op) {
    case kGemm:  // C x against A (B x)
      P(mv)(B, un, un, kFull, 0, x, u, m1);
      P(mv)(A, un, un, kFull, 0, u, v, t1);
      P(mv)(A, un, un, kFull, 0, m1, t1, mag);
      P(mv)(C, un, un, kFull, 0, x, ref, t2);
      *what = "C x vs A (B x)";
      break;
    case kGemv:  // y against A x in double
      for (int i = 0; i < n; ++i) u[i] = B[i], ref[i] = C[i];
      P(mv)(A, un, un, kFull, 0, u, v, mag);
      *what = "y vs A x";
      break;
    case kTrsm:  // A (X x) against B0 x
      P(mv)(B, un, un, kFull, 0, x, u, m1);
      P(mv)(A, un, un, kLower, 0, u, v, t1);
      P(mv)(A, un, un, kLower, 0, m1, t1, mag);
      P(fill_par)(s, un, un, n, kUniform, b_seed(op));
      P(mv)(s, un, un, kFull, 0, x, ref, t2);
      *what = "A (X x) vs B0 x";
      break;
    case kSyrk:  // C x (C symmetric, its lower triangle) against A (A^T x)
      P(mv)(A, un, un, kFull, 1, x, u, m1);
      P(mv)(A, un, un, kFull, 0, u, v, t1);
      P(mv)(A, un, un, kFull, 0, m1, t1, mag);
      P(mv)(C, un, un, kLower, 0, x, ref, t2);
      P(mv)(C, un, un, kUnitLower, 1, x, p, pm);  // strict lower^T x, plus x
      for (int i = 0; i < n; ++i) ref[i] += p[i] - x[i];
      *what = "C x vs A (A^T x)";
      break;
    case kGetrf:  // P (L (U x)) against A0 x
      for (int i = 0; i < n; ++i)
        if (ipiv[i] < i + 1 || ipiv[i] > n) {
          *what = "pivot out of range";
          free(w), free(s);
          return NAN;
        }
      P(mv)(A, un, un, kUpper, 0, x, u, m1);
      P(mv)(A, un, un, kUnitLower, 0, u, v, t1);
      P(mv)(A, un, un, kUnitLower, 0, m1, t1, mag);
      unpivot(ipiv, n, v, mag);
      P(fill_par)(s, un, un, n, a_kind(op), a_seed(op));
      P(mv)(s, un, un, kFull, 0, x, ref, t2);
      *what = "P L U x vs A0 x";
      break;
    case kPotrf:  // L (L^T x) against A0 x
      P(mv)(A, un, un, kLower, 1, x, u, m1);
      P(mv)(A, un, un, kLower, 0, u, v, t1);
      P(mv)(A, un, un, kLower, 0, m1, t1, mag);
      P(fill_par)(s, un, un, n, a_kind(op), a_seed(op));
      P(mv)(s, un, un, kFull, 0, x, ref, t2);
      *what = "L L^T x vs A0 x";
      break;
    case kGesv:  // A0 (X xs) against B0 xs (ref made above; s now holds A0)
      P(fill_par)(s, un, un, n, a_kind(op), a_seed(op));
      P(mv)(s, un, un, kFull, 0, u, v, t1);
      P(mv)(s, un, un, kFull, 0, m1, t1, mag);
      *what = "A0 (X x) vs B0 x";
      break;
    case kPotrs:  // L (L^T (X xs)) against B0 xs
    case kGetrs:  // P (L (U (X xs))) against B0 xs
    {
      const int lu = op == kGetrs;
      P(mv)(A, un, un, lu ? kUpper : kLower, lu ? 0 : 1, u, p, t1);
      P(mv)(A, un, un, lu ? kUpper : kLower, lu ? 0 : 1, m1, t1, pm);
      P(mv)(A, un, un, lu ? kUnitLower : kLower, 0, p, v, t1);
      P(mv)(A, un, un, lu ? kUnitLower : kLower, 0, pm, t1, mag);
      if (lu) unpivot(ipiv, n, v, mag);
      *what = lu ? "P L U (X x) vs B0 x" : "L L^T (X x) vs B0 x";
      break;
    }
  }
  if (op == kGemv)
    ratio = resid_ratio(ref, v, mag, n, n, EPS);
  else
    ratio = resid_ratio(v, ref, mag, n, n, EPS);
  free(w), free(s);
  return ratio;
}

// ---- One program ----

// Makes the inputs, runs the calls (inputs they overwrite made again before each next call, untimed), checks the last.
static void P(program)(const Program* g, Result* r) {
  const size_t un = (size_t)g->n;
  double t0 = now_s();
  T* A = xmalloc(un * un * sizeof(T));
  T* B = b_cols(g) ? xmalloc(un * b_cols(g) * sizeof(T)) : NULL;
  T* C = c_cols(g) ? xmalloc(un * c_cols(g) * sizeof(T)) : NULL;
  int* ipiv = malloc(un * sizeof(int));
  if (!A || (b_cols(g) && !B) || (c_cols(g) && !C) || !ipiv) {
    r->skipped = "out of host memory";
    free(A), free(B), free(C), free(ipiv);
    return;
  }
  P(inputs)(g, A, B, C, ipiv, 1);
  r->gen_s = now_s() - t0;
  for (int k = 0; k < g->calls; ++k) {
    if (k > 0 && (overwrites_a(g->op) || overwrites_b(g->op))) {
      t0 = now_s();
      P(inputs)(g, A, B, C, ipiv, 0);
      r->restore_s += now_s() - t0;
    }
    t0 = now_s();
    const int info = P(call)(g, A, B, C, ipiv);
    r->t[k] = now_s() - t0;
    if (info && !r->info) r->info = info;
  }
  t0 = now_s();
  r->ratio = P(check)(g, A, B, C, ipiv, &r->what);
  r->check_s = now_s() - t0;
  free(A), free(B), free(C), free(ipiv);
}
