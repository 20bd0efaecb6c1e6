/* A stand-in for libblasoffload_cuda.so that implements the CUDA module API with plain CPU loops, so the offload
 * policy (who goes where, initialisation, fallbacks) can be tested end to end on machines without a GPU.
 *
 * Behaviour is steered by the environment, read directly (not through the host's config, so the core cannot
 * hide it):
 *   FAKE_CUDA_INIT_MS=N       init() sleeps N ms first (makes background initialisation observable)
 *   FAKE_CUDA_LOAD_MS=N       the module's entry point sleeps N ms (the real one's libraries take a while to load)
 *   FAKE_CUDA_CUBLAS_MS=N     init() then sleeps N ms more, as the real one opens cuBLAS ("cublas-open" in the trace),
 *                             unless the host says the program is exiting ("cublas-left")
 *   FAKE_CUDA_NO_DEVICE=1     init() reports BO_CUDA_NO_DEVICE
 *   FAKE_CUDA_FAIL=r[,r...]   those routines (sgemm, dgemm, sgemv, ...) return BO_CUDA_LAUNCH_FAILED
 *   FAKE_CUDA_NO_ESTIMATE=1   kernel_us() returns -1 (no tuned table)
 *   FAKE_CUDA_CALL_MS=N       every call takes N ms more (a GPU far slower than the policy predicts)
 *   FAKE_CUDA_ONE_TIME_MS=N   every call takes N ms more and reports them as one-time costs (last_one_time_us), as
 *                             the real module does for a call that grew its buffers
 *   FAKE_CUDA_GROWTH_MS=N     buffers as the real module's: growth_us() answers N ms for more bytes than any call
 *                             before staged, and the call after such a question takes N ms more, reported as one-time
 *                             costs
 *   FAKE_CUDA_RESIDENT=N      host_resident() calls every matrix a clean residency candidate reused N times
 *   FAKE_CUDA_RESIDENT_NS=X   ... whose copy is made at X ns a byte (default 0.5)
 *   FAKE_CUDA_BUSY_MS=N       after init(), a thread of the module works beside the program for N ms, as the real
 *                             module's unpinning thread does: host->want_core(+1), then (-1)
 *   FAKE_CUDA_LINK_GBS=a,b,c  measure_link() reports a GB/s to the GPU, b back and c staged (default 25,25,10, as
 *                             measure()); "fail": it reports BO_CUDA_LAUNCH_FAILED
 *   FAKE_CUDA_STAGED_SEEN=X   every call that ran counts as a large staged upload at X GB/s (staged_gbs_seen());
 *                             unset: none is ever timed
 *   FAKE_CUDA_COUNTS=path     at exit, write "sgemm N\ndgemm N\n..." for every routine (calls that reached the module),
 *                             and "host_resident N" (the residency questions asked)
 *   FAKE_CUDA_TRACE=path      append one line per lifecycle event (load, init-begin, init-end, shutdown, ...)
 *
 * Device memory shared between processes (the ScaLAPACK takeover's copy, shared_alloc and the others) is a memfd the
 * other processes map through /proc/<pid>/fd; regions_copy copies with memcpy; lapack_in_place runs getrf, potrf,
 * gesv and posv with the CPU LAPACK (host services' cpu_call) on that memory and answers BO_CUDA_CPU_ANSWERS for
 * INFO > 0; geqrf and gels it declines (BO_CUDA_UNSUPPORTED), as a GPU that fails on its copy would.
 *
 * Like the CUDA runtime, init() registers an exit handler of its own when it begins (after the core's, so it runs
 * before them): "runtime-exit" in the trace, and a contract violation when init() is still running then (the real
 * runtime's teardown under a running initialisation crashes the process).
 *
 * The fake also holds the core to the module contract of src/offload/cuda_module_api.h: a routine called before
 * a successful init() or after shutdown(), a second init(), shutdown() racing a running init(), or arguments that
 * are not checked/normalised are reported on stderr as "fake-cuda: contract violation: ..." (tests reject that
 * text) and the call is refused, so the core's fallback keeps the numbers right and only the message tells. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "offload/cuda_module_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

enum { kIdle = 0, kInitRunning = 1, kReady = 2, kNoDevice = 3, kShutDown = 4, kForked = 5 };

static _Atomic int g_state = kIdle;
static atomic_int g_init_calls;
#define FAKE_ROUTINES BO_R_COUNT /* indexed by enum bo_routine */
static atomic_long g_counts[FAKE_ROUTINES];
static const struct bo_cuda_host_services* g_host;
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
  const char* name = bo_routine_name(routine);
  const size_t len = strlen(name);
  for (const char* p = v; (p = strstr(p, name)) != NULL; p += len)
    if ((p == v || p[-1] == ',') && (p[len] == '\0' || p[len] == ',')) return 1;
  return 0;
}

