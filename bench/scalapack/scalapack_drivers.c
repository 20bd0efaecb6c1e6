/* Times ScaLAPACK's pdgemm, pdgesv, pdpotrf and pdgels (double precision) on a block-cyclic matrix of order n over a P x Q
 * grid of MPI ranks, each after a warm-up call on a smaller matrix, and checks each answer's scaled residual; prints
 * one JSON line per routine (a context line first), as bench/common/run.py's programs do.
 *
 * Usage: blasoffload_scalapack [--ranks=R] [--mpirun=PATH] [--threads-per-rank=auto|K] [--grid=PxQ] [--nb=NB]
 *                              [--drivers=gemm,gesv,potrf,gels] [--warm-n=N] [--stack=NAME] [--round=K] N
 * Started without MPI around it and with --ranks, it starts itself under mpirun -np R (the launcher: the harness runs
 * one program); LD_PRELOAD goes to the ranks only (mpirun itself calls no BLAS), and each rank's OpenBLAS gets K
 * threads (auto: the machine's cores over R, at most 16: every core busy on both sides, as a hybrid MPI and threads
 * run of ScaLAPACK would use a node). A rank whose BLASOFFLOAD_LOG_FILE is set writes its summary to FILE.rank<r>.
 * Residuals: gemm ||C x - A (B x)|| / (||A|| ||B|| ||x|| n eps); gesv and potrf ||A x - b|| / (||A|| ||x|| n eps)
 * (infinity norms; gels, square: QR, the same residual as gesv); ok below 16. Exit status 0, or 1 when a residual is not ok or a routine fails. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* BLACS (C interface) and ScaLAPACK / PBLAS (Fortran interface; a trailing length per character argument). */
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc, size_t la, size_t lb);
void pdgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* ia,
             const int* ja, const int* desca, const double* x, const int* ix, const int* jx, const int* descx,
             const int* incx, const double* beta, double* y, const int* iy, const int* jy, const int* descy,
             const int* incy, size_t lt);
void pdgesv_(const int* n, const int* nrhs, double* a, const int* ia, const int* ja, const int* desca, int* ipiv,
             double* b, const int* ib, const int* jb, const int* descb, int* info);
void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* info,
              size_t lu);
void pdpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* ia, const int* ja,
              const int* desca, double* b, const int* ib, const int* jb, const int* descb, int* info, size_t lu);
void pdgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a, const int* ia, const int* ja,
             const int* desca, double* b, const int* ib, const int* jb, const int* descb, double* work,
             const int* lwork, int* info, size_t lt);
double pdlange_(const char* norm, const int* m, const int* n, const double* a, const int* ia, const int* ja,
                const int* desca, double* work, size_t ln);

static const int kOne = 1, kZero = 0;

typedef struct {
  int ctxt, nprow, npcol, myrow, mycol, rank, ranks, nb;
} Grid;

/* A distributed matrix: its local part and descriptor. */
typedef struct {
  int m, n, lrows, lcols, desc[9];
  double* a;
} Dist;

static int dist_init(Dist* d, const Grid* g, int m, int n) {
  d->m = m, d->n = n;
  d->lrows = numroc_(&m, &g->nb, &g->myrow, &kZero, &g->nprow);
  d->lcols = numroc_(&n, &g->nb, &g->mycol, &kZero, &g->npcol);
  const int lld = d->lrows > 1 ? d->lrows : 1;
  int info = 0;
  descinit_(d->desc, &m, &n, &g->nb, &g->nb, &kZero, &kZero, &g->ctxt, &lld, &info);
  d->a = malloc((size_t)lld * (size_t)(d->lcols > 0 ? d->lcols : 1) * sizeof(double));
  return info == 0 && d->a != NULL;
}
static void dist_free(Dist* d) { free(d->a), d->a = NULL; }

