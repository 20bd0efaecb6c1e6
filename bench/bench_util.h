/* Small C helpers the standalone benchmark programs share (bench/lapack, bench/mix): a monotonic clock, aligned
 * allocation and a comparison for qsort. Each program includes it once; everything is static. */
#ifndef BLASOFFLOAD_BENCH_UTIL_H
#define BLASOFFLOAD_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 256-byte aligned (NULL when out of memory); zero bytes still give a distinct block. */
static inline void* xmalloc(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 256, bytes ? bytes : 256)) return NULL;
  return p;
}

static inline int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

#endif
