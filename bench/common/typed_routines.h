/* The Fortran BLAS and LAPACK routines the C benchmark programs call (bench/mix, bench/firstrun), declared for one
 * precision: included from an element-typed body (bench/common/each_precision.h) with T and P(name) defined. No
 * include guard: it is meant to be included once per precision. */

void P(gemm_)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*, const T*,
              const int*, const T*, T*, const int*, size_t, size_t);
void P(gemv_)(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*, const T*, T*,
              const int*, size_t);
void P(trsv_)(const char*, const char*, const char*, const int*, const T*, const int*, T*, const int*, size_t, size_t,
              size_t);
T P(nrm2_)(const int*, const T*, const int*);
void P(trsm_)(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,
              const int*, T*, const int*, size_t, size_t, size_t, size_t);
void P(syrk_)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*, T*,
              const int*, size_t, size_t);
void P(getrf_)(const int*, const int*, T*, const int*, int*, int*);
void P(getrs_)(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*, int*, size_t);
void P(gesv_)(const int*, const int*, T*, const int*, int*, T*, const int*, int*);
void P(potrf_)(const char*, const int*, T*, const int*, int*, size_t);
void P(potrs_)(const char*, const int*, const int*, const T*, const int*, T*, const int*, int*, size_t);
void P(posv_)(const char*, const int*, const int*, T*, const int*, T*, const int*, int*, size_t);
void P(trtrs_)(const char*, const char*, const char*, const int*, const int*, const T*, const int*, T*, const int*,
               int*, size_t, size_t, size_t);
void P(geqrf_)(const int*, const int*, T*, const int*, T*, T*, const int*, int*);
void P(getri_)(const int*, T*, const int*, const int*, T*, const int*, int*);
