/* Each MPI rank multiplies its own matrices with sgemm_ and dgemm_ (whatever blasoffload does with them under
 * LD_PRELOAD: GPU or CPU) and checks every entry against a higher-precision product within BLAS's error bound;
 * rank 0 prints PASS when all ranks passed. Also reports the node-local rank each rank's GPU is chosen by.
 * Usage: mpirun -np R mpi_gemm [N] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            size_t la, size_t lb);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, size_t la, size_t lb);

/* A rank-dependent, reproducible value in [-1, 1). */
static double value(int rank, size_t i, int which) {
  unsigned long long x = (unsigned long long)i * 6364136223846793005ull + (unsigned long long)(rank * 7 + which);
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 32;
  return (double)(x % 2000001) / 1000000.0 - 1.0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 1024;
  const size_t nn = (size_t)n * n;
  float *as = malloc(nn * sizeof(float)), *bs = malloc(nn * sizeof(float)), *cs = malloc(nn * sizeof(float));
  double *ad = malloc(nn * sizeof(double)), *bd = malloc(nn * sizeof(double)), *cd = malloc(nn * sizeof(double));
  if (!as || !bs || !cs || !ad || !bd || !cd) {
    fprintf(stderr, "rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (size_t i = 0; i < nn; ++i) {
    ad[i] = value(rank, i, 0);
    bd[i] = value(rank, i, 1);
    as[i] = (float)ad[i];
    bs[i] = (float)bd[i];
    cs[i] = 0.0f;
    cd[i] = 0.0;
  }
  const float ones = 1.0f, zeros = 0.0f;
  const double oned = 1.0, zerod = 0.0;
  sgemm_("N", "N", &n, &n, &n, &ones, as, &n, bs, &n, &zeros, cs, &n, 1, 1);
  dgemm_("N", "N", &n, &n, &n, &oned, ad, &n, bd, &n, &zerod, cd, &n, 1, 1);
  /* Reference on a sample of columns (long double), bound: 2 k eps sum |a||b| (+ tiny). */
  int bad = 0;
  const int step = n > 64 ? n / 64 : 1;
  for (int j = 0; j < n && bad < 5; j += step)
    for (int i = 0; i < n && bad < 5; ++i) {
      long double ref_s = 0, ref_d = 0, abs_sum = 0;
      for (int l = 0; l < n; ++l) {
        ref_s += (long double)as[i + (size_t)l * n] * bs[l + (size_t)j * n];
        ref_d += (long double)ad[i + (size_t)l * n] * bd[l + (size_t)j * n];
        abs_sum += fabsl((long double)ad[i + (size_t)l * n] * bd[l + (size_t)j * n]);
      }
      const long double tol_s = 2.0L * n * 5.96e-8L * abs_sum + 1e-30L,
                        tol_d = 2.0L * n * 1.11e-16L * abs_sum + 1e-300L;
      const long double es = fabsl(cs[i + (size_t)j * n] - ref_s), ed = fabsl(cd[i + (size_t)j * n] - ref_d);
      if (!(es <= tol_s) || !(ed <= tol_d)) {
        fprintf(stderr, "rank %d: C(%d,%d) sgemm err %Lg (tol %Lg), dgemm err %Lg (tol %Lg)\n", rank, i, j, es, tol_s,
                ed, tol_d);
        ++bad;
      }
    }
  const char* local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  printf("rank %d of %d on %s (node-local rank %s): n = %d, sgemm and dgemm %s\n", rank, size, host,
         local ? local : "unset", n, bad ? "WRONG" : "correct");
  fflush(stdout);
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(all_bad ? "FAIL: %d wrong entries\n" : "PASS: %d ranks\n", all_bad ? all_bad : size);
  free(as), free(bs), free(cs), free(ad), free(bd), free(cd);
  MPI_Finalize();
  return all_bad ? 1 : 0;
}
