/* The element-typed half of blasoffload_residency_bench, included once per precision by residency_bench.c with
 * T (float, double), P(name) (s##name, d##name) and EPS (FLT_EPSILON, DBL_EPSILON) defined: the scenarios on that
 * precision's gemv_/trsv_ and their double-precision checks. No include guard: it is meant to be included twice. */

void P(gemv_)(const char* trans, const int* m, const int* n, const T* alpha, const T* a, const int* lda, const T* x,
              const int* incx, const T* beta, T* y, const int* incy, size_t ltrans);
void P(trsv_)(const char* uplo, const char* trans, const char* diag, const int* n, const T* a, const int* lda, T* x,
              const int* incx, size_t luplo, size_t ltrans, size_t ldiag);

// The gemv check's limit, scaled from single precision's by the precision's eps.
#define GEMV_LIMIT (kGemvLimit * (EPS / FLT_EPSILON))

// A cheap new matrix: a program that recomputes its operand before each call. One xorshift of the index per element
// (shifts and xors only, so that it vectorizes with the baseline x86-64 instruction set: about 4x faster than a
// multiplicative hash there); values in (-1, 1), never zero, different for every seed.
static void P(rewrite_matrix)(T* a, size_t count, uint32_t seed) {
  const uint32_t s = seed * 0x85EBCA6Bu + 0x27D4EB2Fu;
  for (size_t i = 0; i < count; ++i) {
    uint32_t h = (uint32_t)i ^ s;
    h ^= h << 13;
    h ^= h >> 17;
    h ^= h << 5;
    a[i] = (T)(int32_t)(2 * (h >> 9) + 1) * ((T)1 / (T)8388608) - 1;
  }
}

// max_i |y_i - (A x)_i| / sum_j |A_ij| |x_j|, with A x in double (column by column, as A is stored).
static double P(check_gemv)(const T* a, int n, const T* x, const T* y) {
  double* ref = calloc((size_t)n, sizeof(double));
  double* mag = calloc((size_t)n, sizeof(double));
  if (!ref || !mag) {
    free(ref), free(mag);
    return NAN;
  }
  for (size_t j = 0; j < (size_t)n; ++j) {
    const double xj = x[j], axj = fabs(xj);
    const T* col = a + j * (size_t)n;
    for (size_t i = 0; i < (size_t)n; ++i) {
      ref[i] += col[i] * xj;
      mag[i] += fabs((double)col[i]) * axj;
    }
  }
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double r = fabs((double)y[i] - ref[i]) / (mag[i] > 0 ? mag[i] : 1.0);
    if (!(r <= worst)) worst = r;  // a NaN stays
  }
  free(ref), free(mag);
  return worst;
}

// The same ratio for row i alone (n strided reads, cheap enough for every call).
static double P(check_row)(const T* a, int n, int i, const T* x, const T* y) {
  double ref = 0, mag = 0;
  for (size_t j = 0; j < (size_t)n; ++j) {
    const double v = a[(size_t)i + j * (size_t)n];
    ref += v * x[j];
    mag += fabs(v * x[j]);
  }
  return fabs((double)y[i] - ref) / (mag > 0 ? mag : 1.0);
}

