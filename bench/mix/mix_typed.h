/* The element-typed half of blasoffload_mix, included once per precision by mix.c (through
 * bench/common/each_precision.h) with T, P(name) and EPS defined: the routines of that precision, their inputs, their
 * O(n^2) checks (in double precision, without BLAS: the stack under test) and one point of each routine. No include
 * guard: it is meant to be included twice. */

#include "../common/typed_routines.h"

static void P(fill)(T* a, size_t count, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) a[i] = hash_uniform(i, seed);
}

// Symmetric with diagonal n + 1: strictly diagonally dominant, hence SPD (the factorizations' and solves' input).
static void P(fill_spd)(T* a, int n) {
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      const size_t lo = i < j ? i : j, hi = i < j ? j : i;
      a[i + j * n] = i == j ? (T)n + 1 : hash_uniform(lo + hi * (size_t)n, 3);
    }
}

// Lower triangular, diagonal 2, off-diagonal uniform / n: well conditioned at every order (trsv, trsm, trtrs).
static void P(fill_tri)(T* a, int n) {
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i)
      a[i + j * n] = i == j ? (T)2 : i > j ? hash_uniform(i + j * (size_t)n, 5) / (T)n : (T)0;
}

// y = op(M) x in double (M m x n, column-major, lower-symmetric when sym: only i >= j read), and |op(M)| |x| into mag.
static void P(matvec)(const T* M, int m, int n, int trans, int sym, const double* x, double* y, double* mag) {
  const int rows = trans ? n : m;
  for (int i = 0; i < rows; ++i) y[i] = mag[i] = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (sym && i < j) continue;
      const double v = M[i + (size_t)j * m];
      const int r = trans ? j : i, c = trans ? i : j;
      y[r] += v * x[c];
      mag[r] += fabs(v * x[c]);
      if (sym && i != j) {
        y[j] += v * x[i];
        mag[j] += fabs(v * x[i]);
      }
    }
}

// max_i |a_i - b_i| / (mag_i + tiny), divided by (k eps): a componentwise error ratio (30 passes).
static double P(ratio)(const double* a, const double* b, const double* mag, int n, double k) {
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double r = fabs(a[i] - b[i]) / ((mag[i] > 0 ? mag[i] : 1e-300) * k * EPS);
    if (!(r <= worst)) worst = r;  // NaN wins
  }
  return worst;
}

// gemm: C x against A (B x) for a vector x (no n^3 reference).
static double P(check_gemm)(const T* A, const T* B, const T* C, int n, double* w) {
  double *x = w, *bx = w + n, *abx = w + 2 * n, *cx = w + 3 * n, *m1 = w + 4 * n, *m2 = w + 5 * n, *m3 = w + 6 * n;
  for (int i = 0; i < n; ++i) x[i] = hash_uniform((uint64_t)i, 77);
  P(matvec)(B, n, n, 0, 0, x, bx, m1);
  P(matvec)(A, n, n, 0, 0, bx, abx, m2);
  P(matvec)(A, n, n, 0, 0, m1, m2, m3);  // m3 = |A| |B| |x|, the error bound's shape (m2: scratch)
  P(matvec)(C, n, n, 0, 0, x, cx, m2);
  return P(ratio)(cx, abx, m3, n, n);
}

// A solve's normwise backward error: ||A x - b||_inf / (||A||_inf ||x||_inf n eps), x and b columns of width n.
static double P(check_solve)(const T* A, int n, int sym, int tri, const T* X, const T* B, double* w) {
  double *x = w, *ax = w + n, *mag = w + 2 * n, worst = 0;
  const int cols = 1;  // the first column (the others are the same computation on other data)
  for (int c = 0; c < cols; ++c) {
    double anorm = 0, xnorm = 0, rnorm = 0;
    for (int i = 0; i < n; ++i) {
      x[i] = X[i + (size_t)c * n];
      xnorm = fmax(xnorm, fabs(x[i]));
    }
    if (tri) {  // lower triangular: only i >= j
      for (int i = 0; i < n; ++i) ax[i] = mag[i] = 0;
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
          ax[i] += A[i + (size_t)j * n] * x[j];
          mag[i] += fabs(A[i + (size_t)j * n]);
        }
    } else {
      P(matvec)(A, n, n, 0, sym, x, ax, mag);
      for (int i = 0; i < n; ++i) mag[i] = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          if (sym && i < j) continue;
          const double v = fabs(A[i + (size_t)j * n]);
          mag[i] += v;
          if (sym && i != j) mag[j] += v;
        }
    }
    for (int i = 0; i < n; ++i) {
      anorm = fmax(anorm, mag[i]);
      const double r = fabs(ax[i] - B[i + (size_t)c * n]);
      if (!(r <= rnorm)) rnorm = r;
    }
    const double q = rnorm / (anorm * xnorm * n * EPS + 1e-300);
    if (!(q <= worst)) worst = q;
  }
  return worst;
}

