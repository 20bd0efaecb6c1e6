// The element-typed helpers of lapack2_check.c (prototypes, poisoned arrays, test matrices, norms, reflectors,
// orthogonality), included once per precision with T, P(name), F(name) (the Fortran symbol), PNAME, PUPPER, EPS
// (LAPACK's eps, xLAMCH('E')), ULP (xLAMCH('P') = 2 eps) and DIGITS defined.

// ---- the Fortran symbols (gfortran passes each CHARACTER argument's length last, as size_t) ----------------------

void F(geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);
void F(orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work, const int* lwork,
              int* info);
void F(ormqr)(const char* side, const char* trans, const int* m, const int* n, const int* k, T* a, const int* lda,
              const T* tau, T* c, const int* ldc, T* work, const int* lwork, int* info, size_t, size_t);
void F(gels)(const char* trans, const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb,
             T* work, const int* lwork, int* info, size_t);
void F(getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
void F(getri)(const int* n, T* a, const int* lda, const int* ipiv, T* work, const int* lwork, int* info);
void F(potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);
void F(potri)(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);
void F(gelsd)(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, T* s,
              const T* rcond, int* rank, T* work, const int* lwork, int* iwork, int* info);
void F(geqp3)(const int* m, const int* n, T* a, const int* lda, int* jpvt, T* tau, T* work, const int* lwork,
              int* info);
void F(syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work, const int* lwork,
              int* iwork, const int* liwork, int* info, size_t, size_t);
void F(syev)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work, const int* lwork,
             int* info, size_t, size_t);
void F(syevr)(const char* jobz, const char* range, const char* uplo, const int* n, T* a, const int* lda, const T* vl,
              const T* vu, const int* il, const int* iu, const T* abstol, int* m, T* w, T* z, const int* ldz,
              int* isuppz, T* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t, size_t);
void F(gesvd)(const char* jobu, const char* jobvt, const int* m, const int* n, T* a, const int* lda, T* s, T* u,
              const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* info, size_t, size_t);
void F(gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, const int* ldu, T* vt,
              const int* ldvt, T* work, const int* lwork, int* iwork, int* info, size_t);
void F(geev)(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* wr, T* wi, T* vl,
             const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, int* info, size_t, size_t);

// ---- arrays: NaN everywhere, then the referenced part filled ----------------------------------------------------

static T* P(alloc_nan)(int ld, int cols) {
  size_t count = (size_t)imax(ld, 1) * (size_t)imax(cols, 1);
  T* a = xmalloc(count * sizeof(T));
  for (size_t i = 0; i < count; i++) a[i] = (T)NAN;
  return a;
}

static T* P(copy)(const T* a, int ld, int cols) {
  size_t bytes = (size_t)imax(ld, 1) * (size_t)imax(cols, 1) * sizeof(T);
  T* c = xmalloc(bytes);
  memcpy(c, a, bytes);
  return c;
}

static T* P(general)(int m, int n, int ld) {
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) a[i + (size_t)j * ld] = (T)rng_uniform();
  return a;
}

// The m x n matrix d (ld m) rounded into an array with leading dimension ld, NaN around it.
static T* P(from_long)(const long double* d, int m, int n, int ld) {
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) a[i + (size_t)j * ld] = (T)d[i + (size_t)j * m];
  return a;
}

// A random m x n matrix with singular values s (min(m, n) of them): L diag(s) R^T.
static T* P(with_sv)(int m, int n, int ld, const long double* s, Reflectors* left, Reflectors* right) {
  long double* d = with_singular_values(m, n, s, left, right);
  T* a = P(from_long)(d, m, n, ld);
  free(d);
  return a;
}

