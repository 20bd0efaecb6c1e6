// The eigenvalue and SVD cases of lapack2_check.c (?syevd ?syev ?syevr ?gesvd ?gesdd, and the CPU-only ?geev),
// included once per precision after lapack2_check_qr.h.

// ---- shared checks ------------------------------------------------------------------------------------------------

// ||A0 Z - Z diag(w)||_1 / (||A0||_1 n eps) over sampled columns of Z (n x mz); a0 the full symmetric A (double).
static long double P(eig_resid)(int n, int mz, const double* a0, const double* z, const T* w, int* checked) {
  if (n == 0 || mz == 0) return *checked = 0, 0.0L;
  int* cols = xmalloc((size_t)mz * sizeof(int));
  int count = pick_columns(mz, (double)n * n, cols);
  double *zc = gather_columns(z, n, cols, count), *c = xmalloc((size_t)n * count * sizeof(double));
  for (int j = 0; j < count; j++)
    for (int i = 0; i < n; i++) c[i + (size_t)j * n] = zc[i + (size_t)j * n] * (double)w[cols[j]];
  long double res = gemm_resid('N', n, count, n, a0, n, zc, n, c, n);
  long double anorm = dnorm1(n, n, a0, n);
  free(cols), free(zc), free(c);
  *checked = count;
  return res / (fmaxl(anorm, LDBL_MIN) * n * ULP);
}

// max |w - ref| / (||A||_1 n eps): eigenvalues and singular values are perturbed by at most eps ||A|| times a small
// factor in any backward-stable algorithm.
static long double P(values_ratio)(int count, const T* w, const T* ref, long double anorm, int n) {
  long double worst = 0;
  for (int i = 0; i < count; i++) {
    long double d = fabsl((long double)w[i] - (long double)ref[i]);
    if (!(d <= worst)) worst = d;
  }
  return worst / (fmaxl(anorm, LDBL_MIN) * imax(n, 1) * ULP);
}

// ---- ?syevd ?syev ?syevr ------------------------------------------------------------------------------------------

// The test matrix's eigenvalues when they are known (kind 1: clusters of three equal ones; 2: graded 1 down to
// 10^-(DIGITS/2)), ascending; NULL for kind 0 (random symmetric).
static T* P(known_eigs)(int n, int kind) {
  if (kind == 0) return NULL;
  T* w = P(alloc_nan)(n + 2, 1);
  long double* g = P(geometric)(n);
  for (int i = 0; i < n; i++) w[i] = kind == 1 ? (T)(i / 3 - n / 6) : (T)g[n - 1 - i];
  free(g);
  return w;
}

