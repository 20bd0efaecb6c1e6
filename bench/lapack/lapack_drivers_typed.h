/* The element-typed half of blasoffload_lapack_drivers, included once per precision by lapack_drivers.c (through
 * bench/common/each_precision.h, complex passes included) with T (float, double, float _Complex, double _Complex),
 * BO_CPLX, P(name) (s##name ... z##name) and EPS (FLT_EPSILON, DBL_EPSILON) defined: the LAPACK routines of that
 * precision, the inputs, the O(n^2) checks (in double precision, or double _Complex, without BLAS: the stack under
 * test) and one order's timed factorizations. No include guard: it is meant to be included 4 times. */

void P(getrf_)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
void P(gesv_)(const int* n, const int* nrhs, T* a, const int* lda, int* ipiv, T* b, const int* ldb, int* info);
void P(geqrf_)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);
void P(potrf_)(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t luplo);
void P(getrs_)(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,
               const int* ldb, int* info, size_t ltrans);
void P(potrs_)(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, T* b, const int* ldb,
               int* info, size_t luplo);

// The checks' arithmetic: double, or double _Complex for a complex T (its modulus, its conjugate).
#if BO_CPLX
typedef double _Complex P(wide);
static double P(wabs)(P(wide) x) { return cabs(x); }
static P(wide) P(wconj)(P(wide) x) { return conj(x); }
// Element k of a hash_uniform stream: a complex one takes two values (real and imaginary parts in (-1, 1)).
static T P(hash_elem)(size_t k, uint64_t seed) { return hash_uniform(2 * k, seed) + hash_uniform(2 * k + 1, seed) * I; }
#else
typedef double P(wide);
static double P(wabs)(P(wide) x) { return fabs(x); }
static P(wide) P(wconj)(P(wide) x) { return x; }
static T P(hash_elem)(size_t k, uint64_t seed) { return hash_uniform(k, seed); }
#endif

// Matrices whose elimination really pivots: hash_uniform (bench/hash_uniform.h) entries, on all cores.
typedef struct {
  T* a;
  uint64_t seed;
} P(FillJob);
static void P(fill_range)(size_t lo, size_t hi, void* ctx) {
  const P(FillJob)* j = (const P(FillJob)*)ctx;
  for (size_t i = lo; i < hi; ++i) j->a[i] = P(hash_elem)(i, j->seed);
}
static void P(fill_uniform)(T* a, size_t count, uint64_t seed) {
  P(FillJob) j = {a, seed};
  parallel_ranges(count, count, P(fill_range), &j);
}

// Symmetric (Hermitian for a complex T: the upper triangle the conjugate of the lower), off-diagonal entries uniform
// in (-1, 1) (each part), diagonal n + 1 (2n for a complex T, whose entries have moduli up to sqrt 2): strictly
// diagonally dominant, hence positive definite; built element by element (no BLAS: the stack under test must not be
// trusted to build its own input).
typedef struct {
  T* a;
  int n;
} P(SpdJob);
static void P(spd_columns)(size_t j0, size_t j1, void* ctx) {
  const P(SpdJob)* job = (const P(SpdJob)*)ctx;
  const int n = job->n;
  const T diag = BO_CPLX ? (T)(2 * n) : (T)n + 1;
  for (size_t j = j0; j < j1; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      const size_t lo = i < j ? i : j, hi = i < j ? j : i;
      const T v = P(hash_elem)(lo + hi * (size_t)n, 3);
      job->a[i + j * n] = i == j ? diag : i > j ? v : (T)P(wconj)(v);
    }
}
static void P(fill_spd)(T* a, int n) {
  P(SpdJob) job = {a, n};
  parallel_ranges((size_t)n, (size_t)n * (size_t)n, P(spd_columns), &job);
}

