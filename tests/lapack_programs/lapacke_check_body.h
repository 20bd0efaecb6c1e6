// The element-typed half of lapacke_check.c, included once per precision with T (float or double), P(name) (the
// precision's function name), LAPACKE(name) (LAPACKE_s/d##name), PNAME ("s"/"d") and EPS (LAPACK's eps) defined.

// ---- matrices: NaN everywhere, then the referenced part filled -------------------------------------------------

static T* P(alloc_nan)(int ld, int cols) {
  size_t count = (size_t)ld * (size_t)(cols > 0 ? cols : 1);
  T* a = malloc(count * sizeof(T));
  if (!a) {
    fprintf(stderr, "lapacke_check: out of memory (%zu elements)\n", count);
    exit(2);
  }
  for (size_t i = 0; i < count; i++) a[i] = (T)NAN;
  return a;
}

static T* P(copy)(const T* a, int ld, int cols) {
  T* c = malloc((size_t)ld * cols * sizeof(T));
  if (!c) exit(2);
  memcpy(c, a, (size_t)ld * cols * sizeof(T));
  return c;
}

static T* P(general)(int m, int n, int ld) {
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) a[i + (size_t)j * ld] = (T)rng_uniform();
  return a;
}

// Symmetric positive definite by diagonal dominance (diagonal n + u > sum of |off-diagonal| < n), built in O(n^2) so
// that large sizes stay cheap; only the uplo triangle is stored, the other one is NaN.
static T* P(spd)(char uplo, int n, int ld) {
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++) {
    int lo = uplo == 'U' ? 0 : j, hi = uplo == 'U' ? j : n - 1;
    for (int i = lo; i <= hi; i++) a[i + (size_t)j * ld] = (T)(i == j ? n + rng_uniform() : rng_uniform());
  }
  return a;
}

// Well-conditioned triangular: off-diagonal entries in (-1/n, 1/n), diagonal of magnitude in [1, 2) with random
// sign (diag = 'N') or NaN (diag = 'U': LAPACK must not read it). The other triangle is NaN.
static T* P(triangular)(char uplo, char diag, int n, int ld) {
  T* a = P(alloc_nan)(ld, n);
  for (int j = 0; j < n; j++) {
    int lo = uplo == 'U' ? 0 : j, hi = uplo == 'U' ? j : n - 1;
    for (int i = lo; i <= hi; i++) {
      double u = rng_uniform();
      if (i != j) {
        a[i + (size_t)j * ld] = (T)(u / n);
      } else if (diag == 'N') {
        a[i + (size_t)j * ld] = (T)(u < 0 ? u - 1.0 : u + 1.0);
      }
    }
  }
  return a;
}

// ---- op(A) x and ||op(A)||_1 in long double, reading only what LAPACK references --------------------------------

// Visits the referenced entries of A (n x n) column by column: rows [lo, hi] of column j.
static void P(rows)(Op op, int n, int j, int* lo, int* hi) {
  if (op.kind == KIND_GE) {
    *lo = 0, *hi = n - 1;
  } else if (op.uplo == 'U') {
    *lo = 0, *hi = j;
  } else {
    *lo = j, *hi = n - 1;
  }
}

static long double P(entry)(Op op, const T* a, int lda, int i, int j) {
  if (op.kind == KIND_TR && op.diag == 'U' && i == j) return 1.0L;
  return a[i + (size_t)j * lda];
}

// y = op(A) x (y has n entries, zeroed here).
static void P(apply)(Op op, int n, const T* a, int lda, const T* x, long double* y) {
  for (int i = 0; i < n; i++) y[i] = 0;
  for (int j = 0; j < n; j++) {
    int lo, hi;
    P(rows)(op, n, j, &lo, &hi);
    for (int i = lo; i <= hi; i++) {
      long double v = P(entry)(op, a, lda, i, j);
      if (op.kind == KIND_SY) {
        y[i] += v * x[j];
        if (i != j) y[j] += v * x[i];
      } else if (op.trans == 'N') {
        y[i] += v * x[j];
      } else {
        y[j] += v * x[i];
      }
    }
  }
}

