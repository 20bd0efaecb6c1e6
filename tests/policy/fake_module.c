/* A stand-in for libblasoffload_cuda.so that implements CUDA module API v5 with plain CPU loops, so the offload
 * policy (who goes where, initialisation, fallbacks) can be tested end to end on machines without a GPU.
 *
 * Behaviour is steered by the environment, read directly (not through the host's config, so the core cannot
 * hide it):
 *   FAKE_CUDA_INIT_MS=N       init() sleeps N ms first (makes background initialisation observable)
 *   FAKE_CUDA_NO_DEVICE=1     init() reports BO_CUDA_NO_DEVICE
 *   FAKE_CUDA_FAIL=r[,r...]   those routines (sgemm, sgemv, strsv, snrm2, strsm, ssyrk) return BO_CUDA_LAUNCH_FAILED
 *   FAKE_CUDA_NO_ESTIMATE=1   kernel_us() returns -1 (no tuned table)
 *   FAKE_CUDA_COUNTS=path     at exit, write "sgemm N\nsgemv N\n..." for all six routines (calls that reached the
 *                             module)
 *   FAKE_CUDA_TRACE=path      append one line per lifecycle event (load, init-begin, init-end, shutdown, ...)
 *
 * The fake also holds the core to the module contract of src/offload/cuda_module_api.h: a routine called before
 * a successful init() or after shutdown(), a second init(), shutdown() racing a running init(), or arguments that
 * are not checked/normalised are reported on stderr as "fake-cuda: contract violation: ..." (tests reject that
 * text) and the call is refused, so the core's fallback keeps the numbers right and only the message tells. */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offload/cuda_module_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

enum { kIdle = 0, kInitRunning = 1, kReady = 2, kNoDevice = 3, kShutDown = 4, kForked = 5 };

static _Atomic int g_state = kIdle;
static atomic_int g_init_calls;
#define FAKE_ROUTINES 6 /* indexed by enum bo_cuda_routine */
static atomic_long g_counts[FAKE_ROUTINES];
static const struct bo_cuda_host_services* g_host;
static const char* const kRoutineNames[FAKE_ROUTINES] = {"sgemm", "sgemv", "strsv", "snrm2", "strsm", "ssyrk"};
/* What measure() reports and what the module's name ends with, as for the real module (the core recognises the GPU
 * a policy file was measured on by this name). */
#define FAKE_GPU_NAME "fake GPU (blasoffload tests)"

static void trace(const char* fmt, ...) {
  const char* path = getenv("FAKE_CUDA_TRACE");
  if (!path || !*path) return;
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* One append per line: the core may call us from several threads, and an exiting process must not lose lines. */
  FILE* f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s\n", line);
  fclose(f);
}

static void violation(const char* fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "fake-cuda: contract violation: %s\n", msg);
  trace("violation %s", msg);
}

static int env_flag(const char* name) {
  const char* v = getenv(name);
  return v && strcmp(v, "1") == 0;
}

/* FAKE_CUDA_FAIL holds routine names separated by commas. */
static int should_fail(int routine) {
  const char* v = getenv("FAKE_CUDA_FAIL");
  if (!v) return 0;
  const char* name = kRoutineNames[routine];
  const size_t len = strlen(name);
  for (const char* p = v; (p = strstr(p, name)) != NULL; p += len)
    if ((p == v || p[-1] == ',') && (p[len] == '\0' || p[len] == ',')) return 1;
  return 0;
}

/* Every routine passes through here: counts the call and decides whether the core was entitled to make it. */
static int enter(int routine) {
  atomic_fetch_add(&g_counts[routine], 1);
  const int state = atomic_load(&g_state);
  if (state == kForked) return BO_CUDA_FORKED_CHILD; /* the core may ask; we must just refuse */
  if (state != kReady) {
    violation("%s called while the module is %s", kRoutineNames[routine],
              state == kIdle          ? "not initialised"
              : state == kInitRunning ? "still initialising"
              : state == kNoDevice    ? "without a device (init failed)"
                                      : "shut down");
    return BO_CUDA_NO_DEVICE;
  }
  if (should_fail(routine)) {
    trace("fail %s", kRoutineNames[routine]);
    return BO_CUDA_LAUNCH_FAILED;
  }
  return BO_CUDA_OK;
}

