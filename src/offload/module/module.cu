// The CUDA module's entry table: the device runtime (device choice, per-thread streams, pooled device
// and pinned staging memory, host/device operand handling) around the kernels of src/kernels.
//
// Contract with the core (offload/cuda_module_api.h): anything but BO_CUDA_OK means the output operand
// was NOT touched. Host outputs are written back only after every copy and kernel has completed
// without error, element by element as BLAS allows (m rows of each column of C, n strided elements of
// y/x): bytes between rows lda/ldc and between strided elements are never written.
// Device pointers (CUDA-aware programs) are detected with cudaPointerGetAttributes and used in place;
// a failure in such a call cannot be handed to the CPU BLAS, so it prints a clear error and aborts.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/common.cuh"
#include "kernels/registry.h"
#include "kernels/tuned_select.h"
#include "kernels/vendor_cublas.h"
#include "offload/cuda_module_api.h"
#include "offload/module/gemm_pipeline.h"
#include "offload/module/resident_copies.h"
#include "offload/module/staging_pool.h"

namespace bok {
const bo_kernel_registry* registry();
}

namespace {

const bo_cuda_host_services* g_host = nullptr;
std::atomic<bool> g_forked{false};
std::atomic<bool> g_broken{false};   // a sticky CUDA error happened: the device is no longer used
std::atomic<bool> g_closing{false};  // shutdown() ran
int g_device = 0;
int g_device_count = 0;
bool g_device_chosen = false;  // BLASOFFLOAD_DEVICE or an MPI local rank picked one GPU for this process
thread_local bo_sgemm_stats t_last_sgemm{};
size_t g_pinned_max = size_t(4) << 30;  // per slot; BLASOFFLOAD_PINNED_MAX_MB
char g_name[256] = "blasoffload-cuda 0.3";

void logf(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void logf(int level, const char* fmt, ...) {
  if (!g_host) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_host->log(level, buf);
}

// ---- Per-thread slots: a stream, a device buffer and a pinned staging buffer, reused across calls. ----
constexpr int kMaxSlots = 8;  // bounded: threads beyond this share slots (serialised by the slot lock)
struct Slot {
  std::mutex mu;
  cudaStream_t stream = nullptr;
  char* dev = nullptr;
  size_t dev_cap = 0;
  char* pin = nullptr;
  size_t pin_cap = 0;
};
Slot g_slots[kMaxSlots];
std::atomic<unsigned> g_next_slot{0};
thread_local int t_slot = -1;

constexpr size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

// Grow-only; only a call needing more than any earlier call allocates.
cudaError_t reserve(Slot& s, size_t dev_bytes, size_t pin_bytes) {
  cudaError_t e = cudaSuccess;
  if (!s.stream && (e = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking)) != cudaSuccess) return e;
  if (dev_bytes > s.dev_cap) {
    if (s.dev) {
      cudaStreamSynchronize(s.stream);
      cudaFree(s.dev);
      s.dev = nullptr;
      s.dev_cap = 0;
    }
    size_t want = align256(dev_bytes + dev_bytes / 4);
    if ((e = cudaMalloc(&s.dev, want)) != cudaSuccess) {
      cudaGetLastError();  // not sticky
      return cudaErrorMemoryAllocation;
    }
    s.dev_cap = want;
  }
  if (pin_bytes > s.pin_cap) {
    if (pin_bytes > g_pinned_max) return cudaErrorMemoryAllocation;
    if (s.pin) {
      cudaStreamSynchronize(s.stream);
      cudaFreeHost(s.pin);
      s.pin = nullptr;
      s.pin_cap = 0;
    }
    size_t want = std::min(align256(pin_bytes + pin_bytes / 4), std::max(pin_bytes, g_pinned_max));
    // Mapped: kernels may write small results (snrm2) straight into it, saving a copy on the latency path.
    if ((e = cudaHostAlloc(reinterpret_cast<void**>(&s.pin), want, cudaHostAllocPortable | cudaHostAllocMapped)) !=
        cudaSuccess) {
      cudaGetLastError();
      return cudaErrorMemoryAllocation;
    }
    s.pin_cap = want;
  }
  return cudaSuccess;
}

// Stands for a staged operand when the configuration is chosen, before the staging buffers exist: they are
// 256-byte aligned, which is all can_implement looks at.
const float* const kStagedAddr = reinterpret_cast<const float*>(uintptr_t(256));
// Rewrites an operand as the kernel will see it when `staged` (its elements are copied in): aligned, leading
// dimension = rows, or contiguous for a vector.
template <class T>
void as_staged(size_t staged, T** p, int64_t* ld, int64_t rows) {
  if (!staged) return;
  *p = const_cast<T*>(kStagedAddr);
  *ld = std::max<int64_t>(rows, 1);
}

// Carves consecutive 256-byte aligned pieces out of a buffer.
struct Carver {
  char* base;
  size_t off = 0;
  template <class T>
  T* take(size_t bytes) {
    T* p = reinterpret_cast<T*>(base + off);
    off += align256(bytes);
    return p;
  }
};

// A call's holds on device copies of its host operands (residency.h), released when the call ends (after its
// stream was synchronised or abandoned).
struct ResidentHolds {
  bom::Residency* cache = nullptr;
  bom::Residency::Lease l[3];
  uint64_t use;
  explicit ResidentHolds(uint64_t use_number = 0)
      : cache(bom::resident_copies(g_host, g_device)), use(use_number ? use_number : bom::resident_call_use()) {}
  ~ResidentHolds() {
    if (cache)
      for (const auto& x : l) cache->release(x);
  }
  ResidentHolds(const ResidentHolds&) = delete;
  ResidentHolds& operator=(const ResidentHolds&) = delete;
  // Operand i's device copy, brought up to date on `st`; nullptr: stage it.
  float* get(int i, const void* p, int64_t rows, int64_t cols, int64_t ld, bool output, cudaStream_t st) {
    if (!cache) return nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    l[i] = cache->acquire({p, rows, cols, ld}, output ? bom::Residency::Role::kOutput : bom::Residency::Role::kInput,
                          st, use);
    acquire_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return reinterpret_cast<float*>(l[i].dev);
  }
  double acquire_ms = 0;  // scans and uploads (queued) of this call
  // The call wrote host memory [p...] (an output staged back, not through a copy): no copy may keep old pages of it.
  void written(const void* p, int64_t rows, int64_t cols, int64_t ld) {
    if (cache) cache->host_written({p, rows, cols, ld});
  }
};

// ---- Host <-> pinned staging, element-exact. ----
void pack_matrix(float* dst, const float* src, int64_t rows, int64_t cols, int64_t ld) {
  if (ld == rows) {
    std::memcpy(dst, src, sizeof(float) * size_t(rows) * size_t(cols));
    return;
  }
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * rows, src + j * ld, sizeof(float) * size_t(rows));
}
void unpack_matrix(float* dst, const float* src, int64_t rows, int64_t cols, int64_t ld) {
  if (4 * rows * cols >= (int64_t(4) << 20)) return bom::unpack_block(dst, src, rows, cols, ld);
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * ld, src + j * rows, sizeof(float) * size_t(rows));
}
// The lower or upper triangle (diagonal included) of an n x n staged matrix (leading dimension n) into C.
void unpack_triangle(float* dst, const float* src, int64_t n, int64_t ld, bool lower) {
  for (int64_t j = 0; j < n; ++j) {
    const int64_t r0 = lower ? j : 0, r1 = lower ? n : j + 1;
    std::memcpy(dst + r0 + j * ld, src + r0 + j * n, sizeof(float) * size_t(r1 - r0));
  }
}
// Logical order: dst[i] = element i of the BLAS vector (negative inc starts at the end).
void pack_vector(float* dst, const float* src, int64_t n, int64_t inc) {
  if (inc == 1) {
    std::memcpy(dst, src, sizeof(float) * size_t(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = src[bok::vidx(i, n, inc)];
}
void unpack_vector(float* dst, const float* src, int64_t n, int64_t inc) {
  if (inc == 1) {
    std::memcpy(dst, src, sizeof(float) * size_t(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[bok::vidx(i, n, inc)] = src[i];
}

// Stages a host matrix / strided vector into its pinned slice and queues the copy to the device. Does
// nothing once an earlier step of the call has failed (the call will be handed to the CPU anyway).
// Large operands go in column pieces: the staging threads pack piece p+1 while the DMA of piece p runs.
constexpr int64_t kPieceBytes = int64_t(8) << 20;
void upload_matrix(cudaError_t& e, float* pinned, float* dev, const float* src, int64_t rows, int64_t cols,
                   int64_t ld, cudaStream_t st) {
  if (e) return;
  if (4 * rows * cols < kPieceBytes) {
    pack_matrix(pinned, src, rows, cols, ld);
    e = cudaMemcpyAsync(dev, pinned, 4 * size_t(rows) * size_t(cols), cudaMemcpyHostToDevice, st);
    return;
  }
  const int64_t step = std::max<int64_t>(1, kPieceBytes / (4 * rows));
  for (int64_t j = 0; j < cols && !e; j += step) {
    const int64_t w = std::min(step, cols - j);
    bom::pack_block(pinned + j * rows, src + j * ld, rows, w, ld);
    e = cudaMemcpyAsync(dev + j * rows, pinned + j * rows, 4 * size_t(rows) * size_t(w), cudaMemcpyHostToDevice, st);
  }
}
// A triangle (strsv reads nothing else): column blocks as trapezoids, about half the square's bytes. The staged
// copy keeps leading dimension n; the untouched part of it is never read.
void upload_triangle(cudaError_t& e, float* pinned, float* dev, const float* src, int64_t n, int64_t ld, bool lower,
                     cudaStream_t st) {
  if (e) return;
  const int64_t w = std::max<int64_t>(64, std::min<int64_t>(n, kPieceBytes / std::max<int64_t>(1, 4 * n)));
  for (int64_t j = 0; j < n && !e; j += w) {
    const int64_t cw = std::min(w, n - j);
    const int64_t r0 = lower ? j : 0, r1 = lower ? n : std::min(n, j + cw);
    // The piece is packed (leading dimension r1 - r0) into the start of its columns' part of the buffer.
    bom::pack_block(pinned + j * n, src + r0 + j * ld, r1 - r0, cw, ld);
    e = cudaMemcpy2DAsync(dev + r0 + j * n, 4 * size_t(n), pinned + j * n, 4 * size_t(r1 - r0), 4 * size_t(r1 - r0),
                          size_t(cw), cudaMemcpyHostToDevice, st);
  }
}
void upload_vector(cudaError_t& e, float* pinned, float* dev, const float* src, int64_t n, int64_t inc,
                   cudaStream_t st) {
  if (e) return;
  pack_vector(pinned, src, n, inc);
  e = cudaMemcpyAsync(dev, pinned, 4 * size_t(n), cudaMemcpyHostToDevice, st);
}

// ---- Device pointers from CUDA-aware programs. ----
bool on_device(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged) return false;
  if (at.device != g_device && at.type == cudaMemoryTypeDevice) {
    std::fprintf(stderr,
                 "blasoffload: fatal: a BLAS operand is device memory of GPU %d but blasoffload uses GPU %d "
                 "(set BLASOFFLOAD_DEVICE=%d); aborting\n",
                 at.device, g_device, at.device);
    std::abort();
  }
  return true;
}

[[noreturn]] void device_call_failed(const char* routine, cudaError_t e) {
  std::fprintf(stderr,
               "blasoffload: fatal: %s on device-resident operands failed on the GPU (%s: %s); the call cannot "
               "be completed on the CPU; aborting\n",
               routine, cudaGetErrorName(e), cudaGetErrorString(e));
  std::abort();
}

// Everything a call needs around its body: the slot lock, the current device, error classification.
class CallScope {
 public:
  explicit CallScope(const char* routine) : routine_(routine) {
    if (t_slot < 0) t_slot = int(g_next_slot.fetch_add(1) % kMaxSlots);
    slot_ = &g_slots[t_slot];
    lock_ = std::unique_lock<std::mutex>(slot_->mu);
    if (cudaGetDevice(&old_device_) != cudaSuccess) old_device_ = -1;
    if (old_device_ != g_device) cudaSetDevice(g_device);
  }
  ~CallScope() {
    if (old_device_ >= 0 && old_device_ != g_device) cudaSetDevice(old_device_);
  }
  Slot& slot() { return *slot_; }
  void set_device_operands(bool any) { any_device_ = any; }
  // Before the kernels read device operands the caller's own queued work must be finished.
  void sync_device_operands() {
    if (!any_device_) return;
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) device_call_failed(routine_, e);
  }
  int fail(cudaError_t e) {
    if (any_device_) device_call_failed(routine_, e);
    if (e == cudaErrorMemoryAllocation) {
      logf(BO_LOG_DEBUG, "%s: out of device or pinned memory", routine_);
      return BO_CUDA_OUT_OF_MEMORY;
    }
    // Treat every other error as possibly sticky: stop using the device in this process.
    g_broken.store(true);
    logf(BO_LOG_DEBUG, "%s: CUDA error %s (%s)", routine_, cudaGetErrorName(e), cudaGetErrorString(e));
    return BO_CUDA_LAUNCH_FAILED;
  }

 private:
  const char* routine_;
  Slot* slot_;
  std::unique_lock<std::mutex> lock_;
  int old_device_ = -1;
  bool any_device_ = false;
};

int gate() {
  if (g_forked.load(std::memory_order_relaxed)) return BO_CUDA_FORKED_CHILD;
  if (g_broken.load(std::memory_order_relaxed) || g_closing.load(std::memory_order_relaxed)) return BO_CUDA_NO_DEVICE;
  return BO_CUDA_OK;
}

// ---- init ----
long env_long(const char* v, long dflt) {
  if (!v || !*v) return dflt;
  char* end = nullptr;
  long r = std::strtol(v, &end, 10);
  return (end && *end == '\0') ? r : dflt;
}

// Where tuned tables are looked for, in order: the user's (where blasoffload-tune writes by default), next to
// this module (build tree, carried copies), and the installed share directory.
std::vector<std::string> tuned_params_dirs() {
  std::vector<std::string> d;
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg)
    d.push_back(std::string(xdg) + "/blasoffload/tuned_params");
  else if (home && *home)
    d.push_back(std::string(home) + "/.config/blasoffload/tuned_params");
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&tuned_params_dirs), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    const std::string dir = self.substr(0, self.rfind('/') == std::string::npos ? 0 : self.rfind('/'));
    d.push_back((dir.empty() ? "." : dir) + "/tuned_params");
    d.push_back((dir.empty() ? "." : dir) + "/../share/blasoffload/tuned_params");
  }
  return d;
}

int init(const bo_cuda_host_services* host) {
  g_host = host;
  if (g_forked.load()) return BO_CUDA_FORKED_CHILD;
  // Before this module's runtime loads the driver: did the program load it itself?
  if (void* h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY)) {
    dlclose(h);
    bom::set_pinning_default(true);
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    logf(BO_LOG_DEBUG, "CUDA: %s", err != cudaSuccess ? cudaGetErrorString(err) : "no device");
    return BO_CUDA_NO_DEVICE;
  }
  const char* how = "default";
  long dev = 0;
  const char* cfg = host && host->config ? host->config("BLASOFFLOAD_DEVICE") : nullptr;
  if (cfg && *cfg) {
    dev = env_long(cfg, -1);
    if (dev < 0 || dev >= count) {
      logf(0, "BLASOFFLOAD_DEVICE=%s is not a device index below %d; using the GPU is disabled", cfg, count);
      return BO_CUDA_NO_DEVICE;
    }
    how = "BLASOFFLOAD_DEVICE";
    g_device_chosen = true;
  } else {
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK"}) {
      long r = env_long(std::getenv(var), -1);
      if (r >= 0) {
        dev = r % count;
        how = var;
        g_device_chosen = true;
        break;
      }
    }
  }
  g_device = int(dev);
  g_device_count = count;
  if (const char* v = host && host->config ? host->config("BLASOFFLOAD_PINNED_MAX_MB") : nullptr) {
    long mb = env_long(v, -1);
    if (mb > 0) g_pinned_max = size_t(mb) << 20;
  }
  if ((err = cudaSetDevice(g_device)) != cudaSuccess || (err = cudaFree(nullptr)) != cudaSuccess) {
    logf(BO_LOG_DEBUG, "CUDA: device %d: %s", g_device, cudaGetErrorString(err));
    return BO_CUDA_NO_DEVICE;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, g_device);
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  std::snprintf(g_name, sizeof g_name, "blasoffload-cuda 0.3 (CUDA %d.%d, GPU %d of %d: %s, sm_%d%d, by %s)",
                rt / 1000, (rt % 1000) / 10, g_device, count, prop.name, prop.major, prop.minor, how);
  bok::vendor::set_cublas_setting(host && host->config ? host->config("BLASOFFLOAD_CUBLAS") : nullptr);
  bo::tuning::DeviceInfo info;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.memory_gib = double(prop.totalGlobalMem) / double(1ull << 30);
  bok::load_tuned_params(info, host && host->config ? host->config("BLASOFFLOAD_TUNED_PARAMS") : nullptr,
                         tuned_params_dirs(), [](int level, const char* m) { logf(level, "%s", m); });
  // Opening cuBLAS costs a large part of start-up: pay it here, where the policy accounts for it (and where it
  // runs in the background), rather than inside the first call the table gives to cuBLAS.
  if (bok::tuned_uses_cublas()) bok::vendor::cublas_available();
  return BO_CUDA_OK;
}