/* A reproducible value in [-0.5, 0.5) for global entry (i, j) of matrix `which`. */
static double value(long i, long j, unsigned which) {
  uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull ^ (uint64_t)j * 0xc2b2ae3d27d4eb4full ^ (uint64_t)which << 56;
  x ^= x >> 31, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 29, x *= 0x94d049bb133111ebull, x ^= x >> 32;
  return (double)(x >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

/* Fills the local part: random, or symmetric positive definite (symmetric random plus n on the diagonal). */
static void dist_fill(Dist* d, const Grid* g, unsigned which, int spd) {
  const long lld = d->desc[8];
  for (int lj = 0; lj < d->lcols; ++lj) {
    const long gj = ((long)(lj / g->nb) * g->npcol + g->mycol) * g->nb + lj % g->nb;
    for (int li = 0; li < d->lrows; ++li) {
      const long gi = ((long)(li / g->nb) * g->nprow + g->myrow) * g->nb + li % g->nb;
      double v = spd ? value(gi < gj ? gi : gj, gi < gj ? gj : gi, which) : value(gi, gj, which);
      if (spd && gi == gj) v += d->n;
      d->a[li + lj * lld] = v;
    }
  }
}
static void dist_copy(Dist* to, const Dist* from) {
  memcpy(to->a, from->a, (size_t)from->desc[8] * (size_t)(from->lcols > 0 ? from->lcols : 1) * sizeof(double));
}
static double norm_inf(const Dist* d) {
  double* work = malloc(((size_t)d->lrows + 1) * sizeof(double));
  const double r = pdlange_("I", &d->m, &d->n, d->a, &kOne, &kOne, d->desc, work, 1);
  free(work);
  return r;
}
/* y = alpha A x + beta y */
static void gemv(double alpha, const Dist* a, const Dist* x, double beta, Dist* y) {
  pdgemv_("N", &a->m, &a->n, &alpha, a->a, &kOne, &kOne, a->desc, x->a, &kOne, &kOne, x->desc, &kOne, &beta, y->a,
          &kOne, &kOne, y->desc, &kOne, 1);
}

static double now_synced(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime();
}

/* One call of `driver` at order n: seconds, scaled residual (NaN when not computed), status (0 ok). */
typedef struct {
  double seconds, residual;
  int status;
} Result;

static Result run_driver(const char* driver, const Grid* g, int n) {
  Result r = {0, NAN, 1};
  const double eps = 1.1102230246251565e-16;
  Dist a, a0, x, b, y;
  int ok = dist_init(&a, g, n, n) & dist_init(&x, g, n, 1) & dist_init(&b, g, n, 1) & dist_init(&y, g, n, 1);
  const int spd = strcmp(driver, "potrf") == 0;
  int* ipiv = malloc(((size_t)a.lrows + g->nb) * sizeof(int));
  a0.a = NULL;
  ok = ok && ipiv && dist_init(&a0, g, n, n);
  if (!ok) {
    fprintf(stderr, "rank %d: out of memory at n = %d\n", g->rank, n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  dist_fill(&a, g, 1, spd);
  dist_fill(&b, g, 3, 0);
  int info = 0;
  if (strcmp(driver, "gemm") == 0) {
    /* C = A B into a0, B in y's stead: a second n x n matrix. */
    Dist bm;
    if (!dist_init(&bm, g, n, n)) MPI_Abort(MPI_COMM_WORLD, 2);
    dist_fill(&bm, g, 2, 0);
    const double one = 1, zero = 0;
    const double t0 = now_synced();
    pdgemm_("N", "N", &n, &n, &n, &one, a.a, &kOne, &kOne, a.desc, bm.a, &kOne, &kOne, bm.desc, &zero, a0.a, &kOne,
            &kOne, a0.desc, 1, 1);
    r.seconds = now_synced() - t0;
    gemv(1, &bm, &b, 0, &x);  /* x = B b */
    gemv(1, &a, &x, 0, &y);   /* y = A (B b) */
    gemv(1, &a0, &b, -1, &y); /* y = C b - A (B b) */
    r.residual = norm_inf(&y) / (norm_inf(&a) * norm_inf(&bm) * norm_inf(&b) * n * eps);
    dist_free(&bm);
  } else {
    dist_copy(&a0, &a);
    dist_copy(&x, &b);
    const double t0 = now_synced();
    if (spd) {
      pdpotrf_("L", &n, a.a, &kOne, &kOne, a.desc, &info, 1);
      r.seconds = now_synced() - t0;
      if (info == 0) pdpotrs_("L", &n, &kOne, a.a, &kOne, &kOne, a.desc, x.a, &kOne, &kOne, x.desc, &info, 1);
    } else if (strcmp(driver, "gels") == 0) {
      /* least squares on the square system: pdgeqrf, pdormqr, pdtrtrs; the workspace query is timed too */
      double query = 0;
      int lwork = -1;
      pdgels_("N", &n, &n, &kOne, a.a, &kOne, &kOne, a.desc, x.a, &kOne, &kOne, x.desc, &query, &lwork, &info, 1);
      lwork = (int)query;
      double* work = malloc((size_t)(lwork > 1 ? lwork : 1) * sizeof(double));
      if (!work) MPI_Abort(MPI_COMM_WORLD, 2);
      pdgels_("N", &n, &n, &kOne, a.a, &kOne, &kOne, a.desc, x.a, &kOne, &kOne, x.desc, work, &lwork, &info, 1);
      r.seconds = now_synced() - t0;
      free(work);
    } else {
      pdgesv_(&n, &kOne, a.a, &kOne, &kOne, a.desc, ipiv, x.a, &kOne, &kOne, x.desc, &info);
      r.seconds = now_synced() - t0;
    }
    if (info == 0) {
      dist_copy(&y, &b);
      gemv(-1, &a0, &x, 1, &y); /* y = b - A x */
      r.residual = norm_inf(&y) / (norm_inf(&a0) * norm_inf(&x) * n * eps);
    } else if (g->rank == 0) {
      fprintf(stderr, "p%s: info = %d at n = %d\n", driver, info, n);
    }
  }
  r.status = info != 0 || !(r.residual < 16);
  dist_free(&a), dist_free(&a0), dist_free(&x), dist_free(&b), dist_free(&y);
  free(ipiv);
  return r;
}

static double flops(const char* driver, double n) {
  if (strcmp(driver, "gemm") == 0) return 2 * n * n * n;
  if (strcmp(driver, "gesv") == 0) return 2.0 / 3 * n * n * n + 2 * n * n;
  if (strcmp(driver, "gels") == 0) return 4.0 / 3 * n * n * n + 4 * n * n;
  return n * n * n / 3;
}

/* The launcher: this program again under mpirun -np R, LD_PRELOAD for the ranks only. */
static int launch(int ranks, const char* mpirun, const char* threads, int argc, char** argv) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int per = threads && strcmp(threads, "auto") != 0 ? atoi(threads) : (int)(cores / ranks);
  if (!threads || strcmp(threads, "auto") == 0) per = per > 16 ? 16 : per;
  per = per < 1 ? 1 : per;
  char nthreads[32], np[16], preload[4096] = "LD_PRELOAD=";
  snprintf(nthreads, sizeof nthreads, "%d", per);
  snprintf(np, sizeof np, "%d", ranks);
  setenv("OPENBLAS_NUM_THREADS", nthreads, 1);
  setenv("OMP_NUM_THREADS", nthreads, 1);
  const char* pre = getenv("LD_PRELOAD");
  strncat(preload, pre ? pre : "", sizeof preload - strlen(preload) - 1);
  unsetenv("LD_PRELOAD");
  char** av = calloc((size_t)argc + 16, sizeof(char*));
  int k = 0;
  av[k++] = (char*)mpirun;
  if (geteuid() == 0) av[k++] = "--allow-run-as-root";
  /* No binding: each rank's OpenBLAS threads spread over the cores (mpirun binds a rank to one core by default). */
  av[k++] = "--oversubscribe", av[k++] = "--bind-to", av[k++] = "none", av[k++] = "-np", av[k++] = np;
  av[k++] = "-x", av[k++] = preload, av[k++] = "-x", av[k++] = "OPENBLAS_NUM_THREADS";
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 2;
  self[len] = '\0';
  av[k++] = self;
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--ranks=", 8) != 0) av[k++] = argv[i];
  execvp(mpirun, av);
  perror(mpirun);
  return 2;
}

int main(int argc, char** argv) {
  int ranks = 0, nb = 256, p = 0, q = 0, warm_n = 2048, round = 1;
  const char *drivers = "gemm,gesv,potrf", *stack = "?", *mpirun = "mpirun", *threads = "auto";
  int n = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strncmp(a, "--ranks=", 8))
      ranks = atoi(a + 8);
    else if (!strncmp(a, "--mpirun=", 9))
      mpirun = a + 9;
    else if (!strncmp(a, "--threads-per-rank=", 19))
      threads = a + 19;
    else if (!strncmp(a, "--grid=", 7))
      sscanf(a + 7, "%dx%d", &p, &q);
    else if (!strncmp(a, "--nb=", 5))
      nb = atoi(a + 5);
    else if (!strncmp(a, "--drivers=", 10))
      drivers = a + 10;
    else if (!strncmp(a, "--warm-n=", 9))
      warm_n = atoi(a + 9);
    else if (!strncmp(a, "--stack=", 8))
      stack = a + 8;
    else if (!strncmp(a, "--round=", 8))
      round = atoi(a + 8);
    else if (a[0] != '-')
      n = atoi(a);
    else if (strncmp(a, "--budget-s=", 11) != 0) { /* the harness's budget: one call per driver fits or not */
      fprintf(stderr, "unknown argument %s\n", a);
      return 2;
    }
  }
  if (n <= 0 || nb <= 0) {
    fprintf(stderr, "usage: blasoffload_scalapack [options] N (see the source's first comment)\n");
    return 2;
  }
  if (ranks > 0 && !getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE"))
    return launch(ranks, mpirun, threads, argc, argv);

  /* Each rank's summary in a file of its own: the library reads its settings at its first call, after this. */
  const char* rank_env = getenv("OMPI_COMM_WORLD_RANK");
  const char* log_file = getenv("BLASOFFLOAD_LOG_FILE");
  if (rank_env && log_file) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s.rank%s", log_file, rank_env);
    setenv("BLASOFFLOAD_LOG_FILE", buf, 1);
  }
  MPI_Init(&argc, &argv);
  Grid g = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g.ranks);
  if (p <= 0 || q <= 0 || p * q != g.ranks) { /* the squarest grid, P <= Q */
    for (p = 1; (p + 1) * (p + 1) <= g.ranks; ++p) {
    }
    while (g.ranks % p) --p;
    q = g.ranks / p;
  }
  g.nb = nb;
  Cblacs_get(-1, 0, &g.ctxt);
  Cblacs_gridinit(&g.ctxt, "Row", p, q);
  Cblacs_gridinfo(g.ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  if (g.rank == 0) {
    Dl_info info;
    void* sym = dlsym(RTLD_DEFAULT, "dgemm_");
    const char* from = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
    const char* th = getenv("OPENBLAS_NUM_THREADS");
    printf(
        "{\"context\": {\"program\": \"blasoffload_scalapack\", \"stack\": \"%s\", \"ranks\": %d, \"grid\": "
        "\"%dx%d\", \"nb\": %d, \"threads_per_rank\": \"%s\", \"dgemm_from\": \"%s\"}}\n",
        stack, g.ranks, p, q, nb, th ? th : "?", from);
    fflush(stdout);
  }
  int failed = 0;
  char list[256];
  snprintf(list, sizeof list, "%s", drivers);
  for (char* d = strtok(list, ","); d; d = strtok(NULL, ",")) {
    if (strcmp(d, "gemm") && strcmp(d, "gesv") && strcmp(d, "potrf") && strcmp(d, "gels")) {
      if (g.rank == 0) fprintf(stderr, "unknown driver %s\n", d);
      failed = 1;
      continue;
    }
    /* The warm-up on a smaller matrix: MPI's connections, the CPU BLAS's threads, the programs' first pages. Under the
     * library's defaults one below BLASOFFLOAD_SCALAPACK_MIN_N (4096) is ScaLAPACK's own and starts no GPU: the timed
     * call waits for the GPUs' start-up, as a program's first large solve does. */
    if (warm_n > 0) run_driver(d, &g, warm_n < n ? warm_n : n);
    const Result r = run_driver(d, &g, n);
    failed |= r.status;
    if (g.rank == 0) {
      printf(
          "{\"bench\": \"scalapack\", \"routine\": \"pd%s\", \"precision\": \"d\", \"n\": %d, \"nb\": %d, "
          "\"grid\": \"%dx%d\", \"ranks\": %d, \"stack\": \"%s\", \"round\": %d, \"seconds\": %.6f, "
          "\"gflops\": %.2f, \"residual\": %.3g, \"ok\": %s}\n",
          d, n, nb, p, q, g.ranks, stack, round, r.seconds, flops(d, n) / r.seconds * 1e-9,
          isnan(r.residual) ? -1.0 : r.residual, r.status ? "false" : "true");
      fflush(stdout);
    }
  }
  Cblacs_gridexit(g.ctxt);
  MPI_Finalize();
  return failed;
}