/* Whether the core was entitled to call `what` now. */
static int ready_for(const char* what) {
  const int state = atomic_load(&g_state);
  if (state == kForked) return BO_CUDA_FORKED_CHILD; /* the core may ask; we must just refuse */
  if (state != kReady) {
    violation("%s called while the module is %s", what,
              state == kIdle          ? "not initialised"
              : state == kInitRunning ? "still initialising"
              : state == kNoDevice    ? "without a device (init failed)"
                                      : "shut down");
    return BO_CUDA_NO_DEVICE;
  }
  return BO_CUDA_OK;
}

/* Every routine passes through here: counts the call and decides whether the core was entitled to make it. */
static int enter(int routine) {
  atomic_fetch_add(&g_counts[routine], 1);
  const int ready = ready_for(bo_routine_name(routine));
  if (ready != BO_CUDA_OK) return ready;
  if (should_fail(routine)) {
    trace("fail %s", bo_routine_name(routine));
    return BO_CUDA_LAUNCH_FAILED;
  }
  return BO_CUDA_OK;
}

static int is_trans(char t) { return t == 'T' || t == 'C'; }
static int64_t max1(int64_t v) { return v > 1 ? v : 1; }
/* Index of element i of a strided vector of len entries, as the reference BLAS walks it (negative steps start at
 * the far end). */
static int64_t vidx(int64_t i, int64_t len, int64_t inc) { return inc > 0 ? i * inc : (i - (len - 1)) * inc; }

/* Element i of an operand of the call's element type, read as a double; a value stored rounded to that type. */
static _Thread_local int t_dp; /* the calling thread's call in progress is double precision */
static double ld(const void* p, int64_t i) { return t_dp ? ((const double*)p)[i] : (double)((const float*)p)[i]; }
static void st(void* p, int64_t i, double v) {
  if (t_dp)
    ((double*)p)[i] = v;
  else
    ((float*)p)[i] = (float)v;
}

/* The runtime's own exit teardown (see the header). */
static void fake_runtime_exit(void) {
  trace("runtime-exit");
  if (atomic_load(&g_state) == kInitRunning) violation("the runtime's exit teardown ran while init() was running");
}

/* Sleeps ms milliseconds, through signals. */
static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* FAKE_CUDA_BUSY_MS: the module's own thread busy beside the program (the real one unpins memory the program freed). */
static void* fake_busy_main(void* arg) {
  const long v = (long)(intptr_t)arg;
  g_host->want_core(+1);
  trace("busy-begin");
  sleep_ms(v);
  trace("busy-end");
  g_host->want_core(-1);
  return NULL;
}

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
  trace("init-begin nice=%d", getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)));
  atexit(fake_runtime_exit);
  host->log(BO_LOG_DEBUG, "fake-cuda: init begins");
  const char* ms = getenv("FAKE_CUDA_INIT_MS");
  if (ms && atol(ms) > 0) sleep_ms(atol(ms));
  const int no_device = env_flag("FAKE_CUDA_NO_DEVICE");
  const char* cublas_ms = getenv("FAKE_CUDA_CUBLAS_MS");
  if (!no_device && cublas_ms && atol(cublas_ms) > 0) {
    if (host->exiting && host->exiting()) {
      trace("cublas-left");
    } else {
      sleep_ms(atol(cublas_ms));
      trace("cublas-open");
    }
  }
  int expected = kInitRunning;
  /* shutdown() may already have run (a broken core): keep its state so later calls are caught. */
  atomic_compare_exchange_strong(&g_state, &expected, no_device ? kNoDevice : kReady);
  trace("init-end %s", no_device ? "no-device" : "ok");
  const char* busy = getenv("FAKE_CUDA_BUSY_MS");
  if (!no_device && busy && atol(busy) > 0 && host->want_core) {
    pthread_t t;
    if (pthread_create(&t, NULL, fake_busy_main, (void*)(intptr_t)atol(busy)) == 0) pthread_detach(t);
  }
  /* A real module logs here too, and this may run on the core's background thread while the process exits. */
  host->log(BO_LOG_DEBUG, no_device ? "fake-cuda: init: no device" : "fake-cuda: init done");
  return no_device ? BO_CUDA_NO_DEVICE : BO_CUDA_OK;
}

