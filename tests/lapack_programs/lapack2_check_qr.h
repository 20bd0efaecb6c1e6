// The QR, least-squares and inverse cases of lapack2_check.c (?geqrf ?orgqr ?ormqr ?gels ?getri ?potri, and the
// CPU-only ?gelsd ?geqp3), included once per precision after lapack2_check_common.h.

// Singular values (or eigenvalues) 1 down to 10^-(DIGITS/2), geometrically: an ill-conditioned matrix whose
// backward-stable factorizations still meet the bounds.
static long double* P(geometric)(int k) {
  long double* s = xmalloc((size_t)imax(k, 1) * sizeof(long double));
  for (int i = 0; i < k; i++) s[i] = k > 1 ? powl(10.0L, -(long double)(DIGITS / 2) * i / (k - 1)) : 1.0L;
  return s;
}

// A random m x n matrix with rank singular values in [1, 10] and the others exactly zero; R keeps the right factor,
// whose last n - rank columns span the null space.
static T* P(rank_deficient)(int m, int n, int ld, int rank, Reflectors* right) {
  long double* s = calloc((size_t)imax(imin(m, n), 1), sizeof(long double));
  for (int i = 0; i < rank; i++) s[i] = 1.0L + 9.0L * (rank > 1 ? (long double)i / (rank - 1) : 1.0L);
  Reflectors left;
  T* a = P(with_sv)(m, n, ld, s, &left, right);
  reflectors_free(&left);
  free(s);
  return a;
}

static T* P(matrix)(int m, int n, int ld, int ill) {
  if (!ill) return P(general)(m, n, ld);
  Reflectors l, r;
  long double* s = P(geometric)(imin(m, n));
  T* a = P(with_sv)(m, n, ld, s, &l, &r);
  free(s), reflectors_free(&l), reflectors_free(&r);
  return a;
}

// ?geqrf with the workspace its query asks for (to make the input of ?orgqr, ?ormqr); no QUERY line.
static int P(factor_qr)(int m, int n, T* a, int lda, T* tau) {
  int info, minus = -1, lwork;
  T q = 0;
  F(geqrf)(&m, &n, a, &lda, tau, &q, &minus, &info);
  lwork = imax(P(lwork_from)(q), imax(n, 1));
  T* work = P(work_nan)(lwork);
  F(geqrf)(&m, &n, a, &lda, tau, work, &lwork, &info);
  free(work);
  return info;
}

// A workspace query: LWORK = -1 must give INFO = 0 and change nothing but WORK(1).
static int P(query_done)(Result* r, const char* args, T q, int info, const T* a0, const T* a, int lda, int cols) {
  int lwork = P(lwork_from)(q);
  printf("QUERY " PNAME "%s -> %d -\n", args, lwork);
  lwork = imax(lwork, 1);  // LWORK >= 1 always; LAPACK 3.11's ?getri answers 0 for n = 0
  check_info(r, info, 0);
  if (a && P(changed)(a0, a, lda, cols, 0, 0, 0) != 0) check_true(r, 0, "QUERY CHANGED A");
  return lwork;
}

static void P(note_sampled)(Result* r, int checked, int total) {
  if (checked < total) {
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, " (%d of %d columns)", checked, total);
  }
}

// ---- ?geqrf -----------------------------------------------------------------------------------------------------

static Result P(case_geqrf)(int m, int n, int lda, int ws, int ill, uint64_t seed) {
  Result r = result_new();
  int k = imin(m, n), info = INT_POISON, lwork, minus = -1, checked = 0;
  rng_seed(seed);
  T *a = P(matrix)(m, n, lda, ill), *a0 = P(copy)(a, lda, n);
  T *tau = P(alloc_nan)(k + 2, 1), *tau0 = P(copy)(tau, k + 2, 1);
  if (ws == WS_QUERY) {
    char args[96];
    T q = (T)NAN;
    snprintf(args, sizeof args, "geqrf m=%d n=%d lda=%d", m, n, lda);
    F(geqrf)(&m, &n, a, &lda, tau, &q, &minus, &info);
    lwork = P(query_done)(&r, args, q, info, a0, a, lda, n);
  } else {
    lwork = k == 0 ? 1 : imax(1, n);
  }
  T* work = P(work_nan)(lwork);
  F(geqrf)(&m, &n, a, &lda, tau, work, &lwork, &info);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(a0, a, lda, n, m, n, 0) == 0, "PADDING WRITTEN");
  check_true(&r, P(changed)(tau0, tau, k + 2, 1, k, 1, 0) == 0, "TAU OVERRUN");
  if (info == 0) {
    check_ratio(&r, "A-QR", P(qr_resid)(m, n, a0, lda, a, lda, tau, NULL, &checked));
    check_ratio(&r, "orth", P(reflector_orth)(m, k, a, lda, tau));
    P(note_sampled)(&r, checked, n);
  }
  free(a), free(a0), free(tau), free(tau0), free(work);
  return r;
}

