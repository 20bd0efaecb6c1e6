/* Calls forwarded routines of every return kind through blasoffload and checks each result bit for bit against the same
 * call made directly on the reference library, dlopen'ed separately.
 *
 * forward_calls [threads | missing]
 *   Built twice: plain (the std family: ddot_, cblas_zgemm, 32-bit integers; the reference libblas.so.3 and
 *   liblapack.so.3) and with BO_SUFFIX64 (the suffix64 family: ddot_64_, cblas_zgemm64_, 64-bit integers; Debian's
 *   ILP64 libblas64.so.3 and liblapack64.so.3). "threads": two threads make their first calls at the same moment (the
 *   lazy resolver's race), each checking every result. Prints PASS, or FAIL lines and exits 1. "missing": one ddot
 *   call, which must end the process where no CPU library defines ddot. */
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BO_SUFFIX64
typedef int64_t fint;
#define F(name) name##_64_
#define CB(name) cblas_##name##64_
#define REF_BLAS "/usr/lib/x86_64-linux-gnu/blas64/libblas64.so.3"
#define REF_LAPACK "/usr/lib/x86_64-linux-gnu/lapack64/liblapack64.so.3"
/* As blasoffload loads them: their calls to each other must not bind to the LP64 names of the global scope. */
#define REF_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)
#else
typedef int32_t fint;
#define F(name) name##_
#define CB(name) cblas_##name
#define REF_BLAS "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"
#define REF_LAPACK "/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3"
#define REF_FLAGS (RTLD_NOW | RTLD_LOCAL)
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

