// The module's device runtime (see device.h).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <utility>

#include "offload/module/device.h"
#include "offload/module/gpu_share.h"
#include "offload/module/staging_pool.h"
#include "offload/one_time_cost.h"

namespace bom {
namespace {

const bo_cuda_host_services* g_host = nullptr;             // the core's services as given
bo_cuda_host_services g_shared_host{};                     // the same, config() answering shared_config
char g_pipeline_limit[32] = "", g_residency_mem[32] = "";  // a rank's share of its GPU; "" when alone
std::atomic<bool> g_forked{false};
std::atomic<bool> g_broken{false};   // a sticky CUDA error happened: the device is no longer used
std::atomic<bool> g_closing{false};  // shutdown() ran
int g_device = 0;
int g_device_count = 0;
bool g_device_chosen = false;           // BLASOFFLOAD_DEVICE or an MPI local rank picked one GPU for this process
size_t g_pinned_max = size_t(4) << 30;  // per slot; BLASOFFLOAD_PINNED_MAX_MB

constexpr int kMaxSlots = 8;  // bounded: threads beyond this share slots (serialised by the slot lock)
Slot g_slots[kMaxSlots];
std::atomic<unsigned> g_next_slot{0};
thread_local int t_slot = -1;

long parse_long(const char* v, long dflt) {
  if (!v || !*v) return dflt;
  char* end = nullptr;
  const long r = std::strtol(v, &end, 10);
  return (end && *end == '\0') ? r : dflt;
}

[[noreturn]] void device_call_failed(const char* routine, cudaError_t e) {
  fatal_gpu_failure(routine, "on device-resident operands failed on the GPU", "the call cannot be completed on the CPU",
                    e);
}

// The core's settings, except that a rank sharing its GPU with others of its node gets its share of the device memory
// where the user set no limit: every rank's default (90% of the GPU for the pipeline, half for resident copies) would
// ask, together, for several times what the GPU has, and the later ranks' allocations would fail or evict.
const char* shared_config(const char* key) {
  const char* v = g_host && g_host->config ? g_host->config(key) : nullptr;
  if (v && *v) return v;
  if (*g_pipeline_limit && std::strcmp(key, "BLASOFFLOAD_DEVICE_MEMORY_LIMIT") == 0) return g_pipeline_limit;
  if (*g_residency_mem && std::strcmp(key, "BLASOFFLOAD_RESIDENCY_MEM") == 0) return g_residency_mem;
  return v;
}

// The launcher's local size beside the local rank variable that chose the GPU (not blasoffload settings: read as the
// environment has them, as choose_device reads the rank). SLURM_NTASKS_PER_NODE is set where --ntasks-per-node was.
long local_size_for(const char* rank_var) {
  const char* size_var = std::strcmp(rank_var, "OMPI_COMM_WORLD_LOCAL_RANK") == 0  ? "OMPI_COMM_WORLD_LOCAL_SIZE"
                         : std::strcmp(rank_var, "MV2_COMM_WORLD_LOCAL_RANK") == 0 ? "MV2_COMM_WORLD_LOCAL_SIZE"
                                                                                   : "SLURM_NTASKS_PER_NODE";
  return parse_long(secure_getenv(size_var), 1);
}

// After the device is chosen by a local rank: how many of this node's ranks share it and the node's cores.
void apply_node_share(const char* rank_var) {
  const NodeShare s = node_share(local_size_for(rank_var), g_device_count, g_device);
  set_node_ranks(s.node_ranks);
  if (s.gpu_ranks <= 1) return;
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return;
  const long long pipeline = shared_pipeline_bytes(int64_t(total_b), s.gpu_ranks);
  const long long resident = shared_residency_bytes(int64_t(total_b), s.gpu_ranks);
  std::snprintf(g_pipeline_limit, sizeof g_pipeline_limit, "%lld", pipeline);
  std::snprintf(g_residency_mem, sizeof g_residency_mem, "%lld", resident);
  log_line(BO_LOG_SUMMARY,
           "GPU %d shared by %d of this node's %d ranks: this one uses at most %.1f GiB for the pipeline and %.1f "
           "GiB for resident copies (unless set), and %ld staging threads",
           g_device, s.gpu_ranks, s.node_ranks, pipeline / 1073741824.0, resident / 1073741824.0,
           staging_threads_for(sysconf(_SC_NPROCESSORS_ONLN), s.node_ranks));
}

}  // namespace

[[noreturn]] void fatal_gpu_failure(const char* routine, const char* what, const char* consequence, cudaError_t e) {
  std::fprintf(stderr, "blasoffload: fatal: %s %s (%s: %s); %s; aborting\n", routine, what, cudaGetErrorName(e),
               cudaGetErrorString(e), consequence);
  std::abort();
}

const bo_cuda_host_services* host() { return g_host ? &g_shared_host : nullptr; }
void set_host(const bo_cuda_host_services* h) {
  g_host = h;
  if (h) {
    g_shared_host = *h;
    g_shared_host.config = &shared_config;
  }
}
const char* config(const char* key) { return shared_config(key); }
long config_long(const char* key, long dflt) { return parse_long(config(key), dflt); }

double config_number(const char* key, double dflt, double min) {
  const char* v = config(key);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return end != v && *end == '\0' && x >= min ? x : dflt;
}

void log_line(int level, const char* fmt, ...) {
  if (!g_host || !g_host->log) return;
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_host->log(level, buf);
}

int gate() {
  if (g_forked.load(std::memory_order_relaxed)) return BO_CUDA_FORKED_CHILD;
  if (g_broken.load(std::memory_order_relaxed) || g_closing.load(std::memory_order_relaxed)) return BO_CUDA_NO_DEVICE;
  return BO_CUDA_OK;
}
void mark_forked() { g_forked.store(true); }
void mark_broken() { g_broken.store(true); }
void mark_closing() { g_closing.store(true); }
bool forked() { return g_forked.load(); }

void engine_error(int e) {
  if (e != cudaErrorMemoryAllocation) g_broken.store(true);
}

int choose_device(const char** how) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    log_line(BO_LOG_DEBUG, "CUDA: %s", err != cudaSuccess ? cudaGetErrorString(err) : "no device");
    return BO_CUDA_NO_DEVICE;
  }
  *how = "default";
  long dev = 0;
  if (const char* cfg = config("BLASOFFLOAD_DEVICE"); cfg && *cfg) {
    dev = parse_long(cfg, -1);
    if (dev < 0 || dev >= count) {
      log_line(0, "BLASOFFLOAD_DEVICE=%s is not a device index below %d; using the GPU is disabled", cfg, count);
      return BO_CUDA_NO_DEVICE;
    }
    *how = "BLASOFFLOAD_DEVICE";
    g_device_chosen = true;
  } else {
    // The launchers' own variables (not blasoffload settings, so not through config(): it would look in the config
    // file too), read as the environment has them (secure_getenv semantics): one GPU per local rank.
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK"}) {
      const long r = parse_long(secure_getenv(var), -1);
      if (r >= 0) {
        dev = r % count;
        *how = var;
        g_device_chosen = true;
        break;
      }
    }
  }
  g_device = int(dev);
  g_device_count = count;
  if ((err = cudaSetDevice(g_device)) != cudaSuccess || (err = cudaFree(nullptr)) != cudaSuccess) {
    log_line(BO_LOG_DEBUG, "CUDA: device %d: %s", g_device, cudaGetErrorString(err));
    return BO_CUDA_NO_DEVICE;
  }
  if (g_device_chosen && std::strcmp(*how, "BLASOFFLOAD_DEVICE") != 0) apply_node_share(*how);
  return BO_CUDA_OK;
}

