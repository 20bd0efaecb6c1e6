/* A program linked like any Debian program against the system's BLAS and LAPACK (NEEDED libblas.so.3 and
 * liblapack.so.3) that calls only routines blasoffload accelerates (Fortran dgemm_, CBLAS cblas_dgemm, dgetrf_), so
 * that it runs on the library as the alternative whether or not the library exports the complete interface. Prints
 * PASS when the results are right. */
#include <math.h>
#include <stdio.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);

int main(void) {
  enum { N = 3 };
  const int n = N;
  const double one = 1.0, zero = 0.0;
  /* Column-major A = [[4, 1, 0], [1, 3, 1], [0, 1, 2]], B = identity: A * B = A. */
  const double a[N * N] = {4, 1, 0, 1, 3, 1, 0, 1, 2};
  const double b[N * N] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double c[N * N], d[N * N], lu[N * N];
  int ipiv[N], info = -1, bad = 0;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  cblas_dgemm(102 /* CblasColMajor */, 111 /* CblasNoTrans */, 111, N, N, N, 1.0, a, N, b, N, 0.0, d, N);
  for (int i = 0; i < N * N; ++i) {
    lu[i] = a[i];
    if (c[i] != a[i] || d[i] != a[i]) bad = 1;
  }
  dgetrf_(&n, &n, lu, &n, ipiv, &info);
  /* det(A) = 4 (3*2 - 1) - 1 (1*2 - 0) = 18: the product of U's diagonal, up to the pivots' sign. */
  double det = 1.0;
  for (int i = 0; i < N; ++i) det *= (ipiv[i] != i + 1 ? -1.0 : 1.0) * lu[i + i * N];
  if (info != 0 || fabs(det - 18.0) > 1e-12) bad = 1;
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad;
}
