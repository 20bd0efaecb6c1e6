/* What ran beside a benchmark's timed calls (bench/mix): CPU time per thread of this process, grouped by thread
 * name, the times the CPU BLAS's threads were preempted, and the machine's busy time outside this process, from two
 * snapshots of /proc. A threaded CPU BLAS whose threads fill the cores loses a scheduler slice (milliseconds) on a
 * small call whenever anything else runs beside it, so a slow point is explained only by what else ran. Each program
 * includes it once; everything is static; Linux only (where /proc is missing the snapshot is empty). */
#ifndef BLASOFFLOAD_BENCH_THREAD_CPU_H
#define BLASOFFLOAD_BENCH_THREAD_CPU_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kCpuMaxThreads = 512, kCpuMaxGroups = 32 };

typedef struct {
  int tid;
  char name[16];
  double cpu_ns;  /* time on a CPU (schedstat) */
  long preempted; /* nonvoluntary context switches */
} ThreadCpu;

typedef struct {
  int count;
  ThreadCpu t[kCpuMaxThreads];
  double busy_s; /* the machine's non-idle time, all CPUs (/proc/stat; clock ticks, 10 ms) */
  /* Parts of it no task is charged with: interrupts, soft interrupts, and steal (a virtual machine's CPU taken by
   * the host: the guest sees its CPU stop, no task runs instead) */
  double irq_s, softirq_s, steal_s;
} CpuSnapshot;

static int cpu_read_file(const char* path, char* buf, size_t size) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  const size_t got = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[got] = '\0';
  return got > 0;
}

/* A thread's name (its comm file) into name[16], made safe to print inside a JSON string; empty if unreadable. */
static void cpu_read_name(const char* path, char* name) {
  char buf[64];
  name[0] = '\0';
  if (!cpu_read_file(path, buf, sizeof buf)) return;
  buf[strcspn(buf, "\n")] = '\0';
  for (char* c = buf; *c; ++c)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < ' ') *c = '_';
  snprintf(name, 16, "%.15s", buf);
}

static void cpu_snapshot(CpuSnapshot* s) {
  s->count = 0;
  s->busy_s = s->irq_s = s->softirq_s = s->steal_s = -1;
  char buf[4096], path[64];
  if (cpu_read_file("/proc/stat", buf, sizeof buf)) {
    unsigned long long v[8] = {0};  // user nice system idle iowait irq softirq steal
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
               &v[7]) == 8) {
      const double tick = 1.0 / (double)sysconf(_SC_CLK_TCK);
      s->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * tick;
      s->irq_s = (double)v[5] * tick, s->softirq_s = (double)v[6] * tick, s->steal_s = (double)v[7] * tick;
    }
  }
  DIR* d = opendir("/proc/self/task");
  if (!d) return;
  for (struct dirent* e; (e = readdir(d)) && s->count < kCpuMaxThreads;) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    ThreadCpu* t = &s->t[s->count];
    t->tid = atoi(e->d_name);
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", t->tid);
    if (!cpu_read_file(path, buf, sizeof buf)) continue;  // the thread ended meanwhile
    t->cpu_ns = atof(buf);
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", t->tid);
    cpu_read_name(path, t->name);
    t->preempted = 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", t->tid);
    if (cpu_read_file(path, buf, sizeof buf)) {
      const char* p = strstr(buf, "nonvoluntary_ctxt_switches:");
      if (p) t->preempted = atol(p + strlen("nonvoluntary_ctxt_switches:"));
    }
    ++s->count;
  }
  closedir(d);
}

/* Writes `"threads": {...}, "preempted": N, "outside_ms": X, "irq_ms": I, "softirq_ms": S, "steal_ms": T` (no braces
 * around it; the last three where /proc/stat is read) for the interval between two
 * snapshots: CPU milliseconds per group of threads, where "main" is the calling thread, "same-name" every other thread
 * named like it (the CPU BLAS's workers, which inherit the program's name, and any unnamed thread), and the others by
 * their own names (the library's bo-*, CUDA's cuda-*); groups under 0.05 ms are left out. preempted: nonvoluntary
 * context switches of the main and same-name threads; outside_ms: the machine's busy time less this process's (clock
 * ticks: 10 ms resolution; -1 without /proc/stat). A thread born in the interval counts from zero. */