// ---- The four routines. ----
// The engine's view of the module.
void engine_log(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void engine_log(int level, const char* fmt, ...) {
  if (!g_host) return;
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_host->log(level, buf);
}
void engine_error(int e) {
  if (e != cudaErrorMemoryAllocation) g_broken.store(true);
}

// Devices the pipeline uses: BLASOFFLOAD_DEVICES, else all visible ones (the process's own GPU first), else only
// the GPU chosen for this process (BLASOFFLOAD_DEVICE or an MPI local rank: ranks must not share every GPU).
int pipeline_devices(int* out, int cap) {
  const char* v = g_host && g_host->config ? g_host->config("BLASOFFLOAD_DEVICES") : nullptr;
  int n = 0;
  if (v && *v) {
    const char* q = v;
    while (*q && n < cap) {
      char* end = nullptr;
      const long d = std::strtol(q, &end, 10);
      if (end == q || d < 0 || d >= g_device_count) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true))
          logf(0, "BLASOFFLOAD_DEVICES=%s: not a list of device indices below %d; using GPU %d only", v, g_device_count,
               g_device);
        out[0] = g_device;
        return 1;
      }
      bool dup = false;
      for (int i = 0; i < n; ++i) dup |= out[i] == int(d);
      if (!dup) out[n++] = int(d);
      q = *end == ',' ? end + 1 : end;
      if (*end && *end != ',') break;
    }
    return n > 0 ? n : (out[0] = g_device, 1);
  }
  out[n++] = g_device;
  if (!g_device_chosen)
    for (int d = 0; d < g_device_count && n < cap; ++d)
      if (d != g_device) out[n++] = d;
  return n;
}