int device() { return g_device; }
int device_count() { return g_device_count; }
void set_pinned_max(size_t bytes) { g_pinned_max = bytes; }

namespace {
int device_list(int* out, int cap) {
  const char* v = config("BLASOFFLOAD_DEVICES");
  int n = 0;
  if (v && *v) {
    const char* q = v;
    while (*q && n < cap) {
      char* end = nullptr;
      const long d = std::strtol(q, &end, 10);
      if (end == q || d < 0 || d >= g_device_count) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true))
          log_line(0, "BLASOFFLOAD_DEVICES=%s: not a list of device indices below %d; using GPU %d only", v,
                   g_device_count, g_device);
        out[0] = g_device;
        return 1;
      }
      out[n++] = int(d);
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
}  // namespace

int pipeline_lanes(int* out, int cap) { return device_list(out, cap); }

bool peers_reachable(const std::vector<int>& devs) {
  static std::mutex mu;
  static auto* known = new std::map<std::pair<int, int>, bool>();  // never freed: read until exit
  std::lock_guard<std::mutex> g(mu);
  int old = -1;
  cudaGetDevice(&old);
  bool all = true;
  for (int x : devs)
    for (int y : devs) {
      if (x == y) continue;
      auto it = known->find({x, y});
      if (it == known->end()) {
        bo::one_time::Timer one_time;  // once a process, left out of the policy's predictions
        int can = 0;
        bool ok = cudaDeviceCanAccessPeer(&can, x, y) == cudaSuccess && can && cudaSetDevice(x) == cudaSuccess;
        if (ok) {
          const cudaError_t e = cudaDeviceEnablePeerAccess(y, 0);
          ok = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled;
        }
        cudaGetLastError();  // refused or already enabled: neither is the call's error
        it = known->emplace(std::make_pair(x, y), ok).first;
      }
      all = all && it->second;
    }
  if (old >= 0) cudaSetDevice(old);
  return all;
}

