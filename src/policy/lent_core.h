// While work of ours runs beside the program (the GPU start-up, unpinning host memory the program freed), the CPU
// BLAS (OpenBLAS, pthreads build) runs with one thread less when its threads fill the process's CPUs, so that our
// thread has a core of its own.
//
// Why: a threaded OpenBLAS call waits for its slowest thread, and a thread that shares its core with anything else,
// even at nice 19 or SCHED_IDLE, loses scheduler slices of milliseconds (docs/policy.md, step 6). On the lent
// machine (bench/results/mix):
// - the start-up spends 80-180 ms of CPU over about 0.6 s; beside it sgemm n = 2048 took 2.0x its time, its 15 workers
//   spinning 2.5-3.1 s of CPU waiting, against 0.85 s alone (after-large-*-d6109db-3);
// - unpinning the gemm n = 8192 operands the program had freed took the unpinning thread 50-55 ms of CPU, and sgemv
//   and dgemv n = 256 beside it ran at 3 ms a call instead of 5-9 us, OpenBLAS's threads preempted 43,000-49,000 times
//   (mix-*-421f0fd: those points' 580x and 326x).
// One thread less costs a 16-thread call 1/15 of its speed for that long instead. With few threads the lent thread
// costs more than the slices: on a 2-core machine, reference dgeqrf n = 2048 over 2-thread OpenBLAS took 8% longer
// beside a thread busy a quarter of the time, and 18% longer on one thread.
//
// OpenBLAS's thread count is changed only on the program's own threads, inside an intercepted call (no other OpenBLAS
// call of that thread is running; a background thread of ours would also make OpenBLAS re-create its pool, after a
// fork, at our thread's nice 19): our work only says it wants a core (want_core), and while it does every auto call
// takes the policy's full path, even a tiny one, where the thread is lent and later given back (sync_core).
#pragma once

#include <atomic>
#include <string>

#include "policy/config.h"

namespace blasoffload::policy {

// BLASOFFLOAD_LEND_CORE (Settings::lend_core): lend when OpenBLAS has at least kAutoMinThreads threads (auto) or
// 2 (on); never (off).
constexpr int kAutoMinThreads = 8;

// At policy initialisation (a program thread): whether a thread can be lent at all (OpenBLAS pthreads, its threads
// filling the CPUs, the setting, decisions not frozen). When not, want_core does nothing.
void lent_core_init(const Settings& s);

// Any thread: our work starts (+1) or ends (-1). The first want sends every auto call to the full path (the tiny-call
// floors read 0) until the thread is given back. Cheap; never calls into OpenBLAS.
void want_core(int delta);

// A fork() child: our threads did not follow it; the next sync_core gives a lent thread back.
void want_core_forked_child();

// Nonzero while a core is wanted or lent: decide_auto then calls sync_core.
extern std::atomic<int> g_core_sync;

// A program thread, in an auto call: lends the thread while wanted, gives it back once not (leaving OpenBLAS alone if
// the program set another count meanwhile). Returns true when it gave the thread back and nothing is wanted: the
// caller publishes the floors again.
bool sync_core();

// A summary line: how often and how long OpenBLAS ran a thread less (empty when never).
std::string lent_core_note();

}  // namespace blasoffload::policy