static int is_trans(char t) { return t == 'T' || t == 'C'; }
static int64_t max1(int64_t v) { return v > 1 ? v : 1; }
/* Index of element i of a strided vector of len entries, as the reference BLAS walks it (negative steps start at
 * the far end). */
static int64_t vidx(int64_t i, int64_t len, int64_t inc) { return inc > 0 ? i * inc : (i - (len - 1)) * inc; }

static int fake_init(const struct bo_cuda_host_services* host) {
  if (atomic_fetch_add(&g_init_calls, 1) != 0) {
    violation("init called more than once");
    return atomic_load(&g_state) == kReady ? BO_CUDA_OK : BO_CUDA_NO_DEVICE;
  }
  if (!host || host->version != BO_CUDA_API_VERSION || !host->config || !host->log) {
    violation("init got no or incompatible host services");
    atomic_store(&g_state, kNoDevice);
    return BO_CUDA_NO_DEVICE;
  }
  g_host = host;
  atomic_store(&g_state, kInitRunning);
  trace("init-begin");
  host->log(BO_LOG_DEBUG, "fake-cuda: init begins");
  const char* ms = getenv("FAKE_CUDA_INIT_MS");
  if (ms && atol(ms) > 0) {
    const long v = atol(ms);
    struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  const int no_device = env_flag("FAKE_CUDA_NO_DEVICE");
  int expected = kInitRunning;
  /* shutdown() may already have run (a broken core): keep its state so later calls are caught. */
  atomic_compare_exchange_strong(&g_state, &expected, no_device ? kNoDevice : kReady);
  trace("init-end %s", no_device ? "no-device" : "ok");
  /* A real module logs here too, and this may run on the core's background thread while the process exits. */
  host->log(BO_LOG_DEBUG, no_device ? "fake-cuda: init: no device" : "fake-cuda: init done");
  return no_device ? BO_CUDA_NO_DEVICE : BO_CUDA_OK;
}

static int fake_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, double cpu_share) {
  const int st = enter(BO_CUDA_SGEMM);
  if (st != BO_CUDA_OK) return st;
  if (cpu_share < 0 || cpu_share >= 1) violation("sgemm cpu_share %g outside [0, 1)", cpu_share);
  if (cpu_share > 0) trace("sgemm cpu_share %.2f", cpu_share);
  const int ta = is_trans(transa), tb = is_trans(transb);
  if (!strchr("NTC", transa) || !strchr("NTC", transb) || m <= 0 || n <= 0 || k < 0 || lda < max1(ta ? k : m) ||
      ldb < max1(tb ? n : k) || ldc < max1(m) || !c || (k > 0 && (!a || !b))) {
    violation("sgemm(%c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld) not checked", transa, transb, (long long)m,
              (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc);
    return BO_CUDA_UNSUPPORTED;
  }
  double* col = malloc(sizeof(double) * (size_t)m);
  if (!col) return BO_CUDA_OUT_OF_MEMORY;
  for (int64_t j = 0; j < n; ++j) {
    if (!ta) {
      for (int64_t i = 0; i < m; ++i) col[i] = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double blj = tb ? b[j + l * ldb] : b[l + j * ldb];
        const float* al = a + l * lda;
        for (int64_t i = 0; i < m; ++i) col[i] += (double)al[i] * blj;
      }
    } else {
      for (int64_t i = 0; i < m; ++i) {
        const float* ai = a + i * lda; /* column i of A is row i of op(A) */
        double s = 0;
        for (int64_t l = 0; l < k; ++l) s += (double)ai[l] * (tb ? b[j + l * ldb] : b[l + j * ldb]);
        col[i] = s;
      }
    }
    float* cj = c + j * ldc;
    for (int64_t i = 0; i < m; ++i)
      cj[i] = (float)(beta == 0.0f ? (double)alpha * col[i] : (double)alpha * col[i] + (double)beta * cj[i]);
  }
  free(col);
  return BO_CUDA_OK;
}

