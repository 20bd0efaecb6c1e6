/* Not linked to any BLAS: under LD_PRELOAD=libblasoffload.so, sgemm_ exists (blasoffload's) but the process holds
 * no CPU BLAS to forward it to. blasoffload loads the system's (the call returns, exit status 0 when C = A), or,
 * where the system has none either, aborts with a message naming BLASOFFLOAD_CPU_BLAS. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

typedef void sgemm_t(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                     const int*, const float*, const int*, const float*, float*, const int*);

int main(void) {
  sgemm_t* sgemm = (sgemm_t*)dlsym(RTLD_DEFAULT, "sgemm_");
  if (!sgemm) {
    printf("sgemm_ not found (is libblasoffload.so preloaded?)\n");
    return 3;
  }
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0};
  int n = 2;
  float one = 1, zero = 0;
  printf("calling sgemm_\n");
  fflush(stdout);
  sgemm("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  printf("sgemm_ returned: c = %g %g %g %g\n", c[0], c[1], c[2], c[3]);
  return c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4 ? 0 : 4;
}
