/* A program that ends while the library may still be starting the GPU in the background (device-exit-check.sh):
 * one GPU-worthy dgemm (with BLASOFFLOAD_STARTUP=eager it starts the start-up), then more dgemm calls on the CPU for
 * BUSY_MS (OpenBLAS's threads on every core, as in a real program), then main returns. It prints the wall clock at that
 * moment, so the caller can measure how long exit took.
 * Usage: exit_startup N BUSY_MS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);

static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2048;
  const double busy_s = (argc > 2 ? atof(argv[2]) : 0) * 1e-3;
  double* a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* c = malloc(sizeof(double) * (size_t)n * (size_t)n);
  if (!a || !b || !c) return 2;
  for (size_t i = 0; i < (size_t)n * (size_t)n; ++i) a[i] = b[i] = c[i] = 1.0 / (double)(1 + i % 7);
  const double one = 1, zero = 0;
  const double t0 = wall_s();
  int calls = 0;
  do {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    ++calls;
  } while (wall_s() - t0 < busy_s);
  printf("calls %d c00 %.6g main-returns-at %.6f\n", calls, c[0], wall_s());
  fflush(stdout);
  return 0;
}
