// Host threads of the CUDA module: a pool that splits staging copies (pageable <-> pinned) across cores, and a
// small set of persistent workers that run the other devices' drivers and the CPU share of a hybrid call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace bom {

// Runs fn(i) for i in [0, n) on the staging threads and the caller, and returns when all are done. Safe to call
// from several threads at once (jobs queue; each caller also works on its own job, so none waits idle).
// The pool size comes from set_staging_threads_setting (default: half the cores, at most 16, or half of this rank's
// share of them where set_node_ranks says several ranks share the node: gpu_share.h), fixed at first use but for
// staging_threads_for_gpus.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

// BLASOFFLOAD_STAGING_THREADS as read by the module's init (host services config), before the pool's first use;
// nullptr or malformed: the default.
void set_staging_threads_setting(const char* value);

// The ranks of this node (MPI local size; 1: alone), before the pool's first use: the default threads are half of the
// rank's share of the cores.
void set_node_ranks(int ranks);

// A call about to run over `gpus` GPUs (their drivers pack at once): the pool grows to the default for that many
// (gpu_share.h), unless BLASOFFLOAD_STAGING_THREADS set it. It never shrinks.
void staging_threads_for_gpus(int gpus);

// Threads the pool uses besides the caller.
int staging_threads();

// Runs tasks[0] on the caller and tasks[i] on persistent worker i-1 (the same worker for the same index every
// time, so that per-thread state such as a cuBLAS handle for device i is reused), and waits for all.
void run_concurrently(const std::function<void()>* tasks, int count);

// Copies a rows x cols column-major block of elem_size-byte elements between a matrix with leading dimension `ld`
// and a packed buffer (leading dimension `rows`), split across the staging threads by columns (or into byte ranges
// for one contiguous run). Only the block's bytes are read and written.
void pack_block(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int elem_size);
void unpack_block(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int elem_size);

}  // namespace bom