// ---- ?orgqr: Q against the reflectors applied to unit vectors, and orthogonality ---------------------------------

static Result P(case_orgqr)(int m, int n, int k, int lda, int ws, uint64_t seed) {
  Result r = result_new();
  int info = INT_POISON, lwork, minus = -1, checked = 0;
  rng_seed(seed);
  T *a = P(general)(m, n, lda), *tau = P(alloc_nan)(n + 2, 1);
  check_info(&r, P(factor_qr)(m, n, a, lda, tau), 0);
  T *f = P(copy)(a, lda, n), *tau0 = P(copy)(tau, n + 2, 1);
  if (ws == WS_QUERY) {
    char args[96];
    T q = (T)NAN;
    snprintf(args, sizeof args, "orgqr m=%d n=%d k=%d lda=%d", m, n, k, lda);
    F(orgqr)(&m, &n, &k, a, &lda, tau, &q, &minus, &info);
    lwork = P(query_done)(&r, args, q, info, f, a, lda, n);
  } else {
    lwork = imax(1, n);
  }
  T* work = P(work_nan)(lwork);
  F(orgqr)(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(f, a, lda, n, m, n, 0) == 0, "PADDING WRITTEN");
  check_true(&r, P(changed)(tau0, tau, n + 2, 1, 0, 0, 0) == 0, "TAU CHANGED");
  if (info == 0 && n > 0) {
    int* cols = xmalloc((size_t)n * sizeof(int));
    int count = pick_columns(n, 4.0 * m * k, cols);
    long double* x = calloc((size_t)imax(m, 1) * count, sizeof(long double));
    for (int c = 0; c < count; c++) x[cols[c] + (size_t)c * m] = 1.0L;
    P(apply_q)('N', m, k, f, lda, tau0, x, count);
    long double worst = 0;
    for (int c = 0; c < count; c++) {
      long double s = 0;
      for (int i = 0; i < m; i++) s += fabsl((long double)a[i + (size_t)cols[c] * lda] - x[i + (size_t)c * m]);
      if (!(s <= worst)) worst = s;
    }
    check_ratio(&r, "Q-H", worst / (m * EPS));
    double* q = P(to_double)(m, n, a, lda, 0);
    check_ratio(&r, "orth", P(orth_ratio)(m, n, q, EPS, &checked));
    P(note_sampled)(&r, imin(count, checked), n);
    free(cols), free(x), free(q);
  }
  free(a), free(f), free(tau), free(tau0), free(work);
  return r;
}

// ---- ?ormqr: op(Q) C or C op(Q) against the reflectors applied here -------------------------------------------------

