/* ScaLAPACK's pdgetrf, pdpotrf (both triangles) and pdgeqrf (a tall sub(A)), and the drivers pdgesv, pdposv and
 * pdgels, on a submatrix that starts inside the matrix (IA, JA > 1, on block boundaries) and on a grid whose first
 * block is not on process (0,0) (RSRC, CSRC = 1 where the grid allows): each factor must solve sub(A) x = b through
 * pdgetrs / pdpotrs / pdormqr and pdtrtrs (with the workspace sizes their queries give), and each driver its own
 * system, to 1e-10; no element outside sub(A) (nor, for Cholesky, in its other triangle) and outside sub(B) may
 * change. Run with and without the takeover (BLASOFFLOAD_SCALAPACK=gather / off):
 * the same checks hold for ScaLAPACK's own factorization. Rank 0 prints "PASS: ..." or "FAIL: ..." lines and the
 * program exits 1 on any failure. Usage: mpirun -np P scalapack_submatrix NPROW NPCOL */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void blacs_get_(const int* ctxt, const int* what, int* val);
void blacs_gridinit_(int* ctxt, const char* order, const int* nprow, const int* npcol);
void blacs_gridinfo_(const int* ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void blacs_gridexit_(const int* ctxt);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ctxt, const int* lld, int* info);
void pdgetrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* ipiv,
              int* info);
void pdgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* ia, const int* ja,
              const int* desca, const int* ipiv, double* b, const int* ib, const int* jb, const int* descb, int* info);
void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* info);
void pdpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* ia, const int* ja,
              const int* desca, double* b, const int* ib, const int* jb, const int* descb, int* info);
void pdgeqrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desca, double* tau,
              double* work, const int* lwork, int* info);
void pdormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const double* a,
              const int* ia, const int* ja, const int* desca, const double* tau, double* c, const int* ic,
              const int* jc, const int* descc, double* work, const int* lwork, int* info);
void pdgesv_(const int* n, const int* nrhs, double* a, const int* ia, const int* ja, const int* desca, int* ipiv,
             double* b, const int* ib, const int* jb, const int* descb, int* info);
void pdposv_(const char* uplo, const int* n, const int* nrhs, double* a, const int* ia, const int* ja, const int* desca,
             double* b, const int* ib, const int* jb, const int* descb, int* info);
void pdgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a, const int* ia, const int* ja,
             const int* desca, double* b, const int* ib, const int* jb, const int* descb, double* work,
             const int* lwork, int* info);
void pdtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const double* a,
              const int* ia, const int* ja, const int* desca, double* b, const int* ib, const int* jb, const int* descb,
              int* info);

enum { MA = 101, NA = 93, NB = 8, IA = 9, JA = 17, N = 60, QR_EXTRA_ROWS = 16 };

static int nprow, npcol, myrow, mycol, failures;

/* A deterministic element of the global matrix at (IA - 1 + i, JA - 1 + j) (0-based): sub(A) is symmetric and
 * diagonally dominant. */
static int
    g_break; /* 1: column BREAK_AT of sub(A) zero (singular); 2: its diagonal element -1 (not positive definite) */
enum { BREAK_AT = 7 };
static double element(int i, int j) {
  if (g_break == 1 && j == BREAK_AT) return 0;
  if (g_break == 2 && i == BREAK_AT && j == BREAK_AT) return -1;
  unsigned h = (unsigned)(i < j ? i * 7919 + j : j * 7919 + i) * 2654435761u;
  double v = (double)(h >> 8) / (double)(1u << 24) - 0.5;
  return i == j ? v + 2.0 * N : v;
}

/* The global index (0-based) of local index l (0-based) on process p, blocks of NB, first block on src. */
static int global(int l, int p, int src, int procs) {
  return ((l / NB) * procs + (p - src + procs) % procs) * NB + l % NB;
}

static void check(int ok, const char* what) {
  int all = 0, mine = ok ? 0 : 1;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (myrow == 0 && mycol == 0)
    printf("%s: %s (%d of %d processes failed)\n", all ? "FAIL" : "PASS", what, all, nprow * npcol);
  if (all) ++failures;
}

