/* A program built against an installed blasoffload (find_package or pkg-config): one sgemm_ through the library,
 * checked against a plain loop. Prints PASS. */
#include <math.h>
#include <stdio.h>

void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            size_t la, size_t lb);

int main(void) {
  enum { N = 8 };
  float a[N * N], b[N * N], c[N * N], ref[N * N];
  for (int i = 0; i < N * N; ++i) {
    a[i] = (float)(i % 5) - 2.0f;
    b[i] = (float)(i % 3) + 0.5f;
    c[i] = 0.0f;
  }
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      float s = 0.0f;
      for (int l = 0; l < N; ++l) s += a[i + l * N] * b[l + j * N];
      ref[i + j * N] = s;
    }
  const int n = N;
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  for (int i = 0; i < N * N; ++i)
    if (fabsf(c[i] - ref[i]) > 1e-4f) {
      printf("FAIL: c[%d] = %g, expected %g\n", i, c[i], ref[i]);
      return 1;
    }
  printf("PASS\n");
  return 0;
}