// jobz x range x uplo of one routine on an n x n matrix (lda = n + 2, ldz = n + 1). wref: the eigenvalues of the
// same matrix (from a run with vectors, or known); range V needs them to pick (vl, vu] away from any eigenvalue.
// wout (n + 2) receives W.
static Result P(case_sy)(int routine, char jobz, char range, char uplo, int n, int ws, int kind, uint64_t seed,
                         const T* wref, T* wout) {
  Result r = result_new();
  int lda = n + 2, ldz = n + 1, info = INT_POISON, lwork, liwork = 0, minus = -1, m = n, mout = INT_POISON, lo = 0;
  int il = n > 0 ? n / 4 + 1 : 1, iu = n > 0 ? imin(n / 2 + 1, n) : 0, checked = 0;
  T vl = 0, vu = 1, abstol = 0;
  rng_seed(seed);
  T* known = P(known_eigs)(n, kind);
  if (known) wref = known;
  T* a;
  if (kind == 0) {
    a = P(sym_random)(uplo, n, lda);
  } else {
    long double* wl = xmalloc((size_t)imax(n, 1) * sizeof(long double));
    for (int i = 0; i < n; i++) wl[i] = known[i];
    a = P(sym_with_eigs)(uplo, n, lda, wl);
    free(wl);
  }
  T* a0 = P(copy)(a, lda, n);
  double* a0d = P(sym_full)(uplo, n, a0, lda);
  long double anorm = dnorm1(n, n, a0d, n);
  if (range == 'I') {
    m = iu - il + 1, lo = il - 1;
  } else if (range == 'V' && n > 0) {
    // (vl, vu] holds eigenvalues lo .. hi, its ends in gaps wider than any error the check allows.
    long double gap = 1e4L * n * EPS * fmaxl(anorm, 1), big = 2 * fmaxl(anorm, 1);
    int hi = n / 2;
    lo = n / 4;
    while (lo > 0 && wref[lo] - wref[lo - 1] <= gap) lo--;
    hi = imax(hi, lo);
    while (hi < n - 1 && wref[hi + 1] - wref[hi] <= gap) hi++;
    vl = (T)(lo > 0 ? 0.5L * ((long double)wref[lo - 1] + wref[lo]) : (long double)wref[0] - big);
    vu = (T)(hi < n - 1 ? 0.5L * ((long double)wref[hi] + wref[hi + 1]) : (long double)wref[n - 1] + big);
    m = hi - lo + 1;
  }
  T *w = P(alloc_nan)(n + 2, 1), *w0 = P(copy)(w, n + 2, 1);
  T *z = P(alloc_nan)(ldz, n), *z0 = P(copy)(z, ldz, n);
  int* isuppz = int_poison(2 * n + 2);
  if (ws == WS_QUERY) {
    T q = (T)NAN;
    int iq = INT_POISON;
    char args[128];
    snprintf(args, sizeof args, "%s jobz=%c ", sy_names[routine], jobz);
    if (routine == SYEVR) {
      snprintf(args + strlen(args), sizeof args - strlen(args), "range=%c ", range);
      if (range == 'I') snprintf(args + strlen(args), sizeof args - strlen(args), "il=%d iu=%d ", il, iu);
    }
    snprintf(args + strlen(args), sizeof args - strlen(args), "uplo=%c n=%d lda=%d", uplo, n, lda);
    if (routine == SYEVD) {
      F(syevd)(&jobz, &uplo, &n, a, &lda, w, &q, &minus, &iq, &minus, &info, 1, 1);
    } else if (routine == SYEV) {
      F(syev)(&jobz, &uplo, &n, a, &lda, w, &q, &minus, &info, 1, 1);
    } else {
      F(syevr)
      (&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, &mout, w, z, &ldz, isuppz, &q, &minus, &iq,
       &minus, &info, 1, 1, 1);
    }
    lwork = P(lwork_from)(q), liwork = iq;
    if (routine == SYEV) {
      printf("QUERY " PNAME "%s -> %d -\n", args, lwork);
    } else {
      printf("QUERY " PNAME "%s -> %d %d\n", args, lwork, liwork);
    }
    check_info(&r, info, 0);
    check_true(&r, P(changed)(a0, a, lda, n, 0, 0, 0) == 0, "QUERY CHANGED A");
    lwork = imax(lwork, 1), liwork = imax(liwork, 1);
  } else if (routine == SYEVD) {
    lwork = n <= 1 ? 1 : jobz == 'V' ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
    liwork = n <= 1 || jobz == 'N' ? 1 : 3 + 5 * n;
  } else if (routine == SYEV) {
    lwork = imax(1, 3 * n - 1);
  } else {
    lwork = imax(1, 26 * n), liwork = imax(1, 10 * n);
  }
  T* work = P(work_nan)(lwork);
  int* iwork = int_poison(liwork);
  mout = INT_POISON;
  if (routine == SYEVD) {
    F(syevd)(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    mout = n;
  } else if (routine == SYEV) {
    F(syev)(&jobz, &uplo, &n, a, &lda, w, work, &lwork, &info, 1, 1);
    mout = n;
  } else {
    F(syevr)
    (&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, &mout, w, z, &ldz, isuppz, work, &lwork, iwork,
     &liwork, &info, 1, 1, 1);
  }
  check_info(&r, info, 0);
  if (mout != m) {
    char what[40];
    snprintf(what, sizeof what, "M=%d (expected %d)", mout, m);
    check_true(&r, 0, what);
  }
  int mm = mout == m ? m : 0;
  int vec_in_a = routine != SYEVR && jobz == 'V';
  check_true(&r, P(changed)(a0, a, lda, n, n, n, vec_in_a ? 0 : (uplo == 'U' ? 'L' : 'U')) == 0,
             vec_in_a ? "A PADDING WRITTEN" : "OTHER TRIANGLE/PADDING WRITTEN");
  // W has n entries whatever M (?syevr's ?stebz may use those beyond M); Z only max(1, M) columns.
  check_true(&r, P(changed)(w0, w, n + 2, 1, n, 1, 0) == 0, "W OVERRUN");
  if (routine == SYEVR) {
    check_true(&r, P(changed)(z0, z, ldz, n, jobz == 'V' ? n : 0, jobz == 'V' ? mm : 0, 0) == 0, "Z WRITTEN OUTSIDE");
  }
  if (info == 0 && mm == m) {
    int sorted = 1;
    for (int i = 0; i + 1 < m; i++) sorted &= w[i] <= w[i + 1];
    check_true(&r, sorted, "W NOT ASCENDING");
    if (wref) check_ratio(&r, "W-Wref", P(values_ratio)(m, w, wref + lo, anorm, n));
    if (jobz == 'V') {
      const T* zz = routine == SYEVR ? z : a;
      int ldzz = routine == SYEVR ? ldz : lda;
      double* zd = P(to_double)(n, m, zz, ldzz, 0);
      check_ratio(&r, "AZ-ZW", P(eig_resid)(n, m, a0d, zd, w, &checked));
      check_ratio(&r, "orth", P(orth_ratio)(n, m, zd, ULP, &checked));
      P(note_sampled)(&r, checked, m);
      free(zd);
      // ISUPPZ (RANGE = 'A'): a row range per vector. Reference LAPACK gives the support of the tridiagonal
      // problem's vectors, before the back-transformation, so Z need not vanish outside it.
      if (routine == SYEVR && range == 'A') {
        int support_ok = 1;
        for (int j = 0; j < m; j++) {
          int s0 = isuppz[2 * j], s1 = isuppz[2 * j + 1];
          if (s0 < 1 || s1 < s0 || s1 > n) support_ok = 0;
        }
        check_true(&r, support_ok, "BAD ISUPPZ");
      }
    }
  }
  if (wout) memcpy(wout, w, (size_t)(n + 2) * sizeof(T));
  free(a), free(a0), free(a0d), free(w), free(w0), free(z), free(z0), free(isuppz), free(work), free(iwork),
      free(known);
  return r;
}

// ---- ?gesvd ?gesdd -----------------------------------------------------------------------------------------------

// max over sampled columns i of ||A A^T u_i - s_i^2 u_i||_1 / (||A||_1 ||A||_inf max(m, n) eps): U's columns are
// left singular vectors whatever their sign or basis (a is m x n, u m x nu, s2 the squared singular values).
static long double P(one_side)(int m, int n, const double* a, const double* u, int nu, const long double* s2,
                               int* checked) {
  if (m == 0 || nu == 0) return *checked = 0, 0.0L;
  int* cols = xmalloc((size_t)nu * sizeof(int));
  int count = pick_columns(nu, 2.0 * m * n, cols);
  double *uc = gather_columns(u, m, cols, count), *c1 = calloc((size_t)imax(n, 1) * count, sizeof(double));
  double* c = xmalloc((size_t)m * count * sizeof(double));
  gemm_resid('T', n, count, m, a, m, uc, m, c1, imax(n, 1));  // c1 = -A^T u
  for (int j = 0; j < count; j++)
    for (int i = 0; i < m; i++) c[i + (size_t)j * m] = -(double)(uc[i + (size_t)j * m] * s2[cols[j]]);
  long double res = gemm_resid('N', m, count, n, a, m, c1, imax(n, 1), c, m);
  long double norm1 = dnorm1(m, n, a, m), normi = 0;
  for (int i = 0; i < m; i++) {
    long double s = 0;
    for (int j = 0; j < n; j++) s += fabsl((long double)a[i + (size_t)j * m]);
    normi = fmaxl(normi, s);
  }
  free(cols), free(uc), free(c1), free(c);
  *checked = count;
  return res / (fmaxl(norm1 * normi, LDBL_MIN) * imax(m, n) * ULP);
}

// One SVD call: routine GESVD with (jobu, jobvt), or GESDD with jobz = jobu. ill: singular values 1 .. 10^-(DIGITS/2)
// (known). sref: the singular values of the same matrix (from a run with both vectors); sout receives S.
static Result P(case_svd)(int routine, char jobu, char jobvt, int m, int n, int ws, int ill, uint64_t seed,
                          const T* sref, T* sout) {
  Result r = result_new();
  int k = imin(m, n), mx = imax(m, n), lda = m + 2, info = INT_POISON, lwork, minus = -1, checked = 0;
  // Where U's columns (usrc: 0 none, 1 U, 2 A) and V^T's rows (vsrc) come back, and how many.
  int usrc = 0, ucount = 0, vsrc = 0, vcount = 0;
  char ju = jobu, jv = routine == GESVD ? jobvt : jobu;
  if (routine == GESDD && jobu == 'O') {
    ju = m >= n ? 'O' : 'A', jv = m >= n ? 'A' : 'O';
    if (m >= n) vcount = n, vsrc = 1, usrc = 2, ucount = k;
    if (m < n) ucount = m, usrc = 1, vsrc = 2, vcount = k;
  } else {
    if (ju == 'A' || ju == 'S') usrc = 1, ucount = ju == 'A' ? m : k;
    if (ju == 'O') usrc = 2, ucount = k;
    if (jv == 'A' || jv == 'S') vsrc = 1, vcount = jv == 'A' ? n : k;
    if (jv == 'O') vsrc = 2, vcount = k;
  }
  int ldu = m + 1, ldvt = (jv == 'S' ? k : n) + 1;
  rng_seed(seed);
  T* known = NULL;
  T* a = P(matrix)(m, n, lda, ill);
  if (ill) {
    long double* g = P(geometric)(k);
    known = P(alloc_nan)(k + 2, 1);
    for (int i = 0; i < k; i++) known[i] = (T)g[i];
    free(g);
    sref = known;
  }
  T *a0 = P(copy)(a, lda, n), *s = P(alloc_nan)(k + 2, 1), *s0 = P(copy)(s, k + 2, 1);
  T *u = P(alloc_nan)(ldu, m), *u0 = P(copy)(u, ldu, m), *vt = P(alloc_nan)(ldvt, n), *vt0 = P(copy)(vt, ldvt, n);
  int* iwork = int_poison(8 * k);
  if (ws == WS_QUERY) {
    T q = (T)NAN;
    char args[128];
    if (routine == GESVD) {
      snprintf(args, sizeof args, "gesvd jobu=%c jobvt=%c m=%d n=%d lda=%d ldu=%d ldvt=%d", jobu, jobvt, m, n, lda, ldu,
               ldvt);
      F(gesvd)(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &q, &minus, &info, 1, 1);
    } else {
      snprintf(args, sizeof args, "gesdd jobz=%c m=%d n=%d lda=%d ldu=%d ldvt=%d", jobu, m, n, lda, ldu, ldvt);
      F(gesdd)(&jobu, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &q, &minus, iwork, &info, 1);
    }
    lwork = P(query_done)(&r, args, q, info, a0, a, lda, n);
  } else if (k == 0) {
    lwork = 1;
  } else if (routine == GESVD) {
    lwork = imax(1, imax(3 * k + mx, 5 * k));
  } else {  // LAPACK 3.11's documented minimum for ?gesdd
    lwork = jobu == 'N'   ? 3 * k + imax(mx, 7 * k)
            : jobu == 'O' ? 3 * k + imax(mx, 5 * k * k + 4 * k)
            : jobu == 'S' ? 4 * k * k + 7 * k
                          : 4 * k * k + 6 * k + mx;
  }
  T* work = P(work_nan)(lwork);
  if (routine == GESVD) {
    F(gesvd)(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);
  } else {
    F(gesdd)(&jobu, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  }
  check_info(&r, info, 0);
  check_true(&r, P(changed)(a0, a, lda, n, m, n, 0) == 0, "A PADDING WRITTEN");
  check_true(&r, P(changed)(s0, s, k + 2, 1, k, 1, 0) == 0, "S OVERRUN");
  check_true(&r, P(changed)(u0, u, ldu, m, m, usrc == 1 ? ucount : 0, 0) == 0, "U WRITTEN OUTSIDE");
  check_true(&r, P(changed)(vt0, vt, ldvt, n, vsrc == 1 ? vcount : 0, n, 0) == 0, "VT WRITTEN OUTSIDE");
  if (info == 0 && k > 0) {
    int sorted = 1;
    for (int i = 0; i < k; i++) sorted &= s[i] >= 0 && (i + 1 == k || s[i] >= s[i + 1]);
    check_true(&r, sorted, "S NOT DESCENDING/NONNEGATIVE");
    double* a0d = P(to_double)(m, n, a0, lda, 0);
    long double anorm = dnorm1(m, n, a0d, m);
    double *ud = NULL, *vd = NULL;  // U (m x ucount), V (n x vcount)
    if (usrc) ud = P(to_double)(m, ucount, usrc == 1 ? u : a, usrc == 1 ? ldu : lda, 0);
    if (vsrc) vd = P(to_double)(vcount, n, vsrc == 1 ? vt : a, vsrc == 1 ? ldvt : lda, 1);
    if (ud && vd) {  // ||A - U S V^T||_1 / (||A||_1 max(m, n) eps) over sampled columns (LAPACK's xBDT01)
      int* cols = xmalloc((size_t)n * sizeof(int));
      int count = pick_columns(n, 2.0 * m * k, cols);
      double *us = xmalloc((size_t)m * k * sizeof(double)), *y = xmalloc((size_t)k * count * sizeof(double));
      double* c = gather_columns(a0d, m, cols, count);
      for (int j = 0; j < k; j++)
        for (int i = 0; i < m; i++) us[i + (size_t)j * m] = ud[i + (size_t)j * m] * (double)s[j];
      for (int c2 = 0; c2 < count; c2++)
        for (int i = 0; i < k; i++) y[i + (size_t)c2 * k] = vd[cols[c2] + (size_t)i * n];
      check_ratio(&r, "A-USVT", gemm_resid('N', m, count, k, us, m, y, k, c, m) / (fmaxl(anorm, LDBL_MIN) * mx * ULP));
      P(note_sampled)(&r, count, n);
      free(cols), free(us), free(y), free(c);
    } else if (ud || vd) {  // one side only: A A^T U = U S^2, or A^T A V = V S^2
      int nv = ud ? ucount : vcount;
      long double* s2 = calloc((size_t)nv, sizeof(long double));
      for (int i = 0; i < k && i < nv; i++) s2[i] = (long double)s[i] * s[i];
      if (ud) {
        check_ratio(&r, "AATU-US2", P(one_side)(m, n, a0d, ud, ucount, s2, &checked));
      } else {
        double* at = P(to_double)(m, n, a0, lda, 1);
        check_ratio(&r, "ATAV-VS2", P(one_side)(n, m, at, vd, vcount, s2, &checked));
        free(at);
      }
      P(note_sampled)(&r, checked, nv);
      free(s2);
    }
    if (ud) check_ratio(&r, "orthU", P(orth_ratio)(m, ucount, ud, ULP, &checked));
    if (vd) check_ratio(&r, "orthV", P(orth_ratio)(n, vcount, vd, ULP, &checked));
    if (sref) check_ratio(&r, "S-Sref", P(values_ratio)(k, s, sref, anorm, mx));
    free(a0d), free(ud), free(vd);
  }
  if (sout) memcpy(sout, s, (size_t)(k + 2) * sizeof(T));
  free(a), free(a0), free(s), free(s0), free(u), free(u0), free(vt), free(vt0), free(iwork), free(work), free(known);
  return r;
}

// ---- ?geev (CPU)
// -----------------------------------------------------------------------------------------------------

// ||A v - lambda v|| (right, LAPACK's xGET22) or ||A^T u - conj(lambda) u|| (left) over the eigenvectors in e (n x n),
// complex pairs as LAPACK stores them (columns j, j + 1 = real, imaginary part), over (||A||_1 n eps); also how far
// each vector's Euclidean norm is from 1, over (n eps).
static void P(geev_vectors)(Result* r, int left, int n, const T* a0, int lda, const T* e, int lde, const T* wr,
                            const T* wi, long double anorm) {
  long double worst = 0, norm_worst = 0;
  long double* x = xmalloc((size_t)n * sizeof(long double));
  for (int j = 0; j < n; j++) {
    int pair = wi[j] != 0 && j + 1 < n;
    const T *re = e + (size_t)j * lde, *im = pair ? e + (size_t)(j + 1) * lde : NULL;
    long double lr = wr[j], li = pair ? (left ? -(long double)wi[j] : (long double)wi[j]) : 0, nrm = 0;
    for (int part = 0; part < (pair ? 2 : 1); part++) {
      // (A or A^T)(re + i im) = (lr + i li)(re + i im): real part A re = lr re - li im, imaginary A im = li re + lr im.
      for (int i = 0; i < n; i++) {
        long double s = 0;
        const T* v = part == 0 ? re : im;
        for (int p = 0; p < n; p++) s += (long double)(left ? a0[p + (size_t)i * lda] : a0[i + (size_t)p * lda]) * v[p];
        long double want = part == 0 ? lr * re[i] - (pair ? li * im[i] : 0) : li * re[i] + lr * im[i];
        x[i] = s - want;
      }
      long double s1 = 0;
      for (int i = 0; i < n; i++)
        s1 += fabsl(x[i]), nrm += (long double)(part ? im[i] : re[i]) * (part ? im[i] : re[i]);
      if (!(s1 <= worst)) worst = s1;
    }
    long double d = fabsl(sqrtl(nrm) - 1);
    if (!(d <= norm_worst)) norm_worst = d;
    if (pair) j++;
  }
  check_ratio(r, left ? "ATu-wu" : "Av-wv", worst / (fmaxl(anorm, LDBL_MIN) * n * ULP));
  check_ratio(r, left ? "normVL" : "normVR", norm_worst / (n * ULP));
  free(x);
}

// Eigenvalues of a nonsymmetric matrix come in no fixed order (LAPACK's ?hseqr deflates differently with and without
// the Schur vectors): each (wr, wi) is matched to the nearest unused reference value; the worst distance over
// (||A||_1 n ulp).
static long double P(match_ratio)(int n, const T* wr, const T* wi, const T* rr, const T* ri, long double anorm) {
  char* used = calloc((size_t)imax(n, 1), 1);
  long double worst = 0;
  for (int i = 0; i < n; i++) {
    long double best = INFINITY;
    int at = -1;
    for (int j = 0; j < n; j++) {
      long double d = hypotl((long double)wr[i] - rr[j], (long double)wi[i] - ri[j]);
      if (!used[j] && d < best) best = d, at = j;
    }
    if (at >= 0) used[at] = 1;
    if (!(best <= worst)) worst = best;
  }
  free(used);
  return worst / (fmaxl(anorm, LDBL_MIN) * imax(n, 1) * ULP);
}

static Result P(case_geev)(char jobvl, char jobvr, int n, int ws, uint64_t seed, const T* wref, T* wout) {
  Result r = result_new();
  int lda = n + 2, ldvl = n + 1, ldvr = n + 3, info = INT_POISON, lwork, minus = -1;
  rng_seed(seed);
  T *a = P(general)(n, n, lda), *a0 = P(copy)(a, lda, n);
  T *w = P(alloc_nan)(2 * n + 4, 1), *w0 = P(copy)(w, 2 * n + 4, 1), *wr = w, *wi = w + n + 2;
  T *vl = P(alloc_nan)(ldvl, n), *vl0 = P(copy)(vl, ldvl, n), *vr = P(alloc_nan)(ldvr, n), *vr0 = P(copy)(vr, ldvr, n);
  if (ws == WS_QUERY) {
    T q = (T)NAN;
    char args[96];
    snprintf(args, sizeof args, "geev jobvl=%c jobvr=%c n=%d lda=%d ldvl=%d ldvr=%d", jobvl, jobvr, n, lda, ldvl, ldvr);
    F(geev)(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, &q, &minus, &info, 1, 1);
    lwork = P(query_done)(&r, args, q, info, a0, a, lda, n);
  } else {
    lwork = imax(1, (jobvl == 'V' || jobvr == 'V' ? 4 : 3) * n);
  }
  T* work = P(work_nan)(lwork);
  F(geev)(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, &info, 1, 1);
  check_info(&r, info, 0);
  check_true(&r, P(changed)(a0, a, lda, n, n, n, 0) == 0, "A PADDING WRITTEN");
  check_true(&r, P(changed)(w0, w, n + 2, 1, n, 1, 0) + P(changed)(w0 + n + 2, wi, n + 2, 1, n, 1, 0) == 0,
             "WR/WI OVERRUN");
  check_true(&r, P(changed)(vl0, vl, ldvl, n, jobvl == 'V' ? n : 0, n, 0) == 0, "VL WRITTEN OUTSIDE");
  check_true(&r, P(changed)(vr0, vr, ldvr, n, jobvr == 'V' ? n : 0, n, 0) == 0, "VR WRITTEN OUTSIDE");
  if (info == 0) {
    int pairs_ok = 1;
    for (int j = 0; j < n; j++) {
      if (wi[j] == 0) continue;
      if (wi[j] < 0 || j + 1 >= n || wr[j + 1] != wr[j] || wi[j + 1] != -wi[j]) pairs_ok = 0;
      j++;
    }
    check_true(&r, pairs_ok, "NOT CONJUGATE PAIRS");
    long double anorm = P(norm1)(n, n, a0, lda);
    if (jobvr == 'V' && n > 0) P(geev_vectors)(&r, 0, n, a0, lda, vr, ldvr, wr, wi, anorm);
    if (jobvl == 'V' && n > 0) P(geev_vectors)(&r, 1, n, a0, lda, vl, ldvl, wr, wi, anorm);
    if (wref) check_ratio(&r, "W-Wref", P(match_ratio)(n, wr, wi, wref, wref + n + 2, anorm));
  }
  if (wout) memcpy(wout, w, (size_t)(2 * n + 4) * sizeof(T));
  free(a), free(a0), free(w), free(w0), free(vl), free(vl0), free(vr), free(vr0), free(work);
  return r;
}
