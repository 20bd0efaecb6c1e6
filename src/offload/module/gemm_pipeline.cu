// The tiled gemm engine (either precision: the element size is a parameter, the kernels come from the registry by
// routine) for host operands (see gemm_pipeline.h and tile_plan.h for the schedule).
//
// This file: the call's orchestration (hybrid CPU share, the plan within every device's memory budget, registrations of
// the operands, K passes, CPU repair of tiles a failing GPU did not write back, statistics). The per-device part
// (gemm_tiles.h): three streams (host->device, kernels, device->host), an arena holding the A panels, the B panels
// and the C tiles of the plan, and a ring of pinned chunks. The driver thread of a device packs operand pieces
// into the ring with the staging threads and queues their DMA; kernels wait on events for their panels; results
// come back into ring chunks and are unpacked into C when the chunk is needed again or the call ends, so host
// copies, both DMA directions and kernels of different tiles overlap. On several devices a staged panel that more
// than one needs is staged by one of them and copied by the others from its memory (panel_share.h). A tile is written
// to C whole, only after its copy back succeeded: a failure leaves every tile either complete or untouched, and the
// untouched ones are computed on the CPU.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/registry.h"
#include "offload/module/device.h"
#include "offload/module/gemm_pipeline.h"
#include "offload/module/gemm_tiles.h"
#include "offload/module/host_pins.h"
#include "offload/module/median.h"
#include "offload/module/panel_share.h"
#include "offload/module/staging_pool.h"
#include "offload/module/tile_plan.h"
#include "offload/one_time_cost.h"

namespace bok {
const bo_kernel_registry* registry();
}

namespace bom {
using namespace tiles;  // the per-device part: Device, Shared, Driver (gemm_tiles.h)
namespace {

// ---- Registrations of the program's memory (host_pins.h). ----
bool cuda_pin(void* base, size_t len) {
  bo::one_time::Timer one_time;  // once per mapping (host_pins.h), left out of the policy's predictions
  if (cudaHostRegister(base, len, cudaHostRegisterPortable) == cudaSuccess) return true;
  cudaGetLastError();  // not sticky: e.g. already registered by the program, or the locked-memory limit
  return false;
}
void cuda_unpin(void* base, size_t) {
  cudaHostUnregister(base);
  cudaGetLastError();
}
bool cuda_pinned_elsewhere(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return at.type == cudaMemoryTypeHost;
}
// The unpinning thread's work beside the program: the core's host service, where it has one.
void unpin_busy(int delta) {
  if (const bo_cuda_host_services* h = host(); h && h->want_core) h->want_core(delta);
}
// Rent or buy (host_pins.h), BLASOFFLOAD_PIN_AFTER and BLASOFFLOAD_PIN_AFTER_MIN: applied when the registrations are
// made and again at each pipelined call (as BLASOFFLOAD_PIN_HOST is read there), not at the policy's queries. On the
// lent H100 registering costs ~58 ms per GiB and undoing it 60-80, while staging adds ~14 ms per GiB moved (29 against
// 50 GB/s): 8 times the mapping's size. That estimate holds for large mappings (dgemm n = 8192 staged 60 ms a call,
// registered 40), whose undoing is also what slows the program's next calls (the CPU BLAS's threaded ones 1.4-1.8x for
// 60-80 ms per GiB); below 256 MiB the staged path costs far more than the rates' difference (dgemm n = 2048, 32 MiB
// operands: 18-34 ms a call staged with a CPU share, 2.3 registered) and undoing takes under 20 ms, so those are
// registered at their second use.
void apply_pin_after_settings(HostPins& pins) {
  const double after = config_number("BLASOFFLOAD_PIN_AFTER", 8, 0);
  int64_t from = int64_t(256) << 20;
  if (const char* v = config("BLASOFFLOAD_PIN_AFTER_MIN")) {
    const int64_t b = parse_bytes(v);
    if (b >= 0) from = b;
  }
  pins.set_pin_after(after, from);
}
HostPins& host_pins() {
  static HostPins* h = [] {
    int64_t budget = int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE)) / 4;
    if (const char* v = config("BLASOFFLOAD_PIN_MAX")) {
      const int64_t b = parse_bytes(v);
      if (b >= 0) budget = b;
    }
    HostPins* pins = new HostPins(PinOps{cuda_pin, cuda_unpin, cuda_pinned_elsewhere, unpin_busy}, budget);
    apply_pin_after_settings(*pins);  // the policy's queries may come before any pipelined call
    return pins;
  }();
  return *h;
}