static int fake_sgemv(char trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
                      int64_t incx, float beta, float* y, int64_t incy) {
  const int st = enter(BO_CUDA_SGEMV);
  if (st != BO_CUDA_OK) return st;
  if (!strchr("NTC", trans) || m <= 0 || n <= 0 || lda < max1(m) || incx == 0 || incy == 0 || !a || !x || !y) {
    violation("sgemv(%c m=%lld n=%lld lda=%lld incx=%lld incy=%lld) not checked", trans, (long long)m, (long long)n,
              (long long)lda, (long long)incx, (long long)incy);
    return BO_CUDA_UNSUPPORTED;
  }
  const int t = is_trans(trans);
  const int64_t lx = t ? m : n, ly = t ? n : m;
  double* acc = calloc((size_t)ly, sizeof(double));
  if (!acc) return BO_CUDA_OUT_OF_MEMORY;
  for (int64_t j = 0; j < n; ++j) {
    const float* aj = a + j * lda;
    if (t) {
      double s = 0;
      for (int64_t i = 0; i < m; ++i) s += (double)aj[i] * x[vidx(i, lx, incx)];
      acc[j] = s;
    } else {
      const double xj = x[vidx(j, lx, incx)];
      for (int64_t i = 0; i < m; ++i) acc[i] += (double)aj[i] * xj;
    }
  }
  for (int64_t i = 0; i < ly; ++i) {
    float* yi = y + vidx(i, ly, incy);
    *yi = (float)(beta == 0.0f ? (double)alpha * acc[i] : (double)alpha * acc[i] + (double)beta * *yi);
  }
  free(acc);
  return BO_CUDA_OK;
}

static int fake_strsv(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda, float* x,
                      int64_t incx) {
  const int st = enter(BO_CUDA_STRSV);
  if (st != BO_CUDA_OK) return st;
  if (!strchr("UL", uplo) || !strchr("NTC", trans) || !strchr("UN", diag) || n <= 0 || lda < max1(n) || incx == 0 ||
      !a || !x) {
    violation("strsv(%c%c%c n=%lld lda=%lld incx=%lld) not checked", uplo, trans, diag, (long long)n, (long long)lda,
              (long long)incx);
    return BO_CUDA_UNSUPPORTED;
  }
  double* v = malloc(sizeof(double) * (size_t)n);
  if (!v) return BO_CUDA_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; ++i) v[i] = x[vidx(i, n, incx)];
  /* op(A) is lower triangular when (uplo L, no transpose) or (uplo U, transposed): forward substitution. Only
   * the triangle named by uplo is read, and the diagonal only when diag is N. */
  const int lower = (uplo == 'L') != is_trans(trans);
  const int unit = diag == 'U';
#define OP_A(i, j) (is_trans(trans) ? (double)a[(j) + (i)*lda] : (double)a[(i) + (j)*lda])
  if (lower) {
    for (int64_t i = 0; i < n; ++i) {
      double s = v[i];
      for (int64_t j = 0; j < i; ++j) s -= OP_A(i, j) * v[j];
      v[i] = unit ? s : s / OP_A(i, i);
    }
  } else {
    for (int64_t i = n - 1; i >= 0; --i) {
      double s = v[i];
      for (int64_t j = i + 1; j < n; ++j) s -= OP_A(i, j) * v[j];
      v[i] = unit ? s : s / OP_A(i, i);
    }
  }
#undef OP_A
  for (int64_t i = 0; i < n; ++i) x[vidx(i, n, incx)] = (float)v[i];
  free(v);
  return BO_CUDA_OK;
}

static int fake_snrm2(int64_t n, const float* x, int64_t incx, float* result) {
  const int st = enter(BO_CUDA_SNRM2);
  if (st != BO_CUDA_OK) return st;
  if (n <= 0 || !x || !result) {
    violation("snrm2(n=%lld) not checked", (long long)n);
    return BO_CUDA_UNSUPPORTED;
  }
  if (incx <= 0) return BO_CUDA_UNSUPPORTED; /* libraries disagree here; the contract leaves it to the CPU */
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += (double)x[i * incx] * x[i * incx];
  *result = (float)sqrt(s);
  return BO_CUDA_OK;
}

