/* Runs a scripted sequence of BLAS calls given on the command line and checks every result against its own
 * double-precision reference, so that the policy tests can route calls anywhere and still prove each answer right.
 *
 * policy_probe STEP...   where STEP is one of
 *   sgemm OP M N K [opt...]    OP: NN NT TN TT
 *   sgemv OP M N [opt...]      OP: N T
 *   strsv UTD N [opt...]       uplo U/L, trans N/T, diag N/U, e.g. LNN UTU
 *   snrm2 N [opt...]
 *   strsm SUTD M N [opt...]    side L/R, uplo U/L, transa N/T, diag N/U, e.g. LLNN RUTU
 *   ssyrk UT N K [opt...]      uplo U/L, trans N/T, e.g. UN LT
 *   sleep MS                   (lets a background GPU initialisation finish)
 * opt: alpha=F  beta=F (0: the output starts as NaN, which must never be read)  inc=I (x stride)  incy=I
 *      pad=P (leading dimensions P rows larger than needed)  cblas (call the cblas_ twin)  xR (run R times)
 *
 * Linked against the reference BLAS and run under LD_PRELOAD=libblasoffload.so. Operand entries a BLAS must
 * not read (leading-dimension padding, vector gaps, the other triangle, a unit diagonal) hold NaN; entries it
 * must not write (padding, gaps, ssyrk's other triangle of C) hold a sentinel that is checked afterwards. Prints
 * "policy_probe: PASS (N calls)" and exits 0, or names each wrong call and exits 1 (2: bad command line). */
#include "policy_probe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void describe(const Step* s, char* buf, size_t size) {
  if (!strcmp(s->routine, "snrm2"))
    snprintf(buf, size, "snrm2 n=%d inc=%d%s", s->n, s->incx, s->cblas ? " cblas" : "");
  else if (!strcmp(s->routine, "strsm"))
    snprintf(buf, size, "strsm %s m=%d n=%d alpha=%g pad=%d%s", s->op, s->m, s->n, s->alpha, s->pad,
             s->cblas ? " cblas" : "");
  else if (!strcmp(s->routine, "ssyrk"))
    snprintf(buf, size, "ssyrk %s n=%d k=%d alpha=%g beta=%g pad=%d%s", s->op, s->n, s->k, s->alpha, s->beta, s->pad,
             s->cblas ? " cblas" : "");
  else if (!strcmp(s->routine, "strsv"))
    snprintf(buf, size, "strsv %s n=%d inc=%d pad=%d%s", s->op, s->n, s->incx, s->pad, s->cblas ? " cblas" : "");
  else if (!strcmp(s->routine, "sgemv"))
    snprintf(buf, size, "sgemv %s m=%d n=%d alpha=%g beta=%g incx=%d incy=%d pad=%d%s", s->op, s->m, s->n, s->alpha,
             s->beta, s->incx, s->incy, s->pad, s->cblas ? " cblas" : "");
  else
    snprintf(buf, size, "sgemm %s m=%d n=%d k=%d alpha=%g beta=%g pad=%d%s", s->op, s->m, s->n, s->k, s->alpha, s->beta,
             s->pad, s->cblas ? " cblas" : "");
}

/* ---- command line --------------------------------------------------------------------------------------- */

static int is_routine(const char* t) {
  return !strcmp(t, "sgemm") || !strcmp(t, "sgemv") || !strcmp(t, "strsv") || !strcmp(t, "snrm2") ||
         !strcmp(t, "strsm") || !strcmp(t, "ssyrk") || !strcmp(t, "sleep");
}

static int usage(const char* why, const char* tok) {
  fprintf(stderr, "policy_probe: %s '%s' (see the comment at the top of policy_probe.c)\n", why, tok ? tok : "");
  return 2;
}

static int parse_int(const char* t, int* out) {
  char* end;
  const long v = strtol(t, &end, 10);
  if (*t == '\0' || *end != '\0' || v < -1000000000L || v > 1000000000L) return 0;
  *out = (int)v;
  return 1;
}