static long double P(norm1)(Op op, int n, const T* a, int lda) {
  long double* cs = calloc(n, sizeof(long double));
  for (int j = 0; j < n; j++) {
    int lo, hi;
    P(rows)(op, n, j, &lo, &hi);
    for (int i = lo; i <= hi; i++) {
      long double v = fabsl(P(entry)(op, a, lda, i, j));
      if (op.kind == KIND_SY) {
        cs[j] += v;
        if (i != j) cs[i] += v;
      } else {
        cs[op.trans == 'N' ? j : i] += v;
      }
    }
  }
  long double m = 0;
  for (int j = 0; j < n; j++) m = cs[j] > m ? cs[j] : m;
  free(cs);
  return m;
}

// max over columns r of ||b_r - op(A) x_r||_1 / (||op(A)||_1 ||x_r||_1 n eps) (LAPACK's xGET02); +inf when any of it
// is not finite.
static long double P(solve_resid)(Op op, int n, int nrhs, const T* a, int lda, const T* b, const T* x, int ldb) {
  long double anorm = P(norm1)(op, n, a, lda), worst = 0;
  long double* y = malloc((size_t)n * sizeof(long double));
  for (int r = 0; r < nrhs; r++) {
    const T* xr = x + (size_t)r * ldb;
    const T* br = b + (size_t)r * ldb;
    P(apply)(op, n, a, lda, xr, y);
    long double rn = 0, xn = 0;
    for (int i = 0; i < n; i++) {
      rn += fabsl((long double)br[i] - y[i]);
      xn += fabsl((long double)xr[i]);
    }
    long double resid = rn / (anorm * xn * n * EPS);
    if (!isfinite(resid)) resid = INFINITY;
    if (resid > worst || isinf(resid)) worst = resid;
  }
  free(y);
  return worst;
}

// ---- what must not change: bitwise ---------------------------------------------------------------------------

// How many elements of the ld x cols array differ bitwise where they must not: the padding rows (i >= m), and
// the parts named by keep.
static long P(changed)(const T* before, const T* after, int ld, int m, int cols, int keep) {
  long count = 0;
  for (int j = 0; j < cols; j++) {
    for (int i = 0; i < ld; i++) {
      int must_keep =
          i >= m || (keep & KEEP_ALL) || ((keep & KEEP_STRICT_LOWER) && i > j) || ((keep & KEEP_STRICT_UPPER) && i < j);
      size_t at = i + (size_t)j * ld;
      if (must_keep && memcmp(&before[at], &after[at], sizeof(T)) != 0) count++;
    }
  }
  return count;
}

// ---- factor reconstructions --------------------------------------------------------------------------------

// ||P L U - A||_1 / (n ||A||_1 eps) (LAPACK's xGET01) over the picked columns, and whether ipiv is valid.
static long double P(getrf_resid)(int m, int n, const T* a0, const T* f, int lda, const lapack_int* ipiv, int* checked,
                                  int* bad_ipiv) {
  int k = m < n ? m : n;
  int* perm = malloc((size_t)m * sizeof(int));
  int* cols = malloc((size_t)n * sizeof(int));
  long double* acc = malloc((size_t)m * sizeof(long double));
  *bad_ipiv = 0;
  for (int i = 0; i < m; i++) perm[i] = i;
  for (int i = 0; i < k; i++) {
    int p = ipiv[i] - 1;
    if (p < i || p >= m) {
      *bad_ipiv = 1;
      continue;
    }
    int t = perm[i];
    perm[i] = perm[p];
    perm[p] = t;
  }
  long double anorm = 0;
  for (int j = 0; j < n; j++) {
    long double s = 0;
    for (int i = 0; i < m; i++) s += fabsl((long double)a0[i + (size_t)j * lda]);
    anorm = s > anorm ? s : anorm;
  }
  *checked = pick_columns(m, n, cols);
  long double worst = 0;
  for (int c = 0; c < *checked; c++) {
    int j = cols[c];
    for (int i = 0; i < m; i++) acc[i] = 0;
    int last = j < k - 1 ? j : k - 1;
    for (int p = 0; p <= last; p++) {  // column j of L U: sum over p of L(:, p) U(p, j), L unit lower trapezoidal
      long double u = f[p + (size_t)j * lda];
      const T* lcol = f + (size_t)p * lda;
      acc[p] += u;
      for (int i = p + 1; i < m; i++) acc[i] += lcol[i] * u;
    }
    long double s = 0;
    for (int i = 0; i < m; i++) s += fabsl(acc[i] - (long double)a0[perm[i] + (size_t)j * lda]);
    long double resid = s / (n * anorm * EPS);
    if (!isfinite(resid)) resid = INFINITY;
    if (resid > worst || isinf(resid)) worst = resid;
  }
  free(perm);
  free(cols);
  free(acc);
  return worst;
}