// Symmetric Q diag(w) Q^T with Q random orthogonal; only the uplo triangle is stored, the other one is NaN.
static T* P(sym_with_eigs)(char uplo, int n, int ld, const long double* w) {
  Reflectors q = reflectors_new(n);
  long double* d = calloc((size_t)imax(n, 1) * imax(n, 1), sizeof(long double));
  if (!d) exit(2);
  for (int i = 0; i < n; i++) d[i + (size_t)i * n] = w[i];
  for (int j = 0; j < n; j++) reflectors_apply(&q, d + (size_t)j * n, 1, 0);
  for (int i = 0; i < n; i++) reflectors_apply(&q, d + i, (size_t)n, 0);
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++) {
    for (int i = uplo == 'U' ? 0 : j; i <= (uplo == 'U' ? j : n - 1); i++) {
      a[i + (size_t)j * ld] = (T)(0.5L * (d[i + (size_t)j * n] + d[j + (size_t)i * n]));
    }
  }
  free(d);
  reflectors_free(&q);
  return a;
}

// Random symmetric, entries in [-1, 1), only the uplo triangle stored; the same matrix for either uplo.
static T* P(sym_random)(char uplo, int n, int ld) {
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i <= j; i++) {
      T v = (T)rng_uniform();
      a[uplo == 'U' ? i + (size_t)j * ld : j + (size_t)i * ld] = v;
    }
  return a;
}

// ---- what must not change: bitwise ------------------------------------------------------------------------------

// How many elements of the ld x cols array differ bitwise outside the block [0, wm) x [0, wn) that the routine may
// write, and, with keep_tri 'U' or 'L', inside the block's strict upper or lower triangle too.
static long P(changed)(const T* before, const T* after, int ld, int cols, int wm, int wn, char keep_tri) {
  long count = 0;
  for (int j = 0; j < imax(cols, 1); j++) {
    for (int i = 0; i < imax(ld, 1); i++) {
      int keep = i >= wm || j >= wn || (keep_tri == 'U' && i < j) || (keep_tri == 'L' && i > j);
      size_t at = i + (size_t)j * imax(ld, 1);
      if (keep && memcmp(&before[at], &after[at], sizeof(T)) != 0) count++;
    }
  }
  return count;
}

// ---- norms and conversions (long double) ------------------------------------------------------------------------

static long double P(norm1)(int m, int n, const T* a, int lda) {
  long double worst = 0;
  for (int j = 0; j < n; j++) {
    long double s = 0;
    for (int i = 0; i < m; i++) s += fabsl((long double)a[i + (size_t)j * lda]);
    if (!(s <= worst)) worst = s;
  }
  return worst;
}

static long double P(normi)(int m, int n, const T* a, int lda) {
  long double* rs = calloc((size_t)imax(m, 1), sizeof(long double));
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) rs[i] += fabsl((long double)a[i + (size_t)j * lda]);
  long double worst = 0;
  for (int i = 0; i < m; i++)
    if (!(rs[i] <= worst)) worst = rs[i];
  free(rs);
  return worst;
}

// The m x n matrix (or its transpose, n x m, when trans) as doubles with leading dimension = its row count.
static double* P(to_double)(int m, int n, const T* a, int lda, int trans) {
  double* d = xmalloc((size_t)imax(m, 1) * imax(n, 1) * sizeof(double));
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double v = a[i + (size_t)j * lda];
      if (trans) {
        d[j + (size_t)i * n] = v;
      } else {
        d[i + (size_t)j * m] = v;
      }
    }
  return d;
}

// The full n x n symmetric matrix from its uplo triangle, as doubles (ld n).
static double* P(sym_full)(char uplo, int n, const T* a, int lda) {
  double* d = xmalloc((size_t)imax(n, 1) * imax(n, 1) * sizeof(double));
  for (int j = 0; j < n; j++)
    for (int i = uplo == 'U' ? 0 : j; i <= (uplo == 'U' ? j : n - 1); i++) {
      d[i + (size_t)j * n] = d[j + (size_t)i * n] = a[i + (size_t)j * lda];
    }
  return d;
}

// ||I - Q^T Q||_1 / (max(rows, cols) unit) for the double matrix q (rows x cols) over sampled columns (LAPACK's
// xORT01); *checked tells how many.
static long double P(orth_ratio)(int rows, int cols, const double* q, long double unit, int* checked) {
  if (cols == 0) return *checked = 0, 0.0L;
  int* pick = xmalloc((size_t)cols * sizeof(int));
  int count = pick_columns(cols, (double)rows * cols, pick);
  double* g = xmalloc((size_t)cols * count * sizeof(double));
  double* qc = gather_columns(q, rows, pick, count);
  for (int c = 0; c < count; c++)
    for (int i = 0; i < cols; i++) g[i + (size_t)c * cols] = i == pick[c] ? 1.0 : 0.0;
  long double r = gemm_resid('T', cols, count, rows, q, imax(rows, 1), qc, imax(rows, 1), g, cols);
  free(pick), free(g), free(qc);
  *checked = count;
  return r / (imax(rows, cols) * unit);
}