// getrf: sampled entries of L*U against the same entries of P*A, each relative to sum_k |L_ik||U_kj| (the
// componentwise backward-error bound, about n eps).
static double P(check_getrf)(const T* lu, const T* a0, const int* ipiv, int n, int samples) {
  int* perm = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = 0; i < n; ++i) {
    const int p = ipiv[i] - 1, t = perm[i];
    if (p < i || p >= n) {  // LAPACK only swaps with a later row: anything else is a wrong result
      free(perm);
      return NAN;
    }
    perm[i] = perm[p];
    perm[p] = t;
  }
  uint64_t seed = 12345;
  double worst = 0;
  const double eps = EPS * 0.5;
  for (int s = 0; s < samples; ++s) {
    int i = (int)(lcg(&seed) % (uint64_t)n), j = (int)(lcg(&seed) % (uint64_t)n);
    if (s == 0) i = j = n - 1;  // the last pivot sees every update
    if (s == 1) i = n - 1, j = 0;
    const int kmax = i < j ? i : j;
    P(wide) sum = 0;
    double mag = 0;
    for (int k = 0; k <= kmax; ++k) {
      const P(wide) l = k == i ? 1.0 : lu[i + (size_t)k * n];
      const P(wide) u = lu[k + (size_t)j * n];
      sum += l * u;
      mag += P(wabs)(l * u);
    }
    const P(wide) ref = a0[perm[i] + (size_t)j * n];
    const double r = P(wabs)(sum - ref) / ((mag > 0 ? mag : 1.0) * n * eps);
    if (!(r <= worst)) worst = r;  // a NaN stays
  }
  free(perm);
  return worst;
}

// potrf (lower): sampled entries of L*L^T (L*L^H for a complex T) against A.
static double P(check_potrf)(const T* l, const T* a0, int n, int samples) {
  uint64_t seed = 777;
  double worst = 0;
  const double eps = EPS * 0.5;
  for (int s = 0; s < samples; ++s) {
    int i = (int)(lcg(&seed) % (uint64_t)n), j = (int)(lcg(&seed) % (uint64_t)n);
    if (s == 0) i = j = n - 1;
    if (j > i) {
      const int t = i;
      i = j;
      j = t;
    }
    P(wide) sum = 0;
    double mag = 0;
    for (int k = 0; k <= j; ++k) {
      const P(wide) p = (P(wide))l[i + (size_t)k * n] * P(wconj)(l[j + (size_t)k * n]);
      sum += p;
      mag += P(wabs)(p);
    }
    const double r = P(wabs)(sum - (P(wide))a0[i + (size_t)j * n]) / ((mag > 0 ? mag : 1.0) * n * eps);
    if (!(r <= worst)) worst = r;
  }
  return worst;
}

// geqrf: Q is orthogonal (unitary), so column j of R has the 2-norm of column j of A; every column is compared.
static double P(check_geqrf)(const T* qr, const T* a0, int n) {
  double worst = 0;
  const double eps = EPS * 0.5;
  for (size_t j = 0; j < (size_t)n; ++j) {
    double na = 0, nr = 0;
    for (size_t i = 0; i < (size_t)n; ++i) na += P(wabs)(a0[i + j * n]) * P(wabs)(a0[i + j * n]);
    for (size_t i = 0; i <= j; ++i) nr += P(wabs)(qr[i + j * n]) * P(wabs)(qr[i + j * n]);
    const double r = fabs(sqrt(nr) - sqrt(na)) / (sqrt(na) * n * eps);
    if (!(r <= worst)) worst = r;
  }
  return worst;
}

// gesv: ||b - A x||_inf / (||A||_inf ||x||_inf n eps), the residual in double.
static double P(check_gesv)(const T* a0, const T* x, const T* b0, int n) {
  P(wide)* r = calloc((size_t)n, sizeof(P(wide)));
  double* rowsum = calloc((size_t)n, sizeof(double));
  for (int i = 0; i < n; ++i) r[i] = b0[i];
  for (size_t j = 0; j < (size_t)n; ++j) {
    const P(wide) xj = x[j];
    const T* col = a0 + j * n;
    for (size_t i = 0; i < (size_t)n; ++i) {
      r[i] -= col[i] * xj;
      rowsum[i] += P(wabs)(col[i]);
    }
  }
  double rn = 0, an = 0, xn = 0;
  for (int i = 0; i < n; ++i) {
    if (!(P(wabs)(r[i]) <= rn)) rn = P(wabs)(r[i]);
    if (rowsum[i] > an) an = rowsum[i];
    if (!(P(wabs)(x[i]) <= xn)) xn = P(wabs)(x[i]);
  }
  free(r);
  free(rowsum);
  return rn / (an * xn * n * (EPS * 0.5));
}

