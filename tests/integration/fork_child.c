/* sgemm_ before fork(); the child calls sgemm_ and sgemv_ and checks them; the parent waits, checks the
 * child's exit status and its blasoffload summary (the child counts only its own calls), then calls
 * sgemm_ again. Linked to the reference BLAS and run with LD_PRELOAD=libblasoffload.so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*);
void sgemv_(const char*, const int*, const int*, const float*, const float*, const int*, const float*, const int*,
            const float*, float*, const int*);

enum { N = 16 };
static float A[N * N], B[N * N];

/* C = A*B checked against a naive product; returns 0 when right. */
static int gemm_ok(const char* who) {
  float c[N * N];
  int n = N;
  float one = 1, zero = 0;
  sgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, c, &n);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      double s = 0;
      for (int p = 0; p < N; ++p) s += (double)A[i + p * N] * B[p + j * N];
      if (fabs(c[i + j * N] - s) > 1e-4 * (1 + fabs(s))) {
        printf("%s: sgemm_ wrong at (%d,%d): %g vs %g\n", who, i, j, c[i + j * N], s);
        return 1;
      }
    }
  printf("%s: sgemm_ OK\n", who);
  return 0;
}

static int gemv_ok(const char* who) {
  float x[N], y[N];
  int n = N, inc = 1;
  float one = 1, zero = 0;
  for (int i = 0; i < N; ++i) x[i] = (float)(i % 5) - 2;
  sgemv_("T", &n, &n, &one, A, &n, x, &inc, &zero, y, &inc);
  for (int j = 0; j < N; ++j) {
    double s = 0;
    for (int p = 0; p < N; ++p) s += (double)A[p + j * N] * x[p];
    if (fabs(y[j] - s) > 1e-4 * (1 + fabs(s))) {
      printf("%s: sgemv_ wrong at %d: %g vs %g\n", who, j, y[j], s);
      return 1;
    }
  }
  printf("%s: sgemv_ OK\n", who);
  return 0;
}

/* In the log, the summary of process `pid` must show `sgemm` and `sgemv` rows with these call counts. */
static int child_summary_ok(const char* log, pid_t pid, long want_gemm, long want_gemv) {
  FILE* f = fopen(log, "r");
  if (!f) {
    printf("parent: cannot read %s\n", log);
    return 1;
  }
  char line[512], header[64];
  snprintf(header, sizeof header, "blasoffload summary (pid %d,", (int)pid);
  int in = 0, found = 0;
  long gemm = -1, gemv = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "blasoffload summary (pid", 24) == 0) in = strncmp(line, header, strlen(header)) == 0;
    if (!in) continue;
    found = 1;
    char name[32];
    long calls;
    if (sscanf(line, " %31s %ld", name, &calls) == 2) {
      if (strcmp(name, "sgemm") == 0) gemm = calls;
      if (strcmp(name, "sgemv") == 0) gemv = calls;
    }
  }
  fclose(f);
  if (!found) {
    printf("parent: no summary from child pid %d in %s\n", (int)pid, log);
    return 1;
  }
  printf("parent: child's summary shows sgemm %ld, sgemv %ld calls\n", gemm, gemv);
  return !(gemm == want_gemm && gemv == want_gemv);
}

int main(void) {
  for (int i = 0; i < N * N; ++i) {
    A[i] = (float)((i * 7) % 11) - 5;
    B[i] = (float)((i * 3) % 7) * 0.5f;
  }
  if (gemm_ok("parent (before fork)")) return 1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    int bad = gemm_ok("child") | gemv_ok("child");
    fflush(stdout);
    exit(bad ? 1 : 0);  /* exit(), not _exit(): the child's atexit summary is part of the check */
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    perror("waitpid");
    return 1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("parent: child failed (status 0x%x)\n", status);
    return 1;
  }
  printf("parent: child exited 0\n");
  const char* log = getenv("BLASOFFLOAD_LOG_FILE");
  if (log && child_summary_ok(log, pid, 1, 1)) {
    printf("FAIL: the child's summary should count exactly its own 1 sgemm and 1 sgemv call\n");
    return 1;
  }
  if (gemm_ok("parent (after fork)")) return 1;
  printf("PASS\n");
  return 0;
}