static int fake_gemm(const struct bo_call* c, double cpu_share) {
  const char transa = c->op[0], transb = c->op[1];
  const int64_t m = c->m, n = c->n, k = c->k, lda = c->lda, ldb = c->ldb, ldc = c->ldc;
  const double alpha = c->alpha, beta = c->beta;
  const void *a = c->a, *b = c->b;
  void* cc = c->c;
  if (cpu_share < 0 || cpu_share >= 1) violation("gemm cpu_share %g outside [0, 1)", cpu_share);
  if (cpu_share > 0) trace("%s cpu_share %.2f", bo_routine_name(c->routine), cpu_share);
  const int ta = is_trans(transa), tb = is_trans(transb);
  if (!strchr("NTC", transa) || !strchr("NTC", transb) || m <= 0 || n <= 0 || k < 0 || lda < max1(ta ? k : m) ||
      ldb < max1(tb ? n : k) || ldc < max1(m) || !cc || (k > 0 && (!a || !b))) {
    violation("%s(%c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld) not checked", bo_routine_name(c->routine),
              transa, transb, (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc);
    return BO_CUDA_UNSUPPORTED;
  }
  double* col = malloc(sizeof(double) * (size_t)m);
  if (!col) return BO_CUDA_OUT_OF_MEMORY;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += ld(a, ta ? l + i * lda : i + l * lda) * ld(b, tb ? j + l * ldb : l + j * ldb);
      col[i] = s;
    }
    for (int64_t i = 0; i < m; ++i)
      st(cc, i + j * ldc, beta == 0 ? alpha * col[i] : alpha * col[i] + beta * ld(cc, i + j * ldc));
  }
  free(col);
  return BO_CUDA_OK;
}

static int fake_gemv(const struct bo_call* c) {
  const char trans = c->op[0];
  const int64_t m = c->m, n = c->n, lda = c->lda, incx = c->incx, incy = c->incy;
  const void *a = c->a, *x = c->b;
  void* y = c->c;
  if (!strchr("NTC", trans) || m <= 0 || n <= 0 || lda < max1(m) || incx == 0 || incy == 0 || !a || !x || !y) {
    violation("%s(%c m=%lld n=%lld lda=%lld incx=%lld incy=%lld) not checked", bo_routine_name(c->routine), trans,
              (long long)m, (long long)n, (long long)lda, (long long)incx, (long long)incy);
    return BO_CUDA_UNSUPPORTED;
  }
  const int t = is_trans(trans);
  const int64_t lx = t ? m : n, ly = t ? n : m;
  double* acc = calloc((size_t)ly, sizeof(double));
  if (!acc) return BO_CUDA_OUT_OF_MEMORY;
  for (int64_t j = 0; j < n; ++j) {
    if (t) {
      double s = 0;
      for (int64_t i = 0; i < m; ++i) s += ld(a, i + j * lda) * ld(x, vidx(i, lx, incx));
      acc[j] = s;
    } else {
      const double xj = ld(x, vidx(j, lx, incx));
      for (int64_t i = 0; i < m; ++i) acc[i] += ld(a, i + j * lda) * xj;
    }
  }
  for (int64_t i = 0; i < ly; ++i) {
    const int64_t yi = vidx(i, ly, incy);
    st(y, yi, c->beta == 0 ? c->alpha * acc[i] : c->alpha * acc[i] + c->beta * ld(y, yi));
  }
  free(acc);
  return BO_CUDA_OK;
}