/* The prototypes, once as the exported functions and once as pointer types for the reference's. */
#define DECLARE(ret, name, params) \
  ret F(name) params;              \
  typedef ret(*name##_t) params;
DECLARE(double, ddot, (const fint* n, const double* x, const fint* incx, const double* y, const fint* incy))
DECLARE(float, sdot, (const fint* n, const float* x, const fint* incx, const float* y, const fint* incy))
DECLARE(float complex, cdotc,
        (const fint* n, const float complex* x, const fint* incx, const float complex* y, const fint* incy))
DECLARE(double complex, zdotc,
        (const fint* n, const double complex* x, const fint* incx, const double complex* y, const fint* incy))
DECLARE(fint, idamax, (const fint* n, const double* x, const fint* incx))
DECLARE(double, dcabs1, (const double complex* z))
DECLARE(fint, lsame, (const char* a, const char* b, size_t la, size_t lb))
DECLARE(void, dgeqrf,
        (const fint* m, const fint* n, double* a, const fint* lda, double* tau, double* work, const fint* lwork,
         fint* info))
#define DECLARE_C(ret, name, params) \
  ret CB(name) params;               \
  typedef ret(*cblas_##name##_t) params;
DECLARE_C(void, zgemm,
          (int layout, int ta, int tb, fint m, fint n, fint k, const void* alpha, const void* a, fint lda,
           const void* b, fint ldb, const void* beta, void* c, fint ldc))
DECLARE_C(double, ddot, (fint n, const double* x, fint incx, const double* y, fint incy))
DECLARE_C(void, drot, (fint n, double* x, fint incx, double* y, fint incy, double c, double s))

enum { N = 150, M = 9, K = 5 };  // dgeqrf's blocked code (dlarfb's dgemm_ calls) starts at 128 columns

/* The routines a run calls: blasoffload's exports, or the reference library's definitions. */
typedef struct {
  ddot_t ddot;
  sdot_t sdot;
  cdotc_t cdotc;
  zdotc_t zdotc;
  idamax_t idamax;
  dcabs1_t dcabs1;
  lsame_t lsame;
  dgeqrf_t dgeqrf;
  cblas_zgemm_t cblas_zgemm;
  cblas_ddot_t cblas_ddot;
  cblas_drot_t cblas_drot;  // c and s in xmm0 and xmm1: the resolver stub must hand them on
} Api;

/* Every result of one run. */
typedef struct {
  double ddot, dcabs1, cblas_ddot, query;
  float sdot;
  float complex cdotc;
  double complex zdotc;
  fint idamax, lsame_yes, lsame_no, info;
  double qr[N * N], tau[N];
  double complex zgemm[M * M];
  double rot_x[N], rot_y[N];
} Results;

static pthread_barrier_t g_barrier;

static void run(const Api* api, Results* r) {
  double x[N], y[N];
  float xs[N], ys[N];
  float complex xc[N], yc[N];
  double complex xz[N], yz[N];
  for (int i = 0; i < N; ++i) {
    x[i] = 1.0 / (i + 1.5) - 0.3;
    y[i] = 0.7 * i - 40.1;
    xs[i] = (float)x[i];
    ys[i] = (float)y[i];
    xc[i] = xs[i] + 0.25f * I * ys[i];
    yc[i] = ys[i] - 0.5f * I * xs[i];
    xz[i] = x[i] + 0.25 * I * y[i];
    yz[i] = y[i] - 0.5 * I * x[i];
  }
  const fint n = N, one = 1, two = 2, half = N / 2, query = -1;
  memset(r, 0, sizeof *r);
  r->ddot = api->ddot(&n, x, &one, y, &one);
  r->sdot = api->sdot(&half, xs, &one, ys, &two);
  r->cdotc = api->cdotc(&n, xc, &one, yc, &one);
  r->zdotc = api->zdotc(&n, xz, &one, yz, &one);
  r->idamax = api->idamax(&n, y, &one);
  r->dcabs1 = api->dcabs1(&xz[3]);
  r->lsame_yes = api->lsame("a", "A", 1, 1);
  r->lsame_no = api->lsame("a", "B", 1, 1);
  // dgeqrf: the workspace query, then the factorization (reference LAPACK's blocked code, calling the BLAS).
  for (int i = 0; i < N * N; ++i) r->qr[i] = ((i * 7919) % 1013) / 1013.0 - 0.5;
  r->info = -7;
  api->dgeqrf(&n, &n, r->qr, &n, r->tau, &r->query, &query, &r->info);
  const fint lwork = r->query >= N ? (fint)r->query : N;
  double* w = malloc(sizeof(double) * (size_t)lwork);
  api->dgeqrf(&n, &n, r->qr, &n, r->tau, w, &lwork, &r->info);
  free(w);
  // CBLAS: row-major zgemm, and a value-returning function.
  double complex za[M * K], zb[K * M];
  for (int i = 0; i < M * K; ++i) za[i] = zb[i] = xz[i];
  for (int i = 0; i < M * M; ++i) r->zgemm[i] = yz[i];
  const double complex alpha = 1.5 - 0.5 * I, beta = 0.25 + 2 * I;
  api->cblas_zgemm(101, 111, 113, M, M, K, &alpha, za, K, zb, M, &beta, r->zgemm, M);
  r->cblas_ddot = api->cblas_ddot(N, x, 1, y, 1);
  memcpy(r->rot_x, x, sizeof x);
  memcpy(r->rot_y, y, sizeof y);
  api->cblas_drot(N, r->rot_x, 1, r->rot_y, 1, 0.6, -0.8);
}

static const Api kOurs = {F(ddot),  F(sdot),   F(cdotc),  F(zdotc), F(idamax), F(dcabs1),
                          F(lsame), F(dgeqrf), CB(zgemm), CB(ddot), CB(drot)};

static void* thread_main(void* out) {
  pthread_barrier_wait(&g_barrier);  // both threads' first calls at once: every slot still at the resolver
  run(&kOurs, out);
  return NULL;
}

static int g_failures;

static void check(const char* what, const void* got, const void* want, size_t bytes) {
  if (memcmp(got, want, bytes) != 0) {
    printf("FAIL: %s differs from the reference's result\n", what);
    g_failures++;
  }
}

/* The exported symbol must be blasoffload's (else the test would compare the reference with itself). */
static void check_ours(const char* name, void* fn) {
  Dl_info info = {0};
  if (!dladdr(fn, &info) || !info.dli_fname || !strstr(info.dli_fname, "libblasoffload")) {
    printf("FAIL: %s is not blasoffload's but %s's\n", name, info.dli_fname ? info.dli_fname : "?");
    g_failures++;
  }
}

static void* ref(void* lib, const char* symbol) {
  void* p = lib ? dlsym(lib, symbol) : NULL;
  if (!p) {
    printf("FAIL: the reference library lacks %s (%s)\n", symbol, dlerror());
    exit(1);
  }
  return p;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "missing") == 0) {  // a system with no CPU library: the call must end the process
    const fint n = 1, one = 1;
    const double x = 2;
    printf("calling %s\n", STR(F(ddot)));
    fflush(stdout);
    printf("returned %g\n", F(ddot)(&n, &x, &one, &x, &one));
    return 0;
  }
  const int threads = argc > 1 && strcmp(argv[1], "threads") == 0 ? 2 : 1;
  check_ours(STR(F(ddot)), (void*)F(ddot));
  check_ours(STR(F(dgeqrf)), (void*)F(dgeqrf));
  check_ours(STR(CB(zgemm)), (void*)CB(zgemm));
  // blasoffload's calls first: what it forwards to is then what it found itself, before the test opens anything.
  static Results ours[2], want;
  pthread_barrier_init(&g_barrier, NULL, threads);
  pthread_t t[2];
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, thread_main, &ours[i]);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);

  void* blas = dlopen(REF_BLAS, REF_FLAGS);
  void* lapack = dlopen(REF_LAPACK, REF_FLAGS);
  const Api reference = {ref(blas, "ddot_"),      ref(blas, "sdot_"),     ref(blas, "cdotc_"),
                         ref(blas, "zdotc_"),     ref(blas, "idamax_"),   ref(blas, "dcabs1_"),
                         ref(blas, "lsame_"),     ref(lapack, "dgeqrf_"), ref(blas, "cblas_zgemm"),
                         ref(blas, "cblas_ddot"), ref(blas, "cblas_drot")};
  run(&reference, &want);
  // |y| is largest at the end; the blocked dgeqrf asks for more than N doubles of workspace.
  if (want.idamax != N || !want.lsame_yes || want.lsame_no || want.info != 0 || want.query <= N) {
    printf("FAIL: the reference's own results are not as expected: idamax %lld, lsame %lld %lld, info %lld, lwork %g\n",
           (long long)want.idamax, (long long)want.lsame_yes, (long long)want.lsame_no, (long long)want.info,
           want.query);
    g_failures++;
  }
  for (int i = 0; i < threads; ++i) {
    const Results* r = &ours[i];
    check("ddot (double in xmm0)", &r->ddot, &want.ddot, sizeof want.ddot);
    check("sdot (float in xmm0)", &r->sdot, &want.sdot, sizeof want.sdot);
    check("cdotc (complex float in xmm0)", &r->cdotc, &want.cdotc, sizeof want.cdotc);
    check("zdotc (complex double in xmm0:xmm1)", &r->zdotc, &want.zdotc, sizeof want.zdotc);
    check("idamax (integer in rax)", &r->idamax, &want.idamax, sizeof want.idamax);
    check("dcabs1", &r->dcabs1, &want.dcabs1, sizeof want.dcabs1);
    check("lsame (logical)", &r->lsame_yes, &want.lsame_yes, sizeof want.lsame_yes);
    check("lsame (logical, false)", &r->lsame_no, &want.lsame_no, sizeof want.lsame_no);
    check("dgeqrf workspace query", &r->query, &want.query, sizeof want.query);
    check("dgeqrf info", &r->info, &want.info, sizeof want.info);
    check("dgeqrf factor", r->qr, want.qr, sizeof want.qr);
    check("dgeqrf tau", r->tau, want.tau, sizeof want.tau);
    check("cblas_zgemm", r->zgemm, want.zgemm, sizeof want.zgemm);
    check("cblas_ddot", &r->cblas_ddot, &want.cblas_ddot, sizeof want.cblas_ddot);
    check("cblas_drot x", r->rot_x, want.rot_x, sizeof want.rot_x);
    check("cblas_drot y", r->rot_y, want.rot_y, sizeof want.rot_y);
  }
  printf("%s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