/* One process's part of a run: A (MA x NA, blocks NB x NB, first block on process (rsrc, csrc)) filled from element()
 * with g_break as given, a copy of it, b (an MA x 1 matrix laid out like A's rows, zero), pivots and TAU. */
typedef struct {
  int lr, lc, lld, desc[9], descb[9];
  double *a, *saved, *b, *tau;
  int* ipiv;
} Part;

static Part part(int ctxt, int rsrc, int csrc, int brk) {
  Part p;
  int info = 0;
  const int one = 1;
  p.lr = numroc_(&(int){MA}, &(int){NB}, &myrow, &rsrc, &nprow);
  p.lc = numroc_(&(int){NA}, &(int){NB}, &mycol, &csrc, &npcol);
  p.lld = p.lr > 1 ? p.lr : 1;
  descinit_(p.desc, &(int){MA}, &(int){NA}, &(int){NB}, &(int){NB}, &rsrc, &csrc, &ctxt, &p.lld, &info);
  descinit_(p.descb, &(int){MA}, &one, &(int){NB}, &(int){NB}, &rsrc, &csrc, &ctxt, &p.lld, &info);
  p.a = malloc(sizeof(double) * (size_t)p.lld * (p.lc ? p.lc : 1));
  p.saved = malloc(sizeof(double) * (size_t)p.lld * (p.lc ? p.lc : 1));
  p.b = calloc((size_t)p.lld, sizeof(double));
  p.ipiv = malloc(sizeof(int) * (size_t)(p.lr + NB));
  p.tau = malloc(sizeof(double) * (size_t)(p.lc ? p.lc : 1));
  g_break = brk;
  for (int j = 0; j < p.lc; ++j)
    for (int i = 0; i < p.lr; ++i)
      p.a[i + (size_t)j * p.lld] =
          element(global(i, myrow, rsrc, nprow) - (IA - 1), global(j, mycol, csrc, npcol) - (JA - 1));
  g_break = 0;
  memcpy(p.saved, p.a, sizeof(double) * (size_t)p.lld * p.lc);
  return p;
}
static void part_free(Part* p) { free(p->a), free(p->saved), free(p->b), free(p->ipiv), free(p->tau); }

/* One factorization of sub(A) = A(IA:IA+M-1, JA:JA+N-1) and a solve with it: kind 'G' (LU) or 'L'/'U' (Cholesky),
 * M = N, or 'Q' (QR), M = N + QR_EXTRA_ROWS; or one driver call: 'S' (pdgesv), 'P' (pdposv, lower), 'E' (pdgels,
 * M = N + QR_EXTRA_ROWS). */