// Whether a host-operand sgemm goes through the tiled pipeline (BLASOFFLOAD_PIPELINE=auto|always|off).
enum class PipelineUse { kNo, kYes, kIfDirectFails };
PipelineUse pipeline_use(double host_bytes, double cpu_share) {
  const char* v = g_host && g_host->config ? g_host->config("BLASOFFLOAD_PIPELINE") : nullptr;
  if (v && std::strcmp(v, "off") == 0) return PipelineUse::kNo;
  if (v && std::strcmp(v, "always") == 0) return PipelineUse::kYes;
  if (cpu_share > 0) return PipelineUse::kYes;
  const long min_mb = env_long(g_host && g_host->config ? g_host->config("BLASOFFLOAD_PIPELINE_MIN_MB") : nullptr, 32);
  if (host_bytes >= double(min_mb) * 1048576.0) return PipelineUse::kYes;
  return PipelineUse::kIfDirectFails;
}

// sgemm_direct's answer when asked to use device copies and too little of the call is resident.
constexpr int kNotResident = -1;
// What a call with device copies may still stage whole (the tiled pipeline's threshold, BLASOFFLOAD_PIPELINE_MIN_MB).
constexpr double kResidentStagedMax = 32.0 * 1048576.0;
int sgemm_direct(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc, bool resident_only, uint64_t use);

int sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc, double cpu_share) {
  if (int g = gate()) return g;
  t_last_sgemm = bo_sgemm_stats{};
  const bool need_ab = alpha != 0.0f && k != 0;
  const bool any_device = (need_ab && (on_device(a) || on_device(b))) || on_device(c);
  PipelineUse use = PipelineUse::kNo;
  int devs[16];
  int ndev = 0;
  if (!any_device) {
    const double bytes = 4.0 * (double(m) * double(n) * (beta != 0.0f ? 2 : 1) +
                                (need_ab ? double(m) * double(k) + double(k) * double(n) : 0.0));
    ndev = pipeline_devices(devs, 16);
    use = need_ab ? pipeline_use(bytes, cpu_share) : PipelineUse::kNo;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t res_use = bom::resident_call_use();
  if (!any_device && need_ab && cpu_share == 0) {
    // Operands with device copies (residency.h) move nothing: the call runs on them when what is left fits the direct
    // path.
    const int st = sgemm_direct(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, true, res_use);
    if (st != kNotResident) {
      t_last_sgemm.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return st;
    }
  }
  auto pipelined = [&](double share) {
    bom::EngineHost eh{g_host, devs, ndev, engine_error, engine_log};
    bom::GemmCall call{ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, share};
    const int st = bom::pipeline_sgemm(eh, call, &t_last_sgemm);
    // The engine may have written C by DMA, which no write record sees: device copies of it are out of date.
    if (st == BO_CUDA_OK)
      if (bom::Residency* rc = bom::resident_copies(g_host, g_device)) rc->host_written({c, m, n, ldc});
    return st;
  };
  if (use == PipelineUse::kYes) return pipelined(cpu_share);
  int st = sgemm_direct(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, false, res_use);
  // Too large for whole operands on the device: out-of-core tiles.
  if (st == BO_CUDA_OUT_OF_MEMORY && use == PipelineUse::kIfDirectFails) return pipelined(0.0);
  t_last_sgemm.devices = st == BO_CUDA_OK ? 1 : 0;
  t_last_sgemm.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

// resident_only: run only when some operand has a device copy and the rest is small enough to stage whole (else
// kNotResident, nothing written).
int sgemm_direct(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc, bool resident_only, uint64_t use) {
  CallScope cs("sgemm");
  Slot& s = cs.slot();
  const bool need_ab = alpha != 0.0f && k != 0;
  const int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
  const int64_t br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
  const bool da = need_ab && on_device(a), db = need_ab && on_device(b), dc = on_device(c);
  cs.set_device_operands(da || db || dc);
  ResidentHolds res(use);
  const float* ra = need_ab && !da ? res.get(0, a, ar, ac, lda, false, s.stream) : nullptr;
  const float* rb = need_ab && !db ? res.get(1, b, br, bc, ldb, false, s.stream) : nullptr;
  float* rc = !dc ? res.get(2, c, m, n, ldc, true, s.stream) : nullptr;
  const size_t fa = need_ab && !da && !ra ? size_t(ar) * size_t(ac) : 0;
  const size_t fb = need_ab && !db && !rb ? size_t(br) * size_t(bc) : 0;
  const size_t fc = !dc && !rc ? size_t(m) * size_t(n) : 0;
  if (resident_only && (!(ra || rb || rc) || 4.0 * double(fa + fb + fc) >= kResidentStagedMax)) return kNotResident;
  // A C with a device copy is computed in it and copied back through the staging buffer.
  const size_t fc_back = rc ? size_t(m) * size_t(n) : 0;
  // The configuration is chosen for the operands the kernel will see: staged ones are 256-byte aligned with
  // leading dimension = rows (vector fast paths depend on both).
  bo_kernel_args args{ta, tb, 0, m, n, k, alpha, beta, ra ? ra : a, lda, rb ? rb : b, ldb, rc ? rc : c, ldc, 0, 0};
  as_staged(fa, &args.a, &args.lda, ar);
  as_staged(fb, &args.b, &args.ldb, br);
  as_staged(fc, &args.c, &args.ldc, m);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(BO_K_SGEMM, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  const size_t dev_bytes = align256(4 * fa) + align256(4 * fb) + align256(4 * fc) + align256(ws);
  const size_t pin_bytes = align256(4 * fa) + align256(4 * fb) + align256(4 * (fc + fc_back));
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  cudaError_t e = cudaSuccess;
  float *pa = pv.take<float>(4 * fa), *pb = pv.take<float>(4 * fb), *pc = pv.take<float>(4 * (fc + fc_back));
  float *ga = dv.take<float>(4 * fa), *gb = dv.take<float>(4 * fb), *gc = dv.take<float>(4 * fc);
  void* gws = dv.take<char>(ws);
  if (fa) {
    upload_matrix(e, pa, ga, a, ar, ac, lda, s.stream);
    args.a = ga;
  }
  if (fb) {
    upload_matrix(e, pb, gb, b, br, bc, ldb, s.stream);
    args.b = gb;
  }
  if (fc) {
    if (beta != 0.0f) {  // beta == 0: C is never read
      upload_matrix(e, pc, gc, c, m, n, ldc, s.stream);
    }
    args.c = gc;
  }
  if (!e) e = cudaError_t(ke.launch(&args, gws, s.stream));
  if (!e && fc) e = cudaMemcpyAsync(pc, gc, 4 * fc, cudaMemcpyDeviceToHost, s.stream);
  if (!e && rc)
    e = cudaMemcpy2DAsync(pc, 4 * size_t(m), rc, 4 * size_t(ldc), 4 * size_t(m), size_t(n), cudaMemcpyDeviceToHost,
                          s.stream);
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  if (fc || rc) unpack_matrix(c, pc, m, n, ldc);
  if (rc)
    res.cache->wrote_back(res.l[2], {c, m, n, ldc}, false);
  else if (fc)
    res.written(c, m, n, ldc);
  if (ra || rb || rc)
    logf(BO_LOG_DEBUG,
         "sgemm %c%c m=%lld n=%lld k=%lld: device copies of%s%s%s (%.3f ms for their scans and uploads), "
         "%.1f MiB staged",
         ta, tb, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), ra ? " A" : "",
         rb ? " B" : "", rc ? " C" : "", res.acquire_ms, 4.0 * double(fa + fb + fc) / 1048576.0);
  t_last_sgemm.tiles = 1;
  t_last_sgemm.tile_m = m;
  t_last_sgemm.tile_n = n;
  t_last_sgemm.k_passes = 1;
  t_last_sgemm.bytes_h2d = 4.0 * double(fa + fb + (beta != 0.0f ? fc : 0));
  t_last_sgemm.bytes_d2h = 4.0 * double(fc + fc_back);
  return BO_CUDA_OK;
}

int sgemv(char trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x, int64_t incx,
          float beta, float* y, int64_t incy) {
  if (int g = gate()) return g;
  CallScope cs("sgemv");
  Slot& s = cs.slot();
  const int64_t lenx = trans == 'N' ? n : m, leny = trans == 'N' ? m : n;
  const bool need_ax = alpha != 0.0f;
  const bool da = need_ax && on_device(a), dx = need_ax && on_device(x), dy = on_device(y);
  cs.set_device_operands(da || dx || dy);
  ResidentHolds res;
  const float* ra = need_ax && !da ? res.get(0, a, m, n, lda, false, s.stream) : nullptr;
  const size_t fa = need_ax && !da && !ra ? size_t(m) * size_t(n) : 0;
  const size_t fx = need_ax && !dx ? size_t(lenx) : 0;
  const size_t fy = !dy ? size_t(leny) : 0;
  bo_kernel_args args{trans, 0, 0, m, n, 0, alpha, beta, ra ? ra : a, lda, x, 0, y, 0, incx, incy};
  as_staged(fa, &args.a, &args.lda, m);
  as_staged(fx, &args.b, &args.incx, 1);
  as_staged(fy, &args.c, &args.incy, 1);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(BO_K_SGEMV, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  const size_t dev_bytes = align256(4 * fa) + align256(4 * fx) + align256(4 * fy) + align256(ws);
  const size_t pin_bytes = align256(4 * fa) + align256(4 * fx) + align256(4 * fy);
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  cudaError_t e = cudaSuccess;
  float *pa = pv.take<float>(4 * fa), *px = pv.take<float>(4 * fx), *py = pv.take<float>(4 * fy);
  float *ga = dv.take<float>(4 * fa), *gx = dv.take<float>(4 * fx), *gy = dv.take<float>(4 * fy);
  void* gws = dv.take<char>(ws);
  if (fa) {
    upload_matrix(e, pa, ga, a, m, n, lda, s.stream);
    args.a = ga;
  }
  if (fx) {
    upload_vector(e, px, gx, x, lenx, incx, s.stream);
    args.b = gx;
  }
  if (fy) {
    if (beta != 0.0f) {  // beta == 0: y is never read
      upload_vector(e, py, gy, y, leny, incy, s.stream);
    }
    args.c = gy;
  }
  if (!e) e = cudaError_t(ke.launch(&args, gws, s.stream));
  if (!e && fy) e = cudaMemcpyAsync(py, gy, 4 * fy, cudaMemcpyDeviceToHost, s.stream);
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  if (fy) {
    unpack_vector(y, py, leny, incy);
    res.written(y, 1, leny, std::abs(incy));
  }
  return BO_CUDA_OK;
}

int strsv(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda, float* x, int64_t incx) {
  if (int g = gate()) return g;
  CallScope cs("strsv");
  Slot& s = cs.slot();
  const bool da = on_device(a), dx = on_device(x);
  cs.set_device_operands(da || dx);
  ResidentHolds res;
  const float* ra = !da ? res.get(0, a, n, n, lda, false, s.stream) : nullptr;
  const size_t fa = !da && !ra ? size_t(n) * size_t(n) : 0;
  const size_t fx = !dx ? size_t(n) : 0;
  bo_kernel_args args{uplo, trans, diag, 0, n, 0, 0.0f, 0.0f, ra ? ra : a, lda, nullptr, 0, x, 0, incx, 0};
  as_staged(fa, &args.a, &args.lda, n);
  as_staged(fx, &args.c, &args.incx, 1);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(BO_K_STRSV, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  const size_t dev_bytes = align256(4 * fa) + align256(4 * fx) + align256(ws);
  const size_t pin_bytes = align256(4 * fa) + align256(4 * fx);
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  cudaError_t e = cudaSuccess;
  float *pa = pv.take<float>(4 * fa), *px = pv.take<float>(4 * fx);
  float *ga = dv.take<float>(4 * fa), *gx = dv.take<float>(4 * fx);
  void* gws = dv.take<char>(ws);
  if (fa) {
    upload_triangle(e, pa, ga, a, n, lda, uplo == 'L', s.stream);
    args.a = ga;
  }
  if (fx) {
    upload_vector(e, px, gx, x, n, incx, s.stream);
    args.c = gx;
  }
  if (!e) e = cudaError_t(ke.launch(&args, gws, s.stream));
  if (!e && fx) e = cudaMemcpyAsync(px, gx, 4 * fx, cudaMemcpyDeviceToHost, s.stream);
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  if (fx) {
    unpack_vector(x, px, n, incx);
    res.written(x, 1, n, std::abs(incx));
  }
  return BO_CUDA_OK;
}

int snrm2(int64_t n, const float* x, int64_t incx, float* result) {
  if (int g = gate()) return g;
  if (n < 1 || incx < 1) return BO_CUDA_UNSUPPORTED;
  CallScope cs("snrm2");
  bom::resident_call_use();
  Slot& s = cs.slot();
  const bool dx = on_device(x);
  cs.set_device_operands(dx);
  const size_t fx = !dx ? size_t(n) : 0;
  bo_kernel_args args{0, 0, 0, 0, n, 0, 0.0f, 0.0f, nullptr, 0, x, 0, nullptr, 0, incx, 0};
  as_staged(fx, &args.b, &args.incx, 1);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(BO_K_SNRM2, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  const size_t dev_bytes = align256(4 * fx) + align256(ws);
  const size_t pin_bytes = align256(4 * fx) + align256(4);
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  cudaError_t e = cudaSuccess;
  float *px = pv.take<float>(4 * fx), *pr = pv.take<float>(4);
  float* gx = dv.take<float>(4 * fx);
  void* gws = dv.take<char>(ws);
  if (fx) {
    upload_vector(e, px, gx, x, n, incx, s.stream);
    args.b = gx;
  }
  args.c = pr;  // mapped pinned memory: the kernel writes the result straight to the host
  if (!e) e = cudaError_t(ke.launch(&args, gws, s.stream));
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  *result = *pr;
  return BO_CUDA_OK;
}

// Left: B := alpha op(A)^-1 B; right: alpha B op(A)^-1. Host A goes up as its triangle, B in and out whole.
int strsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, float alpha, const float* a, int64_t lda,
          float* b, int64_t ldb) {
  if (int g = gate()) return g;
  CallScope cs("strsm");
  Slot& s = cs.slot();
  const int64_t t = side == 'L' ? m : n;
  const bool da = on_device(a), db = on_device(b);
  cs.set_device_operands(da || db);
  ResidentHolds res;
  const float* ra = !da ? res.get(0, a, t, t, lda, false, s.stream) : nullptr;
  const size_t fa = !da && !ra ? size_t(t) * size_t(t) : 0;
  const size_t fb = !db ? size_t(m) * size_t(n) : 0;
  bo_kernel_args args{side, uplo, transa, m, n, 0, alpha, 0.0f, ra ? ra : a, lda, nullptr, 0, b, ldb, 0, 0, diag};
  as_staged(fa, &args.a, &args.lda, t);
  as_staged(fb, &args.c, &args.ldc, m);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(BO_K_STRSM, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  const size_t dev_bytes = align256(4 * fa) + align256(4 * fb) + align256(ws);
  const size_t pin_bytes = align256(4 * fa) + align256(4 * fb);
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  cudaError_t e = cudaSuccess;
  float *pa = pv.take<float>(4 * fa), *pb = pv.take<float>(4 * fb);
  float *ga = dv.take<float>(4 * fa), *gb = dv.take<float>(4 * fb);
  void* gws = dv.take<char>(ws);
  if (fa) {
    upload_triangle(e, pa, ga, a, t, lda, uplo == 'L', s.stream);
    args.a = ga;
  }
  if (fb) {
    upload_matrix(e, pb, gb, b, m, n, ldb, s.stream);
    args.c = gb;
  }
  if (!e) e = cudaError_t(ke.launch(&args, gws, s.stream));
  if (!e && fb) e = cudaMemcpyAsync(pb, gb, 4 * fb, cudaMemcpyDeviceToHost, s.stream);
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  if (fb) {
    unpack_matrix(b, pb, m, n, ldb);
    res.written(b, m, n, ldb);
  }
  logf(BO_LOG_DEBUG, "strsm %c%c%c%c m=%lld n=%lld: %s", side, uplo, transa, diag, static_cast<long long>(m),
       static_cast<long long>(n), ke.name);
  return BO_CUDA_OK;
}

// Only the uplo triangle of C is read (beta != 0) and written back; the staged copy's other half is never copied.
int ssyrk(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, float beta, float* c,
          int64_t ldc) {
  if (int g = gate()) return g;
  CallScope cs("ssyrk");
  Slot& s = cs.slot();
  trans = trans == 'N' ? 'N' : 'T';
  const int64_t ar = trans == 'N' ? n : k, ac = trans == 'N' ? k : n;
  const bool da = on_device(a), dc = on_device(c);
  cs.set_device_operands(da || dc);
  ResidentHolds res;
  const float* ra = !da ? res.get(0, a, ar, ac, lda, false, s.stream) : nullptr;
  const size_t fa = !da && !ra ? size_t(ar) * size_t(ac) : 0;
  const size_t fc = !dc ? size_t(n) * size_t(n) : 0;
  bo_kernel_args args{uplo, trans, 0, 0, n, k, alpha, beta, ra ? ra : a, lda, nullptr, 0, c, ldc, 0, 0, 0};
  as_staged(fa, &args.a, &args.lda, ar);
  as_staged(fc, &args.c, &args.ldc, n);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(BO_K_SSYRK, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  const size_t dev_bytes = align256(4 * fa) + align256(4 * fc) + align256(ws);
  const size_t pin_bytes = align256(4 * fa) + align256(4 * fc);
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  cudaError_t e = cudaSuccess;
  float *pa = pv.take<float>(4 * fa), *pc = pv.take<float>(4 * fc);
  float *ga = dv.take<float>(4 * fa), *gc = dv.take<float>(4 * fc);
  void* gws = dv.take<char>(ws);
  if (fa) {
    upload_matrix(e, pa, ga, a, ar, ac, lda, s.stream);
    args.a = ga;
  }
  if (fc) {
    if (beta != 0.0f) upload_triangle(e, pc, gc, c, n, ldc, uplo == 'L', s.stream);  // beta == 0: C is never read
    args.c = gc;
  }
  if (!e) e = cudaError_t(ke.launch(&args, gws, s.stream));
  if (!e && fc) e = cudaMemcpyAsync(pc, gc, 4 * fc, cudaMemcpyDeviceToHost, s.stream);
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  if (fc) {
    unpack_triangle(c, pc, n, ldc, uplo == 'L');
    res.written(c, n, n, ldc);
  }
  logf(BO_LOG_DEBUG, "ssyrk %c%c n=%lld k=%lld: %s", uplo, trans, static_cast<long long>(n), static_cast<long long>(k),
       ke.name);
  return BO_CUDA_OK;
}

// ---- What the policy asks. ----
double kernel_us(int routine, char op, int64_t m, int64_t n, int64_t k) {
  static const int kK[] = {BO_K_SGEMM, BO_K_SGEMV, BO_K_STRSV, BO_K_SNRM2, BO_K_STRSM, BO_K_SSYRK};
  if (routine < 0 || routine > 5) return -1;
  const double t = bok::tuned_kernel_us(kK[routine], op, m, n, k);
  if (t >= 0) return t;
  // No tuned table: a deliberately slow GPU (a fifth of an H100's bandwidth, a tenth of its FP32 rate), so that
  // untuned guesses err toward the CPU.
  const double dm = double(m), dn = double(n), dk = double(k);
  switch (routine) {
    case BO_CUDA_SGEMM:
      return 10.0 + 2.0 * dm * dn * dk / 5e6;
    case BO_CUDA_SGEMV:
      return 10.0 + 4.0 * dm * dn / 5e5;
    case BO_CUDA_STRSV:
      return 20.0 + 2.0 * dn * dn / 5e5 + dn * 0.05;  // plus a latency-bound chain of blocks
    case BO_CUDA_STRSM: {                             // op = side; t^2 r flops, plus the blocks' sequence of launches
      const double t = op == 'R' ? dn : dm, r = op == 'R' ? dm : dn;
      return 60.0 + t * t * r / 5e6 + t / 64.0 * 8.0;
    }
    case BO_CUDA_SSYRK:
      return 30.0 + dn * dn * dk / 5e6;
    default:
      return 10.0 + 4.0 * dn / 5e5;
  }
}

int is_device_pointer(const void* p) {
  if (!p || gate()) return 0;
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

double seconds_since(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// blasoffload-calibrate's GPU side: DMA rates from and to pinned memory, the staging copy the module makes of
// pageable data (what pack/unpack cost per byte), and a tiny call end to end through the module's own path.
int measure(bo_cuda_rates* out) {
  if (int g = gate()) return g;
  std::memset(out, 0, sizeof *out);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, g_device);
  std::snprintf(out->gpu, sizeof out->gpu, "%s", prop.name);
  const size_t bytes = size_t(256) << 20;
  char *dev = nullptr, *pin = nullptr, *host = nullptr;
  cudaStream_t st = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  int rc = BO_CUDA_OK;
  if (cudaMalloc(&dev, bytes) || cudaHostAlloc(reinterpret_cast<void**>(&pin), bytes, cudaHostAllocPortable) ||
      cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) || cudaEventCreate(&e0) || cudaEventCreate(&e1) ||
      !(host = static_cast<char*>(std::malloc(bytes)))) {
    cudaGetLastError();
    rc = BO_CUDA_OUT_OF_MEMORY;
  }
  auto dma_gbs = [&](cudaMemcpyKind kind) {
    float best_ms = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      cudaEventRecord(e0, st);
      cudaMemcpyAsync(kind == cudaMemcpyHostToDevice ? static_cast<void*>(dev) : static_cast<void*>(pin),
                      kind == cudaMemcpyHostToDevice ? static_cast<void*>(pin) : static_cast<void*>(dev), bytes, kind,
                      st);
      cudaEventRecord(e1, st);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      best_ms = std::min(best_ms, ms);
    }
    return double(bytes) / (best_ms * 1e-3) / 1e9;
  };
  if (rc == BO_CUDA_OK) {
    std::memset(host, 1, bytes);  // fault the pages in: the program's data is resident
    std::memset(pin, 2, bytes);
    out->h2d_gbs = dma_gbs(cudaMemcpyHostToDevice);
    out->d2h_gbs = dma_gbs(cudaMemcpyDeviceToHost);
    // Pageable <-> pinned as pack_matrix / unpack_matrix do it; the slower direction counts for both.
    double best_in = 1e30, best_out = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      pack_matrix(reinterpret_cast<float*>(pin), reinterpret_cast<const float*>(host), int64_t(bytes / 4), 1,
                  int64_t(bytes / 4));
      best_in = std::min(best_in, seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      unpack_matrix(reinterpret_cast<float*>(host), reinterpret_cast<const float*>(pin), int64_t(bytes / 4), 1,
                    int64_t(bytes / 4));
      best_out = std::min(best_out, seconds_since(t0));
    }
    out->pageable_gbs = double(bytes) / std::max(best_in, best_out) / 1e9;  // single-threaded, replaced below
    if (cudaGetLastError() != cudaSuccess) rc = BO_CUDA_LAUNCH_FAILED;
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (st) cudaStreamDestroy(st);
  cudaFree(dev);
  cudaFreeHost(pin);
  std::free(host);
  if (rc != BO_CUDA_OK) return rc;
  // Tiny calls through the real path (staging, launch, synchronisation, results back), medians of 201: snrm2 moves
  // one operand in, sgemm with beta != 0 three in and one out; the difference prices each further copy.
  auto median_us = [](auto&& call) {
    std::vector<double> us;
    for (int i = 0; i < 221; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (call()) return -1.0;
      if (i >= 20) us.push_back(seconds_since(t0) * 1e6);
    }
    std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
    return us[us.size() / 2];
  };
  float x[4] = {1, 2, 3, 4}, r = 0, a = 1, b = 2, c = 3;
  const double t_nrm = median_us([&] { return snrm2(4, x, 1, &r); });
  const double t_gemm = median_us([&] { return sgemm('N', 'N', 1, 1, 1, 1.0f, &a, 1, &b, 1, 1.0f, &c, 1, 0.0); });
  if (t_nrm < 0 || t_gemm < 0) return BO_CUDA_LAUNCH_FAILED;
  out->call_overhead_us = t_nrm;
  // What large host operands really move at: the engine's threaded staging overlapped with the DMA.
  {
    int dev = g_device;
    bom::EngineHost eh{g_host, &dev, 1, engine_error, engine_log};
    const double staged = bom::measure_staged_gbs(eh, int64_t(512) << 20);
    if (staged > 0) out->pageable_gbs = staged;
  }
  out->copy_latency_us = std::max(0.0, (t_gemm - t_nrm) / 3);
  return BO_CUDA_OK;
}

int host_pinned(const void* p, int64_t bytes) {
  if (gate()) return 0;
  if (!bom::pinning_enabled(g_host)) return 0;
  return bom::host_range_state(p, bytes);
}

int host_resident(const void* p, int64_t rows, int64_t cols, int64_t ld, int first_of_call, bo_resident_info* out) {
  *out = bo_resident_info{};
  const uint64_t use = bom::resident_query_use(first_of_call != 0);
  // No device-pointer check: the policy asks only about host operands (device operands are decided before), and a
  // device address is no private anonymous mapping to the cache anyway.
  if (gate()) return 0;
  bom::Residency* rc = bom::resident_copies(g_host, g_device);
  if (!rc) return 0;
  out->state = rc->state({p, rows, cols, ld}, use, &out->reuses, &out->upload_bytes);
  // The scan of the write record: ~0.7 ms per GiB of 4 KiB pages (much less on transparent huge pages).
  const double span = 4.0 * double((cols - 1) * ld + rows);
  out->check_us = out->state ? 5.0 + span / (1.5 * 1073741824.0) * 1000.0 : 0.0;
  return 0;
}

int last_sgemm_stats(bo_sgemm_stats* out) {
  *out = t_last_sgemm;
  return 0;
}

void forked_child() { g_forked.store(true); }

// At exit the CUDA runtime may already be tearing down (its own exit handlers can run before the
// core's): touch nothing; the driver releases the context, memory and streams with the process.
void shutdown() {
  g_closing.store(true);
  bom::resident_copies_summary(g_host);
  bom::pins_shutdown();
}

const bo_cuda_module kModule = {BO_CUDA_API_VERSION,
                                g_name,
                                init,
                                sgemm,
                                sgemv,
                                strsv,
                                snrm2,
                                strsm,
                                ssyrk,
                                kernel_us,
                                is_device_pointer,
                                measure,
                                host_pinned,
                                host_resident,
                                last_sgemm_stats,
                                forked_child,
                                shutdown};

}  // namespace

extern "C" __attribute__((visibility("default"))) const bo_cuda_module* blasoffload_cuda_module_v5() {
  return &kModule;
}

extern "C" __attribute__((visibility("default"))) const bo_kernel_registry* blasoffload_cuda_registry_v3() {
  return bok::registry();
}
