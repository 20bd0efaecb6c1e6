/* The built-in example: an unmodified LAPACK application. It solves a dense system with reference LAPACK
 * (SGESV, whose blocked LU calls SGEMM), checks the residual with SGEMV and SNRM2, and runs a triangular
 * solve with STRSV. Run it under LD_PRELOAD=libblasoffload.so with BLASOFFLOAD_LOG=summary to see which
 * calls blasoffload received and where they ran. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b, const int* ldb, int* info);
void sgemv_(const char* trans, const int* m, const int* n, const float* alpha, const float* a, const int* lda,
            const float* x, const int* incx, const float* beta, float* y, const int* incy);
void strsv_(const char* uplo, const char* trans, const char* diag, const int* n, const float* a, const int* lda,
            float* x, const int* incx);
float snrm2_(const int* n, const float* x, const int* incx);

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000, one = 1;
  float* a = malloc(sizeof(float) * n * n);
  float* lu = malloc(sizeof(float) * n * n);
  float* b = malloc(sizeof(float) * n);
  float* x = malloc(sizeof(float) * n);
  int* ipiv = malloc(sizeof(int) * n);
  srand(1);
  for (int i = 0; i < n * n; ++i) a[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < n; ++i) a[i + (size_t)i * n] += n; /* well conditioned */
  for (int i = 0; i < n; ++i) b[i] = x[i] = (float)rand() / RAND_MAX;
  for (int i = 0; i < n * n; ++i) lu[i] = a[i];

  int info = 0;
  sgesv_(&n, &one, lu, &n, ipiv, x, &n, &info);
  if (info != 0) {
    fprintf(stderr, "sgesv failed: info = %d\n", info);
    return 1;
  }
  /* r = b - A x */
  const float minus_one = -1.0f, plus_one = 1.0f;
  float* r = malloc(sizeof(float) * n);
  for (int i = 0; i < n; ++i) r[i] = b[i];
  sgemv_("N", &n, &n, &minus_one, a, &n, x, &one, &plus_one, r, &one);
  const float rel = snrm2_(&n, r, &one) / (snrm2_(&n, b, &one) + 1e-30f);

  /* A triangular solve with the U factor: U y = b. */
  for (int i = 0; i < n; ++i) r[i] = b[i];
  strsv_("U", "N", "N", &n, lu, &n, r, &one);

  printf("solve_demo: n = %d, relative residual ||b - A x|| / ||b|| = %.3e, ||U^-1 b|| = %.4e\n", n, rel,
         snrm2_(&n, r, &one));
  const int ok = rel < 1e-4f;
  printf("solve_demo: %s\n", ok ? "OK" : "RESIDUAL TOO LARGE");
  free(a), free(lu), free(b), free(x), free(ipiv), free(r);
  return ok ? 0 : 1;
}