/* Substitution on t unknowns v[] with op(A) (only the uplo triangle read, the diagonal only for diag N). */
static void substitute(const void* a, int64_t lda, int64_t t, int tr, int lower, int unit, double* v) {
#define OP_A(i, j) (tr ? ld(a, (j) + (i)*lda) : ld(a, (i) + (j)*lda))
  for (int64_t step = 0; step < t; ++step) {
    const int64_t i = lower ? step : t - 1 - step;
    double s = v[i];
    if (lower)
      for (int64_t j = 0; j < i; ++j) s -= OP_A(i, j) * v[j];
    else
      for (int64_t j = i + 1; j < t; ++j) s -= OP_A(i, j) * v[j];
    v[i] = unit ? s : s / OP_A(i, i);
  }
#undef OP_A
}

static int fake_trsv(const struct bo_call* c) {
  const char uplo = c->op[0], trans = c->op[1], diag = c->op[2];
  const int64_t n = c->n, lda = c->lda, incx = c->incx;
  if (!strchr("UL", uplo) || !strchr("NTC", trans) || !strchr("UN", diag) || n <= 0 || lda < max1(n) || incx == 0 ||
      !c->a || !c->c) {
    violation("%s(%c%c%c n=%lld lda=%lld incx=%lld) not checked", bo_routine_name(c->routine), uplo, trans, diag,
              (long long)n, (long long)lda, (long long)incx);
    return BO_CUDA_UNSUPPORTED;
  }
  double* v = malloc(sizeof(double) * (size_t)n);
  if (!v) return BO_CUDA_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; ++i) v[i] = ld(c->c, vidx(i, n, incx));
  /* op(A) is lower triangular when (uplo L, no transpose) or (uplo U, transposed): forward substitution. */
  substitute(c->a, lda, n, is_trans(trans), (uplo == 'L') != is_trans(trans), diag == 'U', v);
  for (int64_t i = 0; i < n; ++i) st(c->c, vidx(i, n, incx), v[i]);
  free(v);
  return BO_CUDA_OK;
}

static int fake_nrm2(const struct bo_call* c) {
  if (c->n <= 0 || !c->b || !c->c) {
    violation("%s(n=%lld) not checked", bo_routine_name(c->routine), (long long)c->n);
    return BO_CUDA_UNSUPPORTED;
  }
  if (c->incx <= 0) return BO_CUDA_UNSUPPORTED; /* libraries disagree here; the contract leaves it to the CPU */
  double s = 0;
  for (int64_t i = 0; i < c->n; ++i) s += ld(c->b, i * c->incx) * ld(c->b, i * c->incx);
  st(c->c, 0, sqrt(s));
  return BO_CUDA_OK;
}

/* B := alpha op(A)^-1 B (side L) or alpha B op(A)^-1 (side R), in double. The core keeps alpha == 0 (B zeroed) for
 * the CPU BLAS. */
static int fake_trsm(const struct bo_call* c) {
  const char side = c->op[0], uplo = c->op[1], transa = c->op[2], diag = c->op[3];
  const int64_t m = c->m, n = c->n, lda = c->lda, ldb = c->ldc;
  const int64_t t = side == 'L' ? m : n;
  if (!strchr("LR", side) || !strchr("UL", uplo) || !strchr("NTC", transa) || !strchr("UN", diag) || m <= 0 || n <= 0 ||
      c->alpha == 0 || lda < max1(t) || ldb < max1(m) || !c->a || !c->c) {
    violation("%s(%c%c%c%c m=%lld n=%lld alpha=%g lda=%lld ldb=%lld) not checked", bo_routine_name(c->routine), side,
              uplo, transa, diag, (long long)m, (long long)n, c->alpha, (long long)lda, (long long)ldb);
    return BO_CUDA_UNSUPPORTED;
  }
  /* Side R solves x^T op(A) = alpha b^T for each row b of B, i.e. op(A)^T x = alpha b: the same substitutions with
   * the other op, so one loop serves both sides. */
  const int tr = is_trans(transa) != (side == 'R');
  const int64_t systems = side == 'L' ? n : m;
  double* v = malloc(sizeof(double) * (size_t)t);
  if (!v) return BO_CUDA_OUT_OF_MEMORY;
#define B_AT(s, i) (side == 'L' ? (i) + (s)*ldb : (s) + (i)*ldb)
  for (int64_t sys = 0; sys < systems; ++sys) {
    for (int64_t i = 0; i < t; ++i) v[i] = c->alpha * ld(c->c, B_AT(sys, i));
    substitute(c->a, lda, t, tr, (uplo == 'L') != tr, diag == 'U', v);
    for (int64_t i = 0; i < t; ++i) st(c->c, B_AT(sys, i), v[i]);
  }
#undef B_AT
  free(v);
  return BO_CUDA_OK;
}