// One order n: every wanted driver, g_warm + reps calls each (more while --min-time asks; the matrix restored before
// every one, only the LAPACK call timed), one JSON line per driver. Returns the number of failures.
static int P(run_order)(int n, int reps, const Wanted* w, double budget, double start) {
  const int one = 1;
  int failures = 0;
  const size_t nn = (size_t)n * (size_t)n;
  T* a = xmalloc(nn * sizeof(T));
  T* a0 = xmalloc(nn * sizeof(T));
  T* b = xmalloc((size_t)n * sizeof(T));
  T* b0 = xmalloc((size_t)n * sizeof(T));
  T* tau = xmalloc((size_t)n * sizeof(T));
  int* ipiv = xmalloc((size_t)n * sizeof(int));
  // Solves are cheap next to a factorization: at least 5 of them, so the repeated ones have a median.
  const int solve_reps = reps > 5 ? reps : 5;
  double* t = xmalloc(sizeof(double) * (size_t)(g_warm + (solve_reps > kMaxReps ? solve_reps : kMaxReps)));
  if (!a || !a0 || !b || !b0 || !tau || !ipiv || !t) {
    print_skip("all", n, "allocation failed");
    ++failures;
    free(a), free(a0), free(b), free(b0), free(tau), free(ipiv), free(t);
    return failures;
  }
  P(fill_uniform)(a0, nn, 1);
  P(fill_uniform)(b0, (size_t)n, 2);
  int spd = 0;  // a0 holds the SPD matrix (potrf, potrs) instead of the uniform one
  int info = 0;
  // g_warm + R calls, R = reps or more until the timed ones took g_min_time (at most kMaxReps); RESTORE (untimed)
  // before each; leaves the number of calls in `calls`.
#define BUDGET_LEFT() (budget <= 0 || now_s() - start < budget)
#define TIMED_CALLS(R, RESTORE, CALL)                                                                     \
  do {                                                                                                    \
    double spent = 0;                                                                                     \
    for (calls = 0; calls < g_warm + (R) || (spent < g_min_time && calls < g_warm + kMaxReps); ++calls) { \
      RESTORE;                                                                                            \
      const double t0 = now_s();                                                                          \
      CALL;                                                                                               \
      t[calls] = now_s() - t0;                                                                            \
      if (calls >= g_warm) spent += t[calls];                                                             \
    }                                                                                                     \
  } while (0)
  int calls = 0;
  if (w->getrf) {
    if (!BUDGET_LEFT()) {
      print_skip("getrf", n, "budget");
    } else {
      TIMED_CALLS(reps, par_copy(a, a0, nn * sizeof(T)), P(getrf_)(&n, &n, a, &n, ipiv, &info));
      const double ratio = info == 0 ? P(check_getrf)(a, a0, ipiv, n, 64) : NAN;
      print_point("getrf", n, calls, t, info, ratio, "max over 64 sampled entries |LU-PA|/(sum|L||U| n eps)");
      failures += !(info == 0 && ratio <= kThreshold);
    }
  }
  if (w->getrf_dominant) {
    if (!BUDGET_LEFT()) {
      print_skip("getrf_dominant", n, "budget");
    } else {
      T* d0 = xmalloc(nn * sizeof(T));
      if (!d0) {
        print_skip("getrf_dominant", n, "allocation failed");
        ++failures;
      } else {
        par_copy(d0, a0, nn * sizeof(T));
        for (int i = 0; i < n; ++i) d0[(size_t)i * (size_t)n + (size_t)i] += (T)n;
        TIMED_CALLS(reps, par_copy(a, d0, nn * sizeof(T)), P(getrf_)(&n, &n, a, &n, ipiv, &info));
        int swaps = 0;
        for (int i = 0; i < n && info == 0; ++i) swaps += ipiv[i] != i + 1;
        const double ratio = info == 0 ? P(check_getrf)(a, d0, ipiv, n, 64) : NAN;
        print_point("getrf_dominant", n, calls, t, info, ratio,
                    swaps ? "max over 64 sampled entries |LU-PA|/(sum|L||U| n eps); ROWS WERE SWAPPED"
                          : "max over 64 sampled entries |LU-PA|/(sum|L||U| n eps); no row swapped");
        failures += !(info == 0 && ratio <= kThreshold);
        free(d0);
      }
    }
  }
  if (w->gesv) {
    if (!BUDGET_LEFT()) {
      print_skip("gesv", n, "budget");
    } else {
      TIMED_CALLS(reps, (par_copy(a, a0, nn * sizeof(T)), memcpy(b, b0, (size_t)n * sizeof(T))),
                  P(gesv_)(&n, &one, a, &n, ipiv, b, &n, &info));
      const double ratio = info == 0 ? P(check_gesv)(a0, b, b0, n) : NAN;
      print_point("gesv", n, calls, t, info, ratio, "||b-Ax||inf/(||A||inf ||x||inf n eps), nrhs 1");
      failures += !(info == 0 && ratio <= kThreshold);
    }
  }
  if (w->getrs) {
    if (!BUDGET_LEFT()) {
      print_skip("getrs", n, "budget");
    } else {
      // The factors once (not timed), then repeated solves on them: only B changes between calls, so a library
      // that keeps the factors on the GPU moves B alone after the first solve.
      par_copy(a, a0, nn * sizeof(T));
      P(getrf_)(&n, &n, a, &n, ipiv, &info);
      if (info == 0)
        TIMED_CALLS(solve_reps, memcpy(b, b0, (size_t)n * sizeof(T)),
                    P(getrs_)("N", &n, &one, a, &n, ipiv, b, &n, &info, 1));
      else
        calls = 1, t[0] = 0;  // the factorization failed: no solve (check FAIL, info > 0)
      const double ratio = info == 0 ? P(check_gesv)(a0, b, b0, n) : NAN;
      print_point("getrs", n, calls, t, info, ratio,
                  "||b-Ax||inf/(||A||inf ||x||inf n eps), nrhs 1, repeated on one untimed getrf");
      failures += !(info == 0 && ratio <= kThreshold);
    }
  }
  if (w->geqrf) {
    if (!BUDGET_LEFT()) {
      print_skip("geqrf", n, "budget");
    } else {
      T query = 0;
      int lwork = -1;
      P(geqrf_)(&n, &n, a, &n, tau, &query, &lwork, &info);
      lwork = (int)query > n ? (int)query : n;
      T* work = xmalloc((size_t)lwork * sizeof(T));
      if (!work) {
        print_skip("geqrf", n, "allocation failed");
        ++failures;
      } else {
        TIMED_CALLS(reps, par_copy(a, a0, nn * sizeof(T)), P(geqrf_)(&n, &n, a, &n, tau, work, &lwork, &info));
        const double ratio = info == 0 ? P(check_geqrf)(a, a0, n) : NAN;
        print_point("geqrf", n, calls, t, info, ratio, "max over columns | ||R_j|| - ||A_j|| | / (||A_j|| n eps)");
        failures += !(info == 0 && ratio <= kThreshold);
      }
      free(work);
    }
  }
  if (w->potrf) {
    if (!BUDGET_LEFT()) {
      print_skip("potrf", n, "budget");
    } else {
      if (!spd) P(fill_spd)(a0, n), spd = 1;
      TIMED_CALLS(reps, par_copy(a, a0, nn * sizeof(T)), P(potrf_)("L", &n, a, &n, &info, 1));
      const double ratio = info == 0 ? P(check_potrf)(a, a0, n, 64) : NAN;
      print_point("potrf", n, calls, t, info, ratio, "max over 64 sampled entries |LL^T-A|/(sum|L||L| n eps)");
      failures += !(info == 0 && ratio <= kThreshold);
    }
  }
  if (w->potrs) {
    if (!BUDGET_LEFT()) {
      print_skip("potrs", n, "budget");
    } else {
      if (!spd) P(fill_spd)(a0, n), spd = 1;
      par_copy(a, a0, nn * sizeof(T));
      P(potrf_)("L", &n, a, &n, &info, 1);
      if (info == 0)
        TIMED_CALLS(solve_reps, memcpy(b, b0, (size_t)n * sizeof(T)), P(potrs_)("L", &n, &one, a, &n, b, &n, &info, 1));
      else
        calls = 1, t[0] = 0;  // the factorization failed: no solve (check FAIL, info > 0)
      const double ratio = info == 0 ? P(check_gesv)(a0, b, b0, n) : NAN;
      print_point("potrs", n, calls, t, info, ratio,
                  "||b-Ax||inf/(||A||inf ||x||inf n eps), nrhs 1, repeated on one untimed potrf (lower)");
      failures += !(info == 0 && ratio <= kThreshold);
    }
  }
#undef TIMED_CALLS
#undef BUDGET_LEFT
  free(a), free(a0), free(b), free(b0), free(tau), free(ipiv), free(t);
  return failures;
}