static void cpu_describe(const CpuSnapshot* a, const CpuSnapshot* b, char* out, size_t size) {
  const int self = (int)syscall(SYS_gettid);
  const char* main_name = "";
  for (int i = 0; i < b->count; ++i)
    if (b->t[i].tid == self) main_name = b->t[i].name;
  char names[kCpuMaxGroups][16];
  double ms[kCpuMaxGroups];
  int groups = 0;
  long preempted = 0;
  double process_ms = 0;
  for (int i = 0; i < b->count; ++i) {
    const ThreadCpu* t = &b->t[i];
    double before_ns = 0;
    long before_pre = 0;
    for (int j = 0; j < a->count; ++j)
      if (a->t[j].tid == t->tid) before_ns = a->t[j].cpu_ns, before_pre = a->t[j].preempted;
    const double d = (t->cpu_ns - before_ns) * 1e-6;
    process_ms += d;
    const char* group = t->tid == self ? "main" : strcmp(t->name, main_name) == 0 ? "same-name" : t->name;
    if (t->tid == self || strcmp(t->name, main_name) == 0) preempted += t->preempted - before_pre;
    int g = 0;
    while (g < groups && strcmp(names[g], group) != 0) ++g;
    if (g == groups) {
      if (groups == kCpuMaxGroups) continue;
      snprintf(names[groups], sizeof names[groups], "%s", group);
      ms[groups++] = 0;
    }
    ms[g] += d;
  }
  size_t used = (size_t)snprintf(out, size, "\"threads\": {");
  int listed = 0;
  for (int g = 0; g < groups && used < size; ++g)
    if (ms[g] >= 0.05)
      used += (size_t)snprintf(out + used, size - used, "%s\"%s\": %.2f", listed++ ? ", " : "", names[g], ms[g]);
  const double outside = a->busy_s < 0 || b->busy_s < 0 ? -1 : (b->busy_s - a->busy_s) * 1e3 - process_ms;
  if (used < size)
    used += (size_t)snprintf(out + used, size - used, "}, \"preempted\": %ld, \"outside_ms\": %.0f", preempted,
                             outside < 0 && a->busy_s >= 0 ? 0.0 : outside);
  if (used < size && a->busy_s >= 0 && b->busy_s >= 0)
    snprintf(out + used, size - used, ", \"irq_ms\": %.0f, \"softirq_ms\": %.0f, \"steal_ms\": %.0f",
             (b->irq_s - a->irq_s) * 1e3, (b->softirq_s - a->softirq_s) * 1e3, (b->steal_s - a->steal_s) * 1e3);
}

/* With BO_BENCH_WHO=1 in the environment: every other task on the machine (other processes' threads, kernel
 * threads), so that the busy time outside the process has names. Reading them all takes milliseconds, hence opt-in. */
enum { kCpuMaxOthers = 16384 };

typedef struct {
  int count;
  int tid[kCpuMaxOthers];
  double ns[kCpuMaxOthers];
  char name[kCpuMaxOthers][16];
} OthersSnapshot;

static int cpu_who_enabled(void) {
  const char* v = getenv("BO_BENCH_WHO");
  return v && strcmp(v, "1") == 0;
}

static void cpu_snapshot_others(OthersSnapshot* s) {
  s->count = 0;
  char path[640], buf[256];
  const int self = (int)getpid();
  DIR* procs = opendir("/proc");
  if (!procs) return;
  for (struct dirent* p; (p = readdir(procs));) {
    if (p->d_name[0] < '0' || p->d_name[0] > '9' || atoi(p->d_name) == self) continue;
    snprintf(path, sizeof path, "/proc/%s/task", p->d_name);
    DIR* tasks = opendir(path);
    if (!tasks) continue;
    for (struct dirent* t; (t = readdir(tasks)) && s->count < kCpuMaxOthers;) {
      if (t->d_name[0] < '0' || t->d_name[0] > '9') continue;
      snprintf(path, sizeof path, "/proc/%s/task/%s/schedstat", p->d_name, t->d_name);
      if (!cpu_read_file(path, buf, sizeof buf)) continue;
      const int i = s->count;
      s->tid[i] = atoi(t->d_name);
      s->ns[i] = atof(buf);
      snprintf(path, sizeof path, "/proc/%s/task/%s/comm", p->d_name, t->d_name);
      cpu_read_name(path, s->name[i]);
      ++s->count;
    }
    closedir(tasks);
  }
  closedir(procs);
}

/* Appends `, "outside_top": {...}`: the five other tasks (by name) that ran longest between two snapshots, 1 ms or
 * more each. */
static void cpu_describe_others(const OthersSnapshot* a, const OthersSnapshot* b, char* out, size_t size) {
  enum { kTop = 5 };
  const char* top_name[kTop] = {0};
  double top_ms[kTop] = {0};
  int j = 0;
  for (int i = 0; i < b->count; ++i) {
    double before = 0;
    // Both snapshots list the tasks in /proc's order: look from where the last match was, then from the start.
    for (int k = 0; k < a->count; ++k) {
      const int at = (j + k) % a->count;
      if (a->tid[at] == b->tid[i]) {
        before = a->ns[at];
        j = at + 1;
        break;
      }
    }
    const double ms = (b->ns[i] - before) * 1e-6;
    for (int k = 0; k < kTop; ++k)
      if (ms >= 1.0 && ms > top_ms[k]) {
        for (int m = kTop - 1; m > k; --m) top_ms[m] = top_ms[m - 1], top_name[m] = top_name[m - 1];
        top_ms[k] = ms, top_name[k] = b->name[i];
        break;
      }
  }
  size_t used = (size_t)snprintf(out, size, ", \"outside_top\": {");
  for (int k = 0; k < kTop && top_name[k] && used < size; ++k)
    used += (size_t)snprintf(out + used, size - used, "%s\"%s\": %.1f", k ? ", " : "", top_name[k], top_ms[k]);
  if (used < size) snprintf(out + used, size - used, "}");
}

#endif