/* B := alpha op(A)^-1 B (side L) or alpha B op(A)^-1 (side R), in double, reading only the uplo triangle of A (and
 * its diagonal only for diag N). The core keeps alpha == 0 (B zeroed) for the CPU BLAS. */
static int fake_strsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, float alpha, const float* a,
                      int64_t lda, float* b, int64_t ldb) {
  const int st = enter(BO_CUDA_STRSM);
  if (st != BO_CUDA_OK) return st;
  const int64_t t = side == 'L' ? m : n;
  if (!strchr("LR", side) || !strchr("UL", uplo) || !strchr("NTC", transa) || !strchr("UN", diag) || m <= 0 || n <= 0 ||
      alpha == 0.0f || lda < max1(t) || ldb < max1(m) || !a || !b) {
    violation("strsm(%c%c%c%c m=%lld n=%lld alpha=%g lda=%lld ldb=%lld) not checked", side, uplo, transa, diag,
              (long long)m, (long long)n, (double)alpha, (long long)lda, (long long)ldb);
    return BO_CUDA_UNSUPPORTED;
  }
  /* Side R solves x^T op(A) = alpha b^T for each row b of B, i.e. op(A)^T x = alpha b: the same substitutions with
   * the other op, so one loop serves both sides. */
  const int tr = is_trans(transa) != (side == 'R');
  const int lower = (uplo == 'L') != tr;
  const int unit = diag == 'U';
  const int64_t systems = side == 'L' ? n : m;
  double* v = malloc(sizeof(double) * (size_t)t);
  if (!v) return BO_CUDA_OUT_OF_MEMORY;
#define OP_A(i, j) (tr ? (double)a[(j) + (i)*lda] : (double)a[(i) + (j)*lda])
#define B_AT(s, i) (*(side == 'L' ? &b[(i) + (s)*ldb] : &b[(s) + (i)*ldb]))
  for (int64_t sys = 0; sys < systems; ++sys) {
    for (int64_t i = 0; i < t; ++i) v[i] = (double)alpha * B_AT(sys, i);
    for (int64_t step = 0; step < t; ++step) {
      const int64_t i = lower ? step : t - 1 - step;
      double s = v[i];
      if (lower)
        for (int64_t j = 0; j < i; ++j) s -= OP_A(i, j) * v[j];
      else
        for (int64_t j = i + 1; j < t; ++j) s -= OP_A(i, j) * v[j];
      v[i] = unit ? s : s / OP_A(i, i);
    }
    for (int64_t i = 0; i < t; ++i) B_AT(sys, i) = (float)v[i];
  }
#undef B_AT
#undef OP_A
  free(v);
  return BO_CUDA_OK;
}

/* C := alpha op(A) op(A)^T + beta C on the uplo triangle only; beta == 0 never reads C. The core keeps alpha == 0
 * and k == 0 (a scaling of C) for the CPU BLAS. */
static int fake_ssyrk(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, float beta,
                      float* c, int64_t ldc) {
  const int st = enter(BO_CUDA_SSYRK);
  if (st != BO_CUDA_OK) return st;
  const int t = is_trans(trans);
  if (!strchr("UL", uplo) || !strchr("NTC", trans) || n <= 0 || k <= 0 || alpha == 0.0f || lda < max1(t ? k : n) ||
      ldc < max1(n) || !a || !c) {
    violation("ssyrk(%c%c n=%lld k=%lld alpha=%g lda=%lld ldc=%lld) not checked", uplo, trans, (long long)n,
              (long long)k, (double)alpha, (long long)lda, (long long)ldc);
    return BO_CUDA_UNSUPPORTED;
  }
#define OP_A(i, l) (t ? (double)a[(l) + (i)*lda] : (double)a[(i) + (l)*lda])
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i0 = uplo == 'U' ? 0 : j, i1 = uplo == 'U' ? j + 1 : n;
    for (int64_t i = i0; i < i1; ++i) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += OP_A(i, l) * OP_A(j, l);
      float* cij = c + i + j * ldc;
      *cij = (float)(beta == 0.0f ? (double)alpha * s : (double)alpha * s + (double)beta * *cij);
    }
  }