static Result P(case_ormqr)(char side, char trans, int m, int n, int k, int ldc, int ws, uint64_t seed) {
  Result r = result_new();
  int nq = side == 'L' ? m : n, lda = nq + 2, info = INT_POISON, lwork, minus = -1;
  rng_seed(seed);
  T *a = P(general)(nq, k, lda), *tau = P(alloc_nan)(k + 2, 1);
  check_info(&r, P(factor_qr)(nq, k, a, lda, tau), 0);
  T *f = P(copy)(a, lda, k), *tau0 = P(copy)(tau, k + 2, 1);
  T *c = P(general)(m, n, ldc), *c0 = P(copy)(c, ldc, n);
  if (ws == WS_QUERY) {
    char args[128];
    T q = (T)NAN;
    snprintf(args, sizeof args, "ormqr side=%c trans=%c m=%d n=%d k=%d lda=%d ldc=%d", side, trans, m, n, k, lda, ldc);
    F(ormqr)(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, &q, &minus, &info, 1, 1);
    lwork = P(query_done)(&r, args, q, info, c0, c, ldc, n);
  } else {
    lwork = imax(1, side == 'L' ? n : m);
  }
  T* work = P(work_nan)(lwork);
  F(ormqr)(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(f, a, lda, k, 0, 0, 0) == 0, "A CHANGED");
  check_true(&r, P(changed)(tau0, tau, k + 2, 1, 0, 0, 0) == 0, "TAU CHANGED");
  check_true(&r, P(changed)(c0, c, ldc, n, m, n, 0) == 0, "C PADDING WRITTEN");
  int nvec = side == 'L' ? n : m;  // the columns (side L) or rows (side R) of C, each transformed by op(Q) or op(Q)^T
  if (info == 0 && nvec > 0 && nq > 0) {
    int* vecs = xmalloc((size_t)nvec * sizeof(int));
    int count = pick_columns(nvec, 4.0 * nq * k, vecs);
    long double* x = xmalloc((size_t)nq * count * sizeof(long double));
    size_t step = side == 'L' ? 1 : (size_t)ldc, stride = side == 'L' ? (size_t)ldc : 1;
    for (int v = 0; v < count; v++)
      for (int i = 0; i < nq; i++) x[i + (size_t)v * nq] = c0[vecs[v] * stride + i * step];
    // C Q = (Q^T C^T)^T: a row of C is transformed by op(Q)^T.
    char t = side == 'L' ? trans : (trans == 'N' ? 'T' : 'N');
    P(apply_q)(t, nq, k, f, lda, tau0, x, count);
    long double worst = 0;
    for (int v = 0; v < count; v++) {
      long double s = 0;
      for (int i = 0; i < nq; i++) s += fabsl((long double)c[vecs[v] * stride + i * step] - x[i + (size_t)v * nq]);
      if (!(s <= worst)) worst = s;
    }
    long double cnorm = side == 'L' ? P(norm1)(m, n, c0, ldc) : P(normi)(m, n, c0, ldc);
    check_ratio(&r, "opQ*C", worst / ((cnorm > 0 ? cnorm : 1) * nq * EPS));
    P(note_sampled)(&r, count, nvec);
    free(vecs), free(x);
  }
  free(a), free(f), free(tau), free(tau0), free(c), free(c0), free(work);
  return r;
}

// ---- ?gels --------------------------------------------------------------------------------------------------------

// op(A)(i, j) of the m x n array a.
#define OPA(trans, a, lda, i, j) ((trans) == 'N' ? (a)[(i) + (size_t)(j) * (lda)] : (a)[(j) + (size_t)(i) * (lda)])

