// The module's one generic call (see executor.h).
//
// Contract with the core (offload/cuda_module_api.h): anything but BO_CUDA_OK means no output was touched. Host
// outputs are written back only after every copy and kernel has completed without error, element by element as BLAS
// allows (the operand's extent: rows of each column, a triangle, n strided elements): bytes between rows, the other
// triangle and bytes between strided elements are never written. Device pointers (CUDA-aware programs) are used in
// place; a failure in such a call cannot be handed to the CPU BLAS, so it prints a clear error and aborts (device.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "kernels/launch.h"
#include "kernels/registry.h"
#include "offload/module/call_plan.h"
#include "offload/module/device.h"
#include "offload/module/executor.h"
#include "offload/module/gemm_pipeline.h"
#include "offload/module/lapack_exec.h"
#include "offload/module/level3_mg.h"
#include "offload/module/resident_copies.h"
#include "offload/module/staging.h"
#include "routines/all.h"

namespace bok {
const bo_kernel_registry* registry();
}

namespace bom {
namespace {

thread_local bo_gemm_stats t_last_gemm{};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Inputs a call does not read (gemm's A and B when alpha == 0 or k == 0, gemv's A and x when alpha == 0) are not among
// the descriptor's operands: never detected, staged or looked at; the kernel receives the caller's pointer unread.
// Which operands are staged, served from device copies or used in place: call_plan.h.

// Stands for a staged operand when the configuration is chosen, before the staging buffers exist: they are 256-byte
// aligned, which is all can_implement looks at.
const void* const kStagedAddr = reinterpret_cast<const void*>(uintptr_t(256));

// What a call with device copies may still stage whole (the tiled pipeline's threshold, BLASOFFLOAD_PIPELINE_MIN_MB).
constexpr double kResidentStagedMax = 32.0 * 1048576.0;

// A call's holds on device copies of its host operands (residency.h), released when the call ends (after its stream
// was synchronised or abandoned).
struct ResidentHolds {
  Residency* cache = nullptr;
  Residency::Lease l[3];
  uint64_t use;
  double acquire_ms = 0;  // scans and uploads (queued) of this call
  explicit ResidentHolds(uint64_t use_number)
      : cache(resident_copies(host(), device())), use(use_number ? use_number : resident_call_use()) {}
  ~ResidentHolds() {
    if (cache)
      for (const auto& x : l) cache->release(x);
  }
  ResidentHolds(const ResidentHolds&) = delete;
  ResidentHolds& operator=(const ResidentHolds&) = delete;
  // Operand i's device copy, brought up to date on `st`; nullptr: stage it.
  char* get(int i, const Residency::Operand& o, bool output, cudaStream_t st) {
    if (!cache) return nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    l[i] = cache->acquire(o, output ? Residency::Role::kOutput : Residency::Role::kInput, st, use, resident_may_copy());
    acquire_ms += ms_since(t0);
    return l[i].dev;
  }
  // The call wrote host memory (an output staged back, not through a copy): no copy may keep old pages of it.
  void written(const Residency::Operand& o) {
    if (cache) cache->host_written(o);
  }
};

// Uploads queue on the call's stream; the first failure is kept for the call's error classification.
struct UploadCtx {
  cudaStream_t stream;
  cudaError_t error = cudaSuccess;
};
bool queue_upload(void* ctx, void* dev, size_t dpitch, const void* pinned, size_t spitch, size_t width, size_t height) {
  UploadCtx* u = static_cast<UploadCtx*>(ctx);
  u->error = height == 1
                 ? cudaMemcpyAsync(dev, pinned, width, cudaMemcpyHostToDevice, u->stream)
                 : cudaMemcpy2DAsync(dev, dpitch, pinned, spitch, width, height, cudaMemcpyHostToDevice, u->stream);
  return u->error == cudaSuccess;
}

// ---- gemm's routing: direct, or the tiled pipeline (BLASOFFLOAD_PIPELINE=auto|always|off). ----
enum class PipelineUse { kNo, kYes, kIfDirectFails };
PipelineUse pipeline_use(double host_bytes, double cpu_share) {
  const char* v = config("BLASOFFLOAD_PIPELINE");
  if (v && std::strcmp(v, "off") == 0) return PipelineUse::kNo;
  if (v && std::strcmp(v, "always") == 0) return PipelineUse::kYes;
  if (cpu_share > 0) return PipelineUse::kYes;
  const long min_mb = config_long("BLASOFFLOAD_PIPELINE_MIN_MB", 32);
  if (host_bytes >= double(min_mb) * 1048576.0) return PipelineUse::kYes;
  return PipelineUse::kIfDirectFails;
}

void direct_stats(const ExecReport& r, int64_t m, int64_t n) {
  t_last_gemm.tiles = 1;
  t_last_gemm.tile_m = m;
  t_last_gemm.tile_n = n;
  t_last_gemm.k_passes = 1;
  t_last_gemm.bytes_h2d = r.bytes_h2d;
  t_last_gemm.bytes_d2h = r.bytes_d2h;
}

// The bytes a gemm on host operands moves (the pipeline's threshold applies to them).
double gemm_host_bytes(const bo_call& c, int es, bool need_ab) {
  const double mn = double(c.m) * double(c.n);
  return es * (mn * (bo::routines::beta_is_zero(c) ? 1 : 2) +
               (need_ab ? double(c.m) * double(c.k) + double(c.k) * double(c.n) : 0.0));
}

int gemm(const bo_call& c, double cpu_share) {
  t_last_gemm = bo_gemm_stats{};
  const int es = bo_element_size(bo_routine_precision(c.routine));
  const bool need_ab = !bo::routines::alpha_is_zero(c) && c.k != 0;
  const bool any_device = (need_ab && (on_device(c.a) || on_device(c.b))) || on_device(c.c);
  PipelineUse use = PipelineUse::kNo;
  int devs[16];
  int ndev = 0;
  if (!any_device) {
    ndev = pipeline_lanes(devs, 16);
    use = need_ab ? pipeline_use(gemm_host_bytes(c, es, need_ab), cpu_share) : PipelineUse::kNo;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t res_use = resident_call_use();
  ExecReport rep;
  if (!any_device && need_ab && cpu_share == 0) {
    // Operands with device copies (residency.h) move nothing: the call runs on them when what is left fits the direct
    // path.
    const int st = execute(c, ExecOptions{true, res_use}, &rep);
    if (st != kNotResident) {
      if (st == BO_CUDA_OK) direct_stats(rep, c.m, c.n);
      t_last_gemm.wall_ms = ms_since(t0);
      return st;
    }
  }
  auto pipelined = [&](double share) {
    EngineHost eh{host(), devs, ndev, engine_error, log_line};
    GemmCall g{c, share};
    const int st = pipeline_gemm(eh, g, &t_last_gemm);
    // The engine may have written C by DMA, which no write record sees: device copies of it are out of date.
    if (st == BO_CUDA_OK)
      if (Residency* rc = resident_copies(host(), device())) rc->host_written({c.c, c.m, c.n, c.ldc, es});
    return st;
  };
  if (use == PipelineUse::kYes) return pipelined(cpu_share);
  const int st = execute(c, ExecOptions{false, res_use}, &rep);
  // Too large for whole operands on the device: out-of-core tiles.
  if (st == BO_CUDA_OUT_OF_MEMORY && use == PipelineUse::kIfDirectFails) return pipelined(0.0);
  if (st == BO_CUDA_OK) direct_stats(rep, c.m, c.n);
  t_last_gemm.devices = st == BO_CUDA_OK ? 1 : 0;
  t_last_gemm.wall_ms = ms_since(t0);
  return st;
}

}  // namespace

const bo_gemm_stats& last_gemm_stats() { return t_last_gemm; }

int call(const bo_call* c, double cpu_share) {
  if (int g = gate()) return g;
  if (!c || c->routine < 0 || c->routine >= BO_R_COUNT) return BO_CUDA_UNSUPPORTED;
  if (bo_routine_kind_of(c->routine) == BO_KIND_GEMM) return gemm(*c, cpu_share);
  if (bo::routines::is_lapack(c->routine)) return lapack_call(*c);
  // A large trsm or syrk over several GPUs, or too large for whole-operand staging (level3_mg.h).
  if (int r = level3_mg_call(*c); r != BO_CUDA_UNSUPPORTED) return r;
  ExecReport rep;
  return execute(*c, ExecOptions{}, &rep);
}

int execute(const bo_call& c, const ExecOptions& opt, ExecReport* report) {
  const char* name = bo_routine_name(c.routine);
  CallScope cs(name);
  Slot& s = cs.slot();
  CallPlan plan = plan_call(c, on_device);
  const int es = plan.es;
  Piece* pc = plan.p;
  cs.set_device_operands(plan.any_device);
  ResidentHolds res(opt.use);
  bool any_resident = false;
  for (int i = 0; i < plan.n; ++i) {
    if (!resident_eligible(plan, i)) continue;
    pc[i].resident = res.get(i, resident_view(pc[i].host, pc[i].o, es), pc[i].o.access != Operand::kIn, s.stream);
    any_resident |= pc[i].resident != nullptr;
  }
  const double staged_bytes = settle(&plan);
  if (opt.resident_only && (!any_resident || staged_bytes >= kResidentStagedMax)) return kNotResident;
  // The configuration is chosen for the operands the kernel will see: staged ones 256-byte aligned with leading
  // dimension = rows, or contiguous (vector fast paths depend on both); device copies keep the host layout.
  const void* const placeholders[3] = {kStagedAddr, kStagedAddr, kStagedAddr};
  bo_call args = kernel_call(plan, placeholders, nullptr);
  const bo_kernel_registry* reg = bok::registry();
  const int idx = reg->select(c.routine, &args);
  if (idx < 0) return BO_CUDA_UNSUPPORTED;
  const bo_kernel_entry& ke = reg->entries[idx];
  const size_t ws = ke.workspace_bytes(&args);
  // A scalar result is the routine's (scnrm2's is real: half an element).
  const size_t result_size = plan.scalar_out ? size_t(bo::routines::result_bytes(c)) : 0;
  size_t dev_bytes = align256(ws), pin_bytes = align256(result_size);
  for (int i = 0; i < plan.n; ++i) {
    dev_bytes += align256(size_t(es) * pc[i].staged);
    pin_bytes += align256(size_t(es) * (pc[i].staged + pc[i].back));
  }
  if (cudaError_t e = reserve(s, dev_bytes, pin_bytes)) return cs.fail(e);
  cs.sync_device_operands();
  Carver dv{s.dev}, pv{s.pin};
  for (int i = 0; i < plan.n; ++i) pc[i].pin = pv.take(size_t(es) * (pc[i].staged + pc[i].back));
  char* result = plan.scalar_out ? pv.take(result_size) : nullptr;
  for (int i = 0; i < plan.n; ++i) pc[i].dev = dv.take(size_t(es) * pc[i].staged);
  void* gws = dv.take(ws);
  cudaError_t e = cudaSuccess;
  UploadCtx up{s.stream};
  const UploadQueue q{&up, queue_upload};
  double h2d = 0, d2h = 0;
  for (int i = 0; i < plan.n && !e; ++i) {
    const Piece& p = pc[i];
    if (!p.staged || p.o.access == Operand::kOut) continue;  // kOut (beta == 0): never read
    if (!upload_operand(q, p.pin, p.dev, p.host, p.o, es)) e = up.error;
    h2d += double(es) * double(p.staged);
  }
  // Mapped pinned memory takes a scalar result: the kernel writes it straight to the host.
  const void* const slices[3] = {pc[0].dev, pc[1].dev, pc[2].dev};
  args = kernel_call(plan, slices, result);
  if (!e) e = bok::launch(idx, &args, gws, s.stream);
  for (int i = 0; i < plan.n && !e; ++i) {
    const Piece& p = pc[i];
    if (p.o.access == Operand::kIn) continue;
    if (p.staged) {
      e = cudaMemcpyAsync(p.pin, p.dev, size_t(es) * p.staged, cudaMemcpyDeviceToHost, s.stream);
      d2h += double(es) * double(p.staged);
    } else if (p.back) {
      const size_t row_bytes = size_t(es) * size_t(p.o.rows);
      e = cudaMemcpy2DAsync(p.pin, row_bytes, p.resident, size_t(es) * size_t(p.o.ld), row_bytes,
                            p.back / size_t(p.o.rows), cudaMemcpyDeviceToHost, s.stream);
      d2h += double(es) * double(p.back);
    }
  }
  if (!e) e = cudaStreamSynchronize(s.stream);
  if (e) return cs.fail(e);
  // Everything succeeded: the outputs go to the program's memory, element-exactly.
  for (int i = 0; i < plan.n; ++i) {
    const Piece& p = pc[i];
    if (p.o.access == Operand::kIn || !(p.staged || p.back)) continue;
    void* dst = const_cast<void*>(p.host);
    unpack_operand(dst, p.pin, p.o, es);
    if (p.resident)
      res.cache->wrote_back(res.l[i], resident_view(p.host, p.o, es), false);
    else
      res.written(resident_view(p.host, p.o, es));
  }
  if (plan.scalar_out) std::memcpy(c.c, result, result_size);
  log_line(BO_LOG_DEBUG,
           "%s %.4s m=%lld n=%lld k=%lld: %s%s (%.3f ms for device-copy scans and uploads), %.1f MiB staged", name,
           c.op, static_cast<long long>(c.m), static_cast<long long>(c.n), static_cast<long long>(c.k), ke.name,
           any_resident ? ", device copies" : "", res.acquire_ms, staged_bytes / 1048576.0);
  report->bytes_h2d = h2d;
  report->bytes_d2h = d2h;
  report->kernel = ke.name;
  return BO_CUDA_OK;
}

}  // namespace bom
