/* Factorises a matrix with OpenBLAS's own LAPACK, whose sgetrf calls OpenBLAS's BLAS internally: nothing
 * reaches blasoffload, and its summary must say so and name where LAPACK came from. */
#include <stdio.h>

void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);

int main(void) {
  enum { N = 200 };
  static float a[N * N];
  static int ipiv[N];
  const int n = N;
  int info = 0;
  for (int i = 0; i < N * N; ++i) a[i] = (float)(i % 7) * 0.1f;
  for (int i = 0; i < N; ++i) a[i * N + i] += 10.0f;
  sgetrf_(&n, &n, a, &n, ipiv, &info);
  printf(info == 0 ? "PASS\n" : "sgetrf failed\n");
  return info;
}
