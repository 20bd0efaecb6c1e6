// The CUDA module's entry table (offload/cuda_module_api.h): start-up, the generic call (executor.h), what the
// policy asks (kernel time estimates, device pointers, pinned and resident host memory), blasoffload-calibrate's
// measurements and shutdown. Where things live: device.h (device choice, slots, call scope, errors), staging.h
// (element-exact packing), executor.h (the generic call), gemm_pipeline.h (the tiled gemm for large host operands),
// resident_copies.h and residency.h (device copies of unchanged host matrices), host_pins.h (registered host memory).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config/paths.h"
#include "kernels/registry.h"
#include "kernels/tuned_select.h"
#include "kernels/vendor_cublas.h"
#include "kernels/vendor_cusolver.h"
#include "offload/cuda_module_api.h"
#include "offload/module/device.h"
#include "offload/module/executor.h"
#include "offload/module/gemm_pipeline.h"
#include "offload/module/lapack_exec.h"
#include "offload/module/median.h"
#include "offload/module/resident_copies.h"
#include "offload/module/ring_transfer.h"
#include "offload/module/shared_memory.h"
#include "offload/module/solver_model.h"
#include "offload/module/staged_seen.h"
#include "offload/module/staging.h"
#include "offload/module/staging_pool.h"
#include "offload/one_time_cost.h"
#include "routines/all.h"

namespace bok {
const bo_kernel_registry* registry();
void set_strsm_inv_max_cond(const char* value);  // kernels/trsm.cuh
}  // namespace bok

namespace {

char g_name[256] = "blasoffload-cuda 0.4";
int g_cc_major = 0, g_cc_minor = 0;  // the chosen GPU's compute capability (the LAPACK time model)

// Where tuned tables are looked for, in order: the user's (where blasoffload-tune writes by default), next to this
// module (build tree, carried copies), and the installed share directory of either layout (config/paths.h).
std::vector<std::string> tuned_params_dirs() {
  return blasoffload::paths::tuned_params_dirs(
      blasoffload::paths::object_dir(reinterpret_cast<const void*>(&tuned_params_dirs)));
}

// Milliseconds since `t` (steady clock), for the start-up's phases in the log.
double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int init(const bo_cuda_host_services* host) {
  const auto t0 = std::chrono::steady_clock::now();
  bom::set_host(host);
  if (bom::forked()) return BO_CUDA_FORKED_CHILD;
  // Before this module's runtime loads the driver: did the program load it itself?
  if (void* h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY)) {
    dlclose(h);
    bom::set_pinning_default(true);
  }
  // Settings the module's parts read later, from the core's configuration layer (never the environment directly).
  bom::set_staging_threads_setting(bom::config("BLASOFFLOAD_STAGING_THREADS"));
  const long pinned_mb = bom::config_long("BLASOFFLOAD_PINNED_MAX_MB", -1);
  if (pinned_mb > 0) bom::set_pinned_max(size_t(pinned_mb) << 20);
  const char* how = nullptr;
  if (int st = bom::choose_device(&how)) return st;
  const double context_ms = ms_since(t0);
  const int dev = bom::device();
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, dev);
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  std::snprintf(g_name, sizeof g_name, "blasoffload-cuda 0.4 (CUDA %d.%d, GPU %d of %d: %s, sm_%d%d, by %s)", rt / 1000,
                (rt % 1000) / 10, dev, bom::device_count(), prop.name, prop.major, prop.minor, how);
  g_cc_major = prop.major;
  g_cc_minor = prop.minor;
  bok::vendor::set_cublas_setting(bom::config("BLASOFFLOAD_CUBLAS"));
  bok::vendor::set_cusolver_setting(bom::config("BLASOFFLOAD_CUSOLVER"));
  bok::set_strsm_inv_max_cond(bom::config("BLASOFFLOAD_STRSM_INV_MAX_COND"));
  bo::tuning::DeviceInfo info;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.memory_gib = double(prop.totalGlobalMem) / double(1ull << 30);
  const auto t1 = std::chrono::steady_clock::now();
  bok::load_tuned_params(info, bom::config("BLASOFFLOAD_TUNED_PARAMS"), tuned_params_dirs(),
                         [](int level, const char* m) { bom::log_line(level, "%s", m); });
  const double table_ms = ms_since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  // Opening cuBLAS costs a large part of start-up: pay it here, where the policy accounts for it (and where it runs in
  // the background), rather than inside the first call the table gives to cuBLAS.
  // Double-precision routines without tuned keys choose cuBLAS too (registry.cu's built-in choice).
  // Not once the program is exiting: its exit waits for this start-up, and no call may come to need cuBLAS (60-360 ms
  // on the H100 and H200 machines; a first call opens it otherwise).
  if (host->exiting && host->exiting()) {
    bom::log_line(BO_LOG_SUMMARY,
                  "GPU start-up: CUDA and the device %.0f ms, tuned table %.0f ms, cuBLAS left to a "
                  "first call (the program is exiting)",
                  context_ms, table_ms);
    return BO_CUDA_OK;
  }
  bok::vendor::cublas_available();
  // cuSOLVER only when a LAPACK call comes (most BLAS programs never need it); its absence is said once, here.
  bom::log_line(BO_LOG_SUMMARY, "GPU start-up: CUDA and the device %.0f ms, tuned table %.0f ms, cuBLAS %.0f ms",
                context_ms, table_ms, ms_since(t2));
  return BO_CUDA_OK;
}