// power and rewrite: y = A x, x = y / ||y||, `iters` times. Returns 1 when the check failed, 2 on allocation failure.
static int P(run_power)(const Options* o, int rewrite) {
  const char* name = rewrite ? "rewrite" : "power";
  const int n = o->n, iters = rewrite ? o->rewrite_iters : o->power_iters, one = 1;
  const size_t nn = (size_t)n * (size_t)n;
  if (!budget_left(o)) {
    print_skip(name, o, n, "budget");
    return 0;
  }
  const char* madvise_error = NULL;
  T* a = (T*)alloc_matrix(nn * sizeof(T), o->thp, &madvise_error);
  T* x = malloc((size_t)n * sizeof(T));
  T* xin = malloc((size_t)n * sizeof(T));
  T* y = malloc((size_t)n * sizeof(T));
  double* call_ms = malloc((size_t)iters * sizeof(double));
  double* iter_ms = malloc((size_t)iters * sizeof(double));
  double* rewrite_ms = malloc((size_t)iters * sizeof(double));
  if (!a || !x || !xin || !y || !call_ms || !iter_ms || !rewrite_ms) {
    print_skip(name, o, n, "allocation failed");
    free(a), free(x), free(xin), free(y), free(call_ms), free(iter_ms), free(rewrite_ms);
    return 2;
  }
  // Filled once, untimed, also in rewrite: its first rewrite then finds the pages present, as a program's would.
  const double fill0 = now_s();
  for (size_t i = 0; i < nn; ++i) a[i] = hash_uniform(i, 1);
  const double fill_s = now_s() - fill0;
  double norm0 = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = hash_uniform((uint64_t)i, 2);
    norm0 += (double)x[i] * x[i];
  }
  for (int i = 0; i < n; ++i) x[i] = (T)(x[i] / sqrt(norm0));

  const T alpha = 1, beta = 0;
  double norm = 0, total_s = 0, probe_worst = 0;
  int done = 0, bad_norm = 0;
  for (int k = 0; k < iters && budget_left(o); ++k) {
    const double t0 = now_s();
    if (rewrite) P(rewrite_matrix)(a, nn, (uint32_t)k + 100u);
    memcpy(xin, x, (size_t)n * sizeof(T));
    const double t1 = now_s();
    P(gemv_)("N", &n, &n, &alpha, a, &n, x, &one, &beta, y, &one, 1);
    const double t2 = now_s();
    norm = 0;
    for (int i = 0; i < n; ++i) norm += (double)y[i] * y[i];
    norm = sqrt(norm);
    if (!(norm > 0) || !isfinite(norm)) bad_norm = 1;
    const T inv = bad_norm ? (T)1 : (T)(1.0 / norm);
    for (int i = 0; i < n; ++i) x[i] = y[i] * inv;
    rewrite_ms[k] = 1e3 * (t1 - t0);
    call_ms[k] = 1e3 * (t2 - t1);
    iter_ms[k] = 1e3 * (now_s() - t0);
    total_s += iter_ms[k] * 1e-3;
    ++done;
    if (bad_norm) break;
    // Every call is probed on one row (untimed, n strided reads): a call served from a stale device copy (rewrite) or
    // a wrong one anywhere in the loop fails here even if the last call is right.
    const double p = P(check_row)(a, n, (int)((size_t)k * 7919u % (size_t)n), xin, y);
    if (!(p <= probe_worst)) probe_worst = p;
  }
  if (done == 0) {
    print_skip(name, o, n, "budget");
    free(a), free(x), free(xin), free(y), free(call_ms), free(iter_ms), free(rewrite_ms);
    return 0;
  }
  // power: one more (untimed) call on the final x: after 100 calls served from a device copy, that copy must still
  // be the matrix. rewrite: the last timed call itself, which must have seen the last rewrite (a stale device copy
  // of the previous values fails by orders of magnitude).
  if (!rewrite && !bad_norm) {
    memcpy(xin, x, (size_t)n * sizeof(T));
    P(gemv_)("N", &n, &n, &alpha, a, &n, xin, &one, &beta, y, &one, 1);
  }
  const double full = P(check_gemv)(a, n, xin, y);
  const double err = isnan(full) || full > probe_worst ? full : probe_worst;
  const int ok = !bad_norm && err <= GEMV_LIMIT;
  double calls_s = 0;
  for (int k = 0; k < done; ++k) calls_s += call_ms[k] * 1e-3;
  const int from = done >= 2 ? done / 2 : 0;
  const double median = median_of(call_ms + from, done - from);

  begin_line(name, o, n);
  printf(", \"iterations\": %d, \"iterations_wanted\": %d, \"total_s\": %.4f, \"calls_s\": %.4f", done, iters, total_s,
         calls_s);
  print_stats("", call_ms, done);
  if (rewrite) {
    print_stats("iter_", iter_ms, done);
    print_stats("rewrite_", rewrite_ms, done);
  }
  printf(
      ", \"probe_worst\": %.4g, \"steady_from\": %d, \"gbs\": %.1f, \"matrix_mib\": %.0f, \"fill_s\": %.3f, "
      "\"last_norm\": %.6g",
      isfinite(probe_worst) ? probe_worst : -1.0, from,
      median > 0 ? (double)nn * (double)sizeof(T) / (median * 1e-3) * 1e-9 : 0.0,
      (double)nn * (double)sizeof(T) / 1048576.0, fill_s, isfinite(norm) ? norm : -1.0);
  print_check(err, GEMV_LIMIT, ok,
              bad_norm ? "||y|| was 0 or not finite"
              : rewrite
                  ? "max_i |y_i - (Ax)_i| / sum_j |A_ij||x_j| (A x in double) over the last timed call (after the "
                    "last rewrite) and one row of every call"
                  : "max_i |y_i - (Ax)_i| / sum_j |A_ij||x_j| (A x in double) over one more call on the final x "
                    "and one row of every call");
  if (o->thp) {
    printf(", \"anon_huge_kb\": %ld, \"madvise\": ", anon_huge_kb(a));
    print_json_str(madvise_error ? madvise_error : "ok");
  }
  print_times("times_ms", call_ms, done);
  if (rewrite) print_times("iter_times_ms", iter_ms, done);
  end_line(o);
  free(a), free(x), free(xin), free(y), free(call_ms), free(iter_ms), free(rewrite_ms);
  return ok ? 0 : 1;
}

