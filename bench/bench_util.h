/* Small C helpers the standalone benchmark programs share (bench/lapack, bench/mix, bench/pipeline's host_gemm): a
 * monotonic clock, aligned allocation, a comparison for qsort, and work split over all cores (filling and copying
 * large matrices). Each program includes it once; everything is static. */
#ifndef BLASOFFLOAD_BENCH_UTIL_H
#define BLASOFFLOAD_BENCH_UTIL_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Runs fn(lo, hi, ctx) over [0, count) in contiguous ranges on all cores (at most 64 threads): filling and restoring a
 * matrix of order 65536 (32 GiB) on one thread took most of a two-minute process (bench/lapack). Where each element's
 * value depends only on its index, the result is the same whatever the thread count. */
typedef struct {
  void (*fn)(size_t, size_t, void*);
  void* ctx;
  size_t lo, hi;
} BoRange;

static inline void* run_range(void* p) {
  const BoRange* r = (const BoRange*)p;
  r->fn(r->lo, r->hi, r->ctx);
  return NULL;
}

/* `work`: about how many elements all of it touches; under 4 Mi the caller's thread alone (the small orders' restores
 * run between timed calls hundreds of times). */
static inline void parallel_ranges(size_t count, size_t work, void (*fn)(size_t, size_t, void*), void* ctx) {
  enum { kMaxThreads = 64 };
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = work < ((size_t)1 << 22) || cores < 2 ? 1 : cores > kMaxThreads ? kMaxThreads : (size_t)cores;
  if (threads > count) threads = count > 0 ? count : 1;
  pthread_t tid[kMaxThreads];
  BoRange r[kMaxThreads];
  int started[kMaxThreads] = {0};
  for (size_t i = 0; i < threads; ++i) {
    r[i] = (BoRange){fn, ctx, count * i / threads, count * (i + 1) / threads};
    if (i > 0) started[i] = pthread_create(&tid[i], NULL, run_range, &r[i]) == 0;
    if (i > 0 && !started[i]) run_range(&r[i]);
  }
  run_range(&r[0]);
  for (size_t i = 1; i < threads; ++i)
    if (started[i]) pthread_join(tid[i], NULL);
}

typedef struct {
  char* dst;
  const char* src;
} BoCopyJob;

static inline void copy_range(size_t lo, size_t hi, void* ctx) {
  const BoCopyJob* j = (const BoCopyJob*)ctx;
  memcpy(j->dst + lo, j->src + lo, hi - lo);
}

/* memcpy on all cores (the untimed restores of a large matrix between calls). */
static inline void par_copy(void* dst, const void* src, size_t bytes) {
  BoCopyJob j = {(char*)dst, (const char*)src};
  parallel_ranges(bytes, bytes / 8, copy_range, &j);
}

#endif
