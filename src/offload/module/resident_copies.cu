// The residency cache's device side (see resident_copies.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "offload/module/gemm_pipeline.h"
#include "offload/module/resident_copies.h"
#include "offload/module/staging_pool.h"
#include "offload/module/tile_plan.h"
#include "offload/one_time_cost.h"

namespace bom {
namespace {

constexpr size_t kBounce = size_t(32) << 20;  // per half of the double-buffered bounce buffer

struct DeviceSide {
  int device = 0;
  char* bounce[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
};

void* dev_alloc(void*, size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // out of memory is not sticky
    return nullptr;
  }
  return p;
}

void dev_release(void*, void* p, size_t) {
  if (cudaFree(p) != cudaSuccess) cudaGetLastError();
}

// Pages go through the bounce buffer: host stores into one half (threaded) while the other half's DMA runs.
bool dev_upload(void* ctx, void* stream, const CopyRun* runs, int n) {
  DeviceSide* d = static_cast<DeviceSide*>(ctx);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (!d->bounce[0]) {
    bo::one_time::Timer once;  // pinning 64 MiB: once per process, not what a copy costs
    for (int i = 0; i < 2; ++i) {
      if (cudaHostAlloc(reinterpret_cast<void**>(&d->bounce[i]), kBounce, cudaHostAllocPortable) != cudaSuccess ||
          cudaEventCreateWithFlags(&d->done[i], cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();
        return false;
      }
    }
  }
  int half = 0;
  size_t used = 0;
  if (cudaEventSynchronize(d->done[half]) != cudaSuccess) return false;
  for (int r = 0; r < n; ++r) {
    for (size_t off = 0; off < runs[r].bytes;) {
      if (used == kBounce) {  // this half is full: its copies are queued; switch
        if (cudaEventRecord(d->done[half], st) != cudaSuccess) return false;
        half ^= 1;
        used = 0;
        if (cudaEventSynchronize(d->done[half]) != cudaSuccess) return false;
      }
      const size_t len = std::min(runs[r].bytes - off, kBounce - used);
      char* dst = d->bounce[half] + used;
      const char* src = static_cast<const char*>(runs[r].host) + off;
      pack_block(dst, src, int64_t(len), 1, int64_t(len), 1);  // whole pages: a byte copy for any element size
      if (cudaMemcpyAsync(static_cast<char*>(runs[r].dev) + off, dst, len, cudaMemcpyHostToDevice, st) != cudaSuccess)
        return false;
      used += len;
      off += len;
    }
  }
  return cudaEventRecord(d->done[half], st) == cudaSuccess;
}

bool dev_pinned_elsewhere(void*, const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  // Registered host memory that is not one of the module's own registrations (host_pins.h): the program's.
  return at.type == cudaMemoryTypeHost && host_range_state(p, 4) != 1;
}

std::mutex g_mu;
Residency* g_cache = nullptr;
DeviceSide g_side;
bool g_decided = false;
std::atomic<uint64_t> g_use{0};
thread_local uint64_t t_use = 0;
thread_local bool t_queried = false;
thread_local bool t_stage = false;  // stage_candidates: this call makes no copy

}  // namespace

Residency* resident_copies(const bo_cuda_host_services* host, int device) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_decided) return g_cache;
  g_decided = true;
  const char* setting = host && host->config ? host->config("BLASOFFLOAD_RESIDENCY") : nullptr;
  auto say = [&](int level, const std::string& m) {
    if (host && host->log) host->log(level, ("residency: " + m).c_str());
  };
  if (setting && *setting && std::strcmp(setting, "auto") && std::strcmp(setting, "on") && std::strcmp(setting, "off"))
    say(BO_LOG_OFF, std::string("BLASOFFLOAD_RESIDENCY=") + setting + " is not one of auto|on|off; using auto");
  const bool forced = setting && std::strcmp(setting, "on") == 0;
  const std::string blocked = residency_blocked(setting);
  if (!blocked.empty() && !(forced && blocked.rfind("BLASOFFLOAD", 0) != 0)) {
    say(BO_LOG_CALLS, "off: " + blocked);
    return nullptr;
  }
  // Asked once, on the cache's device (the policy's first question may come from a thread on another one).
  int cur = -1;
  if (cudaGetDevice(&cur) != cudaSuccess) cur = -1;
  if (cur != device) cudaSetDevice(device);
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  if (cur >= 0 && cur != device) cudaSetDevice(cur);
  int64_t budget = int64_t(total_b / 2);
  if (const char* v = host && host->config ? host->config("BLASOFFLOAD_RESIDENCY_MEM") : nullptr) {
    const int64_t b = parse_bytes(v);
    if (b >= 0)
      budget = b;
    else
      say(BO_LOG_OFF, std::string("BLASOFFLOAD_RESIDENCY_MEM=") + v + " is not a size (e.g. 8G); using half of " +
                          "the GPU's memory");
  }
  g_side.device = device;
  auto* cache = new Residency(ResidencyOps{&g_side, dev_alloc, dev_release, dev_upload, dev_pinned_elsewhere}, budget);
  std::string why;
  if (budget <= 0 || !cache->available(&why)) {
    say(BO_LOG_CALLS, "off: " + (budget <= 0 ? std::string("BLASOFFLOAD_RESIDENCY_MEM=0") : why));
    delete cache;
    return nullptr;
  }
  char line[160];
  std::snprintf(line, sizeof line, "on, up to %.1f GiB of device copies (BLASOFFLOAD_RESIDENCY_MEM)",
                double(budget) / double(1 << 30));
  say(BO_LOG_CALLS, line);
  g_cache = cache;
  return g_cache;
}

void resident_copies_summary(const bo_cuda_host_services* host) {
  Residency* c = nullptr;
  {
    std::lock_guard<std::mutex> g(g_mu);
    c = g_cache;
  }
  if (!c || !host || !host->log) return;
  const ResidencyStats s = c->stats();
  char line[512];
  std::snprintf(line, sizeof line,
                "residency: %lld hits, %lld copies made, %.1f MiB uploaded (%.1f MiB of it re-uploaded written pages), "
                "%.1f MiB not moved, %lld tracking faults (pages found written), %lld dropped as rewritten, %lld "
                "by unmap/remap/discard, %lld evicted, %lld back-offs, %lld scans in %.1f ms",
                static_cast<long long>(s.hits), static_cast<long long>(s.created), double(s.uploaded_bytes) / 1048576.0,
                double(s.reuploaded_bytes) / 1048576.0, double(s.saved_bytes) / 1048576.0,
                static_cast<long long>(s.written_pages), static_cast<long long>(s.dropped_rewritten),
                static_cast<long long>(s.dropped_changed), static_cast<long long>(s.evicted),
                static_cast<long long>(s.backoffs), static_cast<long long>(s.scans), s.scan_ms);
  host->log(BO_LOG_SUMMARY, line);
}

uint64_t resident_query_use(bool first_of_call) {
  if (first_of_call || !t_queried) {
    t_use = g_use.fetch_add(1) + 1;
    t_stage = false;  // a new call: what the last one was told does not carry over
  }
  t_queried = true;
  return t_use;
}

uint64_t resident_call_use() {
  if (!t_queried) t_use = g_use.fetch_add(1) + 1;
  t_queried = false;
  return t_use;
}

void resident_stage_candidates() { t_stage = true; }
bool resident_may_copy() { return !t_stage; }
void resident_call_done() { t_stage = false; }

}  // namespace bom