// Scratch the kernels of every tile shape need (full, last row, last column, corner).
int64_t workspace_for(const Shared& s) {
  const bo_kernel_registry* reg = bok::registry();
  const Plan& p = s.plan;
  // Stands for the arena's 256-byte aligned slots (all can_implement looks at).
  void* fake = reinterpret_cast<void*>(uintptr_t(256));
  int64_t ws = 0;
  for (int64_t rows : {p.mb, p.tile_rows(p.mt - 1)})
    for (int64_t cols : {p.nb, p.tile_cols(p.nt - 1)})
      for (int64_t kc : {p.kc, p.pass_k(p.passes - 1)}) {
        const bo_call args = tile_call(s.g.c, rows, cols, kc, s.g.c.beta, s.g.c.beta_i, fake, fake, fake);
        const int idx = reg->select(args.routine, &args);
        if (idx >= 0) ws = std::max<int64_t>(ws, int64_t(reg->entries[idx].workspace_bytes(&args)));
      }
  return ws;
}

// C[r0.., c0..] (rows x cols) = alpha op(A) op(B) over K range [k0, k0 + kc) + beta C, on the CPU BLAS.
void cpu_block(const EngineHost& h, const bo_call& g, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int64_t k0,
               int64_t kc, double beta, double beta_i) {
  if (rows <= 0 || cols <= 0 || !h.host->cpu_call) return;
  const int es = bo_element_size(bo_routine_precision(g.routine));
  bo_call t = g;
  t.m = rows;
  t.n = cols;
  t.a = g.op[0] == 'N' ? at(g.a, r0 + k0 * g.lda, es) : at(g.a, k0 + r0 * g.lda, es);
  t.b = g.op[1] == 'N' ? at(g.b, k0 + c0 * g.ldb, es) : at(g.b, c0 + k0 * g.ldb, es);
  t.c = at(g.c, r0 + c0 * g.ldc, es);
  t.beta = beta;
  t.beta_i = beta_i;
  if (kc <= 0) {  // only possible for an empty K range: C = beta C
    t.k = 0;
    t.alpha = t.alpha_i = 0.0;
    t.lda = std::max<int64_t>(1, g.lda);
    t.ldb = std::max<int64_t>(1, g.ldb);
  } else {
    t.k = kc;
  }
  h.host->cpu_call(&t);
}

std::vector<int> ordinals(const std::vector<Device*>& devs) {
  std::vector<int> out;
  for (const Device* d : devs) out.push_back(d->ordinal);
  return out;
}

}  // namespace