/* C := alpha op(A) op(A)^T + beta C on the uplo triangle only; beta == 0 never reads C. The core keeps alpha == 0
 * and k == 0 (a scaling of C) for the CPU BLAS. */
static int fake_syrk(const struct bo_call* c) {
  const char uplo = c->op[0], trans = c->op[1];
  const int64_t n = c->n, k = c->k, lda = c->lda, ldc = c->ldc;
  const int t = is_trans(trans);
  if (!strchr("UL", uplo) || !strchr("NT", trans) || n <= 0 || k <= 0 || c->alpha == 0 || lda < max1(t ? k : n) ||
      ldc < max1(n) || !c->a || !c->c) {
    violation("%s(%c%c n=%lld k=%lld alpha=%g lda=%lld ldc=%lld) not checked", bo_routine_name(c->routine), uplo, trans,
              (long long)n, (long long)k, c->alpha, (long long)lda, (long long)ldc);
    return BO_CUDA_UNSUPPORTED;
  }
#define OP_A(i, l) (t ? ld(c->a, (l) + (i)*lda) : ld(c->a, (i) + (l)*lda))
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i0 = uplo == 'U' ? 0 : j, i1 = uplo == 'U' ? j + 1 : n;
    for (int64_t i = i0; i < i1; ++i) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += OP_A(i, l) * OP_A(j, l);
      const int64_t ij = i + j * ldc;
      st(c->c, ij, c->beta == 0 ? c->alpha * s : c->alpha * s + c->beta * ld(c->c, ij));
    }
  }
#undef OP_A
  return BO_CUDA_OK;
}

static _Thread_local double t_one_time_us; /* what the calling thread's last call reported as one-time costs */

static double env_ms(const char* name) {
  const char* v = getenv(name);
  return v && atof(v) > 0 ? atof(v) : 0.0;
}

/* FAKE_CUDA_GROWTH_MS: the buffers' size (the most bytes a call staged), and the bytes this thread last asked about
 * (the policy asks just before a call it would send). */
static _Atomic double g_grown;
/* The calls that ran (FAKE_CUDA_STAGED_SEEN). */
static atomic_long g_calls_ran;
static _Thread_local double t_asked;
static double fake_growth_us(double staged_bytes) {
  const int state = atomic_load(&g_state);
  if (state != kReady) {
    if (state != kForked) violation("growth_us called while the module is not ready");
    return 0;
  }
  const double ms = env_ms("FAKE_CUDA_GROWTH_MS");
  t_asked = staged_bytes;
  return ms > 0 && staged_bytes > atomic_load(&g_grown) ? ms * 1e3 : 0.0;
}

