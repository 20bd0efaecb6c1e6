// blasoffload_startup_probe: one routine of order N called CALLS times on host matrices, each call's time printed,
// to see what a process's first calls pay (the GPU's start-up, opening cuSOLVER) against the next ones. Usage:
// blasoffload_startup_probe ROUTINE N CALLS [PAUSE_S] (sgemm dgemm dgetrf sgetrf dpotrf dgesv; PAUSE_S: a sleep
// after the first call, so that a start-up it began ends before the second). Linked -llapack -lblas by their Debian
// names: the stack (preload, library path) is the caller's. Its runs on the H100 machine:
// bench/results/firstrun/startup-probe-*.log.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef int I;
void sgemm_(const char*, const char*, const I*, const I*, const I*, const float*, const float*, const I*, const float*,
            const I*, const float*, float*, const I*, size_t, size_t);
void dgemm_(const char*, const char*, const I*, const I*, const I*, const double*, const double*, const I*,
            const double*, const I*, const double*, double*, const I*, size_t, size_t);
void dgetrf_(const I*, const I*, double*, const I*, I*, I*);
void sgetrf_(const I*, const I*, float*, const I*, I*, I*);
void dgesv_(const I*, const I*, double*, const I*, I*, double*, const I*, I*);
void dpotrf_(const char*, const I*, double*, const I*, I*, size_t);
static double now() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static uint64_t st = 88172645463325252ull;
static double u() {
  st ^= st << 13;
  st ^= st >> 7;
  st ^= st << 17;
  return (double)(st >> 11) / 9007199254740992.0 - 0.5;
}
int main(int argc, char** argv) {
  const char* r = argv[1];
  I n = atoi(argv[2]);
  int calls = atoi(argv[3]);
  double pause = argc > 4 ? atof(argv[4]) : 0;
  size_t nn = (size_t)n * n;
  double *A = malloc(nn * 8), *A0 = malloc(nn * 8), *B = malloc(nn * 8), *C = malloc(nn * 8);
  I* ip = malloc(n * sizeof(I));
  I info = 0, one = 1;
  for (size_t i = 0; i < nn; i++) {
    A0[i] = u();
    B[i] = u();
  }
  if (!strcmp(r, "dpotrf"))
    for (I i = 0; i < n; i++) {
      for (I j = 0; j < i; j++) A0[i + (size_t)j * n] = A0[j + (size_t)i * n];
      A0[i + (size_t)i * n] += n;
    }
  float *fA = (float*)A, *fA0 = malloc(nn * 4), *fB = (float*)B, *fC = (float*)C;
  for (size_t i = 0; i < nn; i++) fA0[i] = (float)A0[i];
  double total = 0;
  for (int c = 0; c < calls; c++) {
    if (c == 1 && pause > 0) {
      struct timespec ts = {(time_t)pause, (long)((pause - (time_t)pause) * 1e9)};
      nanosleep(&ts, 0);
    }
    if (r[0] == 's')
      memcpy(fA, fA0, nn * 4);
    else
      memcpy(A, A0, nn * 8);
    double t = now();
    if (!strcmp(r, "sgemm")) {
      float a = 1, b = 0;
      sgemm_("N", "N", &n, &n, &n, &a, fA, &n, fB, &n, &b, fC, &n, 1, 1);
    } else if (!strcmp(r, "dgemm")) {
      double a = 1, b = 0;
      dgemm_("N", "N", &n, &n, &n, &a, A, &n, B, &n, &b, C, &n, 1, 1);
    } else if (!strcmp(r, "dgetrf"))
      dgetrf_(&n, &n, A, &n, ip, &info);
    else if (!strcmp(r, "sgetrf"))
      sgetrf_(&n, &n, fA, &n, ip, &info);
    else if (!strcmp(r, "dpotrf"))
      dpotrf_("L", &n, A, &n, &info, 1);
    else if (!strcmp(r, "dgesv")) {
      memcpy(C, B, n * 8);
      dgesv_(&n, &one, A, &n, ip, C, &n, &info);
    }
    t = now() - t;
    total += t;
    printf("%s n=%d call %d: %.3f ms info=%d\n", r, n, c, t * 1e3, info);
    fflush(stdout);
  }
  printf("%s n=%d total %.3f ms\n", r, n, total * 1e3);
  return 0;
}