int pipeline_gemm(const EngineHost& h, const GemmCall& call, bo_gemm_stats* stats) {
  const auto wall0 = std::chrono::steady_clock::now();
  *stats = bo_gemm_stats{};
  stats->path = 1;
  if (h.device_count < 1) return BO_CUDA_NO_DEVICE;
  const bo_cuda_host_services* hs = h.host;
  // The hybrid split: the CPU takes the trailing columns (rows when C is tall).
  double share = std::min(std::max(call.cpu_share, 0.0), 1.0);
  if (!hs->cpu_call) share = 0;
  const bo_call& c = call.c;
  const int es = bo_element_size(bo_routine_precision(c.routine));
  const char* name = bo_routine_name(c.routine);
  const bool by_cols = c.n >= c.m;
  const int64_t extent = by_cols ? c.n : c.m;
  int64_t cpu_part = int64_t(share * double(extent) + 0.5);
  if (cpu_part > 0 && cpu_part < extent) cpu_part = std::min(extent, (cpu_part + 31) / 32 * 32);  // whole panels
  GemmCall gpu_call = call;
  bo_call& gpu = gpu_call.c;
  if (by_cols) {
    gpu.n = c.n - cpu_part;
    stats->n_cpu_cols = cpu_part;
  } else {
    gpu.m = c.m - cpu_part;
    stats->m_cpu_rows = cpu_part;
  }
  std::function<void()> cpu_task = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    if (by_cols)
      cpu_block(h, c, 0, c.m, gpu.n, cpu_part, 0, c.k, c.beta, c.beta_i);
    else
      cpu_block(h, c, gpu.m, cpu_part, 0, c.n, 0, c.k, c.beta, c.beta_i);
    stats->cpu_part_ms = ms_since(t0);
  };
  if (gpu.m == 0 || gpu.n == 0) {  // everything on the CPU
    cpu_task();
    stats->wall_ms = ms_since(wall0);
    return BO_CUDA_OK;
  }

  Shared s;
  s.t0 = wall0;
  s.h = &h;
  s.g = gpu_call;
  s.es = es;
  s.stats = stats;
  s.fail_after = config_long("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", -1);
  s.steal_depth = int(config_long("BLASOFFLOAD_TEST_STEAL_DEPTH", 2));
  // The ring grows on demand up to 1 GiB a device: with 256 MiB (8 chunks of 32), staged dgemm n = 32768 on two H200s
  // waited 200-220 ms a device for chunks whose copies were in flight (866-874 ms a call), with 1 GiB 61-71 ms
  // (767-826 ms); it holds uploads and finished tiles alike.
  const int64_t ring_bytes = std::max<long>(3, config_long("BLASOFFLOAD_PINNED_MB", 1024)) * kMiB;
  PlanInput in;
  in.m = gpu.m;
  in.n = gpu.n;
  in.k = gpu.k;
  in.reads_c = gpu.beta != 0.0 || gpu.beta_i != 0.0;
  in.elem_size = es;
  in.tile = std::max<long>(1, config_long("BLASOFFLOAD_TILE", 2048));
  in.chunk_bytes = std::max<int64_t>(kMiB, std::min<int64_t>(32 * kMiB, ring_bytes / 4));
  // The benchmarks' A/B of the two orders (tile_plan.h): "columns" keeps the order of A's panels all first.
  if (const char* order = config("BLASOFFLOAD_TEST_PIPELINE_ORDER"))
    in.whole_panels = std::strcmp(order, "columns") != 0;
  // The smallest budget over the devices, so one plan serves all.
  int64_t budget = INT64_MAX;
  const char* limit_s = hs->config ? hs->config("BLASOFFLOAD_DEVICE_MEMORY_LIMIT") : nullptr;
  const int64_t limit = parse_bytes(limit_s);
  if (limit_s && *limit_s && limit < 0) h.log(0, "BLASOFFLOAD_DEVICE_MEMORY_LIMIT=%s is not a size; ignored", limit_s);
  int old_dev = -1;
  cudaGetDevice(&old_dev);
  // The call's devices: a GPU listed twice takes two shares (device.h), which split its memory.
  std::vector<Device*> devs;
  for (int q = 0; q < h.device_count; ++q) {
    int share = 0;
    for (int r = 0; r < q; ++r) share += h.devices[r] == h.devices[q];
    devs.push_back(device(h.devices[q], share));
  }
  auto shares_of = [&](const Device* d) {
    int64_t n = 0;
    for (const Device* x : devs) n += x->ordinal == d->ordinal;
    return n;
  };
  for (Device* d : devs) {
    if (cudaSetDevice(d->ordinal)) {
      cudaGetLastError();
      if (old_dev >= 0) cudaSetDevice(old_dev);
      return BO_CUDA_NO_DEVICE;
    }
    // What was free at the first call plus what the engine held then (every share's arena), less a reserve for cuBLAS
    // and the program's own use; the shares of the GPU not in this call keep theirs, those in it split the rest. Asked
    // once (cudaMemGetInfo costs as much as a small call); again after an allocation failed.
    if (d->free_at_start < 0) {
      size_t free_b = 0, total_b = 0;
      if (cudaMemGetInfo(&free_b, &total_b)) {
        cudaGetLastError();
        if (old_dev >= 0) cudaSetDevice(old_dev);
        return BO_CUDA_NO_DEVICE;
      }
      d->free_at_start = int64_t(free_b) + arenas_held(d->ordinal);
    }
    int64_t others = arenas_held(d->ordinal);
    for (const Device* x : devs)
      if (x->ordinal == d->ordinal) others -= x->arena_cap;
    int64_t avail = (int64_t(double(d->free_at_start - others) * 0.9) - 256 * kMiB) / shares_of(d);
    if (limit > 0) avail = std::min(avail, limit);
    budget = std::min(budget, avail);
  }
  in.budget_bytes = std::max<int64_t>(0, budget);
  // The workspace depends on the tiles, the tiles on the budget left after it: plan, measure, plan again.
  s.plan = make_plan(in);
  int64_t ws = s.plan.ok ? workspace_for(s) : 0;
  if (ws > 0) {
    in.workspace_bytes = ws;
    s.plan = make_plan(in);
    if (s.plan.ok) ws = std::max(ws, workspace_for(s));
  }
  if (!s.plan.ok) {
    h.log(BO_LOG_DEBUG, "%s pipeline: %s (budget %lld MiB)", name, s.plan.why.c_str(), (long long)(budget / kMiB));
    if (old_dev >= 0) cudaSetDevice(old_dev);
    return BO_CUDA_OUT_OF_MEMORY;
  }
  const Plan& p = s.plan;
  const int64_t arena = p.bytes_needed + al256(ws) + 1024;
  // Take every device's lock (in the order of ordinal and share: no deadlock between concurrent calls) and its
  // resources before anything is written, so that a call that cannot start leaves C untouched.
  std::vector<std::unique_lock<std::mutex>> locks;
  std::vector<Device*> order = devs;
  std::sort(order.begin(), order.end(), [](Device* x, Device* y) {
    return x->ordinal != y->ordinal ? x->ordinal < y->ordinal : x->share < y->share;
  });
  for (Device* d : order) locks.emplace_back(d->mu);
  const int n_sync = int(2 * (p.a_slots + p.b_slots + p.c_slots));
  for (Device* d : devs) {
    cudaSetDevice(d->ordinal);
    d->timing_used = 0;
    if (cudaError_t e = prepare(*d, arena, budget, ring_bytes, in.chunk_bytes, n_sync)) {
      d->free_at_start = -1;  // ask again next time: the program may hold more device memory now
      if (old_dev >= 0) cudaSetDevice(old_dev);
      if (e != cudaErrorMemoryAllocation) h.on_cuda_error(e);
      h.log(BO_LOG_DEBUG, "%s pipeline: cannot reserve %lld MiB on GPU %d (%s)", name, (long long)(arena / kMiB),
            d->ordinal, cudaGetErrorName(e));
      return e == cudaErrorMemoryAllocation ? BO_CUDA_OUT_OF_MEMORY : BO_CUDA_LAUNCH_FAILED;
    }
  }
  // Registered host memory moves without staging copies (BLASOFFLOAD_PIN_HOST=off: always staged).
  HostPins::Lease la, lb, lc;
  size_t a_len = 0, b_len = 0;  // the byte ranges of A and B that acquire counted once each
  const bool pinning = !call.stage_only && pinning_enabled(hs);
  if (pinning) {
    // Exactly the bytes the call may touch: a sub-block of a larger array (LAPACK's trailing matrix) ends well before
    // cols * ld. A 2D copy the driver still refuses (it may check the whole last pitch) is staged instead.
    auto span = [es](const void*, int64_t rows, int64_t cols, int64_t ld) {
      return size_t(es) * size_t((cols - 1) * ld + rows);
    };
    HostPins& pins = host_pins();
    const int64_t ar = gpu.op[0] == 'N' ? gpu.m : gpu.k, ac = gpu.op[0] == 'N' ? gpu.k : gpu.m;
    const int64_t br = gpu.op[1] == 'N' ? gpu.k : gpu.n, bc = gpu.op[1] == 'N' ? gpu.n : gpu.k;
    apply_pin_after_settings(pins);
    a_len = span(gpu.a, ar, ac, gpu.lda);
    b_len = span(gpu.b, br, bc, gpu.ldb);
    la = pins.acquire(gpu.a, a_len);
    lb = pins.acquire(gpu.b, b_len);
    lc = pins.acquire(gpu.c, span(gpu.c, gpu.m, gpu.n, gpu.ldc));
    s.a_direct = la.direct;
    s.b_direct = lb.direct;
    s.c_direct = lc.direct;
    stats->pinned_operands = int(la.direct) + int(lb.direct) + int(lc.direct);
  }
  struct Release {
    HostPins::Lease* l[3];
    ~Release() {
      for (auto* x : l)
        if (x->entry >= 0) host_pins().release(*x);
    }
  } release{{&la, &lb, &lc}};
  stats->devices = int(devs.size());
  staging_threads_for_gpus(int(devs.size()));  // their drivers pack at once
  stats->tile_m = p.mb;
  stats->tile_n = p.nb;
  stats->k_passes = p.passes;
  s.written.reset(new std::atomic<uint8_t>[size_t(p.mt * p.nt)]);

  bool gpu_failed = false;
  double stage_sum[kStages] = {0, 0, 0};
  double a_staged = 0, b_staged = 0;  // panel bytes the drivers staged, every GPU and K pass
  for (int64_t pass = 0; pass < p.passes && !gpu_failed; ++pass) {
    s.pass = pass;
    s.beta_pass = pass == 0 ? gpu.beta : 1.0;
    s.beta_pass_i = pass == 0 ? gpu.beta_i : 0.0;
    s.blocks = split_tiles(p, int(devs.size()));
    s.next_item.reset(new std::atomic<int64_t>[s.blocks.size()]);
    for (size_t b = 0; b < s.blocks.size(); ++b) s.next_item[b].store(0);
    // Staged panels that several devices need are staged once (panel_share.h): 2 GPUs staged 32 GiB a dgemm
    // n = 32768 through the threads they share (A twice), one GPU 24.
    s.share.reset();
    s.share_a = s.share_b = false;
    if (p.whole && any_shared_panel(s.blocks) && share_between(ordinals(devs))) {
      s.share_a = !s.a_direct;
      s.share_b = !s.b_direct;
      if (s.share_a || s.share_b) s.share.reset(new PanelShare(preferred_uploaders(p, s.blocks), int(devs.size())));
    }
    for (int64_t t = 0; t < p.mt * p.nt; ++t) s.written[t].store(0);
    std::vector<std::unique_ptr<Driver>> drivers;
    s.drivers.clear();
    std::vector<std::function<void()>> tasks;
    for (Device* d : devs) {
      d->out_used = 0;
      drivers.emplace_back(new Driver(s, *d, int(drivers.size())));
      Driver* dr = drivers.back().get();
      dr->set_workspace(ws);
      tasks.push_back([dr, d, &s] {
        int prev = -1;
        cudaGetDevice(&prev);
        cudaSetDevice(d->ordinal);
        dr->run();
        if (dr->started() && dr->first_kernel() && !dr->error()) {
          float ms = 0;
          if (cudaEventElapsedTime(&ms, dr->started(), dr->first_kernel()) == cudaSuccess) {
            std::lock_guard<std::mutex> g(s.stats_mu);
            if (s.stats->first_kernel_ms == 0) s.stats->first_kernel_ms = ms;
          }
          cudaGetLastError();
        }
        if (prev >= 0 && prev != d->ordinal) cudaSetDevice(prev);
      });
    }
    for (auto& dr : drivers) s.drivers.push_back(dr.get());
    if (pass == 0 && cpu_part > 0) tasks.push_back(cpu_task);
    run_concurrently(tasks.data(), int(tasks.size()));
    for (size_t q = 0; q < drivers.size(); ++q) {
      Driver& dr = *drivers[q];
      stats->tiles += dr.tiles();
      stats->panel_uploads += dr.panels();
      stats->bytes_h2d += dr.h2d_bytes_;
      stats->bytes_d2h += dr.d2h_bytes_;
      stats->pack_ms += dr.pack_ms();
      stats->bytes_peer += dr.peer_bytes();
      a_staged += dr.a_staged();
      b_staged += dr.b_staged();
      stats->unpack_ms += dr.unpack_ms();
      if (dr.error()) {
        gpu_failed = true;
        if (dr.real_error()) {
          // Only an error that persists (a sticky one) takes the device out of service.
          cudaSetDevice(devs[q]->ordinal);
          cudaGetLastError();
          if (cudaDeviceSynchronize() != cudaSuccess) h.on_cuda_error(dr.error());
          h.log(0, "%s: GPU %d failed midway (%s); its unfinished tiles run on the CPU BLAS", name, devs[q]->ordinal,
                cudaGetErrorName(dr.error()));
        }
      } else {
        double st[kStages];
        dr.stage_ms(st);
        for (int q2 = 0; q2 < kStages; ++q2) stage_sum[q2] += st[q2];
        if (devs.size() > 1) {  // each device's part of the call's line below
          double idle[3];
          dr.kernel_idle(&idle[0], &idle[1], &idle[2]);
          h.log(BO_LOG_DEBUG,
                "%s pipeline: GPU %d (share %d): %lld tiles, kernels %.0f ms (idle %.0f ms before the first, %.0f + "
                "%.0f ms between them in the first and second half), h2d busy %.0f ms, pack %.0f ms, unpack %.0f ms, "
                "waited %.0f ms for shared panels and %.0f ms for ring chunks, %.0f MB copied from another GPU, done "
                "at %.0f ms",
                name, devs[q]->ordinal, devs[q]->share, (long long)dr.tiles(), st[kKernel], idle[0], idle[1], idle[2],
                st[kH2D], dr.pack_ms(), dr.unpack_ms(), dr.panel_wait_ms(), dr.ring_wait_ms(), dr.peer_bytes() / 1e6,
                dr.done_ms());
        }
      }
    }
    if (gpu_failed) {
      // Tiles of this pass not written back: on the CPU with this pass's K range; then the remaining passes.
      for (int64_t i = 0; i < p.mt; ++i)
        for (int64_t j = 0; j < p.nt; ++j) {
          if (s.written[i * p.nt + j].load()) continue;
          cpu_block(h, gpu, i * p.mb, p.tile_rows(i), j * p.nb, p.tile_cols(j), p.pass_k0(pass), p.pass_k(pass),
                    s.beta_pass, s.beta_pass_i);
          stats->tiles_cpu++;
        }
      if (pass + 1 < p.passes) {
        const int64_t k0 = p.pass_k0(pass + 1);
        cpu_block(h, gpu, 0, gpu.m, 0, gpu.n, k0, gpu.k - k0, 1.0, 0.0);
      }
    }
  }
  if (old_dev >= 0) cudaSetDevice(old_dev);
  // Rent or buy counts what staging cost: several GPUs each staged their block's panels (4 GPUs: A and B twice a call),
  // not the one pass acquire counted.
  if (pinning) {
    if (!la.direct) host_pins().credit_staged(gpu.a, a_len, a_staged - double(a_len));
    if (!lb.direct) host_pins().credit_staged(gpu.b, b_len, b_staged - double(b_len));
  }
  // Without a CPU BLAS (blasoffload-calibrate) a failure cannot be repaired: say so (C holds partial results).
  if (gpu_failed && !hs->cpu_call) return BO_CUDA_LAUNCH_FAILED;
  stats->h2d_busy_ms = stage_sum[kH2D];
  stats->kernel_busy_ms = stage_sum[kKernel];
  stats->d2h_busy_ms = stage_sum[kD2H];
  stats->wall_ms = ms_since(wall0);
  h.log(BO_LOG_DEBUG,
        "%s pipeline: %dx GPU, tiles %lldx%lld%s (%lld on GPU, %lld on CPU after failure), %lld K pass(es), %lld "
        "panel uploads (%.0f MB of them copied between GPUs), CPU share %lld cols %lld rows; in %.0f MB (h2d busy "
        "%.2f ms), out %.0f MB (d2h busy %.2f ms), kernels %.2f ms, pack %.2f ms, unpack %.2f ms, first kernel at "
        "%.2f ms, wall %.2f ms",
        name, stats->devices, (long long)p.mb, (long long)p.nb, p.whole ? " in growing squares" : "",
        (long long)stats->tiles, (long long)stats->tiles_cpu, (long long)p.passes, (long long)stats->panel_uploads,
        stats->bytes_peer / 1e6, (long long)stats->n_cpu_cols, (long long)stats->m_cpu_rows, stats->bytes_h2d / 1e6,
        stats->h2d_busy_ms, stats->bytes_d2h / 1e6, stats->d2h_busy_ms, stats->kernel_busy_ms, stats->pack_ms,
        stats->unpack_ms, stats->first_kernel_ms, stats->wall_ms);
  return BO_CUDA_OK;
}