int call(const bo_call* c, double cpu_share) {
  bo::one_time::reset();
  const int st = bom::call(c, cpu_share);
  bom::resident_call_done();
  return st;
}

int lapack_in_place(const bo_call* c) {
  bo::one_time::reset();
  return c ? bom::lapack_in_place(*c) : int(BO_CUDA_UNSUPPORTED);
}

void stage_candidates() { bom::resident_stage_candidates(); }

// ---- What the policy asks. ----
// The tuned table's estimate, else a deliberately slow GPU (a fifth of an H100's bandwidth, a tenth of its FP32 rate,
// FP64 at half the FP32 rate, a complex multiply-add four real ones, bytes by element size), so that untuned guesses
// err toward the CPU.
double kernel_us(const bo_call* c) {
  if (!c || c->routine < 0 || c->routine >= BO_R_COUNT) return -1;
  if (bo::routines::is_lapack(c->routine)) return bom::solver_kernel_us(*c, g_cc_major, g_cc_minor);
  const double t = bok::tuned_kernel_us(c);
  if (t >= 0) return t;
  const bo_precision prec = bo_routine_precision(c->routine);
  const bool dbl = prec == BO_PREC_D || prec == BO_PREC_Z;
  const double flop_rate = (dbl ? 2.5e6 : 5e6) / (bo_is_complex(prec) ? 4.0 : 1.0);  // multiply-adds of the elements
  const double es = bo_element_size(prec);  // bytes per element, at 5e5 bytes per microsecond
  const double dm = double(c->m), dn = double(c->n), dk = double(c->k);
  switch (bo_routine_kind_of(c->routine)) {
    case BO_KIND_GEMM:
      return 10.0 + 2.0 * dm * dn * dk / flop_rate;
    case BO_KIND_GEMV:
      return 10.0 + es * dm * dn / 5e5;
    case BO_KIND_TRSV:
      return 20.0 + es * dn * dn / 2.0 / 5e5 + dn * 0.05;  // a triangle's bytes, plus a latency-bound chain of blocks
    case BO_KIND_TRSM: {  // op[0] = side; t^2 r flops, plus the blocks' sequence of launches
      const double tt = c->op[0] == 'R' ? dn : dm, r = c->op[0] == 'R' ? dm : dn;
      return 60.0 + tt * tt * r / flop_rate + tt / 64.0 * 8.0;
    }
    case BO_KIND_SYRK:
    case BO_KIND_HERK:
      return 30.0 + dn * dn * dk / flop_rate;
    default:  // nrm2: one pass over the vector
      return 10.0 + es * dn / 5e5;
  }
}

