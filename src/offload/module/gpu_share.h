// How MPI ranks of one node share its GPUs and cores: the module's defaults for a rank that is not alone (device.cu
// applies them where the user set nothing; staging_pool.cpp sizes its threads by them). Pure arithmetic, tested on
// the CPU (tests/pipeline/test_gpu_share.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace bom {

struct NodeShare {
  int node_ranks = 1;  // this node's ranks (the launcher's local size), this one included
  int gpu_ranks = 1;   // of them, those on this process's GPU
};

// Ranks are spread over the GPUs by local rank modulo the GPU count (device.cu's choose_device), so GPU `device` holds
// every rank r < local_size with r % gpus == device. Unknown sizes (< 1) or no GPU: alone.
inline NodeShare node_share(long local_size, int gpus, int device) {
  NodeShare s;
  if (local_size <= 1 || gpus <= 0 || device < 0 || device >= gpus) return s;
  s.node_ranks = int(local_size);
  s.gpu_ranks = int(local_size / gpus + (device < local_size % gpus ? 1 : 0));
  s.gpu_ranks = std::max(1, s.gpu_ranks);
  return s;
}

// The device memory a rank's tiled pipeline may use: its share of what one process alone would take (90% of the
// GPU's memory less 256 MiB), so that ranks sharing a GPU never ask for more than it has together.
inline int64_t shared_pipeline_bytes(int64_t gpu_total, int gpu_ranks) {
  const int64_t alone = int64_t(double(gpu_total) * 0.9) - (int64_t(256) << 20);
  return std::max<int64_t>(0, alone / std::max(1, gpu_ranks));
}

// Its share of the resident copies' default, half the GPU's memory.
inline int64_t shared_residency_bytes(int64_t gpu_total, int gpu_ranks) {
  return gpu_total / 2 / std::max(1, gpu_ranks);
}

// Staging threads: half of the rank's share of the cores, at least 1 and at most 16 (alone: half the cores). Ranks of
// one node each starting half the cores' threads would put node_ranks / 2 threads on every core, beside the CPU
// BLAS's own. A call over several GPUs has a driver thread packing for each at once: 8 more for each GPU beyond the
// first, leaving a core for each driver and two more. Two H200s on 32 cores, staged dgemm n = 32768: 16 threads
// 719-744 ms a call, 20 702-714, 24 688-693, 28 690-709 (the host's copies are what the two GPUs wait for early on).
inline long staging_threads_for(long cores, int node_ranks, int gpus = 1) {
  const long share = std::max(1L, cores / std::max(1, node_ranks));
  const long alone = std::min(16L, std::max(1L, share / 2));
  if (gpus <= 1) return alone;
  return std::max(alone, std::min(alone + 8L * (gpus - 1), share - gpus - 2));
}

}  // namespace bom