namespace {
std::atomic<bool> g_program_uses_cuda{false};
}
void pins_shutdown() { host_pins().shutdown(); }
bool pins_unpinning() { return host_pins().unpinning(); }
void set_pinning_default(bool program_uses_cuda) { g_program_uses_cuda.store(program_uses_cuda); }
bool pinning_enabled(const bo_cuda_host_services* h) {
  const char* v = h && h->config ? h->config("BLASOFFLOAD_PIN_HOST") : nullptr;
  if (v && std::strcmp(v, "on") == 0) return true;
  if (v && std::strcmp(v, "off") == 0) return false;
  return !g_program_uses_cuda.load();
}

int host_range_state(const void* p, int64_t bytes) {
  if (bytes <= 0) return 0;
  if (cuda_pinned_elsewhere(p) && cuda_pinned_elsewhere(static_cast<const char*>(p) + bytes - 1)) return 1;
  return host_pins().state(p, size_t(bytes));
}

// The process's first passes grow the pinned ring a chunk at a time (Driver::grow_ring, a one-time cost the policy
// prices apart) and were slower for some hundreds of ms after it: on the lent H200 the first measurement of a process
// read 21-24 GB/s where those after it read 29-38. blasoffload-calibrate measures in a fresh process, so the passes
// that make these one-time costs are left out of the rate.
constexpr int kStagedWarmUp = 4;

