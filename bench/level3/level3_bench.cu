// blasoffload_bench_level3: times trsm and syrk in both precisions on device-resident operands (the registry's tuned
// choice, every own configuration, cuBLAS's entry) with CUDA events, and optionally a host-operand gemm through the
// library against the CPU BLAS, as JSON lines for bench/common/reports/level3.py; see README.md here.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "device_fill.h"
#include "gpu_module.h"
#include "host_gemm.h"
#include "json.h"
#include "level3_options.h"

namespace {

// The copies of A together span at least this much, so a call rarely finds A in the 50 MB L2 from an earlier call.
constexpr size_t kRotateBytes = size_t(256) << 20;
// Below this size of one copy, at least two copies exist.
constexpr size_t kTwoCopiesBelow = size_t(128) << 20;
// Left free for the CUDA contexts, cuBLAS's own workspace and the module.
constexpr size_t kDeviceReserve = size_t(768) << 20;
// A result further than this from the reference candidate's (max abs difference over max abs value) is flagged.
constexpr double kCheckTolerance = 1e-3;
constexpr int kExitOk = 0, kExitFailed = 1, kExitSetup = 2, kExitNoGpu = 3;

using bo_gpu::format;

using bo_bench::Json;
using bo_bench::Num;

// ---- Device-side data: bench/kernels/device_fill.h (counter hashing, so that a slice refilled with the same seed
// comes back identical; lower triangles diagonally dominant by rows and columns, their upper triangle NaN so that a
// kernel reading it shows). ----

// Reads a buffer twice the L2's size, so that nothing the previous steps left in L2 helps the timed call (the
// result is written only in a case that never happens, so the reads cannot be optimised away).
__global__ void ReadKernel(const float4* p, size_t n, float* sink) {
  float s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1234567.0f) *sink = s;
}

__global__ void SpinKernel(uint64_t ns) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

unsigned Blocks(size_t count) {
  const size_t b = (count + 255) / 256;
  return unsigned(std::min<size_t>(std::max<size_t>(b, 1), 65536));
}

// ---- Set-up. ----

struct Gpu {
  bo_gpu::Loaded m;  // the module, its kernel registry and its path
  int device = 0;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* flush = nullptr;  // ReadKernel's buffer
  size_t flush_bytes = 0;
  float* sink = nullptr;
};
Gpu g;
bo_level3::Options o;

void HostLog(int level, const char* message) {
  if (level <= BO_LOG_SUMMARY) std::fprintf(stderr, "blasoffload: %s\n", message);
}