// ill = 0: random A; an overdetermined op(A) gets a random B (a true least-squares problem: LAPACK's xQRT17 ratio and
// the residual sum of squares LAPACK leaves in B), an underdetermined one B = op(A) X0 with X0 = op(A)^T Y, the
// minimum-norm solution (xQRT16 and the distance to X0). ill = 1: singular values 1 .. 10^-(DIGITS/2) and a consistent
// B = op(A) X0, where only the backward error (xQRT16) is bounded.
static Result P(case_gels)(char trans, int m, int n, int nrhs, int lda, int ldb, int ws, int ill, uint64_t seed) {
  Result r = result_new();
  int rows = trans == 'N' ? m : n, cols = trans == 'N' ? n : m, over = rows >= cols, mn = imin(m, n);
  int mx = imax(imax(m, n), 1);
  int info = INT_POISON, lwork, minus = -1;
  rng_seed(seed);
  T *a = P(matrix)(m, n, lda, ill), *b = P(alloc_nan)(ldb, nrhs);
  long double* x0 = NULL;
  if (over && !ill) {
    for (int j = 0; j < nrhs; j++)
      for (int i = 0; i < rows; i++) b[i + (size_t)j * ldb] = (T)rng_uniform();
  } else {
    x0 = calloc((size_t)imax(cols, 1) * imax(nrhs, 1), sizeof(long double));
    for (int j = 0; j < nrhs; j++) {
      long double* xj = x0 + (size_t)j * cols;
      if (over) {
        for (int i = 0; i < cols; i++) xj[i] = rng_uniform();
      } else {
        for (int i = 0; i < rows; i++) {
          long double y = rng_uniform();
          for (int p = 0; p < cols; p++) xj[p] += (long double)OPA(trans, a, lda, i, p) * y;
        }
      }
      for (int i = 0; i < rows; i++) {
        long double s = 0;
        for (int p = 0; p < cols; p++) s += (long double)OPA(trans, a, lda, i, p) * xj[p];
        b[i + (size_t)j * ldb] = (T)s;
      }
    }
  }
  T *a0 = P(copy)(a, lda, n), *b0 = P(copy)(b, ldb, nrhs);
  if (ws == WS_QUERY) {
    char args[128];
    T q = (T)NAN;
    snprintf(args, sizeof args, "gels trans=%c m=%d n=%d nrhs=%d lda=%d ldb=%d", trans, m, n, nrhs, lda, ldb);
    F(gels)(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, &q, &minus, &info, 1);
    lwork = P(query_done)(&r, args, q, info, b0, b, ldb, nrhs);
  } else {
    lwork = imax(1, mn + imax(mn, nrhs));
  }
  T* work = P(work_nan)(lwork);
  F(gels)(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, &info, 1);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(a0, a, lda, n, m, n, 0) == 0, "A PADDING WRITTEN");
  check_true(&r, P(changed)(b0, b, ldb, nrhs, imax(m, n), nrhs, 0) == 0, "B PADDING WRITTEN");
  if (info == 0) {
    long double anorm = trans == 'N' ? P(norm1)(m, n, a0, lda) : P(normi)(m, n, a0, lda);
    long double bnorm = P(norm1)(rows, nrhs, b0, ldb), xnorm = P(norm1)(cols, nrhs, b, ldb);
    long double* res = xmalloc((size_t)imax(rows, 1) * sizeof(long double));
    long double worst16 = 0, worst17 = 0, worst_rss = 0, worst_x = 0, x0norm = 0;
    for (int j = 0; j < nrhs; j++) {
      const T* xj = b + (size_t)j * ldb;
      long double rn = 0, rss = 0, out = 0, bj = 0, xj1 = 0;
      for (int i = 0; i < rows; i++) {
        long double s = b0[i + (size_t)j * ldb];
        for (int p = 0; p < cols; p++) s -= (long double)OPA(trans, a0, lda, i, p) * xj[p];
        res[i] = s, rn += fabsl(s), rss += s * s, bj += fabsl((long double)b0[i + (size_t)j * ldb]);
      }
      for (int p = 0; p < cols; p++) xj1 += fabsl((long double)xj[p]);
      if (over && !ill) {
        long double g = 0;  // ||op(A)^T r||_1
        for (int p = 0; p < cols; p++) {
          long double s = 0;
          for (int i = 0; i < rows; i++) s += (long double)OPA(trans, a0, lda, i, p) * res[i];
          g += fabsl(s);
        }
        worst17 = fmaxl(worst17, g);
        // LAPACK's quick return (an empty A) zeroes B: no residual is left there.
        for (int i = cols; i < rows; i++) out += (long double)xj[i] * xj[i];
        long double d = mn == 0 ? 0 : fabsl(sqrtl(out) - sqrtl(rss)) / ((anorm * xj1 + bj) * mx * EPS);
        if (!(d <= worst_rss)) worst_rss = d;
      } else {
        if (!(rn <= worst16)) worst16 = rn;
      }
      if (x0 && !ill && !over) {
        long double d = 0, s0 = 0;
        for (int p = 0; p < cols; p++) d += fabsl((long double)xj[p] - x0[p + (size_t)j * cols]);
        for (int p = 0; p < cols; p++) s0 += fabsl(x0[p + (size_t)j * cols]);
        if (!(d <= worst_x)) worst_x = d;
        x0norm = fmaxl(x0norm, s0);
      }
    }
    if (over && !ill) {
      check_ratio(&r, "ATr", worst17 / (fmaxl(anorm * bnorm, LDBL_MIN) * imax(mx, nrhs) * EPS));
      check_ratio(&r, "rss", worst_rss);
    } else {
      check_ratio(&r, "B-AX", worst16 / (fmaxl(anorm * xnorm, LDBL_MIN) * mx * EPS));
      if (!over && !ill) check_ratio(&r, "X-X0", worst_x / (fmaxl(x0norm, LDBL_MIN) * mx * EPS));
    }
    free(res);
  }
  free(a), free(a0), free(b), free(b0), free(work), free(x0);
  return r;
}

// ---- ?getri, ?potri: A inv(A) - I --------------------------------------------------------------------------------