/* The one entry: counts the call, checks the core was entitled to make it, and runs the routine's loops. */
static int fake_call(const struct bo_call* c, double cpu_share) {
  if (c->routine < 0 || c->routine >= BO_R_COUNT) {
    violation("call with routine id %d", (int)c->routine);
    return BO_CUDA_UNSUPPORTED;
  }
  const int st = enter(c->routine);
  if (st != BO_CUDA_OK) return st;
  atomic_fetch_add(&g_calls_ran, 1);
  t_one_time_us = 0;
  const double slow_ms = env_ms("FAKE_CUDA_CALL_MS");
  double one_time_ms = env_ms("FAKE_CUDA_ONE_TIME_MS");
  if (env_ms("FAKE_CUDA_GROWTH_MS") > 0 && t_asked > atomic_load(&g_grown)) {
    atomic_store(&g_grown, t_asked);
    one_time_ms += env_ms("FAKE_CUDA_GROWTH_MS");
  }
  if (slow_ms + one_time_ms > 0) {
    const double ms = slow_ms + one_time_ms;
    struct timespec ts = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
    nanosleep(&ts, NULL);
  }
  t_one_time_us = one_time_ms * 1e3;
  if (cpu_share != 0 && bo_routine_kind_of(c->routine) != BO_KIND_GEMM)
    violation("%s with cpu_share %g", bo_routine_name(c->routine), cpu_share);
  t_dp = bo_routine_precision(c->routine) == BO_PREC_D;
  /* The loops below are real; a complex call is computed by the CPU BLAS (host services' cpu_call), so that a complex
   * program's results under the fake stay right. */
  const int complex_call =
      bo_routine_precision(c->routine) == BO_PREC_C || bo_routine_precision(c->routine) == BO_PREC_Z;
  if (complex_call) {
    switch (bo_routine_kind_of(c->routine)) {
      case BO_KIND_GEMM:
      case BO_KIND_GEMV:
      case BO_KIND_TRSV:
      case BO_KIND_TRSM:
      case BO_KIND_SYRK:
        if (cpu_share != 0) return BO_CUDA_UNSUPPORTED;
        g_host->cpu_call(c);
        return BO_CUDA_OK;
      default:
        return BO_CUDA_UNSUPPORTED;
    }
  }
  switch (bo_routine_kind_of(c->routine)) {
    case BO_KIND_GEMM:
      return fake_gemm(c, cpu_share);
    case BO_KIND_GEMV:
      return fake_gemv(c);
    case BO_KIND_TRSV:
      return fake_trsv(c);
    case BO_KIND_NRM2:
      return fake_nrm2(c);
    case BO_KIND_TRSM:
      return fake_trsm(c);
    case BO_KIND_SYRK:
      return fake_syrk(c);
    default:
      return BO_CUDA_UNSUPPORTED;
  }
}

/* Deterministic and far faster than any CPU (20 TFLOP/s, 1 TB/s), so that the cost model's GPU side is dominated
 * by the transfer rates and call overhead the test's policy file sets. */
static double fake_kernel_us(const struct bo_call* c) {
  if (env_flag("FAKE_CUDA_NO_ESTIMATE")) return -1;
  const double m = (double)c->m, n = (double)c->n, k = (double)c->k;
  const double e = bo_element_size(bo_routine_precision(c->routine));
  switch (bo_routine_kind_of(c->routine)) {
    case BO_KIND_GEMM:
      return 2.0 * m * n * k / 20e6;
    case BO_KIND_GEMV:
      return e * m * n / 1e6;
    case BO_KIND_TRSV:
      return e * n * (n + 1) / 2 / 1e6;
    case BO_KIND_NRM2:
      return e * n / 1e6;
    case BO_KIND_TRSM:
      return m * n * (c->op[0] == 'L' ? m : n) / 20e6;
    case BO_KIND_SYRK:
      return n * n * k / 20e6;
    default:
      return -1;
  }
}

static int fake_is_device_pointer(const void* p) {
  (void)p;
  return 0;
}

/* The fake GPU's link: 25 GB/s each way from pinned memory, 10 staged. */
static void fake_link(struct bo_cuda_rates* out) {
  memset(out, 0, sizeof *out);
  snprintf(out->gpu, sizeof out->gpu, "%s", FAKE_GPU_NAME);
  out->h2d_gbs = 25;
  out->d2h_gbs = 25;
  out->pageable_gbs = 10;
}

static int fake_measure(struct bo_cuda_rates* out) {
  if (atomic_load(&g_state) != kReady) return BO_CUDA_NO_DEVICE;
  fake_link(out);
  out->call_overhead_us = 20;
  return BO_CUDA_OK;
}

