// The module's device runtime: which GPU this process uses (and which ones the tiled pipeline may add), whether the
// module may touch CUDA at all (fork child, sticky error, exit), per-thread slots (a stream with grow-only device and
// pinned buffers reused across calls), the scope every call runs in, and how CUDA errors become module results.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "offload/cuda_module_api.h"

namespace bom {

// ---- Host services and settings. ----
// The core's services (init stores them; nullptr before).
const bo_cuda_host_services* host();
void set_host(const bo_cuda_host_services* h);
// A setting through the core's configuration layer (never getenv): nullptr when unset.
const char* config(const char* key);
// A whole-number setting; dflt when unset or malformed.
long config_long(const char* key, long dflt);
// A number setting; dflt when unset, malformed or below min.
double config_number(const char* key, double dflt, double min);
void log_line(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// A GPU failure no CPU fallback can repair (device operands, a write-back already begun): one line on stderr, then
// abort. "blasoffload: fatal: ROUTINE WHAT (cudaErrorX: text); CONSEQUENCE; aborting".
[[noreturn]] void fatal_gpu_failure(const char* routine, const char* what, const char* consequence, cudaError_t e);

// ---- State. ----
// BO_CUDA_OK when calls may use the GPU; else why not (forked child, broken device, shutting down).
int gate();
void mark_forked();
void mark_broken();  // a sticky CUDA error: the device is no longer used in this process
void mark_closing();
bool forked();

// ---- Device choice (init). ----
// Picks this process's GPU (BLASOFFLOAD_DEVICE, else an MPI launcher's local rank, else 0) and makes it current;
// *how says by what. BO_CUDA_OK or BO_CUDA_NO_DEVICE (logged).
int choose_device(const char** how);
int device();        // the chosen GPU
int device_count();  // visible GPUs
// The GPUs of a call that several may share (the gemm pipeline, trsm/syrk, cuSOLVERMg, the tiled QR) into out (at most
// cap): BLASOFFLOAD_DEVICES, else all visible ones (the process's own GPU first), else only the chosen one when it was
// chosen for this process (ranks must not share every GPU). A GPU listed twice (BLASOFFLOAD_DEVICES=0,0) takes two
// shares of the call, which tries the several-GPU paths on a machine of one GPU.
int pipeline_lanes(int* out, int cap);
// Whether every GPU of the list reads every other's memory directly (NVLink or PCIe peer to peer), with that access
// enabled; a GPU listed twice reads its own. Without it a copy between GPUs goes through host memory, no cheaper than
// staging the data again. Asked once per pair of GPUs a process.
bool peers_reachable(const std::vector<int>& devs);
// Whether what several of these GPUs need of a call is staged once and copied between them: two GPUs or more, all
// peers, and BLASOFFLOAD_TEST_PEER_PANELS not off (the benchmarks' A/B).
bool share_between(const std::vector<int>& devs);
// Queues on st a copy of a rows x cols block of es-byte elements from src (on GPU src_dev, leading dimension src_ld) to
// dst (on dst_dev, dst_ld): peer to peer between two GPUs, device to device within one; one contiguous run where both
// leading dimensions are the rows.
cudaError_t copy_between_gpus(char* dst, int dst_dev, int64_t dst_ld, const char* src, int src_dev, int64_t src_ld,
                              int64_t rows, int64_t cols, int es, cudaStream_t st);
// Pinned staging memory a slot may hold (BLASOFFLOAD_PINNED_MAX_MB, read at init).
void set_pinned_max(size_t bytes);

// ---- Per-thread slots. ----
constexpr size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

struct Slot {
  std::mutex mu;
  cudaStream_t stream = nullptr;
  char* dev = nullptr;
  size_t dev_cap = 0;
  char* pin = nullptr;  // mapped: kernels may write small results (nrm2) straight into it
  size_t pin_cap = 0;
};
// Grows the slot's buffers to at least these sizes (grow-only: only a call needing more than any earlier call
// allocates). cudaErrorMemoryAllocation when device or pinned memory is short.
cudaError_t reserve(Slot& s, size_t dev_bytes, size_t pin_bytes);
// What reserve() would spend now growing the calling thread's slot to these sizes, in microseconds: the bytes it
// would allocate at the rates its earlier growths measured (pinned memory about 0.4 ns a byte before any). 0 when
// the slot holds them, or when the pinned need exceeds BLASOFFLOAD_PINNED_MAX_MB (the call cannot run this way).
double growth_us(size_t dev_bytes, size_t pin_bytes);

// Carves consecutive 256-byte aligned pieces out of a buffer.
struct Carver {
  char* base;
  size_t off = 0;
  char* take(size_t bytes) {
    char* p = base + off;
    off += align256(bytes);
    return p;
  }
};

// ---- Device operands of CUDA-aware programs. ----
// True for device or managed memory the module uses in place; aborts with a clear message for device memory of
// another GPU than the module's.
bool on_device(const void* p);

// Everything a call needs around its body: the calling thread's slot (locked), the module's device made current
// (and the caller's restored), and error classification. A failure in a call on device operands cannot be handed to
// the CPU BLAS: it prints a clear error and aborts.
class CallScope {
 public:
  explicit CallScope(const char* routine);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  Slot& slot() { return *slot_; }
  void set_device_operands(bool any) { any_device_ = any; }
  // Before the kernels read device operands the caller's own queued work must be finished.
  void sync_device_operands();
  // The module result for a CUDA error (out of memory, or a possibly sticky failure that retires the device).
  int fail(cudaError_t e);

 private:
  const char* routine_;
  Slot* slot_;
  std::unique_lock<std::mutex> lock_;
  int old_device_ = -1;
  bool any_device_ = false;
};

// The tiled pipeline's error callback: a real CUDA error (other than out of memory) retires the device.
void engine_error(int cuda_error);

}  // namespace bom