int is_device_pointer(const void* p) {
  if (!p || bom::gate()) return 0;
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

// How measure_link_over times staged copies of pageable memory.
enum class Staged {
  kPipeline,  // the tiled gemm pipeline's threaded staging overlapped with the DMA, both directions at once
  kRing,      // the LAPACK path's ring of pinned pieces (ring_transfer.h), one direction after the other
};

// The link: DMA rates from and to pinned memory over dma_bytes (best of five each way), and what large host operands
// really move at over staged_bytes of pageable memory (bytes in plus bytes out per second; the median of several
// passes, so that no single one decides). kPipeline needs hundreds of MiB and leaves its first passes out: its pinned
// ring grows during a process's first calls (64 MiB measured 5 GB/s on the lent H100 where 512 MiB measured 28;
// measure_staged_gbs says more); kRing runs in the DMA's pinned buffer, cut into four pieces. With pack_too,
// pageable_gbs is first the single-threaded staging copy alone (what pack/unpack cost per byte), kept where the staged
// measurement fails.
int measure_link_over(size_t dma_bytes, int64_t staged_bytes, Staged how, bool pack_too, bo_cuda_rates* out) {
  *out = bo_cuda_rates{};
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, bom::device());
  std::snprintf(out->gpu, sizeof out->gpu, "%s", prop.name);
  const size_t bytes = dma_bytes;
  const size_t host_bytes = how == Staged::kRing ? size_t(staged_bytes) : pack_too ? bytes : 0;
  const size_t dev_bytes = std::max(bytes, how == Staged::kRing ? size_t(staged_bytes) : 0);
  char *dev = nullptr, *pin = nullptr, *host = nullptr;
  cudaStream_t st = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  int rc = BO_CUDA_OK;
  if (cudaMalloc(&dev, dev_bytes) || cudaHostAlloc(reinterpret_cast<void**>(&pin), bytes, cudaHostAllocPortable) ||
      cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) || cudaEventCreate(&e0) || cudaEventCreate(&e1) ||
      (host_bytes && !(host = static_cast<char*>(std::malloc(host_bytes))))) {
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
    std::memset(pin, 2, bytes);
    if (host) std::memset(host, 1, host_bytes);  // fault the pages in: the program's data is resident
    out->h2d_gbs = dma_gbs(cudaMemcpyHostToDevice);
    out->d2h_gbs = dma_gbs(cudaMemcpyDeviceToHost);
    if (pack_too) {  // pageable <-> pinned as the direct path stages a matrix; the slower direction counts for both
      double best_in = 1e30, best_out = 1e30;
      const int64_t floats = int64_t(bytes / 4);
      for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        bom::pack_matrix(pin, host, floats, 1, floats, 4);
        best_in = std::min(best_in, seconds_since(t0));
        t0 = std::chrono::steady_clock::now();
        bom::unpack_matrix(host, pin, floats, 1, floats, 4);
        best_out = std::min(best_out, seconds_since(t0));
      }
      out->pageable_gbs = double(bytes) / std::max(best_in, best_out) / 1e9;
    }
    if (how == Staged::kRing) {  // a square float matrix of staged_bytes, up and down: the median of five each way
      const int64_t n = int64_t(std::sqrt(double(staged_bytes / 4)));
      const bo::routines::Operand o{0, bo::routines::Operand::kMatrix, bo::routines::Operand::kInOut, n, n, n};
      const bom::Ring ring{pin, bytes / bom::kRingSlots, bom::kRingSlots};
      std::vector<double> up, down;
      for (int rep = 0; rep < 5 && rc == BO_CUDA_OK; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        bool written = false;
        if (bom::ring_upload(ring, dev, host, o, 4, st) || cudaStreamSynchronize(st)) rc = BO_CUDA_LAUNCH_FAILED;
        up.push_back(seconds_since(t0));
        t0 = std::chrono::steady_clock::now();
        if (rc == BO_CUDA_OK && bom::ring_download(ring, host, dev, o, 4, st, &written)) rc = BO_CUDA_LAUNCH_FAILED;
        down.push_back(seconds_since(t0));
      }
      if (rc == BO_CUDA_OK) out->pageable_gbs = 2.0 * 4.0 * double(n * n) / (bom::median(up) + bom::median(down)) / 1e9;
    }
    if (cudaGetLastError() != cudaSuccess) rc = BO_CUDA_LAUNCH_FAILED;
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (st) cudaStreamDestroy(st);
  cudaFree(dev);
  cudaFreeHost(pin);
  std::free(host);
  if (rc != BO_CUDA_OK) return rc;
  if (how == Staged::kPipeline) {
    int d = bom::device();
    bom::EngineHost eh{bom::host(), &d, 1, bom::engine_error, bom::log_line};
    const double staged = bom::measure_staged_gbs(eh, staged_bytes);
    if (staged > 0) out->pageable_gbs = staged;
  }
  return out->pageable_gbs > 0 ? BO_CUDA_OK : BO_CUDA_LAUNCH_FAILED;
}

// At start-up without a calibration of this GPU: 32 MiB each way and 64 MiB staged through the LAPACK path's ring, in
// the same 32 MiB of pinned memory (nothing kept after it).
int measure_link(bo_cuda_rates* out) {
  if (int g = bom::gate()) return g;
  return measure_link_over(size_t(32) << 20, int64_t(64) << 20, Staged::kRing, false, out);
}

