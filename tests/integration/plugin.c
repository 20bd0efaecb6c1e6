/* A "plugin": linked against the reference libblas (not against blasoffload) and loaded by the host with
 * dlopen(RTLD_LOCAL), so its BLAS is invisible to RTLD_NEXT/RTLD_DEFAULT lookups. Calls sgemm_ and
 * cblas_sgemm and checks both against a naive product. */
#include <math.h>
#include <stdio.h>

void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
/* cblas.h constants (CblasColMajor = 102, CblasNoTrans = 111, CblasTrans = 112) */
void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);

enum { M = 7, N = 5, K = 6 };

static int check(const char* what, const float* c, const float* want) {
  for (int i = 0; i < M * N; ++i)
    if (fabsf(c[i] - want[i]) > 1e-4f * (1.0f + fabsf(want[i]))) {
      printf("plugin: %s mismatch at %d: %g vs %g\n", what, i, c[i], want[i]);
      return 1;
    }
  printf("plugin: %s OK\n", what);
  return 0;
}

int plugin_run(void) {
  float a[M * K], b[K * N], c[M * N], want[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 11) - 5.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 13) * 0.25f - 1.0f;
  /* want = 2*A*B + 0.5*C0, column major, C0 = 1 */
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      double s = 0;
      for (int p = 0; p < K; ++p) s += (double)a[i + p * M] * b[p + j * K];
      want[i + j * M] = (float)(2.0 * s + 0.5);
    }
  int m = M, n = N, k = K, failed = 0;
  float alpha = 2.0f, beta = 0.5f;
  for (int i = 0; i < M * N; ++i) c[i] = 1.0f;
  sgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
  failed |= check("sgemm_", c, want);
  for (int i = 0; i < M * N; ++i) c[i] = 1.0f;
  cblas_sgemm(102, 111, 111, M, N, K, alpha, a, M, b, K, beta, c, M);
  failed |= check("cblas_sgemm", c, want);
  return failed;
}