int SetUp(std::string* err) {
  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    *err = format("no usable CUDA device (%s)", ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
    return kExitNoGpu;
  }
  // The module loads its tuned table in init(); select_ex answers from it.
  const int st = bo_gpu::load_and_init(o.module, &HostLog, &g.m);
  if (st != BO_CUDA_OK) {
    *err = g.m.error;
    return st == BO_CUDA_NO_DEVICE ? kExitNoGpu : kExitSetup;
  }
  // The module picks its device the same way (BLASOFFLOAD_DEVICE, default 0): our stream must live there too.
  g.device = bo_gpu::module_device();
  cudaError_t e = cudaSetDevice(g.device);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&g.prop, g.device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreate(&g.start);
  if (e == cudaSuccess) e = cudaEventCreate(&g.stop);
  g.flush_bytes = std::max<size_t>(2 * size_t(g.prop.l2CacheSize), size_t(64) << 20);
  if (e == cudaSuccess) e = cudaMalloc(&g.flush, g.flush_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&g.sink, sizeof(float));
  if (e == cudaSuccess) e = bo_bench::FillUniform(g.flush, g.flush_bytes / 4, 99, 0, g.stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(g.stream);
  if (e != cudaSuccess) {
    *err = format("setting up the device: %s", cudaGetErrorString(e));
    return kExitSetup;
  }
  return kExitOk;
}

// ---- One shape. ----

struct Case {
  int routine;  // enum bo_routine: BO_R_STRSM, BO_R_DSYRK, ...
  char side, uplo, trans;
  int64_t m, n, k;  // trsm: B m x n; syrk: C n x n, A n x k
  std::string shape;
  bool trsm() const { return bo_routine_kind_of(routine) == BO_KIND_TRSM; }
  bool dbl() const { return bo_routine_precision(routine) == BO_PREC_D; }
  size_t elem() const { return size_t(bo_element_size(bo_routine_precision(routine))); }
  int64_t t() const { return side == 'L' ? m : n; }
  int64_t a_rows() const { return trsm() ? t() : n; }
  int64_t a_cols() const { return trsm() ? t() : k; }
  int64_t out_rows() const { return trsm() ? m : n; }
  int64_t out_cols() const { return n; }
  double flops() const { return trsm() ? double(m) * double(n) * double(t()) : double(n) * n * k; }
  const char* name() const { return bo_routine_name(routine); }
};

bo_kernel_args Args(const Case& c, const void* a, void* out) {
  bo_kernel_args r{};
  r.routine = c.routine;
  if (c.trsm()) {
    r.op[0] = c.side;
    r.op[1] = c.uplo;
    r.op[2] = c.trans;
    r.op[3] = 'N';
    r.m = c.m;
    r.n = c.n;
    r.alpha = 1.0;
  } else {
    r.op[0] = c.uplo;
    r.op[1] = c.trans;
    r.n = c.n;
    r.k = c.k;
    r.alpha = -1.0;  // the trailing update of a Cholesky factorization
    r.beta = 1.0;
  }
  r.a = a;
  r.lda = c.a_rows();
  r.c = out;
  r.ldc = c.out_rows();
  return r;
}

struct Candidate {
  Candidate(const char* kind_, int index_) : kind(kind_), index(index_) {}
  const char* kind;  // "tuned", "own", "cublas"
  int index;
  std::vector<float> ms;
  std::vector<double> enqueue_us;
  double diff = NAN;
  std::string check = "not checked", error;
};

const bo_kernel_entry& Entry(const Candidate& c) { return g.m.reg->entries[c.index]; }

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

void Line(const Case& c, const Candidate& cand, size_t copies, size_t ws) {
  const bo_kernel_entry& e = Entry(cand);
  std::vector<double> us(cand.ms.begin(), cand.ms.end());
  for (double& v : us) v *= 1e3;
  const double med = Median(us);
  const double mn = us.empty() ? NAN : *std::min_element(us.begin(), us.end());
  const double mx = us.empty() ? NAN : *std::max_element(us.begin(), us.end());
  std::string times = "[";
  for (size_t i = 0; i < us.size(); ++i) times += (i ? "," : "") + format("%.2f", us[i]);
  times += "]";
  std::printf(
      "{\"routine\": \"%s\", \"precision\": \"%c\", \"shape\": %s, \"side\": \"%c\", \"uplo\": \"%c\", \"trans\": "
      "\"%c\", "
      "\"diag\": \"N\", "
      "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"candidate\": \"%s\", \"entry\": %s, \"family\": %s, \"vendor\": %d, "
      "\"time_us\": %s, \"min_us\": %s, \"max_us\": %s, \"reps\": %zu, \"times_us\": %s, \"enqueue_us\": %s, "
      "\"flops\": %.6g, \"tflops\": %s, \"tflops_max\": %s, \"workspace_bytes\": %zu, \"copies\": %zu, "
      "\"check\": %s, \"check_rel_diff\": %s, \"error\": %s, \"queue_ahead\": %s, \"gpu\": %s, \"date\": %s, "
      "\"commit\": %s}\n",
      c.name(), c.name()[0], Json(c.shape).c_str(), c.side, c.uplo, c.trans, (long long)c.m, (long long)c.n,
      (long long)c.k, cand.kind, Json(e.name).c_str(), Json(e.family ? e.family : "").c_str(), e.vendor,
      Num(med).c_str(), Num(mn).c_str(), Num(mx).c_str(), us.size(), times.c_str(),
      Num(Median(cand.enqueue_us)).c_str(), c.flops(), Num(c.flops() / (med * 1e-6) / 1e12).c_str(),
      Num(c.flops() / (mn * 1e-6) / 1e12).c_str(), ws, copies, Json(cand.check).c_str(), Num(cand.diff).c_str(),
      Json(cand.error).c_str(), o.queue_ahead ? "true" : "false", Json(g.prop.name).c_str(), Json(o.date).c_str(),
      Json(o.commit).c_str());
  std::fflush(stdout);
}

void SkipLine(const Case& c, const std::string& why) {
  std::printf(
      "{\"routine\": \"%s\", \"precision\": \"%c\", \"shape\": %s, \"side\": \"%c\", \"skipped\": %s, \"gpu\": %s, "
      "\"date\": %s, \"commit\": %s}\n",
      c.name(), c.name()[0], Json(c.shape).c_str(), c.side, Json(why).c_str(), Json(g.prop.name).c_str(),
      Json(o.date).c_str(), Json(o.commit).c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%s %s: skipped: %s\n", c.name(), c.shape.c_str(), why.c_str());
}

// Times one shape; returns false when a candidate failed or disagreed with the reference.
bool RunCase(const Case& c) {
  const size_t elem = c.elem();
  const size_t a_count = size_t(c.a_rows()) * size_t(c.a_cols()), out_count = size_t(c.out_rows()) * c.out_cols();
  const size_t a_stride = (a_count * elem + 255) / 256 * 256 / elem;  // 256-byte aligned copies
  const size_t a_bytes = a_stride * elem, out_bytes = out_count * elem;
  size_t copies = std::max<size_t>((kRotateBytes + a_bytes - 1) / a_bytes, a_bytes < kTwoCopiesBelow ? 2 : 1);

  // The candidates: the tuned choice, then every own configuration, then the vendor entries, all that take the shape.
  std::vector<Candidate> cands;
  const bo_kernel_args probe =
      Args(c, reinterpret_cast<void*>(uintptr_t(1) << 20), reinterpret_cast<void*>(uintptr_t(1) << 21));
  const int tuned =
      g.m.reg->select_ex ? g.m.reg->select_ex(c.routine, &probe, BO_SELECT_TUNED) : g.m.reg->select(c.routine, &probe);
  if (tuned >= 0) cands.emplace_back("tuned", tuned);
  for (int vendor_pass = 0; vendor_pass < 2; ++vendor_pass)
    for (size_t i = 0; i < g.m.reg->count; ++i) {
      const bo_kernel_entry& e = g.m.reg->entries[i];
      if (e.routine != c.routine || (e.vendor != 0) != (vendor_pass == 1) || !e.can_implement(&probe)) continue;
      cands.emplace_back(vendor_pass ? "cublas" : "own", int(i));
    }
  if (cands.empty()) {
    SkipLine(c, "no registry entry takes this shape");
    return false;
  }
  size_t ws = 0;
  for (const Candidate& cd : cands) ws = std::max(ws, Entry(cd).workspace_bytes(&probe));
  ws = (ws + 255) / 256 * 256;

  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  const size_t fixed = 2 * out_bytes + ws + kDeviceReserve;
  if (free_b < fixed + a_bytes) {
    SkipLine(c, format("does not fit in device memory (%.1f GiB free)", double(free_b) / (1 << 30)));
    return true;
  }
  copies = std::min(copies, (free_b - fixed) / a_bytes);
  char *a = nullptr, *work = nullptr, *saved = nullptr;
  void* wsp = nullptr;
  cudaError_t e = cudaMalloc(&a, a_bytes * copies);
  if (e == cudaSuccess) e = cudaMalloc(&work, out_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&saved, out_bytes);
  if (e == cudaSuccess && ws) e = cudaMalloc(&wsp, ws);
  if (e == cudaSuccess) {
    using bo_bench::FillLowerTriangular;
    using bo_bench::FillUniform;
    auto d = [](char* p) { return reinterpret_cast<double*>(p); };
    auto f = [](char* p) { return reinterpret_cast<float*>(p); };
    if (c.trsm())
      e = c.dbl() ? FillLowerTriangular(d(a), c.t(), copies, a_stride, 11, g.stream)
                  : FillLowerTriangular(f(a), c.t(), copies, a_stride, 11, g.stream);
    else
      for (size_t i = 0; i < copies && e == cudaSuccess; ++i)
        e = c.dbl() ? FillUniform(d(a + i * a_bytes), a_count, 11 + i, 0, g.stream)
                    : FillUniform(f(a + i * a_bytes), a_count, 11 + i, 0, g.stream);
    if (e == cudaSuccess)
      e = c.dbl() ? FillUniform(d(saved), out_count, 22, 0, g.stream)
                  : FillUniform(f(saved), out_count, 22, 0, g.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(g.stream);
  }
  bool ok = true;
  auto fail = [&](Candidate& cd, const std::string& why) {
    if (cd.error.empty()) cd.error = why;
    ok = false;
  };
  // One call on copy `copy` from the saved right-hand side (C); the restore runs outside any timing.
  auto restore = [&] { return cudaMemcpyAsync(work, saved, out_bytes, cudaMemcpyDeviceToDevice, g.stream); };
  auto launch = [&](const Candidate& cd, size_t copy) {
    const bo_kernel_args args = Args(c, a + (copy % copies) * a_bytes, work);
    return Entry(cd).launch(&args, wsp, g.stream);
  };
  if (e != cudaSuccess) {
    SkipLine(c, format("allocation or fill failed: %s", cudaGetErrorString(e)));
    cudaGetLastError();
    ok = false;
  } else {
    std::fprintf(stderr, "%s %s: %zu candidates, %zu copies of A (%.1f MiB each), workspace %.1f MiB\n", c.name(),
                 c.shape.c_str(), cands.size(), copies, double(a_bytes) / (1 << 20), double(ws) / (1 << 20));
    // Check run (also the first warm-up) on copy 0: every result against the first vendor entry's, else the first
    // candidate's; syrk only in its lower triangle (the rest of C must not change; the tests check that).
    std::vector<double> ref, got(out_count);
    std::vector<char> raw(out_bytes);
    size_t ref_i = 0;
    for (size_t i = 0; i < cands.size(); ++i)
      if (Entry(cands[i]).vendor) {
        ref_i = i;
        break;
      }
    std::vector<size_t> order{ref_i};
    for (size_t i = 0; i < cands.size(); ++i)
      if (i != ref_i) order.push_back(i);
    for (size_t i : order) {
      Candidate& cd = cands[i];
      restore();
      const int rc = launch(cd, 0);
      const cudaError_t se = cudaStreamSynchronize(g.stream);
      if (rc != 0 || se != cudaSuccess) {
        fail(cd, format("launch failed: %s", cudaGetErrorString(rc ? cudaError_t(rc) : se)));
        cudaGetLastError();
        continue;
      }
      cudaMemcpy(raw.data(), work, out_bytes, cudaMemcpyDeviceToHost);
      for (size_t q = 0; q < out_count; ++q)
        got[q] = c.dbl() ? reinterpret_cast<const double*>(raw.data())[q]
                         : double(reinterpret_cast<const float*>(raw.data())[q]);
      double diff = 0, scale = 0;
      bool finite = true;
      const int64_t rows = c.out_rows();
      for (int64_t j = 0; j < c.out_cols(); ++j)
        for (int64_t r = c.trsm() ? 0 : j; r < rows; ++r) {
          const size_t q = size_t(r + j * rows);
          finite &= std::isfinite(got[q]);
          if (!ref.empty()) {
            diff = std::max(diff, std::fabs(got[q] - ref[q]));
            scale = std::max(scale, std::fabs(ref[q]));
          }
        }
      if (!finite) {
        cd.check = "non-finite result";
        fail(cd, cd.check);
      } else if (ref.empty()) {
        ref = got;
        cd.check = "reference";
      } else {
        cd.diff = scale > 0 ? diff / scale : diff;
        cd.check = cd.diff <= kCheckTolerance ? "ok" : "differs from the reference";
        if (cd.diff > kCheckTolerance) fail(cd, format("relative difference %.3g from the reference", cd.diff));
      }
    }
    size_t next = 1;
    for (Candidate& cd : cands)
      for (int w = 0; w < o.warmup && cd.error.empty(); ++w) {
        restore();
        if (launch(cd, next++) != 0) fail(cd, "warm-up launch failed");
      }
    if (cudaStreamSynchronize(g.stream) != cudaSuccess) {
      cudaGetLastError();
      ok = false;
    }
    // Timed runs, round-robin over the candidates (the first one rotates) so that clock drift spreads evenly.
    for (int r = 0; r < o.reps; ++r)
      for (size_t q = 0; q < cands.size(); ++q) {
        Candidate& cd = cands[(q + size_t(r)) % cands.size()];
        if (!cd.error.empty()) continue;
        restore();
        ReadKernel<<<Blocks(g.flush_bytes / 16), 256, 0, g.stream>>>(reinterpret_cast<const float4*>(g.flush),
                                                                     g.flush_bytes / 16, g.sink);
        if (o.queue_ahead)
          SpinKernel<<<1, 1, 0, g.stream>>>(200000);
        else
          cudaStreamSynchronize(g.stream);  // an idle GPU: the host's launch overhead counts, as in a BLAS call
        cudaEventRecord(g.start, g.stream);
        const auto t0 = std::chrono::steady_clock::now();
        const int rc = launch(cd, next++);
        const auto t1 = std::chrono::steady_clock::now();
        cudaEventRecord(g.stop, g.stream);
        float ms = 0;
        const cudaError_t se = cudaEventSynchronize(g.stop);
        if (rc != 0 || se != cudaSuccess || cudaEventElapsedTime(&ms, g.start, g.stop) != cudaSuccess) {
          fail(cd, "timed launch failed");
          cudaGetLastError();
          continue;
        }
        cd.ms.push_back(ms);
        cd.enqueue_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    for (const Candidate& cd : cands) {
      Line(c, cd, copies, Entry(cd).workspace_bytes(&probe));
      std::vector<double> us(cd.ms.begin(), cd.ms.end());
      std::fprintf(stderr, "  %-6s %-32s %10.1f us  %s%s\n", cd.kind, Entry(cd).name, Median(us) * 1e3,
                   cd.check.c_str(), cd.error.empty() ? "" : (" ERROR " + cd.error).c_str());
    }
  }
  cudaFree(a);
  cudaFree(work);
  cudaFree(saved);
  cudaFree(wsp);
  return ok;
}

void Context() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  const char* tuned = g.m.reg->tuned_params_info ? g.m.reg->tuned_params_info() : nullptr;
  const char* vendor = g.m.reg->vendor_info ? g.m.reg->vendor_info() : nullptr;
  const char* cond = bo_gpu::env_config("BLASOFFLOAD_STRSM_INV_MAX_COND");
  std::printf(
      "{\"context\": {\"gpu\": %s, \"sms\": %d, \"l2_mib\": %.1f, \"memory_gib\": %.1f, \"cuda_runtime\": %d, "
      "\"cuda_driver\": %d, \"module\": %s, \"module_path\": %s, \"tuned_params\": %s, \"vendor\": %s, "
      "\"reps\": %d, \"warmup\": %d, \"queue_ahead\": %s, \"rotate_mib\": %zu, \"flush_mib\": %zu, "
      "\"strsm_inv_max_cond\": %s, \"date\": %s, \"commit\": %s}}\n",
      Json(g.prop.name).c_str(), g.prop.multiProcessorCount, g.prop.l2CacheSize / 1048576.0,
      double(g.prop.totalGlobalMem) / (1 << 30), runtime, driver, Json(g.m.mod->name ? g.m.mod->name : "").c_str(),
      Json(g.m.path).c_str(), Json(tuned ? tuned : "(none)").c_str(), Json(vendor ? vendor : "(none)").c_str(), o.reps,
      o.warmup, o.queue_ahead ? "true" : "false", kRotateBytes >> 20, g.flush_bytes >> 20,
      Json(cond ? cond : "(default)").c_str(), Json(o.date).c_str(), Json(o.commit).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (!bo_level3::ParseArgs(argc, argv, &o)) {
    std::fputs(bo_level3::kUsage, stderr);
    return kExitSetup;
  }
  if (o.date.empty()) {
    char d[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    o.date = d;
  }
  if (o.commit.empty()) {
    std::ifstream f(bo_gpu::exe_dir() + "/COMMIT");
    std::getline(f, o.commit);
    if (o.commit.empty()) o.commit = "unknown";
  }
  // The host gemm point runs alone: the library it loads starts the module itself (a second init() of the module
  // from this program would share its state).
  if (!o.host_gemm_n.empty()) {
    if (o.library.empty()) {
      std::fputs("blasoffload_bench_level3: --host-gemm needs --library=PATH (libblasoffload.so)\n", stderr);
      return kExitSetup;
    }
    const bo_bench::HostGemmOptions h{o.host_gemm_n, o.precisions, o.library, o.cpu_blas,
                                      o.host_reps,   o.date,       o.commit};
    return bo_bench::RunHostGemm(h) ? kExitOk : kExitFailed;
  }
  std::string err;
  if (const int rc = SetUp(&err); rc != kExitOk) {
    std::fprintf(stderr, "blasoffload_bench_level3: %s\n", err.c_str());
    return rc;
  }
  Context();
  std::vector<Case> cases;
  for (bo_precision p : o.precisions) {
    const int trsm = bo_routine_id(BO_KIND_TRSM, p), syrk = bo_routine_id(BO_KIND_SYRK, p);
    if (o.trsm)
      for (auto [m, n] : o.trsm_shapes[p]) {
        cases.push_back({trsm, 'L', 'L', 'N', m, n, 0, format("%lldx%lld", (long long)m, (long long)n)});
        if (o.right)  // X L^T = B^T: the same solves, by rows
          cases.push_back({trsm, 'R', 'L', 'T', n, m, 0, format("%lldx%lld", (long long)n, (long long)m)});
      }
    if (o.syrk)
      for (int64_t n : o.syrk_n[p])
        cases.push_back({syrk, '-', 'L', 'N', 0, n, n, format("n=%lld k=%lld", (long long)n, (long long)n)});
  }
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = true;
  for (const Case& c : cases) ok &= RunCase(c);
  std::fprintf(stderr, "blasoffload_bench_level3: %zu shapes in %.1f s\n", cases.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (g.m.mod->shutdown) g.m.mod->shutdown();
  return ok ? kExitOk : kExitFailed;
}
