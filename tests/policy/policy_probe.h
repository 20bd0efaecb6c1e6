/* What policy_probe.c (the command line) and policy_probe_calls.c (each routine's scripted call and its check)
 * share: one parsed step, the seed of the operands' generator, and one runner per routine. */
#ifndef BLASOFFLOAD_TESTS_POLICY_PROBE_H
#define BLASOFFLOAD_TESTS_POLICY_PROBE_H

#include <stdint.h>

typedef struct {
  char routine[8];
  char op[5];
  int m, n, k;
  float alpha, beta;
  int incx, incy, pad, cblas, reps, sleep_ms;
} Step;

/* Restarts the operands' generator, so that each step's data depend on its index alone. */
void seed(uint64_t s);

/* Each runs step s (s->reps calls) with call naming it in messages; returns how many calls were wrong. */
int run_sgemm(const Step* s, const char* call);
int run_sgemv(const Step* s, const char* call);
int run_strsv(const Step* s, const char* call);
int run_snrm2(const Step* s, const char* call);
int run_strsm(const Step* s, const char* call);
int run_ssyrk(const Step* s, const char* call);

#endif /* BLASOFFLOAD_TESTS_POLICY_PROBE_H */
