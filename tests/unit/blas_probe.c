/* A program with no BLAS of its own, run under LD_PRELOAD=libblasoffload.so by the subprocess tests: it
 * makes one sgemm_ call through whatever the library forwards to, and prints the result. With no CPU BLAS
 * anywhere the library must print one message naming BLASOFFLOAD_CPU_BLAS and abort instead. */
#include <dlfcn.h>
#include <stdio.h>

typedef void sgemm_t(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                     const int*, const float*, const int*, const float*, float*, const int*);

int main(void) {
  sgemm_t* sgemm = (sgemm_t*)dlsym(RTLD_DEFAULT, "sgemm_");
  if (!sgemm) {
    fprintf(stderr, "probe: sgemm_ not found (run me under LD_PRELOAD=libblasoffload.so)\n");
    return 2;
  }
  const int n = 2;
  const float one = 1.0f, zero = 0.0f;
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
  sgemm("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  printf("probe: sgemm_ returned C = [%g %g %g %g]\n", c[0], c[1], c[2], c[3]);
  return (c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4) ? 0 : 1;
}