/* The start-up's link measurement: "measure-link nice=N" in the trace. */
static int fake_measure_link(struct bo_cuda_rates* out) {
  if (atomic_load(&g_state) != kReady) {
    violation("measure_link called while the module is not ready");
    return BO_CUDA_NO_DEVICE;
  }
  /* The thread's nice value: the core measures the link at the program's priority, not the start-up's 19. */
  trace("measure-link nice=%d", getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)));
  const char* v = getenv("FAKE_CUDA_LINK_GBS");
  if (v && strcmp(v, "fail") == 0) return BO_CUDA_LAUNCH_FAILED;
  fake_link(out);
  if (v && *v) sscanf(v, "%lf,%lf,%lf", &out->h2d_gbs, &out->d2h_gbs, &out->pageable_gbs);
  return BO_CUDA_OK;
}

/* No residency cache here: every host operand moves, unless FAKE_CUDA_RESIDENT says what to answer. */
static atomic_long g_resident_questions; /* host_resident calls: "host_resident N" in FAKE_CUDA_COUNTS */

static int fake_host_resident(const void* p, int64_t rows, int64_t cols, int64_t lda, int elem_size, int first_of_call,
                              struct bo_resident_info* out) {
  (void)p, (void)rows, (void)first_of_call;
  atomic_fetch_add(&g_resident_questions, 1);
  memset(out, 0, sizeof *out);
  const char* v = getenv("FAKE_CUDA_RESIDENT");
  if (v && *v) { /* a clean candidate seen that many times: its copy covers the span, made at 0.5 ns a byte */
    const double ns = env_ms("FAKE_CUDA_RESIDENT_NS");
    out->state = 2;
    out->reuses = atoll(v);
    out->upload_bytes = lda * cols * (int64_t)elem_size;
    out->check_us = (double)out->upload_bytes * (ns > 0 ? ns : 0.5) * 1e-3;
  }
  return 0;
}

static int fake_host_pinned(const void* p, int64_t bytes) {
  (void)p;
  (void)bytes;
  return env_flag("FAKE_CUDA_PINNED");
}

static int fake_last_gemm_stats(struct bo_gemm_stats* out) {
  memset(out, 0, sizeof *out);
  return 0;
}

static double fake_last_one_time_us(void) { return t_one_time_us; }

/* FAKE_CUDA_STAGED_SEEN: the calls that ran, as the real module's timed uploads of the program's large operands. */
static double fake_staged_gbs_seen(int64_t* samples) {
  const double gbs = env_ms("FAKE_CUDA_STAGED_SEEN");
  *samples = gbs > 0 ? (int64_t)atomic_load(&g_calls_ran) : 0;
  return *samples > 0 ? gbs : 0.0;
}

/* The policy staging a call's residency candidates instead of having their copies made: "stage-candidates" in the
 * trace, once per call told so. */
static void fake_stage_candidates(void) {
  const int state = atomic_load(&g_state);
  if (state != kReady) {
    if (state != kForked) violation("stage_candidates called while the module is not ready");
    return;
  }
  trace("stage-candidates");
}

static int fake_solver(int open) { /* no LAPACK here: nothing to open */
  (void)open;
  return -1;
}

/* ---- Shared "device" memory: a memfd, a page of header (its size, the owner's descriptor) before the data. ---- */
enum { kHeader = 4096 };
struct fake_shared_header {
  int64_t bytes;
  int32_t fd;
};
struct fake_handle {
  char magic[8];
  int32_t pid, fd;
  int64_t bytes;
};

