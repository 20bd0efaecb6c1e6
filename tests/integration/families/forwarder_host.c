/* Links the forwarder stand-in ahead of the reference BLAS and calls an accelerated routine (snrm2) and a forwarded
 * one (ddot): preloaded, blasoffload must take the reference BLAS as its CPU library, never the forwarder. */
#include <math.h>
#include <stdio.h>

float snrm2_(const int* n, const float* x, const int* incx);
double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);

int main(void) {
  const float xs[3] = {3, 4, 12};
  const double xd[3] = {1, 2, 3}, yd[3] = {4, 5, 6};
  const int n = 3, one = 1;
  const float nrm = snrm2_(&n, xs, &one);
  const double dot = ddot_(&n, xd, &one, yd, &one);
  printf("snrm2 %g ddot %g\n", nrm, dot);
  const int ok = fabsf(nrm - 13.0f) < 1e-5f && dot == 32.0;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