// kind 0: random; 1: singular values 1 .. 10^-(DIGITS/2); 2: column n/2 zero, so that U has an exact zero on its
// diagonal: ?getri must return INFO > 0 at U's first zero (as LAPACK's xTRTRI finds it) and leave A as it was.
static Result P(case_getri)(int n, int lda, int ws, int kind, uint64_t seed) {
  Result r = result_new();
  int info = INT_POISON, lwork, minus = -1, expected = 0, checked = 0;
  rng_seed(seed);
  T* a = P(matrix)(n, n, lda, kind == 1);
  if (kind == 2)
    for (int i = 0; i < n; i++) a[i + (size_t)(n / 2) * lda] = 0;
  T* a0 = P(copy)(a, lda, n);
  int* ipiv = int_poison(n);
  F(getrf)(&n, &n, a, &lda, ipiv, &info);
  if (kind != 2) check_info(&r, info, 0);
  for (int i = 0; i < n && kind == 2 && !expected; i++)
    if (a[i + (size_t)i * lda] == 0) expected = i + 1;
  check_true(&r, kind != 2 || expected > 0, "NO ZERO PIVOT");
  T* f = P(copy)(a, lda, n);
  int* ipiv0 = xmalloc((size_t)imax(n, 1) * sizeof(int));
  memcpy(ipiv0, ipiv, (size_t)imax(n, 1) * sizeof(int));
  if (ws == WS_QUERY) {
    char args[64];
    T q = (T)NAN;
    snprintf(args, sizeof args, "getri n=%d lda=%d", n, lda);
    F(getri)(&n, a, &lda, ipiv, &q, &minus, &info);
    lwork = P(query_done)(&r, args, q, info, f, a, lda, n);
  } else {
    lwork = imax(1, n);
  }
  T* work = P(work_nan)(lwork);
  F(getri)(&n, a, &lda, ipiv, work, &lwork, &info);
  check_info(&r, info, expected);
  check_true(&r, memcmp(ipiv0, ipiv, (size_t)imax(n, 1) * sizeof(int)) == 0, "IPIV CHANGED");
  if (expected > 0) {
    check_true(&r, P(changed)(f, a, lda, n, 0, 0, 0) == 0, "A CHANGED");
  } else {
    check_true(&r, P(changed)(f, a, lda, n, n, n, 0) == 0, "PADDING WRITTEN");
    if (info == 0 && n > 0) {
      double *ad = P(to_double)(n, n, a0, lda, 0), *xd = P(to_double)(n, n, a, lda, 0);
      check_ratio(&r, "AX-I", inverse_ratio(n, ad, xd, EPS, &checked));
      P(note_sampled)(&r, checked, n);
      free(ad), free(xd);
    }
  }
  free(a), free(a0), free(f), free(ipiv), free(ipiv0), free(work);
  return r;
}

// kind 0: diagonally dominant SPD; 1: SPD with eigenvalues 1 .. 10^-(DIGITS/2); 2: a Cholesky factor with a zero at
// diagonal n/2: INFO = n/2 + 1 and A unchanged. Only the uplo triangle may change.
static Result P(case_potri)(char uplo, int n, int lda, int kind, uint64_t seed) {
  Result r = result_new();
  int info = INT_POISON, expected = 0, checked = 0;
  rng_seed(seed);
  T* a;
  if (kind == 1) {
    long double* w = P(geometric)(n);
    a = P(sym_with_eigs)(uplo, n, lda, w);
    free(w);
  } else {
    a = P(sym_random)(uplo, n, lda);
    for (int i = 0; i < n; i++) a[i + (size_t)i * lda] += (T)(kind == 2 ? 2 : n);
  }
  T* a0 = P(copy)(a, lda, n);
  if (kind == 2) {
    a[n / 2 + (size_t)(n / 2) * lda] = 0;  // a factor, not factored: the zero is the point
    expected = n / 2 + 1;
  } else {
    F(potrf)(&uplo, &n, a, &lda, &info, 1);
    check_info(&r, info, 0);
  }
  T* f = P(copy)(a, lda, n);
  F(potri)(&uplo, &n, a, &lda, &info, 1);
  check_info(&r, info, expected);
  if (expected > 0) {
    check_true(&r, P(changed)(f, a, lda, n, 0, 0, 0) == 0, "A CHANGED");
  } else {
    check_true(&r, P(changed)(f, a, lda, n, n, n, uplo == 'U' ? 'L' : 'U') == 0, "OTHER TRIANGLE/PADDING WRITTEN");
    if (info == 0 && n > 0) {
      double *ad = P(sym_full)(uplo, n, a0, lda), *xd = P(sym_full)(uplo, n, a, lda);
      check_ratio(&r, "AX-I", inverse_ratio(n, ad, xd, EPS, &checked));
      P(note_sampled)(&r, checked, n);
      free(ad), free(xd);
    }
  }
  free(a), free(a0), free(f);
  return r;
}