double measure_staged_gbs(const EngineHost& h, int64_t bytes) {
  // A k = 1 product moves little; time the engine's staged copies directly instead: C in and out of a beta = 1,
  // alpha ~ 0 sgemm is exactly one upload and one download of C through the ring.
  const int64_t n = std::max<int64_t>(1024, int64_t(std::sqrt(double(bytes / 4))));
  std::vector<float> c(size_t(n * n), 1.0f), ab(size_t(n), 0.5f);
  GemmCall g{};
  g.c.routine = BO_R_SGEMM;
  g.c.op[0] = g.c.op[1] = 'N';
  g.c.m = g.c.n = n;
  g.c.k = 1;
  // alpha = 0 would be a quick return in the core, but the engine still computes beta * C through the GPU.
  g.c.alpha = double(1e-30f);
  g.c.a = ab.data();
  g.c.lda = n;
  g.c.b = ab.data();
  g.c.ldb = 1;
  g.c.beta = 1.0;
  g.c.c = c.data();
  g.c.ldc = n;
  g.cpu_share = 0.0;
  g.stage_only = true;
  bo_gemm_stats st{};
  std::vector<double> gbs;  // bytes in plus bytes out per second, each rep after the warm-up
  for (int rep = 0; rep < kStagedWarmUp + 7; ++rep) {
    if (pipeline_gemm(h, g, &st) != BO_CUDA_OK) return 0;
    if (rep >= kStagedWarmUp) gbs.push_back(double(2 * 4 * n * n) / (st.wall_ms * 1e-3) / 1e9);
  }
  return median(gbs);
}

}  // namespace bom