// One point's buffers: `sets` copies of the operands (rotated past L2 for small ones), each `elems` elements, and
// the saved inputs restored before every call (outside the timing).
typedef struct {
  T* work;
  T* saved;
  size_t elems;
  int sets;
} P(Bufs);

static int P(bufs_init)(P(Bufs) * b, size_t elems) {
  const size_t bytes = elems * sizeof(T);
  b->sets = bytes >= kRotateBytes ? 1 : (int)((kRotateBytes + bytes - 1) / bytes);
  if (b->sets > kMaxSets) b->sets = kMaxSets;
  b->elems = elems;
  b->work = xmalloc(elems * sizeof(T) * (size_t)b->sets);
  b->saved = xmalloc(elems * sizeof(T));
  return b->work && b->saved;
}

static void P(bufs_free)(P(Bufs) * b) {
  free(b->work);
  free(b->saved);
}

static void P(bufs_spread)(P(Bufs) * b) {
  for (int s = 0; s < b->sets; ++s) memcpy(b->work + (size_t)s * b->elems, b->saved, b->elems * sizeof(T));
}

// One call of a point (the routines: mix.c's enum); the inputs live in one set [A | B | C] at fixed offsets.
typedef struct {
  int op, n, nrhs;
  size_t offA, offB, offC, elems;  // offsets of the operands in a set
  const int* ipiv;                 // getrs, getri: the factors' pivots
  T* tau;                          // geqrf's
  T* lwork;                        // geqrf / getri's work
  int nwork;
  int* piv;  // getrf / gesv's output pivots
  T result;  // nrm2's
  int info;
} P(Call);

static void P(do_call)(P(Call) * c, T* set) {
  const int n = c->n, nrhs = c->nrhs, one = 1;
  const T fone = 1, fzero = 0;
  T *A = set + c->offA, *B = set + c->offB, *C = set + c->offC;
  c->info = 0;
  switch (c->op) {
    case kGemm:
      P(gemm_)("N", "N", &n, &n, &n, &fone, A, &n, B, &n, &fzero, C, &n, 1, 1);
      break;
    case kGemv:
      P(gemv_)("N", &n, &n, &fone, A, &n, B, &one, &fzero, C, &one, 1);
      break;
    case kTrsv:
      P(trsv_)("L", "N", "N", &n, A, &n, B, &one, 1, 1, 1);
      break;
    case kNrm2:
      c->result = P(nrm2_)(&n, A, &one);
      break;
    case kTrsm:
      P(trsm_)("L", "L", "N", "N", &n, &n, &fone, A, &n, B, &n, 1, 1, 1, 1);
      break;
    case kSyrk:
      P(syrk_)("L", "N", &n, &n, &fone, A, &n, &fzero, C, &n, 1, 1);
      break;
    case kGetrf:
      P(getrf_)(&n, &n, A, &n, c->piv, &c->info);
      break;
    case kPotrf:
      P(potrf_)("L", &n, A, &n, &c->info, 1);
      break;
    case kGetrs:
      P(getrs_)("N", &n, &nrhs, A, &n, c->ipiv, B, &n, &c->info, 1);
      break;
    case kPotrs:
      P(potrs_)("L", &n, &nrhs, A, &n, B, &n, &c->info, 1);
      break;
    case kTrtrs:
      P(trtrs_)("L", "N", "N", &n, &nrhs, A, &n, B, &n, &c->info, 1, 1, 1);
      break;
    case kGesv:
      P(gesv_)(&n, &nrhs, A, &n, c->piv, B, &n, &c->info);
      break;
    case kPosv:
      P(posv_)("L", &n, &nrhs, A, &n, B, &n, &c->info, 1);
      break;
    case kGeqrf:
      P(geqrf_)(&n, &n, A, &n, c->tau, c->lwork, &c->nwork, &c->info);
      break;
    case kGetri:
      P(getri_)(&n, A, &n, c->ipiv, c->lwork, &c->nwork, &c->info);
      break;
  }
}