// strsv: `iters` solves L x = b with one lower-triangular factor, a new b each time (as a program solving with a
// factorization it keeps). Returns 1 when the check failed, 2 on allocation failure.
static int P(run_strsv)(const Options* o) {
  const int n = o->strsv_n, iters = o->strsv_iters, one = 1;
  const size_t nn = (size_t)n * (size_t)n;
  if (!budget_left(o)) {
    print_skip("strsv", o, n, "budget");
    return 0;
  }
  T* l = malloc(nn * sizeof(T));
  T* x = malloc((size_t)n * sizeof(T));
  T* b = malloc((size_t)n * sizeof(T));
  double* call_ms = malloc((size_t)iters * sizeof(double));
  if (!l || !x || !b || !call_ms) {
    print_skip("strsv", o, n, "allocation failed");
    free(l), free(x), free(b), free(call_ms);
    return 2;
  }
  // Off-diagonal entries in (-1/n, 1/n) and a diagonal in [1, 2): diagonally dominant by rows, so the solve is well
  // conditioned at any n and its residual measures the solver alone. The strict upper triangle, which strsv must not
  // read, holds O(1) values: a solver that used them would fail the check.
  const double fill0 = now_s();
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      const T u = hash_uniform(i + j * (size_t)n, 5);
      l[i + j * (size_t)n] = i > j ? u / (T)n : i == j ? (T)1 + (T)fabs(u) : u;
    }
  const double fill_s = now_s() - fill0;
  int done = 0;
  const double loop0 = now_s();
  for (int k = 0; k < iters && budget_left(o); ++k) {
    for (int i = 0; i < n; ++i) b[i] = hash_uniform((uint64_t)i, 1000u + (uint64_t)k);
    memcpy(x, b, (size_t)n * sizeof(T));
    const double t0 = now_s();
    P(trsv_)("L", "N", "N", &n, l, &n, x, &one, 1, 1, 1);
    call_ms[k] = 1e3 * (now_s() - t0);
    ++done;
  }
  const double total_s = now_s() - loop0;
  if (done == 0) {
    print_skip("strsv", o, n, "budget");
    free(l), free(x), free(b), free(call_ms);
    return 0;
  }
  // The last solve's residual in double: ||L x - b||_inf / (||L||_inf ||x||_inf n eps).
  double* r = calloc((size_t)n, sizeof(double));
  double* rowsum = calloc((size_t)n, sizeof(double));
  double ratio = NAN;
  if (r && rowsum) {
    for (int i = 0; i < n; ++i) r[i] = -(double)b[i];
    for (size_t j = 0; j < (size_t)n; ++j) {
      const double xj = x[j];
      const T* col = l + j * (size_t)n;
      for (size_t i = j; i < (size_t)n; ++i) {
        r[i] += col[i] * xj;
        rowsum[i] += fabs((double)col[i]);
      }
    }
    double rn = 0, ln = 0, xn = 0;
    for (int i = 0; i < n; ++i) {
      if (!(fabs(r[i]) <= rn)) rn = fabs(r[i]);
      if (rowsum[i] > ln) ln = rowsum[i];
      if (!(fabs((double)x[i]) <= xn)) xn = fabs((double)x[i]);
    }
    ratio = rn / (ln * xn * n * (EPS * 0.5));
  }
  free(r), free(rowsum);
  const int ok = ratio <= kTrsvLimit;
  double calls_s = 0;
  for (int k = 0; k < done; ++k) calls_s += call_ms[k] * 1e-3;
  const int from = done >= 2 ? done / 2 : 0;
  const double median = median_of(call_ms + from, done - from);
  const double bytes = (double)n * ((double)n + 1) / 2 * (double)sizeof(T);

  begin_line("strsv", o, n);
  printf(", \"iterations\": %d, \"iterations_wanted\": %d, \"total_s\": %.4f, \"calls_s\": %.4f", done, iters, total_s,
         calls_s);
  print_stats("", call_ms, done);
  printf(", \"steady_from\": %d, \"gbs\": %.1f, \"matrix_mib\": %.0f, \"fill_s\": %.3f", from,
         median > 0 ? bytes / (median * 1e-3) * 1e-9 : 0.0, (double)nn * (double)sizeof(T) / 1048576.0, fill_s);
  print_check(ratio, kTrsvLimit, ok, "last solve: ||Lx-b||inf/(||L||inf ||x||inf n eps), in double");
  print_times("times_ms", call_ms, done);
  end_line(o);
  free(l), free(x), free(b), free(call_ms);
  return ok ? 0 : 1;
}

#undef GEMV_LIMIT