bool share_between(const std::vector<int>& devs) {
  const char* v = config("BLASOFFLOAD_TEST_PEER_PANELS");
  return devs.size() > 1 && !(v && std::strcmp(v, "off") == 0) && peers_reachable(devs);
}

cudaError_t copy_between_gpus(char* dst, int dst_dev, int64_t dst_ld, const char* src, int src_dev, int64_t src_ld,
                              int64_t rows, int64_t cols, int es, cudaStream_t st) {
  const size_t width = size_t(es) * size_t(rows);
  if (dst_ld == rows && src_ld == rows) {
    const size_t bytes = width * size_t(cols);
    return dst_dev == src_dev ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st)
                              : cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, st);
  }
  if (dst_dev == src_dev)
    return cudaMemcpy2DAsync(dst, size_t(es) * size_t(dst_ld), src, size_t(es) * size_t(src_ld), width, size_t(cols),
                             cudaMemcpyDeviceToDevice, st);
  cudaMemcpy3DPeerParms p{};
  p.srcPtr = make_cudaPitchedPtr(const_cast<char*>(src), size_t(es) * size_t(src_ld), width, size_t(cols));
  p.srcDevice = src_dev;
  p.dstPtr = make_cudaPitchedPtr(dst, size_t(es) * size_t(dst_ld), width, size_t(cols));
  p.dstDevice = dst_dev;
  p.extent = make_cudaExtent(width, size_t(cols), 1);
  return cudaMemcpy3DPeerAsync(&p, st);
}

namespace {
// Growth prices measured by reserve() (ns a byte; a quarter of the way toward each new measurement), for growth_us.
std::atomic<double> g_pin_ns_per_byte{0.4};
std::atomic<double> g_dev_ns_per_byte{0.01};
void measured(std::atomic<double>& rate, double ns, size_t bytes) {
  if (bytes < (size_t(1) << 20)) return;  // small allocations: the fixed costs, not the rate
  const double r = rate.load(std::memory_order_relaxed);
  rate.store(r + 0.25 * (ns / double(bytes) - r), std::memory_order_relaxed);
}
double ns_since(const timespec& t0) {
  timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return double(t1.tv_sec - t0.tv_sec) * 1e9 + double(t1.tv_nsec - t0.tv_nsec);
}

// A buffer's new size: a quarter over the need, and at least twice the old size, so that a program whose calls grow
// step by step pays a few growths (each a free and an allocation: milliseconds for pinned memory) instead of one per
// step; never more than extra_max over the need.
size_t grown(size_t need, size_t cap, size_t extra_max) {
  return align256(std::max(need + need / 4, std::min(2 * cap, need + extra_max)));
}
// What reserve() allocates for a need beyond the capacity: device memory up to 1 GiB over the need, pinned memory up
// to 256 MiB over it and never past BLASOFFLOAD_PINNED_MAX_MB unless the need itself is (growth_us prices the same).
size_t dev_target(size_t need, size_t cap) { return grown(need, cap, size_t(1) << 30); }
size_t pin_target(size_t need, size_t cap) {
  return std::min(grown(need, cap, size_t(256) << 20), std::max(need, g_pinned_max));
}
}  // namespace

