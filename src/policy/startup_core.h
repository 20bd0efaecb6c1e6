// While the GPU starts in the background, the CPU BLAS (OpenBLAS, pthreads build) runs with one thread less when its
// threads fill the process's CPUs, so that the start-up thread has a core of its own.
//
// Why: a threaded OpenBLAS call waits for its slowest thread, and a thread that shares its core with anything else,
// even at nice 19 or SCHED_IDLE, loses scheduler slices of milliseconds (README "Never slower", item (3)). The
// start-up spends 80-180 ms of CPU over about 0.6 s on the lent machine; beside it, the calls running on the CPU took
// up to twice their time (sgemm n = 2048 2.0x, its 15 workers spinning 2.5-3.1 s of CPU waiting, against 0.85 s
// alone: bench/results/mix/after-large-*-d6109db-3). One thread less costs a 16-thread call 1/15 of its time instead.
// With few threads the thread lent costs more than the slices: on a 2-core machine, reference dgeqrf n = 2048 over
// 2-thread OpenBLAS took 8% longer beside a thread busy a quarter of the time, and 18% longer on one thread.
#pragma once

#include <atomic>
#include <string>

#include "policy/config.h"

namespace blasoffload::policy {

// BLASOFFLOAD_STARTUP_CORE (Settings::startup_core): lend a core when the rule above holds and OpenBLAS has at least
// kAutoMinThreads threads (auto) or 2 (on); or never (off).
constexpr int kAutoMinThreads = 8;
// Called by the thread that starts the background start-up, just before it does (a BLAS call of that thread is
// under way, so none of its own is running in OpenBLAS). Returns true when a thread was taken from OpenBLAS.
bool lend_core_to_startup(const Settings& s);

// Gives the thread back once the start-up has ended (or in a fork() child). Called at the top of every decided call:
// one relaxed load while nothing is lent. Leaves OpenBLAS alone if the program changed its thread count meanwhile.
extern std::atomic<bool> g_core_lent;
void give_core_back();
inline void give_core_back_when_started() {
  if (g_core_lent.load(std::memory_order_relaxed)) give_core_back();
}

// For the summary: "; the CPU BLAS ran 15 of its 16 threads for 612 ms meanwhile" (or "from then on" when no decided
// call came after the start-up), or empty when nothing was lent.
std::string lent_core_note();

}  // namespace blasoffload::policy