// blasoffload-calibrate's GPU side: the link over hundreds of MiB, and a tiny call end to end through the module's own
// generic path.
int measure(bo_cuda_rates* out) {
  if (int g = bom::gate()) return g;
  if (int rc = measure_link_over(size_t(256) << 20, int64_t(512) << 20, Staged::kPipeline, true, out)) return rc;
  // Tiny calls through the generic path (staging, launch, synchronisation, results back), medians of 201: snrm2 moves
  // one operand in, sgemm with beta != 0 three in and one out; the difference prices each further copy.
  auto median_us = [](auto&& fn) {
    std::vector<double> us;
    for (int i = 0; i < 221; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (fn()) return -1.0;
      if (i >= 20) us.push_back(seconds_since(t0) * 1e6);
    }
    return bom::median(us);
  };
  float x[4] = {1, 2, 3, 4}, r = 0, a = 1, b = 2, c = 3;
  bo_call nrm2{};
  nrm2.routine = BO_R_SNRM2;
  nrm2.n = 4;
  nrm2.b = x;
  nrm2.incx = 1;
  nrm2.c = &r;
  bo_call gemm{};
  gemm.routine = BO_R_SGEMM;
  gemm.op[0] = gemm.op[1] = 'N';
  gemm.m = gemm.n = gemm.k = 1;
  gemm.alpha = 1.0;
  gemm.beta = 1.0;
  gemm.a = &a;
  gemm.lda = 1;
  gemm.b = &b;
  gemm.ldb = 1;
  gemm.c = &c;
  gemm.ldc = 1;
  const double t_nrm = median_us([&] { return bom::call(&nrm2, 0.0); });
  const double t_gemm = median_us([&] { return bom::call(&gemm, 0.0); });
  if (t_nrm < 0 || t_gemm < 0) return BO_CUDA_LAUNCH_FAILED;
  out->call_overhead_us = t_nrm;
  out->copy_latency_us = std::max(0.0, (t_gemm - t_nrm) / 3);
  return BO_CUDA_OK;
}

// The policy's queries below answer "no" while registrations are being undone rather than wait for the driver (in the
// mix, CPU-routed sgemv n = 1024 and strsv n = 512 took 1.2-2.9x their time while the unpinning ran beside them).
int host_pinned(const void* p, int64_t bytes) {
  if (bom::gate()) return 0;
  if (!bom::pinning_enabled(bom::host()) || bom::pins_unpinning()) return 0;
  return bom::host_range_state(p, bytes);
}

int host_resident(const void* p, int64_t rows, int64_t cols, int64_t ld, int elem_size, int first_of_call,
                  bo_resident_info* out) {
  *out = bo_resident_info{};
  const uint64_t use = bom::resident_query_use(first_of_call != 0);
  // No device-pointer check: the policy asks only about host operands (device operands are decided before), and a
  // device address is no private anonymous mapping to the cache anyway.
  if (bom::gate() || (elem_size != 4 && elem_size != 8 && elem_size != 16) || bom::pins_unpinning()) return 0;
  bom::Residency* rc = bom::resident_copies(bom::host(), bom::device());
  if (!rc) return 0;
  out->state = rc->state({p, rows, cols, ld, elem_size}, use, &out->reuses, &out->upload_bytes);
  // A copy: the scan of the write record, ~0.7 ms per GiB of 4 KiB pages (much less on transparent huge pages).
  // A candidate: making its copy (residency.h).
  if (out->state == 1)
    out->check_us = 5.0 + double(elem_size) * double((cols - 1) * ld + rows) / (1.5 * 1073741824.0) * 1000.0;
  if (out->state == 2) out->check_us = rc->creation_us(out->upload_bytes);
  return 0;
}

int last_gemm_stats(bo_gemm_stats* out) {
  *out = bom::last_gemm_stats();
  return 0;
}

double last_one_time_us() { return bo::one_time::spent_us(); }

double growth_us(double staged_bytes) {
  if (bom::gate() || !(staged_bytes > 0) || staged_bytes > 1e18) return 0;
  return bom::growth_us(size_t(staged_bytes), size_t(staged_bytes));
}

int solver(int open) {
  if (bom::gate()) return -1;
  if (!open && !bok::vendor::cusolver_tried()) return 0;
  return bok::vendor::cusolver_available() ? 1 : -1;
}

void forked_child() { bom::mark_forked(); }

// At exit the CUDA runtime may already be tearing down (its own exit handlers can run before the core's): touch
// nothing; the driver releases the context, memory and streams with the process.
void shutdown() {
  bom::mark_closing();
  bom::resident_copies_summary(bom::host());
  bom::pins_shutdown();
}

const bo_cuda_module kModule = {BO_CUDA_API_VERSION,
                                g_name,
                                init,
                                call,
                                kernel_us,
                                is_device_pointer,
                                measure,
                                measure_link,
                                host_pinned,
                                host_resident,
                                last_gemm_stats,
                                last_one_time_us,
                                growth_us,
                                stage_candidates,
                                bom::staged_gbs_seen,
                                solver,
                                forked_child,
                                shutdown,
                                bom::shared_alloc,
                                bom::shared_open,
                                bom::shared_close,
                                bom::regions_copy,
                                lapack_in_place};

}  // namespace

extern "C" __attribute__((visibility("default"))) const bo_cuda_module* blasoffload_cuda_module_v13() {
  return &kModule;
}

extern "C" __attribute__((visibility("default"))) const bo_kernel_registry* blasoffload_cuda_registry_v5() {
  return bok::registry();
}