// Times one point: a first call, then timed samples until min_time (at least 3; 2 when the first call took over
// 0.5 s; at most kMaxReps), each on the next operand sets. A sample of a call shorter than kBatchS is a batch of
// calls on distinct sets (at most all of them), timed together and divided: two clock reads are not small against a
// call of 100 ns. A routine that overwrites its inputs gets what it wrote in the sets it used restored right after the
// sample (outside the timing, and not just before their next use, which would leave them in cache): from B on where
// it writes only B (trsv, trsm and the solves: their A, the factors, stays untouched as in a program that solves with
// the same factors again; rewriting it made the library's device copy of it look stale at every sample, runs before
// this change), else the whole set. The last sample's are left as they are, for the check. Returns the samples
// (per-call seconds in t); *calls and *all_s: every call and its time. The samples lie between two snapshots of the
// process's threads (g_cpu_before, g_cpu_after: what ran beside them).
static int P(time_point)(P(Call) * c, P(Bufs) * b, double* t, double* first, int* calls, double* all_s) {
  const int inplace = c->op != kGemm && c->op != kGemv && c->op != kSyrk && c->op != kNrm2;
  const int only_b = c->op == kTrsv || c->op == kTrsm || c->op == kGetrs || c->op == kPotrs || c->op == kTrtrs;
  const size_t from = only_b ? c->offB : 0, count = (b->elems - from) * sizeof(T);
  double t0 = now_s();
  P(do_call)(c, b->work);
  *first = now_s() - t0;
  *all_s = *first;
  *calls = 1;
  if (inplace) memcpy(b->work + from, b->saved + from, count);
  if (g_who) cpu_snapshot_others(&g_others_before);
  cpu_snapshot(&g_cpu_before);
  if (g_probe) probe_take(&g_probe_before, 0);
  int reps = 0;
  double spent = 0, per_call = *first;
  for (;;) {
    int batch = per_call > 0 ? (int)(kBatchS / per_call) : b->sets;
    batch = batch < 1 ? 1 : batch > b->sets ? b->sets : batch;
    const int first_set = *calls;
    t0 = now_s();
    for (int k = 0; k < batch; ++k) {
      if (g_vzeroupper) probe_vzeroupper();
      P(do_call)(c, b->work + (size_t)((first_set + k) % b->sets) * b->elems);
    }
    const double dt = now_s() - t0;
    *calls += batch;
    *all_s += dt;
    spent += dt;
    per_call = dt / batch;
    t[reps++] = per_call;
    const int least = *first > 0.5 ? 2 : 3;
    if (reps >= kMaxReps || (reps >= least && spent >= g_min_time)) break;
    if (inplace)
      for (int k = 0; k < batch; ++k)
        memcpy(b->work + (size_t)((first_set + k) % b->sets) * b->elems + from, b->saved + from, count);
  }
  if (g_probe) probe_take(&g_probe_after, 1);
  cpu_snapshot(&g_cpu_after);
  if (g_who) cpu_snapshot_others(&g_others_after);
  return reps;
}

