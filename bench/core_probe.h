/* What the calling thread's core could do around a benchmark point (bench/mix with BO_BENCH_PROBE=1): which CPU it
 * ran on and how often it moved, its clock rate (a chain of dependent multiplies), its legacy-SSE and VEX add
 * throughput in cycles per add (a busy SMT sibling slows both; a dirty upper vector state only the legacy-SSE one),
 * and the processor's XINUSE vector-state bits. Small calls of the same program run in one of two speeds per process;
 * these tell a slow core from a slow library. Each program includes it once, with _GNU_SOURCE defined first
 * (sched_getcpu); everything is static; x86-64 Linux (other machines print nothing). */
#ifndef BLASOFFLOAD_BENCH_CORE_PROBE_H
#define BLASOFFLOAD_BENCH_CORE_PROBE_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int cpu;         /* sched_getcpu() */
  long migrations; /* se.nr_migrations of /proc/thread-self/sched (-1 unreadable) */
  uint64_t xinuse; /* XGETBV(1): bit 2 the upper halves of ymm0-15, 5-7 AVX-512 state (all ones: unknown) */
  double ghz;      /* from 3-cycle imul latency */
  double sse_cpa;  /* legacy-SSE addps, 8 independent chains: cycles per add (0.5 on an idle core) */
  double vex_cpa;  /* the same VEX-encoded (after the points only: a VEX write clears upper state) */
} CoreProbe;

static int probe_enabled(void) {
  const char* e = getenv("BO_BENCH_PROBE");
  return e && strcmp(e, "1") == 0;
}

/* BO_BENCH_VZEROUPPER=1: a vzeroupper before every timed call (a dirty upper state left by earlier code then cannot
 * slow the call's legacy-SSE instructions). */
static int probe_vzeroupper_enabled(void) {
  const char* e = getenv("BO_BENCH_VZEROUPPER");
#if defined(__x86_64__)
  __builtin_cpu_init();
  return e && strcmp(e, "1") == 0 && __builtin_cpu_supports("avx");
#else
  (void)e;
  return 0;
#endif
}

static inline void probe_vzeroupper(void) {
#if defined(__x86_64__)
  __asm__ volatile("vzeroupper" ::: "memory");
#endif
}

static double probe_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

#if defined(__x86_64__)
static uint64_t probe_xinuse(void) {
  unsigned a, b, c, d;
  __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  if (!(c & (1u << 27))) return ~0ull; /* no OSXSAVE */
  __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(1));
  if (!(a & (1u << 2))) return ~0ull; /* XGETBV with ECX=1 unsupported */
  __asm__ volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(1));
  return ((uint64_t)d << 32) | a;
}

/* 96000 cycles of dependent 64-bit multiplies (3 cycles each on every x86-64 core since 2011). */
static double probe_ghz(void) {
  uint64_t x = 3;
  const double t0 = probe_now_ns();
  for (int i = 0; i < 4000; ++i)
    __asm__ volatile(
        "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
        "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0"
        : "+r"(x));
  return 96000.0 / (probe_now_ns() - t0);
}

/* 128000 adds on eight independent accumulators, legacy-SSE (vex = 0) or VEX encoded: the time in ns. Every operand
 * starts at zero (a denormal would take a microcode assist per add). */
static double probe_adds_ns(int vex) {
  const double t0 = probe_now_ns();
  if (vex)
    __asm__ volatile(
        "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"
        "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
        "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
        "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
        "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
        "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
        "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
        "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
        "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
        "mov $16000, %%ecx\n"
        "1:\n\t"
        "vaddps %%xmm8, %%xmm0, %%xmm0\n\t"
        "vaddps %%xmm8, %%xmm1, %%xmm1\n\t"
        "vaddps %%xmm8, %%xmm2, %%xmm2\n\t"
        "vaddps %%xmm8, %%xmm3, %%xmm3\n\t"
        "vaddps %%xmm8, %%xmm4, %%xmm4\n\t"
        "vaddps %%xmm8, %%xmm5, %%xmm5\n\t"
        "vaddps %%xmm8, %%xmm6, %%xmm6\n\t"
        "vaddps %%xmm8, %%xmm7, %%xmm7\n\t"
        "dec %%ecx\n\t"
        "jnz 1b" ::
            : "ecx", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "cc");
  else
    __asm__ volatile(
        "xorps %%xmm8, %%xmm8\n\t"
        "xorps %%xmm0, %%xmm0\n\t"
        "xorps %%xmm1, %%xmm1\n\t"
        "xorps %%xmm2, %%xmm2\n\t"
        "xorps %%xmm3, %%xmm3\n\t"
        "xorps %%xmm4, %%xmm4\n\t"
        "xorps %%xmm5, %%xmm5\n\t"
        "xorps %%xmm6, %%xmm6\n\t"
        "xorps %%xmm7, %%xmm7\n\t"
        "mov $16000, %%ecx\n"
        "1:\n\t"
        "addps %%xmm8, %%xmm0\n\t"
        "addps %%xmm8, %%xmm1\n\t"
        "addps %%xmm8, %%xmm2\n\t"
        "addps %%xmm8, %%xmm3\n\t"
        "addps %%xmm8, %%xmm4\n\t"
        "addps %%xmm8, %%xmm5\n\t"
        "addps %%xmm8, %%xmm6\n\t"
        "addps %%xmm8, %%xmm7\n\t"
        "dec %%ecx\n\t"
        "jnz 1b" ::
            : "ecx", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "cc");
  return probe_now_ns() - t0;
}
#endif

static long probe_migrations(void) {
  FILE* f = fopen("/proc/thread-self/sched", "r");
  if (!f) return -1;
  char line[256];
  long n = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "se.nr_migrations", 16) == 0) {
      const char* colon = strchr(line, ':');
      if (colon) n = atol(colon + 1);
      break;
    }
  fclose(f);
  return n;
}

/* Takes a probe; with_vex: also the VEX throughput (after a point's calls: it changes the state it would measure). */
static void probe_take(CoreProbe* p, int with_vex) {
  memset(p, 0, sizeof *p);
  p->cpu = sched_getcpu();
  p->migrations = probe_migrations();
#if defined(__x86_64__)
  p->xinuse = probe_xinuse(); /* first: the probes below change vector state */
  p->ghz = probe_ghz();
  p->sse_cpa = probe_adds_ns(0) * p->ghz / 128000.0;
  p->vex_cpa = with_vex && __builtin_cpu_supports("avx") ? probe_adds_ns(1) * p->ghz / 128000.0 : 0;
#endif
}

/* Writes `"probe": {...}` for the probes before and after a point's timed calls. */
static void probe_describe(const CoreProbe* a, const CoreProbe* b, char* out, size_t size) {
  snprintf(out, size,
           "\"probe\": {\"cpu\": [%d, %d], \"migrations\": %ld, \"xinuse\": [\"%#llx\", \"%#llx\"], \"ghz\": [%.2f, "
           "%.2f], \"sse_cpa\": [%.2f, %.2f], \"vex_cpa\": %.2f}",
           a->cpu, b->cpu, a->migrations >= 0 && b->migrations >= 0 ? b->migrations - a->migrations : -1,
           (unsigned long long)a->xinuse, (unsigned long long)b->xinuse, a->ghz, b->ghz, a->sse_cpa, b->sse_cpa,
           b->vex_cpa);
}

#endif