// ---- LAPACK's elementary reflectors (the output of ?geqrf and ?geqp3) -------------------------------------------

// x (m x nx, long double, ld m) = Q x (trans 'N') or Q^T x (trans 'T'), Q = H_0 ... H_{k-1}, H_i = I - tau_i v v^T
// with v = (0 ... 0, 1, f(i+1:m, i)).
static void P(apply_q)(char trans, int m, int k, const T* f, int ldf, const T* tau, long double* x, int nx) {
  for (int t = 0; t < k; t++) {
    int i = trans == 'N' ? k - 1 - t : t;
    long double ti = tau[i];
    if (ti == 0) continue;
    const T* v = f + (size_t)i * ldf;
    for (int c = 0; c < nx; c++) {
      long double* xc = x + (size_t)c * m;
      long double d = xc[i];
      for (int r = i + 1; r < m; r++) d += (long double)v[r] * xc[r];
      d *= ti;
      xc[i] -= d;
      for (int r = i + 1; r < m; r++) xc[r] -= d * v[r];
    }
  }
}

// How far each H_i is from orthogonal: sum of 2 |tau_i v^T v - 2| (an upper bound of ||I - Q^T Q||_2) over (m eps).
static long double P(reflector_orth)(int m, int k, const T* f, int ldf, const T* tau) {
  long double sum = 0;
  for (int i = 0; i < k; i++) {
    long double t = tau[i];
    if (t == 0) continue;
    long double vv = 1;
    for (int r = i + 1; r < m; r++) vv += (long double)f[r + (size_t)i * ldf] * f[r + (size_t)i * ldf];
    sum += 2 * fabsl(t * vv - 2);
  }
  return sum / (imax(m, 1) * EPS);
}

// ||A0 P - Q R||_1 / (||A0||_1 max(m, n) eps) over sampled columns (LAPACK's xQRT01 / xQPT01), R the upper trapezoid
// of f (k = min(m, n) rows), P the column permutation jpvt (1-based; NULL for none).
static long double P(qr_resid)(int m, int n, const T* a0, int lda0, const T* f, int ldf, const T* tau, const int* jpvt,
                               int* checked) {
  int k = imin(m, n);
  if (m == 0 || n == 0) return *checked = 0, 0.0L;
  int* cols = xmalloc((size_t)n * sizeof(int));
  int count = pick_columns(n, 4.0 * m * k, cols);
  long double* x = xmalloc((size_t)m * count * sizeof(long double));
  for (int c = 0; c < count; c++) {
    int j = cols[c];
    for (int i = 0; i < m; i++) x[i + (size_t)c * m] = i <= j && i < k ? (long double)f[i + (size_t)j * ldf] : 0.0L;
  }
  P(apply_q)('N', m, k, f, ldf, tau, x, count);
  long double anorm = P(norm1)(m, n, a0, lda0), worst = 0;
  for (int c = 0; c < count; c++) {
    int j = jpvt ? jpvt[cols[c]] - 1 : cols[c];
    long double s = 0;
    if (j < 0 || j >= n) {
      s = INFINITY;
    } else {
      for (int i = 0; i < m; i++) s += fabsl(x[i + (size_t)c * m] - (long double)a0[i + (size_t)j * lda0]);
    }
    if (!(s <= worst)) worst = s;
  }
  free(cols), free(x);
  *checked = count;
  return worst / ((anorm > 0 ? anorm : 1) * imax(m, n) * EPS);
}

// ---- workspace --------------------------------------------------------------------------------------------------

static int P(lwork_from)(T w) { return (int)w; }

static T* P(work_nan)(int lwork) { return P(alloc_nan)(imax(lwork, 1), 1); }