// ||U^T U - A||_1 or ||L L^T - A||_1 over (n ||A||_1 eps) (LAPACK's xPOT01), A symmetric in its uplo triangle. With
// sampled columns only their stored part enters the norm: a lower bound of the full residual.
static long double P(potrf_resid)(char uplo, int n, const T* a0, const T* f, int lda, int* checked) {
  Op sy = {KIND_SY, uplo, 'N', 'N'};
  long double anorm = P(norm1)(sy, n, a0, lda);
  int* cols = malloc((size_t)n * sizeof(int));
  long double* acc = malloc((size_t)n * sizeof(long double));
  long double* cs = calloc(n, sizeof(long double));
  *checked = pick_columns(n, n, cols);
  for (int c = 0; c < *checked; c++) {
    int j = cols[c];
    if (uplo == 'U') {  // (U^T U)(i, j) = U(0:i, i) . U(0:i, j) for i <= j
      const T* uj = f + (size_t)j * lda;
      for (int i = 0; i <= j; i++) {
        const T* ui = f + (size_t)i * lda;
        long double s = 0;
        for (int p = 0; p <= i; p++) s += (long double)ui[p] * uj[p];
        long double d = fabsl(s - (long double)a0[i + (size_t)j * lda]);
        cs[j] += d;
        if (i != j) cs[i] += d;
      }
    } else {  // (L L^T)(i, j) = sum over p <= j of L(i, p) L(j, p) for i >= j
      for (int i = j; i < n; i++) acc[i] = 0;
      for (int p = 0; p <= j; p++) {
        const T* lp = f + (size_t)p * lda;
        long double l = lp[j];
        for (int i = j; i < n; i++) acc[i] += lp[i] * l;
      }
      for (int i = j; i < n; i++) {
        long double d = fabsl(acc[i] - (long double)a0[i + (size_t)j * lda]);
        cs[j] += d;
        if (i != j) cs[i] += d;
      }
    }
  }
  long double worst = 0;
  for (int j = 0; j < n; j++) worst = cs[j] > worst || isnan(cs[j]) ? cs[j] : worst;
  long double resid = worst / (n * anorm * EPS);
  free(cols);
  free(acc);
  free(cs);
  return isfinite(resid) ? resid : INFINITY;
}

// ---- the checks ---------------------------------------------------------------------------------------------