static int fake_shared_alloc(int64_t bytes, void** dev, unsigned char handle[BO_SHARED_HANDLE_BYTES]) {
  *dev = NULL;
  const int st = ready_for("shared_alloc");
  if (st != BO_CUDA_OK) return st;
  if (bytes <= 0) return BO_CUDA_UNSUPPORTED;
  const int fd = (int)syscall(SYS_memfd_create, "fake-cuda-shared", 0);
  if (fd < 0) return BO_CUDA_OUT_OF_MEMORY;
  if (ftruncate(fd, (off_t)(bytes + kHeader)) != 0) return close(fd), BO_CUDA_OUT_OF_MEMORY;
  char* p = mmap(NULL, (size_t)(bytes + kHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return close(fd), BO_CUDA_OUT_OF_MEMORY;
  struct fake_shared_header* h = (struct fake_shared_header*)p;
  h->bytes = bytes;
  h->fd = fd;
  struct fake_handle fh = {"fakeshm", (int32_t)getpid(), fd, bytes};
  memset(handle, 0, BO_SHARED_HANDLE_BYTES);
  memcpy(handle, &fh, sizeof fh);
  *dev = p + kHeader;
  trace("shared-alloc %lld", (long long)bytes);
  return BO_CUDA_OK;
}

static int fake_shared_open(const unsigned char handle[BO_SHARED_HANDLE_BYTES], void** dev) {
  *dev = NULL;
  const int st = ready_for("shared_open");
  if (st != BO_CUDA_OK) return st;
  struct fake_handle fh;
  memcpy(&fh, handle, sizeof fh);
  if (memcmp(fh.magic, "fakeshm", 8) != 0) {
    violation("shared_open with a handle no shared_alloc made");
    return BO_CUDA_UNSUPPORTED;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)fh.pid, (int)fh.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return BO_CUDA_UNSUPPORTED;
  char* p = mmap(NULL, (size_t)(fh.bytes + kHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return BO_CUDA_UNSUPPORTED;
  *dev = p + kHeader;
  return BO_CUDA_OK;
}

static void fake_shared_close(void* dev, int owner) {
  if (!dev) return;
  char* p = (char*)dev - kHeader;
  const struct fake_shared_header* h = (const struct fake_shared_header*)p;
  const int fd = h->fd;
  const size_t size = (size_t)(h->bytes + kHeader);
  if (owner) close(fd);
  munmap(p, size);
}

static int fake_regions_copy(const struct bo_region* r, int64_t count, int elem_size, int to_device) {
  const int st = ready_for("regions_copy");
  if (st != BO_CUDA_OK) return st;
  for (int64_t i = 0; i < count; ++i) {
    if (r[i].rows > r[i].host_ld || r[i].rows > r[i].dev_ld)
      violation("regions_copy with rows beyond a leading dimension");
    for (int64_t j = 0; j < r[i].cols; ++j) {
      char* h = (char*)r[i].host + (size_t)elem_size * (size_t)(j * r[i].host_ld);
      char* d = (char*)r[i].dev + (size_t)elem_size * (size_t)(j * r[i].dev_ld);
      memcpy(to_device ? d : h, to_device ? h : d, (size_t)elem_size * (size_t)r[i].rows);
    }
  }
  return BO_CUDA_OK;
}

static int fake_lapack_in_place(const struct bo_call* c) {
  const int st = enter(c->routine);
  if (st != BO_CUDA_OK) return st;
  switch (bo_routine_kind_of(c->routine)) {
    case BO_KIND_GETRF:
    case BO_KIND_POTRF:
    case BO_KIND_GESV:
    case BO_KIND_POSV:
      break;
    default:
      return BO_CUDA_UNSUPPORTED;
  }
  g_host->cpu_call(c);
  const int64_t info = c->int_bytes == 8 ? *(const int64_t*)c->info : *(const int32_t*)c->info;
  return info > 0 ? BO_CUDA_CPU_ANSWERS : BO_CUDA_OK;
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
    fake_call,
    fake_kernel_us,
    fake_is_device_pointer,
    fake_measure,
    fake_measure_link,
    fake_host_pinned,
    fake_host_resident,
    fake_last_gemm_stats,
    fake_last_one_time_us,
    fake_growth_us,
    fake_stage_candidates,
    fake_staged_gbs_seen,
    fake_solver,
    fake_forked_child,
    fake_shutdown,
    fake_shared_alloc,
    fake_shared_open,
    fake_shared_close,
    fake_regions_copy,
    fake_lapack_in_place,
};

FAKE_EXPORT const struct bo_cuda_module* blasoffload_cuda_module_v13(void) {
  const char* ms = getenv("FAKE_CUDA_LOAD_MS");
  if (ms && atol(ms) > 0) sleep_ms(atol(ms));
  return &kModule;
}

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
  for (int r = 0; r < FAKE_ROUTINES; ++r) fprintf(f, "%s %ld\n", bo_routine_name(r), atomic_load(&g_counts[r]));
  fprintf(f, "host_resident %ld\n", atomic_load(&g_resident_questions));
  fclose(f);
}
