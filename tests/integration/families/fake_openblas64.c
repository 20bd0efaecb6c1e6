/* A stand-in for NumPy's ILP64 wheel (libscipy_openblas64_), which defines the same unrenamed LAPACK helper as SciPy's
 * LP64 one with 64-bit integers: reading a 32-bit argument as 64 bits gives a wrong, huge value. */
#include <stdint.h>

float sroundup_lwork_(const int64_t* lwork) { return (float)*lwork; }