#undef OP_A
  return BO_CUDA_OK;
}

/* Deterministic and far faster than any CPU (20 TFLOP/s, 1 TB/s), so that the cost model's GPU side is dominated
 * by the transfer rates and call overhead the test's policy file sets. */
static double fake_kernel_us(int routine, char op, int64_t m, int64_t n, int64_t k) {
  if (env_flag("FAKE_CUDA_NO_ESTIMATE")) return -1;
  switch (routine) {
    case BO_CUDA_SGEMM:
      return 2.0 * (double)m * (double)n * (double)k / 20e6;
    case BO_CUDA_SGEMV:
      return 4.0 * (double)m * (double)n / 1e6;
    case BO_CUDA_STRSV:
      return 2.0 * (double)n * (double)(n + 1) / 1e6;
    case BO_CUDA_SNRM2:
      return 4.0 * (double)n / 1e6;
    case BO_CUDA_STRSM:
      return (double)m * (double)n * (double)(op == 'L' ? m : n) / 20e6;
    case BO_CUDA_SSYRK:
      return (double)n * (double)n * (double)k / 20e6;
    default:
      return -1;
  }
}

static int fake_is_device_pointer(const void* p) {
  (void)p;
  return 0;
}

static int fake_measure(struct bo_cuda_rates* out) {
  if (atomic_load(&g_state) != kReady) return BO_CUDA_NO_DEVICE;
  memset(out, 0, sizeof *out);
  snprintf(out->gpu, sizeof out->gpu, "%s", FAKE_GPU_NAME);
  out->h2d_gbs = 25;
  out->d2h_gbs = 25;
  out->pageable_gbs = 10;
  out->call_overhead_us = 20;
  return BO_CUDA_OK;
}

/* No residency cache here: every host operand moves. */
static int fake_host_resident(const void* p, int64_t rows, int64_t cols, int64_t ld, int first_of_call,
                              struct bo_resident_info* out) {
  (void)p, (void)rows, (void)cols, (void)ld, (void)first_of_call;
  memset(out, 0, sizeof *out);
  return 0;
}

static int fake_host_pinned(const void* p, int64_t bytes) {
  (void)p;
  (void)bytes;
  return env_flag("FAKE_CUDA_PINNED");
}

static int fake_last_sgemm_stats(struct bo_sgemm_stats* out) {
  memset(out, 0, sizeof *out);
  return 0;
}

static void fake_forked_child(void) {
  atomic_store(&g_state, kForked);
  trace("forked-child");
}

static void fake_shutdown(void) {
  const int state = atomic_exchange(&g_state, kShutDown);
  if (state == kInitRunning) violation("shutdown called while init is still running");
  if (state == kShutDown) violation("shutdown called twice");
  trace("shutdown");
}

static const struct bo_cuda_module kModule = {
    BO_CUDA_API_VERSION,
    "blasoffload FAKE CUDA module (CPU loops, tests only) on " FAKE_GPU_NAME,
    fake_init,
    fake_sgemm,
    fake_sgemv,
    fake_strsv,
    fake_snrm2,
    fake_strsm,
    fake_ssyrk,
    fake_kernel_us,
    fake_is_device_pointer,
    fake_measure,
    fake_host_pinned,
    fake_host_resident,
    fake_last_sgemm_stats,
    fake_forked_child,
    fake_shutdown,
};

FAKE_EXPORT const struct bo_cuda_module* blasoffload_cuda_module_v5(void) { return &kModule; }

__attribute__((constructor)) static void on_load(void) { trace("load"); }

/* Runs at exit (or dlclose), after the core's atexit handlers: the counts are final then. */
__attribute__((destructor)) static void on_unload(void) {
  const int state = atomic_load(&g_state);
  static const char* const kStateNames[] = {"idle", "init-running", "ready", "no-device", "shut-down", "forked"};
  trace("exit state=%s", kStateNames[state]);
  const char* path = getenv("FAKE_CUDA_COUNTS");
  if (!path || !*path) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  for (int r = 0; r < FAKE_ROUTINES; ++r) fprintf(f, "%s %ld\n", kRoutineNames[r], atomic_load(&g_counts[r]));
  fclose(f);
}