/* Parses one step starting at argv[*i]; advances *i past it. Returns 0 on success, else the usage exit code. */
static int parse_step(int argc, char** argv, int* i, Step* s) {
  memset(s, 0, sizeof *s);
  s->alpha = 0.75f;
  s->beta = 0.5f;
  s->incx = s->incy = s->reps = 1;
  const char* r = argv[(*i)++];
  snprintf(s->routine, sizeof s->routine, "%s", r);
  int npos = 0, need;
  const char* valid_ops;
  if (!strcmp(r, "sgemm")) {
    need = 4; /* OP M N K */
    valid_ops = "NN NT TN TT";
  } else if (!strcmp(r, "sgemv")) {
    need = 3;
    valid_ops = "N T";
  } else if (!strcmp(r, "strsv")) {
    need = 2;
    valid_ops = "UNN UNU UTN UTU LNN LNU LTN LTU";
  } else if (!strcmp(r, "strsm")) {
    need = 3; /* OP M N */
    valid_ops = "LUNN LUNU LUTN LUTU LLNN LLNU LLTN LLTU RUNN RUNU RUTN RUTU RLNN RLNU RLTN RLTU";
  } else if (!strcmp(r, "ssyrk")) {
    need = 3; /* OP N K */
    valid_ops = "UN UT LN LT";
  } else {
    need = 1; /* snrm2 N, sleep MS */
    valid_ops = NULL;
  }
  int* dims[3] = {&s->m, &s->n, &s->k};
  if (!strcmp(r, "strsv") || !strcmp(r, "snrm2")) dims[0] = &s->n;
  if (!strcmp(r, "ssyrk")) {
    dims[0] = &s->n;
    dims[1] = &s->k;
  }
  if (!strcmp(r, "sleep")) dims[0] = &s->sleep_ms;
  for (; *i < argc && !is_routine(argv[*i]); ++*i) {
    const char* t = argv[*i];
    if (npos < need) {
      if (valid_ops && npos == 0) {
        /* Whole-token match against the list, so "N" is not accepted for sgemm nor "NNN" for sgemv. */
        const size_t len = strlen(t);
        const char* hit = strstr(valid_ops, t);
        if (len == 0 || len > 4 || !hit || (hit != valid_ops && hit[-1] != ' ') || (hit[len] && hit[len] != ' '))
          return usage("bad operation", t);
        snprintf(s->op, sizeof s->op, "%s", t);
      } else if (!parse_int(t, dims[npos - (valid_ops ? 1 : 0)]) || *dims[npos - (valid_ops ? 1 : 0)] < 0) {
        return usage("bad size", t);
      }
      ++npos;
    } else if (!strncmp(t, "alpha=", 6)) {
      s->alpha = strtof(t + 6, NULL);
    } else if (!strncmp(t, "beta=", 5)) {
      s->beta = strtof(t + 5, NULL);
    } else if (!strncmp(t, "inc=", 4)) {
      if (!parse_int(t + 4, &s->incx) || s->incx == 0) return usage("bad increment", t);
    } else if (!strncmp(t, "incy=", 5)) {
      if (!parse_int(t + 5, &s->incy) || s->incy == 0) return usage("bad increment", t);
    } else if (!strncmp(t, "pad=", 4)) {
      if (!parse_int(t + 4, &s->pad) || s->pad < 0) return usage("bad padding", t);
    } else if (!strcmp(t, "cblas")) {
      s->cblas = 1;
    } else if (t[0] == 'x') {
      if (!parse_int(t + 1, &s->reps) || s->reps < 1) return usage("bad repeat count", t);
    } else {
      return usage("unknown option", t);
    }
  }
  if (npos < need) return usage("too few arguments for", r);
  if (!strcmp(r, "snrm2") && s->incx < 1) return usage("snrm2 needs inc >= 1 (libraries disagree otherwise)", r);
  if ((!strcmp(r, "sgemm") || !strcmp(r, "sgemv")) && (s->m == 0 || s->n == 0))
    return usage("sizes must be positive (quick returns never reach the policy)", r);
  if ((!strcmp(r, "strsv") || !strcmp(r, "snrm2") || !strcmp(r, "ssyrk")) && s->n == 0)
    return usage("sizes must be positive", r);
  if (!strcmp(r, "strsm") && (s->m == 0 || s->n == 0)) return usage("sizes must be positive", r);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage("no steps given", NULL);
  int calls = 0, wrong = 0, index = 0;
  for (int i = 1; i < argc;) {
    if (!is_routine(argv[i])) return usage("expected a routine name, got", argv[i]);
    Step s;
    const int rc = parse_step(argc, argv, &i, &s);
    if (rc) return rc;
    ++index;
    if (!strcmp(s.routine, "sleep")) {
      struct timespec ts = {s.sleep_ms / 1000, (long)(s.sleep_ms % 1000) * 1000000L};
      while (nanosleep(&ts, &ts) != 0) {
      }
      continue;
    }
    char call[192], label[224];
    describe(&s, call, sizeof call);
    snprintf(label, sizeof label, "step %d (%s)", index, call);
    seed((uint64_t)index);
    int w;
    if (!strcmp(s.routine, "sgemm"))
      w = run_sgemm(&s, label);
    else if (!strcmp(s.routine, "sgemv"))
      w = run_sgemv(&s, label);
    else if (!strcmp(s.routine, "strsv"))
      w = run_strsv(&s, label);
    else if (!strcmp(s.routine, "strsm"))
      w = run_strsm(&s, label);
    else if (!strcmp(s.routine, "ssyrk"))
      w = run_ssyrk(&s, label);
    else
      w = run_snrm2(&s, label);
    if (w) fprintf(stderr, "policy_probe: %s: %d of %d calls wrong\n", label, w, s.reps);
    calls += s.reps;
    wrong += w;
  }
  if (wrong) {
    printf("policy_probe: FAIL (%d of %d calls wrong)\n", wrong, calls);
    return 1;
  }
  printf("policy_probe: PASS (%d calls)\n", calls);
  return 0;
}
