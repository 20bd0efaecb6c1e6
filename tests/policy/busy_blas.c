/* A busy process for the calibration tests: another program's threaded CPU BLAS, as a user's would run beside
 * blasoffload-calibrate. Usage: busy_blas LIBRARY SECONDS [N]: dgemm_ of order N (default 512) from LIBRARY (dlopen'ed,
 * so the test names OpenBLAS and its thread count through OPENBLAS_NUM_THREADS) in a loop for SECONDS. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void dgemm_t(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                     const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: busy_blas LIBRARY SECONDS [N]\n");
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  dgemm_t* dgemm = h ? (dgemm_t*)dlsym(h, "dgemm_") : NULL;
  if (!dgemm) {
    fprintf(stderr, "busy_blas: no dgemm_ in %s: %s\n", argv[1], dlerror());
    return 2;
  }
  const double seconds = atof(argv[2]);
  const int n = argc > 3 ? atoi(argv[3]) : 512;
  double* a = calloc((size_t)n * n, sizeof *a);
  double* c = calloc((size_t)n * n, sizeof *c);
  if (!a || !c) return 2;
  for (size_t i = 0; i < (size_t)n * n; ++i) a[i] = (double)(i % 7) / 7.0;
  const double one = 1, zero = 0, end = now() + seconds;
  while (now() < end) dgemm("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n, 1, 1);
  return 0;
}