cudaError_t reserve(Slot& s, size_t dev_bytes, size_t pin_bytes) {
  if (s.stream && dev_bytes <= s.dev_cap && pin_bytes <= s.pin_cap) return cudaSuccess;
  bo::one_time::Timer one_time;  // a slot grows once per size reached: not what the call costs from now on
  cudaError_t e = cudaSuccess;
  if (!s.stream && (e = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking)) != cudaSuccess) return e;
  if (dev_bytes > s.dev_cap) {
    const size_t want = dev_target(dev_bytes, s.dev_cap);
    if (s.dev) {
      cudaStreamSynchronize(s.stream);
      cudaFree(s.dev);
      s.dev = nullptr;
      s.dev_cap = 0;
    }
    // The headroom is a bet on later calls: when it does not fit, the need alone may.
    for (size_t size : {want, align256(dev_bytes)}) {
      timespec t0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      if ((e = cudaMalloc(&s.dev, size)) == cudaSuccess) {
        s.dev_cap = size;
        measured(g_dev_ns_per_byte, ns_since(t0), size);
        break;
      }
      cudaGetLastError();  // not sticky
      s.dev = nullptr;
    }
    if (!s.dev) return cudaErrorMemoryAllocation;
  }
  if (pin_bytes > s.pin_cap) {
    if (pin_bytes > g_pinned_max) return cudaErrorMemoryAllocation;
    const size_t want = pin_target(pin_bytes, s.pin_cap);
    if (s.pin) {
      cudaStreamSynchronize(s.stream);
      cudaFreeHost(s.pin);
      s.pin = nullptr;
      s.pin_cap = 0;
    }
    timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((e = cudaHostAlloc(reinterpret_cast<void**>(&s.pin), want, cudaHostAllocPortable | cudaHostAllocMapped)) !=
        cudaSuccess) {
      cudaGetLastError();
      return cudaErrorMemoryAllocation;
    }
    measured(g_pin_ns_per_byte, ns_since(t0), want);
    s.pin_cap = want;
  }
  return cudaSuccess;
}

double growth_us(size_t dev_bytes, size_t pin_bytes) {
  if (pin_bytes > g_pinned_max) return 0;
  size_t dev_cap = 0, pin_cap = 0;
  if (t_slot >= 0) {  // else the thread's first call takes a new slot: nothing allocated yet
    // A thread sharing the slot may hold it for a long call: the policy must not wait on it to decide (and a call
    // sent to the GPU waits for the slot anyway): no estimate then.
    Slot& s = g_slots[t_slot];
    std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    dev_cap = s.dev_cap;
    pin_cap = s.pin_cap;
  }
  double ns = 0;
  if (dev_bytes > dev_cap)
    ns += double(dev_target(dev_bytes, dev_cap)) * g_dev_ns_per_byte.load(std::memory_order_relaxed);
  if (pin_bytes > pin_cap)
    ns += double(pin_target(pin_bytes, pin_cap)) * g_pin_ns_per_byte.load(std::memory_order_relaxed);
  return ns * 1e-3;
}

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

CallScope::CallScope(const char* routine) : routine_(routine) {
  if (t_slot < 0) t_slot = int(g_next_slot.fetch_add(1) % kMaxSlots);
  slot_ = &g_slots[t_slot];
  lock_ = std::unique_lock<std::mutex>(slot_->mu);
  if (cudaGetDevice(&old_device_) != cudaSuccess) old_device_ = -1;
  if (old_device_ != g_device) cudaSetDevice(g_device);
}

CallScope::~CallScope() {
  if (old_device_ >= 0 && old_device_ != g_device) cudaSetDevice(old_device_);
}

void CallScope::sync_device_operands() {
  if (!any_device_) return;
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) device_call_failed(routine_, e);
}

int CallScope::fail(cudaError_t e) {
  if (any_device_) device_call_failed(routine_, e);
  if (e == cudaErrorMemoryAllocation) {
    log_line(BO_LOG_DEBUG, "%s: out of device or pinned memory", routine_);
    return BO_CUDA_OUT_OF_MEMORY;
  }
  // Treat every other error as possibly sticky: stop using the device in this process.
  g_broken.store(true);
  log_line(BO_LOG_DEBUG, "%s: CUDA error %s (%s)", routine_, cudaGetErrorName(e), cudaGetErrorString(e));
  return BO_CUDA_LAUNCH_FAILED;
}

}  // namespace bom
