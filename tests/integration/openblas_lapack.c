/* Factorises a matrix with OpenBLAS's own LAPACK: with argument "getrf" by sgetrf, which blasoffload intercepts
 * itself (and forwards to OpenBLAS's sgetrf on the CPU); with "trtri" it inverts the matrix's upper triangle by strtri,
 * which blasoffload does not intercept and which OpenBLAS implements on its BLAS internally: nothing reaches
 * blasoffload, and its summary must say so and name where LAPACK came from. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void strtri_(const char* uplo, const char* diag, const int* n, float* a, const int* lda, int* info, size_t uplo_len,
             size_t diag_len);

int main(int argc, char** argv) {
  enum { N = 200 };
  static float a[N * N];
  static int ipiv[N];
  const int n = N;
  int info = 0;
  for (int i = 0; i < N * N; ++i) a[i] = (float)(i % 7) * 0.1f;
  for (int i = 0; i < N; ++i) a[i * N + i] += 10.0f;
  if (argc > 1 && strcmp(argv[1], "trtri") == 0)
    strtri_("U", "N", &n, a, &n, &info, 1, 1);
  else
    sgetrf_(&n, &n, a, &n, ipiv, &info);
  printf(info == 0 ? "PASS\n" : "factorization failed\n");
  return info;
}