static void run(int ctxt, int rsrc, int csrc, char kind) {
  const int one = 1, n = N, m = kind == 'Q' || kind == 'E' ? N + QR_EXTRA_ROWS : N, ia = IA, ja = JA;
  const char tri = kind == 'P' ? 'L' : kind; /* the triangle a Cholesky factor writes */
  Part p = part(ctxt, rsrc, csrc, 0);
  const int lr = p.lr, lc = p.lc, lld = p.lld, *desc = p.desc, *descb = p.descb;
  double *a = p.a, *saved = p.saved, *b = p.b, *tau = p.tau;
  int* ipiv = p.ipiv;
  int info = 0;
  /* b = sub(A) x with x_k = 1 + k / N, summed from the global definition on the processes holding b's rows. */
  const int bcol = csrc; /* descb's only column lives on process column csrc */
  if (mycol == bcol)
    for (int i = 0; i < lr; ++i) {
      const int g = global(i, myrow, rsrc, nprow) - (IA - 1);
      if (g < 0 || g >= m) continue;
      double s = 0;
      for (int k = 0; k < N; ++k) s += element(g, k) * (1.0 + (double)k / N);
      b[i] = s;
    }
  char what[128];
  const char* name = kind == 'G'   ? "pdgetrf"
                     : kind == 'Q' ? "pdgeqrf"
                     : kind == 'L' ? "pdpotrf lower"
                     : kind == 'U' ? "pdpotrf upper"
                     : kind == 'S' ? "pdgesv"
                     : kind == 'P' ? "pdposv lower"
                                   : "pdgels";
  double* work = NULL;
  int lwork = -1;
  if (kind == 'G') {
    pdgetrf_(&n, &n, a, &ia, &ja, desc, ipiv, &info);
  } else if (kind == 'Q') {
    double query = 0;
    pdgeqrf_(&m, &n, a, &ia, &ja, desc, tau, &query, &lwork, &info); /* the workspace query: ScaLAPACK's answer */
    lwork = (int)query;
    work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
    work[0] = -1;
    pdgeqrf_(&m, &n, a, &ia, &ja, desc, tau, work, &lwork, &info);
    snprintf(what, sizeof what, "pdgeqrf: WORK(1) = %g, the least LWORK %d", work[0], lwork);
    check(work[0] == lwork, what);
  } else if (kind == 'S') {
    pdgesv_(&n, &one, a, &ia, &ja, desc, ipiv, b, &ia, &one, descb, &info);
  } else if (kind == 'P') {
    pdposv_("L", &n, &one, a, &ia, &ja, desc, b, &ia, &one, descb, &info);
  } else if (kind == 'E') {
    double query = 0;
    pdgels_("N", &m, &n, &one, a, &ia, &ja, desc, b, &ia, &one, descb, &query, &lwork, &info);
    /* More than the query's answer: ScaLAPACK's own pdgels (BLASOFFLOAD_SCALAPACK=off) passes its pdgeqrf too little
     * of it for this submatrix ("PDGEQRF parameter number 9 had an illegal value"). */
    const int least = (int)query;
    lwork = 2 * least + NB * (MA + NA + NB);
    work = malloc(sizeof(double) * (size_t)lwork);
    work[0] = -1;
    pdgels_("N", &m, &n, &one, a, &ia, &ja, desc, b, &ia, &one, descb, work, &lwork, &info);
    snprintf(what, sizeof what, "pdgels: WORK(1) = %g, the least LWORK %d", work[0], least);
    check(work[0] == least, what);
  } else {
    pdpotrf_(&kind, &n, a, &ia, &ja, desc, &info);
  }
  snprintf(what, sizeof what, "%s at (%d, %d), source process (%d, %d): INFO = 0", name, IA, JA, rsrc, csrc);
  check(info == 0, what);
  /* Nothing outside sub(A) changed, nor the other triangle of a Cholesky factor's. */
  int untouched = 1;
  for (int j = 0; j < lc; ++j)
    for (int i = 0; i < lr; ++i) {
      const int gi = global(i, myrow, rsrc, nprow) - (IA - 1), gj = global(j, mycol, csrc, npcol) - (JA - 1);
      int keep = gi < 0 || gi >= m || gj < 0 || gj >= N;
      if (tri == 'L' && gi < gj) keep = 1;
      if (tri == 'U' && gi > gj) keep = 1;
      if (keep && memcmp(&a[i + (size_t)j * lld], &saved[i + (size_t)j * lld], sizeof(double))) untouched = 0;
    }
  snprintf(what, sizeof what, "%s: nothing written outside its part of sub(A)", name);
  check(untouched, what);
  /* b's rows outside sub(B) are still zero */
  int b_untouched = 1;
  if (mycol == bcol)
    for (int i = 0; i < lr; ++i) {
      const int g = global(i, myrow, rsrc, nprow) - (IA - 1);
      if ((g < 0 || g >= m) && b[i] != 0) b_untouched = 0;
    }
  snprintf(what, sizeof what, "%s: nothing written outside sub(B)", name);
  check(b_untouched, what);
  if (kind == 'S' || kind == 'P' || kind == 'E') {
    /* the driver solved already */
  } else if (kind == 'G') {
    pdgetrs_("N", &n, &one, a, &ia, &ja, desc, ipiv, b, &ia, &one, descb, &info);
  } else if (kind == 'Q') {
    /* x = R^-1 (Q^T b)(1:N): exact for this consistent system */
    double query = 0;
    lwork = -1;
    pdormqr_("L", "T", &m, &one, &n, a, &ia, &ja, desc, tau, b, &ia, &one, descb, &query, &lwork, &info);
    lwork = (int)query;
    free(work);
    work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
    pdormqr_("L", "T", &m, &one, &n, a, &ia, &ja, desc, tau, b, &ia, &one, descb, work, &lwork, &info);
    if (info == 0) pdtrtrs_("U", "N", "N", &n, &one, a, &ia, &ja, desc, b, &ia, &one, descb, &info);
  } else {
    pdpotrs_(&kind, &n, &one, a, &ia, &ja, desc, b, &ia, &one, descb, &info);
  }
  double err = 0;
  if (mycol == bcol)
    for (int i = 0; i < lr; ++i) {
      const int g = global(i, myrow, rsrc, nprow) - (IA - 1);
      if (g >= 0 && g < N) err = fmax(err, fabs(b[i] - (1.0 + (double)g / N)));
    }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  snprintf(what, sizeof what, "%s: the solve's error %.1e below 1e-10", name, err);
  check(info == 0 && err < 1e-10, what);
  free(work);
  part_free(&p);
}

