// Device memory shared between processes through CUDA IPC, and region copies through the calling thread's ring (see
// shared_memory.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "offload/module/device.h"
#include "offload/module/ring_transfer.h"
#include "offload/module/shared_memory.h"

namespace bom {

static_assert(sizeof(cudaIpcMemHandle_t) == BO_SHARED_HANDLE_BYTES, "a CUDA IPC handle is 64 bytes");

int shared_alloc(int64_t bytes, void** dev, unsigned char handle[BO_SHARED_HANDLE_BYTES]) {
  *dev = nullptr;
  if (int g = gate()) return g;
  if (bytes <= 0) return BO_CUDA_UNSUPPORTED;
  CallScope cs("shared_alloc");
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, size_t(bytes));
  if (e) return cudaGetLastError(), BO_CUDA_OUT_OF_MEMORY;
  // Zeroed, as the host copy's fresh pages are (a Cholesky copies in only its triangle's blocks), and finished before
  // the handle leaves: a plain cudaMemset is asynchronous on the legacy stream, which neither the slots' non-blocking
  // streams nor the other processes' copies wait for.
  cudaIpcMemHandle_t h{};
  Slot& s = cs.slot();
  if (!s.stream && (e = reserve(s, 0, 0))) return cudaFree(p), cudaGetLastError(), BO_CUDA_UNSUPPORTED;
  if (!(e = cudaMemsetAsync(p, 0, size_t(bytes), s.stream)) && !(e = cudaStreamSynchronize(s.stream)) &&
      !(e = cudaIpcGetMemHandle(&h, p))) {
    std::memcpy(handle, &h, sizeof h);
    *dev = p;
    return BO_CUDA_OK;
  }
  log_line(BO_LOG_DEBUG, "shared device memory: %s", cudaGetErrorString(e));
  cudaFree(p);
  cudaGetLastError();
  return BO_CUDA_UNSUPPORTED;
}

int shared_open(const unsigned char handle[BO_SHARED_HANDLE_BYTES], void** dev) {
  *dev = nullptr;
  if (int g = gate()) return g;
  CallScope cs("shared_open");
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle, sizeof h);
  // Another GPU of the node than the owner's: its memory through peer access where the GPUs have it.
  const cudaError_t e = cudaIpcOpenMemHandle(dev, h, cudaIpcMemLazyEnablePeerAccess);
  if (e) {
    log_line(BO_LOG_DEBUG, "opening shared device memory: %s", cudaGetErrorString(e));
    cudaGetLastError();
    *dev = nullptr;
    return BO_CUDA_UNSUPPORTED;
  }
  return BO_CUDA_OK;
}

void shared_close(void* dev, int owner) {
  if (!dev || gate()) return;  // a process past its GPU's end leaves it to the driver
  CallScope cs("shared_close");
  if (owner)
    cudaFree(dev);
  else
    cudaIpcCloseMemHandle(dev);
  cudaGetLastError();
}

int regions_copy(const bo_region* regions, int64_t count, int elem_size, int to_device) {
  if (int g = gate()) return g;
  if (count <= 0) return BO_CUDA_OK;
  int64_t rows = 1;
  for (int64_t i = 0; i < count; ++i) rows = std::max(rows, regions[i].rows);
  const size_t piece = std::max(kRingPieceBytes, size_t(elem_size) * size_t(rows));
  CallScope cs("regions_copy");
  Slot& s = cs.slot();
  if (cudaError_t e = reserve(s, 0, size_t(kRingSlots) * piece)) return cs.fail(e);
  const Ring ring{s.pin, piece, kRingSlots};
  if (cudaError_t e = ring_copy_regions(ring, regions, size_t(count), elem_size, to_device != 0, s.stream))
    return cs.fail(e);
  return BO_CUDA_OK;
}

}  // namespace bom
