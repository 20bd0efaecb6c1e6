/* Times a cheap forwarded routine called directly on the CPU library and through blasoffload's trampoline: the cost
 * of forwarding, which the trampoline design bounds at one indirect jump.
 *
 * forward_cost LIBBLASOFFLOAD CPU_BLAS [CALLS [REPEATS]]
 *   Both are dlopen'ed; each routine is called through a function pointer, CALLS times per timing, in interleaved
 *   repeats: direct, ours, direct again (the A/A spread, which says how much of a difference is noise). Run with
 *   BLASOFFLOAD_CPU_BLAS=CPU_BLAS so that blasoffload forwards to the same library. Prints one line per repeat and the
 *   medians, in ns per call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int32_t (*idamax_t)(const int32_t* n, const double* x, const int32_t* incx);
typedef int32_t (*lsame_t)(const char* a, const char* b, size_t la, size_t lb);

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* The pointer is read through a volatile each call: the compiler can neither hoist nor inline the call. */
static double time_idamax(idamax_t volatile* fn, long calls) {
  const int32_t n = 1, inc = 1;
  const double x = 3.0;
  int64_t sum = 0;
  const double t0 = now_ns();
  for (long i = 0; i < calls; ++i) sum += (*fn)(&n, &x, &inc);
  const double t = (now_ns() - t0) / calls;
  if (sum != calls) fprintf(stderr, "idamax_ returned a wrong index\n"), exit(1);
  return t;
}

static double time_lsame(lsame_t volatile* fn, long calls) {
  int64_t sum = 0;
  const double t0 = now_ns();
  for (long i = 0; i < calls; ++i) sum += (*fn)("n", "N", 1, 1);
  const double t = (now_ns() - t0) / calls;
  if (sum != calls) fprintf(stderr, "lsame_ returned false\n"), exit(1);
  return t;
}

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double median(double* v, int n) {
  qsort(v, n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: forward_cost LIBBLASOFFLOAD CPU_BLAS [CALLS [REPEATS]]\n");
    return 2;
  }
  const long calls = argc > 3 ? atol(argv[3]) : 20000000;
  const int repeats = argc > 4 ? atoi(argv[4]) : 11;
  void* ours = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* cpu = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!ours || !cpu) return fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
  idamax_t volatile idamax_direct = (idamax_t)dlsym(cpu, "idamax_"), idamax_ours = (idamax_t)dlsym(ours, "idamax_");
  lsame_t volatile lsame_direct = (lsame_t)dlsym(cpu, "lsame_"), lsame_ours = (lsame_t)dlsym(ours, "lsame_");
  if (!idamax_direct || !idamax_ours || !lsame_direct || !lsame_ours) return fprintf(stderr, "dlsym failed\n"), 1;
  time_idamax(&idamax_ours, 1000);  // resolves the slots, warms the caches
  time_lsame(&lsame_ours, 1000);
  printf("forward_cost: %ld calls per timing, %d interleaved repeats (direct, blasoffload, direct again)\n", calls,
         repeats);
  printf("CPU library: %s\n", argv[2]);
  printf("%-8s %6s %10s %10s %10s %10s %10s\n", "routine", "repeat", "direct", "ours", "direct2", "ours-dir", "A/A");
  struct {
    const char* name;
    int which;
  } routines[] = {{"idamax_", 0}, {"lsame_", 1}};
  double med[2][5];
  for (int r = 0; r < 2; ++r) {
    double d[64], o[64], d2[64], diff[64], aa[64];
    for (int k = 0; k < repeats && k < 64; ++k) {
      if (routines[r].which == 0) {
        d[k] = time_idamax(&idamax_direct, calls);
        o[k] = time_idamax(&idamax_ours, calls);
        d2[k] = time_idamax(&idamax_direct, calls);
      } else {
        d[k] = time_lsame(&lsame_direct, calls);
        o[k] = time_lsame(&lsame_ours, calls);
        d2[k] = time_lsame(&lsame_direct, calls);
      }
      diff[k] = o[k] - (d[k] + d2[k]) / 2;
      aa[k] = d2[k] - d[k];
      printf("%-8s %6d %10.3f %10.3f %10.3f %10.3f %10.3f\n", routines[r].name, k, d[k], o[k], d2[k], diff[k], aa[k]);
    }
    const int n = repeats < 64 ? repeats : 64;
    med[r][0] = median(d, n), med[r][1] = median(o, n), med[r][2] = median(d2, n);
    med[r][3] = median(diff, n), med[r][4] = median(aa, n);
  }
  for (int r = 0; r < 2; ++r)
    printf(
        "median   %-8s direct %.3f ns, blasoffload %.3f ns, direct again %.3f ns: forwarding costs %+.3f ns "
        "(A/A %+.3f ns)\n",
        routines[r].name, med[r][0], med[r][1], med[r][2], med[r][3], med[r][4]);
  return 0;
}
