/* A stand-in for FlexiBLAS or libblastrampoline in front of the CPU library: it exports BLAS names and a forwarder's
 * API (lbt_forward). With blasoffload as its backend, taking its routines for the CPU library's would send every call
 * back to blasoffload, for ever; here they return a value no BLAS would, so that a test sees who answered. */
float snrm2_(const int* n, const float* x, const int* incx) {
  (void)n, (void)x, (void)incx;
  return -12345.0f;
}
double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy) {
  (void)n, (void)x, (void)incx, (void)y, (void)incy;
  return -12345.0;
}
void lbt_forward(void) {}