// One point of routine `op` at order n (nrhs for solves; a vector length for nrm2): builds the inputs, the
// reference, times, checks the last call's result (every set holds the same computation) and prints the line.
static void P(point)(int op, int n, int nrhs) {
  const char* names[] = {"gemm",  "gemv",  "trsv",  "nrm2", "trsm", "syrk",  "getrf", "potrf",
                         "getrs", "potrs", "trtrs", "gesv", "posv", "geqrf", "getri"};
  char name[16];
  snprintf(name, sizeof name, "%c%s", g_prec, names[op]);
  const size_t nn = (size_t)n * (size_t)n;
  P(Call) c = {0};
  c.op = op, c.n = n, c.nrhs = nrhs;
  const int solve = op == kGetrs || op == kPotrs || op == kTrtrs || op == kGesv || op == kPosv;
  size_t elems;
  if (op == kNrm2) {
    elems = (size_t)n;
  } else if (op == kGemv || op == kTrsv) {
    c.offB = nn, c.offC = nn + (size_t)n, elems = nn + 2 * (size_t)n;
  } else if (solve) {
    c.offB = nn, elems = nn + (size_t)n * (size_t)nrhs;
  } else {
    c.offB = nn, c.offC = 2 * nn, elems = 3 * nn;
  }
  P(Bufs) b = {0};
  const size_t vn = op == kNrm2 || n < 1 ? 1 : (size_t)n;  // nrm2 needs no work space
  double* w = calloc(8 * vn, sizeof(double));
  c.piv = malloc(sizeof(int) * vn);
  int* ipiv = malloc(sizeof(int) * vn);
  if (!P(bufs_init)(&b, elems) || !w || !c.piv || !ipiv) {
    print_skip(name, n, nrhs, "out of host memory");
    P(bufs_free)(&b), free(w), free(c.piv), free(ipiv);
    return;
  }
  T* in = b.saved;
  T* A = in;
  memset(in, 0, elems * sizeof(T));
  switch (op) {
    case kNrm2:
    case kGemm:
    case kGemv:
    case kSyrk:
      P(fill)(in, c.offC ? c.offC : elems, 11);
      break;
    case kTrsv:
    case kTrsm:
    case kTrtrs:
      P(fill_tri)(A, n), P(fill)(in + nn, elems - nn, 13);
      break;
    case kPotrf:
    case kPotrs:
    case kPosv:
      P(fill_spd)(A, n), P(fill)(in + nn, elems - nn, 13);
      break;
    default:
      P(fill)(A, nn, 17), P(fill)(in + nn, elems - nn, 13);
      break;  // getrf, getrs, gesv, geqrf, getri
  }
  if (op == kGemv) P(fill)(in + nn, (size_t)n, 19);  // x (y = C part stays 0)
  // The solves on factors (and getri): factored once, untimed, in the saved set; the check rebuilds the original A.
  int finfo = 0;
  if (op == kGetrs || op == kGetri) P(getrf_)(&n, &n, A, &n, ipiv, &finfo);
  if (op == kPotrs) P(potrf_)("L", &n, A, &n, &finfo, 1);
  c.ipiv = ipiv;
  if (op == kGeqrf || op == kGetri) {
    T q = 0;
    int m1 = -1;
    c.nwork = -1;
    c.tau = malloc(sizeof(T) * (size_t)n);
    if (op == kGeqrf)
      P(geqrf_)(&n, &n, A, &n, c.tau, &q, &m1, &c.info);
    else
      P(getri_)(&n, A, &n, ipiv, &q, &m1, &c.info);
    c.nwork = (int)q > n ? (int)q : n;
    c.lwork = malloc(sizeof(T) * (size_t)c.nwork);
  }
  P(bufs_spread)(&b);
  double* t = malloc(sizeof(double) * kMaxReps);
  double first = 0;
  int calls = 0;
  double all_s = 0;
  const int reps = P(time_point)(&c, &b, t, &first, &calls, &all_s);
  const T* out = b.work + (size_t)((calls - 1) % b.sets) * b.elems;  // the last call's set
  // The check, against the untouched input (b.saved, which getrs / potrs / getri hold factored: A0 rebuilt).
  T* a0 = NULL;
  if (op == kGetrs || op == kPotrs || op == kGetri || op == kGetrf || op == kPotrf || op == kGesv || op == kPosv ||
      op == kGeqrf) {
    a0 = xmalloc(nn * sizeof(T));
    if (op == kPotrf || op == kPotrs || op == kPosv)
      P(fill_spd)(a0, n);
    else
      P(fill)(a0, nn, 17);
  }
  double ratio = 0;
  const char* what = "";
  switch (op) {
    case kGemm:
      ratio = P(check_gemm)(out, out + nn, out + 2 * nn, n, w), what = "Cx vs A(Bx)/(|A||B||x| n eps)";
      break;
    case kGemv: {
      for (int i = 0; i < n; ++i) w[i] = out[nn + i];
      P(matvec)(out, n, n, 0, 0, w, w + n, w + 2 * n);
      for (int i = 0; i < n; ++i) w[3 * n + i] = out[nn + n + i];
      ratio = P(ratio)(w + 3 * n, w + n, w + 2 * n, n, n), what = "y vs Ax in double/(|A||x| n eps)";
      break;
    }
    case kNrm2: {
      double s = 0, scale = 0;
      for (int i = 0; i < n; ++i) scale = fmax(scale, fabs((double)in[i]));
      for (int i = 0; i < n; ++i) s += (in[i] / scale) * (in[i] / scale);
      const double ref = scale * sqrt(s);
      ratio = fabs(c.result - ref) / (ref * sqrt((double)n) * EPS), what = "|nrm2 - ref|/(ref sqrt(n) eps)";
      break;
    }
    case kTrsv:
      ratio = P(check_solve)(in, n, 0, 1, out + nn, in + nn, w), what = "normwise backward error";
      break;
    case kTrsm:
    case kTrtrs:
      ratio = P(check_solve)(in, n, 0, 1, out + nn, in + nn, w), what = "column 1 backward error";
      break;
    case kSyrk: {  // C y against A (A^T y), C lower
      double *y = w, *aty = w + n, *aaty = w + 2 * n, *cy = w + 3 * n, *m1 = w + 4 * n, *m2 = w + 5 * n,
             *m3 = w + 6 * n;
      for (int i = 0; i < n; ++i) y[i] = hash_uniform((uint64_t)i, 78);
      P(matvec)(out, n, n, 1, 0, y, aty, m1);
      P(matvec)(out, n, n, 0, 0, aty, aaty, m2);
      P(matvec)(out, n, n, 0, 0, m1, m2, m3);  // m3 = |A| |A^T| |y| (m2: scratch)
      P(matvec)(out + 2 * nn, n, n, 0, 1, y, cy, m2);
      ratio = P(ratio)(cy, aaty, m3, n, n), what = "Cy vs A(A^T y)/(|A||A^T||y| n eps)";
      break;
    }
    case kGetrf:
    case kPotrf: {  // solve with the factors in double, no BLAS: A0 x = b for b = A0 * ones
      double *x = w, *y = w + n;
      const T* f = out;
      for (int i = 0; i < n; ++i) x[i] = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) x[i] += a0[i + (size_t)j * n];  // b = A0 1
      if (op == kGetrf) {
        for (int i = 0; i < n; ++i) {  // the row swaps, in order
          const int p = c.piv[i] - 1;
          if (p < i || p >= n) {
            ratio = NAN;
            break;
          }
          const double s = x[i];
          x[i] = x[p];
          x[p] = s;
        }
        for (int j = 0; j < n; ++j)  // L y = P b (unit lower), column oriented
          for (int i = j + 1; i < n; ++i) x[i] -= f[i + (size_t)j * n] * x[j];
        for (int j = n - 1; j >= 0; --j) {  // U x = y
          x[j] /= f[j + (size_t)j * n];
          for (int i = 0; i < j; ++i) x[i] -= f[i + (size_t)j * n] * x[j];
        }
      } else {
        for (int j = 0; j < n; ++j) {  // L y = b
          x[j] /= f[j + (size_t)j * n];
          for (int i = j + 1; i < n; ++i) x[i] -= f[i + (size_t)j * n] * x[j];
        }
        for (int i = n - 1; i >= 0; --i) {  // L^T x = y
          for (int k = i + 1; k < n; ++k) x[i] -= f[k + (size_t)i * n] * x[k];
          x[i] /= f[i + (size_t)i * n];
        }
      }
      // x should be ones: the backward error of that solve (A0 x - b over ||A0|| ||x||).
      T* xt = xmalloc(sizeof(T) * (size_t)n);
      T* bt = xmalloc(sizeof(T) * (size_t)n);
      for (int i = 0; i < n; ++i) xt[i] = (T)x[i];
      for (int i = 0; i < n; ++i) y[i] = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) y[i] += a0[i + (size_t)j * n];
      for (int i = 0; i < n; ++i) bt[i] = (T)y[i];
      if (ratio == 0) ratio = P(check_solve)(a0, n, 0, 0, xt, bt, w + 2 * n);
      free(xt), free(bt);
      what = "backward error of a solve with the factors";
      break;
    }
    case kGetrs:
    case kPotrs:
    case kGesv:
    case kPosv:
      ratio = P(check_solve)(a0, n, 0, 0, out + nn, in + nn, w), what = "column 1 backward error against A0";
      break;
    case kGeqrf: {  // |R e_j| = |A0 e_j| (Q orthogonal), relative, over n eps
      for (int j = 0; j < n; ++j) {
        double r = 0, a = 0;
        for (int i = 0; i <= j; ++i) r += (double)out[i + (size_t)j * n] * out[i + (size_t)j * n];
        for (int i = 0; i < n; ++i) a += (double)a0[i + (size_t)j * n] * a0[i + (size_t)j * n];
        const double q = fabs(sqrt(r) - sqrt(a)) / (sqrt(a) * n * EPS);
        if (!(q <= ratio)) ratio = q;
      }
      what = "column norms of R vs A0/(n eps)";
      break;
    }
    case kGetri: {  // A0 (X e) = e for e = ones
      double *e = w, *xe = w + n;
      for (int i = 0; i < n; ++i) xe[i] = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) xe[i] += out[i + (size_t)j * n];
      T* xt = xmalloc(sizeof(T) * (size_t)n);
      T* bt = xmalloc(sizeof(T) * (size_t)n);
      for (int i = 0; i < n; ++i) xt[i] = (T)xe[i], bt[i] = 1, e[i] = 1;
      ratio = P(check_solve)(a0, n, 0, 0, xt, bt, w + 2 * n);
      free(xt), free(bt);
      what = "A0 (X 1) vs 1, backward error";
      break;
    }
  }
  print_point(name, n, nrhs, t, reps, first, calls, all_s, c.info ? c.info : finfo, ratio, what, b.sets);
  free(a0), free(t), free(c.tau), free(c.lwork);
  P(bufs_free)(&b), free(w), free(c.piv), free(ipiv);
}
