/* Calls only zaxpy_, a routine blasoffload does not intercept: the exit summary's note must say so (and not blame
 * a LAPACK). Linked to the reference BLAS, run under LD_PRELOAD=libblasoffload.so. Prints PASS. */
#include <stdio.h>

void zaxpy_(const int* n, const double* a, const double* x, const int* incx, double* y, const int* incy);

int main(void) {
  const double a[2] = {2, 0}, x[4] = {1, 2, 3, 4};
  double y[4] = {0, 0, 0, 0};
  const int n = 2, one = 1;
  zaxpy_(&n, a, x, &one, y, &one);
  printf(y[0] == 2 && y[2] == 6 ? "PASS\n" : "FAIL\n");
  return 0;
}