// ---- ?gelsd (CPU): rank, singular values, least squares and the minimum norm -------------------------------------

static Result P(case_gelsd)(int m, int n, int nrhs, int rank, int ldb, int ws, uint64_t seed) {
  Result r = result_new();
  int lda = m + 1, mn = imin(m, n), mx = imax(imax(m, n), 1), info = INT_POISON, lwork, liwork, minus = -1,
      got = INT_POISON;
  rng_seed(seed);
  Reflectors right;
  T *a = P(rank_deficient)(m, n, lda, rank, &right), *b = P(general)(m, nrhs, ldb);
  T *a0 = P(copy)(a, lda, n), *b0 = P(copy)(b, ldb, nrhs), *s = P(alloc_nan)(mn + 2, 1), *s0 = P(copy)(s, mn + 2, 1);
  const T rcond = (T)1e-3;
  if (ws == WS_QUERY) {
    T q = (T)NAN;
    int iq = INT_POISON;
    F(gelsd)(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, &got, &q, &minus, &iq, &info);
    lwork = P(lwork_from)(q), liwork = iq;
    printf("QUERY " PNAME "gelsd m=%d n=%d nrhs=%d lda=%d ldb=%d -> %d %d\n", m, n, nrhs, lda, ldb, lwork, liwork);
    lwork = imax(lwork, 1), liwork = imax(liwork, 1);
    check_info(&r, info, 0);
  } else {
    int nlvl = 0;  // LAPACK's documented minimum with SMLSIZ = 25 (also for an empty A, where the code wants M)
    if (mn > 0) nlvl = imax((int)(log((double)mn / 26.0) / log(2.0)) + 1, 0);
    lwork = 12 * mn + 2 * mn * 25 + 8 * mn * nlvl + mn * nrhs + 26 * 26;
    liwork = imax(1, 3 * mn * nlvl + 11 * mn);
  }
  T* work = P(work_nan)(lwork);
  int* iwork = int_poison(liwork);
  F(gelsd)(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, &got, work, &lwork, iwork, &info);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(a0, a, lda, n, m, n, 0) == 0, "A PADDING WRITTEN");
  check_true(&r, P(changed)(b0, b, ldb, nrhs, imax(m, n), nrhs, 0) == 0, "B PADDING WRITTEN");
  check_true(&r, P(changed)(s0, s, mn + 2, 1, mn, 1, 0) == 0, "S OVERRUN");
  if (got != rank) {
    char what[48];
    snprintf(what, sizeof what, "RANK=%d (expected %d)", got, rank);
    check_true(&r, 0, what);
  }
  if (info == 0) {
    long double smax = 0, sworst = 0;
    for (int i = 0; i < mn; i++) {
      long double want = i < rank ? 10.0L - 9.0L * (rank > 1 ? (long double)i / (rank - 1) : 0.0L) : 0.0L;
      smax = fmaxl(smax, want);
      long double d = fabsl((long double)s[i] - want);
      if (!(d <= sworst)) sworst = d;
    }
    check_ratio(&r, "S", sworst / (fmaxl(smax, 1) * mx * EPS));
    long double anorm = P(norm1)(m, n, a0, lda), bnorm = P(norm1)(m, nrhs, b0, ldb), g = 0, nul = 0, xnorm = 0;
    long double *res = xmalloc((size_t)imax(m, 1) * sizeof(long double)),
                *y = xmalloc((size_t)imax(n, 1) * sizeof(long double));
    for (int j = 0; j < nrhs; j++) {
      const T* xj = b + (size_t)j * ldb;
      for (int i = 0; i < m; i++) {
        long double t = b0[i + (size_t)j * ldb];
        for (int p = 0; p < n; p++) t -= (long double)a0[i + (size_t)p * lda] * xj[p];
        res[i] = t;
      }
      long double gj = 0, x1 = 0, nj = 0;
      for (int p = 0; p < n; p++) {
        long double t = 0;
        for (int i = 0; i < m; i++) t += (long double)a0[i + (size_t)p * lda] * res[i];
        gj += fabsl(t), y[p] = xj[p], x1 += fabsl((long double)xj[p]);
      }
      reflectors_apply(&right, y, 1, 1);  // R^T x: its entries from rank on are x's null-space part
      for (int p = rank; p < n; p++) nj += fabsl(y[p]);
      g = fmaxl(g, gj), nul = fmaxl(nul, nj), xnorm = fmaxl(xnorm, x1);
    }
    check_ratio(&r, "ATr", g / (fmaxl(anorm * bnorm, LDBL_MIN) * imax(mx, nrhs) * EPS));
    check_ratio(&r, "null", nul / (fmaxl(xnorm, LDBL_MIN) * mx * EPS));
    free(res), free(y);
  }
  reflectors_free(&right);
  free(a), free(a0), free(b), free(b0), free(s), free(s0), free(work), free(iwork);
  return r;
}