static void P(check_getrf)(int m, int n, int lda) {
  char what[96], detail[160], extra[96];
  T* a = P(general)(m, n, lda);
  T* a0 = P(copy)(a, lda, n);
  lapack_int* ipiv = malloc((size_t)(m < n ? m : n) * sizeof(lapack_int));
  lapack_int info = LAPACKE(getrf)(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  int checked = 0, bad_ipiv = 0;
  long double resid = info == 0 ? P(getrf_resid)(m, n, a0, a, lda, ipiv, &checked, &bad_ipiv) : INFINITY;
  long pad = P(changed)(a0, a, lda, m, n, KEEP_PAD);
  snprintf(what, sizeof what, PNAME "getrf m=%d n=%d lda=%d", m, n, lda);
  snprintf(extra, sizeof extra, " info=%d%s%s", (int)info, bad_ipiv ? " BAD IPIV" : "", pad ? " PADDING WRITTEN" : "");
  detail_columns(detail, sizeof detail, checked, n, extra);
  report(info == 0 && !bad_ipiv && pad == 0 && resid < THRESH, what, resid, detail);
  free(a), free(a0), free(ipiv);
}

// ?getrf, then ?getrs with trans 'N' (3 right-hand sides) and 'T' (2), all against the original A.
static void P(check_getrs)(int n, int lda, int ldb) {
  char what[96], detail[160];
  T* a = P(general)(n, n, lda);
  T* a0 = P(copy)(a, lda, n);
  lapack_int* ipiv = malloc((size_t)n * sizeof(lapack_int));
  lapack_int info = LAPACKE(getrf)(LAPACK_COL_MAJOR, n, n, a, lda, ipiv);
  if (info != 0) {
    snprintf(what, sizeof what, PNAME "getrf n=%d (for getrs)", n);
    snprintf(detail, sizeof detail, "info=%d", (int)info);
    report(0, what, -1, detail);
  } else {
    const char transes[2] = {'N', 'T'};
    for (int t = 0; t < 2; t++) {
      int nrhs = transes[t] == 'N' ? 3 : 2;
      T* b = P(general)(n, nrhs, ldb);
      T* b0 = P(copy)(b, ldb, nrhs);
      T* f = P(copy)(a, lda, n);
      lapack_int* ipiv0 = malloc((size_t)n * sizeof(lapack_int));
      memcpy(ipiv0, ipiv, (size_t)n * sizeof(lapack_int));
      info = LAPACKE(getrs)(LAPACK_COL_MAJOR, transes[t], n, nrhs, a, lda, ipiv, b, ldb);
      Op op = {KIND_GE, 'U', transes[t], 'N'};
      long double resid = info == 0 ? P(solve_resid)(op, n, nrhs, a0, lda, b0, b, ldb) : INFINITY;
      long pad = P(changed)(b0, b, ldb, n, nrhs, KEEP_PAD);
      long fchg = P(changed)(f, a, lda, n, n, KEEP_ALL) + (memcmp(ipiv0, ipiv, (size_t)n * sizeof(lapack_int)) != 0);
      snprintf(what, sizeof what, PNAME "getrs trans=%c n=%d nrhs=%d lda=%d ldb=%d", transes[t], n, nrhs, lda, ldb);
      snprintf(detail, sizeof detail, "info=%d%s%s", (int)info, pad ? " B PADDING WRITTEN" : "",
               fchg ? " FACTORS CHANGED" : "");
      report(info == 0 && pad == 0 && fchg == 0 && resid < THRESH, what, resid, detail);
      free(b), free(b0), free(f), free(ipiv0);
    }
  }
  free(a), free(a0), free(ipiv);
}

static void P(check_gesv)(int n, int nrhs, int lda, int ldb) {
  char what[96], detail[160];
  T* a = P(general)(n, n, lda);
  T* a0 = P(copy)(a, lda, n);
  T* b = P(general)(n, nrhs, ldb);
  T* b0 = P(copy)(b, ldb, nrhs);
  lapack_int* ipiv = malloc((size_t)n * sizeof(lapack_int));
  lapack_int info = LAPACKE(gesv)(LAPACK_COL_MAJOR, n, nrhs, a, lda, ipiv, b, ldb);
  Op op = {KIND_GE, 'U', 'N', 'N'};
  long double resid = info == 0 ? P(solve_resid)(op, n, nrhs, a0, lda, b0, b, ldb) : INFINITY;
  long pad = P(changed)(a0, a, lda, n, n, KEEP_PAD) + P(changed)(b0, b, ldb, n, nrhs, KEEP_PAD);
  snprintf(what, sizeof what, PNAME "gesv n=%d nrhs=%d lda=%d ldb=%d", n, nrhs, lda, ldb);
  snprintf(detail, sizeof detail, "info=%d%s", (int)info, pad ? " PADDING WRITTEN" : "");
  report(info == 0 && pad == 0 && resid < THRESH, what, resid, detail);
  free(a), free(a0), free(b), free(b0), free(ipiv);
}

// ?potrf (reconstruction), then ?potrs with the factor (nrhs right-hand sides) against the original A.
static void P(check_potrf_potrs)(char uplo, int n, int nrhs, int lda, int ldb) {
  char what[96], detail[160], extra[96];
  int keep = uplo == 'U' ? KEEP_STRICT_LOWER : KEEP_STRICT_UPPER;
  T* a = P(spd)(uplo, n, lda);
  T* a0 = P(copy)(a, lda, n);
  lapack_int info = LAPACKE(potrf)(LAPACK_COL_MAJOR, uplo, n, a, lda);
  int checked = 0;
  long double resid = info == 0 ? P(potrf_resid)(uplo, n, a0, a, lda, &checked) : INFINITY;
  long chg = P(changed)(a0, a, lda, n, n, keep);
  snprintf(what, sizeof what, PNAME "potrf uplo=%c n=%d lda=%d", uplo, n, lda);
  snprintf(extra, sizeof extra, " info=%d%s", (int)info, chg ? " OTHER TRIANGLE/PADDING WRITTEN" : "");
  detail_columns(detail, sizeof detail, checked, n, extra);
  report(info == 0 && chg == 0 && resid < THRESH, what, resid, detail);
  if (info == 0) {
    T* b = P(general)(n, nrhs, ldb);
    T* b0 = P(copy)(b, ldb, nrhs);
    T* f = P(copy)(a, lda, n);
    info = LAPACKE(potrs)(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
    Op op = {KIND_SY, uplo, 'N', 'N'};
    resid = info == 0 ? P(solve_resid)(op, n, nrhs, a0, lda, b0, b, ldb) : INFINITY;
    long pad = P(changed)(b0, b, ldb, n, nrhs, KEEP_PAD), fchg = P(changed)(f, a, lda, n, n, KEEP_ALL);
    snprintf(what, sizeof what, PNAME "potrs uplo=%c n=%d nrhs=%d lda=%d ldb=%d", uplo, n, nrhs, lda, ldb);
    snprintf(detail, sizeof detail, "info=%d%s%s", (int)info, pad ? " B PADDING WRITTEN" : "",
             fchg ? " FACTOR CHANGED" : "");
    report(info == 0 && pad == 0 && fchg == 0 && resid < THRESH, what, resid, detail);
    free(b), free(b0), free(f);
  }
  free(a), free(a0);
}

static void P(check_posv)(char uplo, int n, int nrhs, int lda, int ldb) {
  char what[96], detail[160];
  T* a = P(spd)(uplo, n, lda);
  T* a0 = P(copy)(a, lda, n);
  T* b = P(general)(n, nrhs, ldb);
  T* b0 = P(copy)(b, ldb, nrhs);
  lapack_int info = LAPACKE(posv)(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
  Op op = {KIND_SY, uplo, 'N', 'N'};
  long double resid = info == 0 ? P(solve_resid)(op, n, nrhs, a0, lda, b0, b, ldb) : INFINITY;
  long chg = P(changed)(a0, a, lda, n, n, uplo == 'U' ? KEEP_STRICT_LOWER : KEEP_STRICT_UPPER) +
             P(changed)(b0, b, ldb, n, nrhs, KEEP_PAD);
  snprintf(what, sizeof what, PNAME "posv uplo=%c n=%d nrhs=%d lda=%d ldb=%d", uplo, n, nrhs, lda, ldb);
  snprintf(detail, sizeof detail, "info=%d%s", (int)info, chg ? " OTHER TRIANGLE/PADDING WRITTEN" : "");
  report(info == 0 && chg == 0 && resid < THRESH, what, resid, detail);
  free(a), free(a0), free(b), free(b0);
}

static void P(check_trtrs)(char uplo, char trans, char diag, int n, int nrhs, int lda, int ldb) {
  char what[96], detail[160];
  T* a = P(triangular)(uplo, diag, n, lda);
  T* a0 = P(copy)(a, lda, n);
  T* b = P(general)(n, nrhs, ldb);
  T* b0 = P(copy)(b, ldb, nrhs);
  lapack_int info = LAPACKE(trtrs)(LAPACK_COL_MAJOR, uplo, trans, diag, n, nrhs, a, lda, b, ldb);
  Op op = {KIND_TR, uplo, trans, diag};
  long double resid = info == 0 ? P(solve_resid)(op, n, nrhs, a0, lda, b0, b, ldb) : INFINITY;
  long chg = P(changed)(a0, a, lda, n, n, KEEP_ALL) + P(changed)(b0, b, ldb, n, nrhs, KEEP_PAD);
  snprintf(what, sizeof what, PNAME "trtrs %c%c%c n=%d nrhs=%d lda=%d ldb=%d", uplo, trans, diag, n, nrhs, lda, ldb);
  snprintf(detail, sizeof detail, "info=%d%s", (int)info, chg ? " A OR B PADDING WRITTEN" : "");
  report(info == 0 && chg == 0 && resid < THRESH, what, resid, detail);
  free(a), free(a0), free(b), free(b0);
}

// INFO > 0 as reference LAPACK defines it, at a small size: an exactly zero column k of A gives a zero pivot at
// step k in any elimination order (?getrf, ?gesv); a diagonal entry -n^2 makes the leading minor of order k the
// first that is not positive definite (?potrf, ?posv); a zero diagonal entry of a triangular A (?trtrs). The
// solvers must leave B untouched then.
static void P(check_info)(int n) {
  char what[96], detail[160];
  int k = n / 2, lda = n + 2, ldb = n + 1;
  lapack_int* ipiv = malloc((size_t)n * sizeof(lapack_int));
  for (int routine = 0; routine < 5; routine++) {
    T* a;
    if (routine <= 1) {
      a = P(general)(n, n, lda);
      for (int i = 0; i < n; i++) a[i + (size_t)k * lda] = 0;
    } else if (routine <= 3) {
      a = P(spd)(routine == 2 ? 'U' : 'L', n, lda);
      a[k + (size_t)k * lda] = (T)(-(double)n * n);
    } else {
      a = P(triangular)('L', 'N', n, lda);
      a[k + (size_t)k * lda] = 0;
    }
    T* b = P(general)(n, 2, ldb);
    T* b0 = P(copy)(b, ldb, 2);
    lapack_int info = 0;
    const char* name = "";
    switch (routine) {
      case 0:
        name = "getrf", info = LAPACKE(getrf)(LAPACK_COL_MAJOR, n, n, a, lda, ipiv);
        break;
      case 1:
        name = "gesv", info = LAPACKE(gesv)(LAPACK_COL_MAJOR, n, 2, a, lda, ipiv, b, ldb);
        break;
      case 2:
        name = "potrf", info = LAPACKE(potrf)(LAPACK_COL_MAJOR, 'U', n, a, lda);
        break;
      case 3:
        name = "posv", info = LAPACKE(posv)(LAPACK_COL_MAJOR, 'L', n, 2, a, lda, b, ldb);
        break;
      case 4:
        name = "trtrs", info = LAPACKE(trtrs)(LAPACK_COL_MAJOR, 'L', 'N', 'N', n, 2, a, lda, b, ldb);
        break;
    }
    long bchg = P(changed)(b0, b, ldb, n, 2, KEEP_ALL);
    snprintf(what, sizeof what, PNAME "%s n=%d singular at %d", name, n, k + 1);
    snprintf(detail, sizeof detail, "info=%d (expected %d)%s", (int)info, k + 1, bchg ? " B WRITTEN" : "");
    report(info == k + 1 && bchg == 0, what, -1, detail);
    free(a), free(b), free(b0);
  }
  free(ipiv);
}

static void P(run_all)(int n) {
  uint64_t seed = (uint64_t)n * 1000 + (sizeof(T) == 4 ? 1 : 2) * 100;
  int lda = n + 5, ldb = n + 3;
  rng_seed(seed + 1);
  P(check_getrf)(n, n, lda);
  P(check_getrf)(n, n / 2 + 7, lda);  // tall
  P(check_getrf)(n / 2 + 5, n, lda);  // wide
  rng_seed(seed + 2);
  P(check_getrs)(n, lda, ldb);
  rng_seed(seed + 3);
  P(check_gesv)(n, 4, n, ldb);  // lda = n exactly
  rng_seed(seed + 4);
  P(check_potrf_potrs)('U', n, 3, lda, ldb);
  P(check_potrf_potrs)('L', n, 1, lda, n);
  rng_seed(seed + 5);
  P(check_posv)('U', n, 2, lda, ldb);
  P(check_posv)('L', n, 5, n, ldb);
  rng_seed(seed + 6);
  const char uplos[2] = {'U', 'L'}, transes[2] = {'N', 'T'}, diags[2] = {'N', 'U'};
  for (int u = 0; u < 2; u++)
    for (int t = 0; t < 2; t++)
      for (int d = 0; d < 2; d++) P(check_trtrs)(uplos[u], transes[t], diags[d], n, 2 + t, lda, ldb);
  rng_seed(seed + 7);
  P(check_info)(n < 160 ? n : 160);
}