/* pdgesv on a singular sub(A) and pdposv on one that is not positive definite: INFO = BREAK_AT + 1 as ScaLAPACK
 * reports it (the takeover's LAPACK call finds it too and leaves the call to ScaLAPACK), nothing written outside sub(A)
 * and sub(B). */
static void run_failing(int ctxt, int rsrc, int csrc, char kind) {
  const int one = 1, n = N, ia = IA, ja = JA;
  Part p = part(ctxt, rsrc, csrc, kind == 'S' ? 1 : 2);
  const int lr = p.lr, lc = p.lc, lld = p.lld, *desc = p.desc, *descb = p.descb;
  double *a = p.a, *saved = p.saved, *b = p.b;
  int info = 0;
  if (mycol == csrc)
    for (int i = 0; i < lr; ++i) {
      const int g = global(i, myrow, rsrc, nprow) - (IA - 1);
      if (g >= 0 && g < N) b[i] = 1;
    }
  const char* name = kind == 'S' ? "pdgesv, singular" : "pdposv lower, not positive definite";
  if (kind == 'S')
    pdgesv_(&n, &one, a, &ia, &ja, desc, p.ipiv, b, &ia, &one, descb, &info);
  else
    pdposv_("L", &n, &one, a, &ia, &ja, desc, b, &ia, &one, descb, &info);
  char what[160];
  snprintf(what, sizeof what, "%s at (%d, %d), source process (%d, %d): INFO = %d, expected %d", name, IA, JA, rsrc,
           csrc, info, BREAK_AT + 1);
  check(info == BREAK_AT + 1, what);
  int untouched = 1;
  for (int j = 0; j < lc; ++j)
    for (int i = 0; i < lr; ++i) {
      const int gi = global(i, myrow, rsrc, nprow) - (IA - 1), gj = global(j, mycol, csrc, npcol) - (JA - 1);
      const int keep = gi < 0 || gi >= N || gj < 0 || gj >= N || (kind == 'P' && gi < gj);
      if (keep && memcmp(&a[i + (size_t)j * lld], &saved[i + (size_t)j * lld], sizeof(double))) untouched = 0;
      if (mycol == csrc && j == 0 && (gi < 0 || gi >= N) && b[i] != 0) untouched = 0;
    }
  snprintf(what, sizeof what, "%s: nothing written outside its part of sub(A) and sub(B)", name);
  check(untouched, what);
  part_free(&p);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    fprintf(stderr, "usage: scalapack_submatrix NPROW NPCOL\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int want_r = atoi(argv[1]), want_c = atoi(argv[2]), zero = 0;
  int ctxt;
  blacs_get_(&zero, &zero, &ctxt);
  blacs_gridinit_(&ctxt, "R", &want_r, &want_c);
  blacs_gridinfo_(&ctxt, &nprow, &npcol, &myrow, &mycol);
  if (myrow >= 0) {
    const int rsrc = nprow > 1 ? 1 : 0, csrc = npcol > 1 ? 1 : 0;
    for (int s = 0; s < 2; ++s) {
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'G');
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'L');
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'U');
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'Q');
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'S');
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'P');
      run(ctxt, s ? rsrc : 0, s ? csrc : 0, 'E');
      run_failing(ctxt, s ? rsrc : 0, s ? csrc : 0, 'S');
      run_failing(ctxt, s ? rsrc : 0, s ? csrc : 0, 'P');
    }
    blacs_gridexit_(&ctxt);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all ? 1 : 0;
}