// ---- ?geqp3 (CPU): A P = Q R on a rank-deficient A, the pivots, a fixed leading column
// --------------------------------

static Result P(case_geqp3)(int m, int n, int rank, int lda, int ws, int fixed, uint64_t seed) {
  Result r = result_new();
  int k = imin(m, n), mx = imax(imax(m, n), 1), info = INT_POISON, lwork, minus = -1, checked = 0;
  rng_seed(seed);
  Reflectors right;
  T *a = P(rank_deficient)(m, n, lda, rank, &right), *a0 = P(copy)(a, lda, n);
  T *tau = P(alloc_nan)(k + 2, 1), *tau0 = P(copy)(tau, k + 2, 1);
  int* jpvt = calloc((size_t)imax(n, 1), sizeof(int));
  if (fixed) jpvt[2] = 1;  // column 3 is a leading column: it must come first
  if (ws == WS_QUERY) {
    char args[96];
    T q = (T)NAN;
    snprintf(args, sizeof args, "geqp3 m=%d n=%d lda=%d", m, n, lda);
    F(geqp3)(&m, &n, a, &lda, jpvt, tau, &q, &minus, &info);
    lwork = P(query_done)(&r, args, q, info, a0, a, lda, n);
  } else {
    lwork = 3 * n + 1;
  }
  T* work = P(work_nan)(lwork);
  F(geqp3)(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(a0, a, lda, n, m, n, 0) == 0, "PADDING WRITTEN");
  check_true(&r, P(changed)(tau0, tau, k + 2, 1, k, 1, 0) == 0, "TAU OVERRUN");
  int* seen = calloc((size_t)imax(n, 1), sizeof(int));
  int perm_ok = 1;
  for (int j = 0; j < n; j++) {
    if (jpvt[j] < 1 || jpvt[j] > n || seen[jpvt[j] - 1]++) perm_ok = 0;
  }
  check_true(&r, perm_ok, "JPVT NOT A PERMUTATION");
  check_true(&r, !fixed || jpvt[0] == 3, "FIXED COLUMN NOT FIRST");
  if (info == 0 && perm_ok) {
    check_ratio(&r, "AP-QR", P(qr_resid)(m, n, a0, lda, a, lda, tau, jpvt, &checked));
    check_ratio(&r, "orth", P(reflector_orth)(m, k, a, lda, tau));
    P(note_sampled)(&r, checked, n);
    long double anorm = P(norm1)(m, n, a0, lda), r00 = k > 0 ? fabsl((long double)a[0]) : 0, trail = 0;
    int decreasing = 1;
    for (int i = fixed ? 1 : 0; i + 1 < k; i++) {
      long double d0 = fabsl((long double)a[i + (size_t)i * lda]),
                  d1 = fabsl((long double)a[i + 1 + (size_t)(i + 1) * lda]);
      if (d1 > d0 * 1.001L + THRESH * mx * EPS * r00) decreasing = 0;
    }
    check_true(&r, decreasing, "DIAGONAL OF R INCREASES");
    for (int j = rank; j < n; j++) {  // rank r: the trailing block of R is at the rounding level
      long double s = 0;
      for (int i = rank; i <= j && i < k; i++) s += fabsl((long double)a[i + (size_t)j * lda]);
      trail = fmaxl(trail, s);
    }
    check_ratio(&r, "trail", trail / (fmaxl(anorm, LDBL_MIN) * mx * EPS));
  }
  reflectors_free(&right);
  free(a), free(a0), free(tau), free(tau0), free(jpvt), free(seen), free(work);
  return r;
}
