// blasoffload_bench_kernels: Google Benchmark suite timing our kernels as the tuned table selects them (and the
// table's best own kernel) against cuBLAS on device-resident data that rotates past L2, for every routine, precision
// and shape of shapes.cpp; see README.md here.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "device_fill.h"
#include "gpu_module.h"
#include "shapes.h"

namespace bo_bench {
namespace {

// Operand copies together span at least this much, so each call finds its operands outside the 50 MB L2.
constexpr size_t kRotateBytes = size_t(256) << 20;
// Below this size of one copy, at least two copies exist even if one would span kRotateBytes (it cannot).
constexpr size_t kTwoCopiesBelow = size_t(128) << 20;
// Left free for the CUDA contexts' growth, cuBLAS's own workspace and our kernels' workspace.
constexpr size_t kDeviceReserve = size_t(768) << 20;
// A result further than this from cuBLAS's (max abs difference over max abs value) is reported, not timed.
constexpr double kVerifyTolerance = 1e-2;
// Cases whose three calls take longer than this run a fixed number of iterations instead of --benchmark_min_time.
constexpr double kFixedIterationsAbove = 0.010;
constexpr double kFixedIterationBudget = 1.5;  // seconds of device time per such case, within 5..50 iterations

constexpr uint64_t kSeedA = 11, kSeedB = 22, kSeedC = 33, kSeedSaved = 44;

enum Variant { kTuned = 0, kOwn = 1, kCublas = 2, kVariants = 3 };
const char* const kVariantName[kVariants] = {"tuned", "own", "cuBLAS"};

using bo_gpu::format;

constexpr size_t Align256(size_t bytes) { return (bytes + 255) & ~size_t(255); }

// Everything shared by all cases; set up once in main after the module's init().
struct Gpu {
  bo_gpu::Loaded m;  // the module, its kernel registry and its path
  int device = 0;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudaEvent_t start[kVariants] = {}, stop[kVariants] = {};
  void* pinned_result = nullptr;  // where our nrm2 result lands on the host (a float or a double), as BLAS returns it
  void* workspace = nullptr;      // grow-only pool for entry.workspace_bytes()
  size_t workspace_bytes = 0;
};
Gpu g;

// `copies` slices of `count` elements (of `elem` bytes) in one allocation; slices start 256-byte aligned, as the
// kernels expect.
class Rotating {
 public:
  Rotating() = default;
  Rotating(const Rotating&) = delete;
  Rotating& operator=(const Rotating&) = delete;
  ~Rotating() {
    if (base_) cudaFree(base_);
  }
  static size_t SliceBytes(size_t count, size_t elem) { return Align256(count * elem); }
  cudaError_t Allocate(size_t count, size_t copies, size_t elem) {
    count_ = count;
    copies_ = copies;
    elem_ = elem;
    stride_ = SliceBytes(count, elem) / elem;
    if (count == 0) return cudaSuccess;
    return cudaMalloc(&base_, stride_ * copies * elem);
  }
  void* Slice(size_t i) const { return base_ ? base_ + (i % copies_) * stride_ * elem_ : nullptr; }
  void* base() const { return base_; }
  size_t count() const { return count_; }
  size_t bytes() const { return count_ * elem_; }
  size_t stride() const { return stride_; }
  size_t total() const { return stride_ * copies_; }

 private:
  char* base_ = nullptr;
  size_t count_ = 0, copies_ = 1, stride_ = 0, elem_ = 4;
};

bool IsDouble(const Shape& s) { return bo_routine_precision(s.routine) == BO_PREC_D; }
bo_routine_kind Kind(const Shape& s) { return bo_routine_kind_of(s.routine); }

// Device fills in the shape's precision (device_fill.h).
cudaError_t Fill(const Shape& s, void* p, size_t count, uint64_t seed, size_t first) {
  return IsDouble(s) ? FillUniform(static_cast<double*>(p), count, seed, first, g.stream)
                     : FillUniform(static_cast<float*>(p), count, seed, first, g.stream);
}
cudaError_t FillLower(const Shape& s, void* p, size_t copies, size_t stride, uint64_t seed) {
  return IsDouble(s) ? FillLowerTriangular(static_cast<double*>(p), s.n, copies, stride, seed, g.stream)
                     : FillLowerTriangular(static_cast<float*>(p), s.n, copies, stride, seed, g.stream);
}

// One case's operands, selected configurations and verification result; kept across the several calls Google
// Benchmark makes of the same case (it grows the iteration count), freed when the next case starts.
struct Prepared {
  const Shape* shape = nullptr;
  std::string error;  // non-empty: the case is reported as skipped with this message
  size_t copies = 0;
  // a: the matrix; b: x (gemv, nrm2) or B (gemm); c: the output (y, C, trsv's x, nrm2's device result);
  // saved: trsv's right-hand sides, copied into c before every solve.
  Rotating a, b, c, saved;
  int index[2] = {-1, -1};  // registry entries for kTuned and kOwn
  double rel_err[2] = {0, 0};
  size_t next = 0;  // rotation counter: every call takes the next copy
};
std::unique_ptr<Prepared> g_cache;

struct Counts {
  size_t a, b, c, saved;
};

Counts OperandCounts(const Shape& s) {
  const size_t m = size_t(s.m), n = size_t(s.n), k = size_t(s.k);
  switch (Kind(s)) {
    case BO_KIND_NRM2:
      return {0, n, 1, 0};
    case BO_KIND_GEMV:
      return {m * n, s.op1 == 'N' ? n : m, s.op1 == 'N' ? m : n, 0};
    case BO_KIND_TRSV:
      return {n * n, 0, n, n};
    default:
      return {m * k, k * n, m * n, 0};
  }
}

bo_kernel_args Args(const Prepared& p, size_t copy) {
  const Shape& s = *p.shape;
  bo_kernel_args r{};
  r.routine = s.routine;
  r.incx = 1;
  r.incy = 1;
  switch (Kind(s)) {
    case BO_KIND_NRM2:
      r.n = s.n;
      r.b = p.b.Slice(copy);
      r.c = p.c.Slice(copy);
      break;
    case BO_KIND_GEMV:
      r.op[0] = s.op1;
      r.m = s.m;
      r.n = s.n;
      r.alpha = s.alpha;
      r.beta = s.beta;
      r.a = p.a.Slice(copy);
      r.lda = s.m;
      r.b = p.b.Slice(copy);
      r.c = p.c.Slice(copy);
      break;
    case BO_KIND_TRSV:
      r.op[0] = 'L';
      r.op[1] = s.op1;
      r.op[2] = 'N';
      r.n = s.n;
      r.a = p.a.Slice(copy);
      r.lda = s.n;
      r.c = p.c.Slice(copy);
      break;
    default:
      r.op[0] = s.op1;
      r.op[1] = s.op2;
      r.m = s.m;
      r.n = s.n;
      r.k = s.k;
      r.alpha = s.alpha;
      r.beta = s.beta;
      r.a = p.a.Slice(copy);
      r.lda = s.op1 == 'N' ? s.m : s.k;
      r.b = p.b.Slice(copy);
      r.ldb = s.op2 == 'N' ? s.k : s.n;
      r.c = p.c.Slice(copy);
      r.ldc = s.m;
      break;
  }
  return r;
}

cublasOperation_t Op(char t) { return t == 'N' ? CUBLAS_OP_N : t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C; }

// cuBLAS's routine for a shape, in its precision. alpha/beta are host scalars (host pointer mode).
cublasStatus_t Cublas(const Shape& s, const bo_kernel_args& a, void* host_result) {
  const bool d = IsDouble(s);
  const float af = float(a.alpha), bf = float(a.beta);
  const int n = int(a.n), m = int(a.m), k = int(a.k), lda = int(a.lda);
  switch (Kind(s)) {
    case BO_KIND_NRM2:
      return d ? cublasDnrm2(g.cublas, n, static_cast<const double*>(a.b), 1, static_cast<double*>(host_result))
               : cublasSnrm2(g.cublas, n, static_cast<const float*>(a.b), 1, static_cast<float*>(host_result));
    case BO_KIND_GEMV:
      return d ? cublasDgemv(g.cublas, Op(s.op1), m, n, &a.alpha, static_cast<const double*>(a.a), lda,
                             static_cast<const double*>(a.b), 1, &a.beta, static_cast<double*>(a.c), 1)
               : cublasSgemv(g.cublas, Op(s.op1), m, n, &af, static_cast<const float*>(a.a), lda,
                             static_cast<const float*>(a.b), 1, &bf, static_cast<float*>(a.c), 1);
    case BO_KIND_TRSV:
      return d ? cublasDtrsv(g.cublas, CUBLAS_FILL_MODE_LOWER, Op(s.op1), CUBLAS_DIAG_NON_UNIT, n,
                             static_cast<const double*>(a.a), lda, static_cast<double*>(a.c), 1)
               : cublasStrsv(g.cublas, CUBLAS_FILL_MODE_LOWER, Op(s.op1), CUBLAS_DIAG_NON_UNIT, n,
                             static_cast<const float*>(a.a), lda, static_cast<float*>(a.c), 1);
    default:
      return d ? cublasDgemm(g.cublas, Op(s.op1), Op(s.op2), m, n, k, &a.alpha, static_cast<const double*>(a.a), lda,
                             static_cast<const double*>(a.b), int(a.ldb), &a.beta, static_cast<double*>(a.c),
                             int(a.ldc))
               : cublasSgemm(g.cublas, Op(s.op1), Op(s.op2), m, n, k, &af, static_cast<const float*>(a.a), lda,
                             static_cast<const float*>(a.b), int(a.ldb), &bf, static_cast<float*>(a.c), int(a.ldc));
  }
}

// Enqueues one call of a variant on copy `copy`. cuBLAS's nrm2 (host pointer mode) returns into *host_result (a
// float or a double) and is synchronous, as BLAS is; everything else is only enqueued on g.stream. On failure fills
// *err.
bool Run(const Prepared& p, int variant, size_t copy, void* host_result, std::string* err) {
  bo_kernel_args a = Args(p, copy);
  // Timed nrm2: as the module runs it, the kernel writes its result straight into mapped pinned memory.
  if (host_result && Kind(*p.shape) == BO_KIND_NRM2 && variant != kCublas) a.c = g.pinned_result;
  if (variant != kCublas) {
    const bo_kernel_entry& e = g.m.reg->entries[p.index[variant]];
    const int rc = e.launch(&a, g.workspace, g.stream);
    if (rc != 0)
      *err = format("%s launch of %s failed: %s", kVariantName[variant], e.name, cudaGetErrorString(cudaError_t(rc)));
    return rc == 0;
  }
  const cublasStatus_t st = Cublas(*p.shape, a, host_result);
  if (st != CUBLAS_STATUS_SUCCESS) *err = format("cuBLAS call failed: %s", cublasGetStatusString(st));
  return st == CUBLAS_STATUS_SUCCESS;
}

std::string CudaError(const char* what, cudaError_t e) { return format("%s: %s", what, cudaGetErrorString(e)); }

bool EnsureWorkspace(size_t bytes, std::string* err) {
  if (bytes <= g.workspace_bytes) return true;
  cudaStreamSynchronize(g.stream);
  if (g.workspace) cudaFree(g.workspace);
  g.workspace = nullptr;
  g.workspace_bytes = 0;
  const size_t want = Align256(bytes + bytes / 4);
  if (cudaError_t e = cudaMalloc(&g.workspace, want); e != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky: clear it so later cases still run
    *err = format("cannot allocate %zu bytes of kernel workspace: %s", want, cudaGetErrorString(e));
    return false;
  }
  g.workspace_bytes = want;
  return true;
}

// Puts copy 0's output back into the state every variant must start from: NaN where beta = 0 (all-ones bytes: a NaN
// in either precision, so an output the kernel forgets to write shows), the same pseudo-random C where beta != 0, the
// saved right-hand side for trsv.
cudaError_t ResetOutput(const Prepared& p) {
  const Shape& s = *p.shape;
  void* out = p.c.Slice(0);
  if (Kind(s) == BO_KIND_TRSV)
    return cudaMemcpyAsync(out, p.saved.Slice(0), p.c.bytes(), cudaMemcpyDeviceToDevice, g.stream);
  if (s.beta != 0.0) return Fill(s, out, p.c.count(), kSeedC, 0);
  return cudaMemsetAsync(out, 0xff, p.c.bytes(), g.stream);
}

// `count` elements of the shape's precision at host address p, as doubles.
std::vector<double> Widen(const Shape& s, const void* p, size_t count) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = IsDouble(s) ? static_cast<const double*>(p)[i] : double(static_cast<const float*>(p)[i]);
  return v;
}

double RelativeError(const std::vector<double>& x, const std::vector<double>& ref) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(x[i] - ref[i]);
    if (!std::isfinite(x[i]) || !(d == d)) return INFINITY;
    diff = std::max(diff, d);
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return diff / std::max(scale, 1e-300);
}

// Runs each variant once on copy 0 from the same starting output and compares ours with cuBLAS, so a kernel that
// computes something else (or reads trsv's NaN upper triangle) is reported instead of timed. It is also the
// warm-up: lazy module loading and cuBLAS's first-call setup happen here, not in the timed loop.
std::string Verify(Prepared* p) {
  const Shape& s = *p->shape;
  std::vector<double> out[kVariants];
  std::string err;
  for (int v = 0; v < kVariants; ++v) {
    if (cudaError_t e = ResetOutput(*p); e != cudaSuccess) return CudaError("resetting the output", e);
    double host = NAN;  // room for either precision's result
    if (!Run(*p, v, 0, &host, &err)) return err;
    if (cudaError_t e = cudaStreamSynchronize(g.stream); e != cudaSuccess)
      return format("%s run failed: %s", kVariantName[v], cudaGetErrorString(e));
    if (Kind(s) == BO_KIND_NRM2) {  // cuBLAS returned it; ours wrote it to the mapped pinned scalar
      out[v] = Widen(s, v == kCublas ? static_cast<const void*>(&host) : g.pinned_result, 1);
      continue;
    }
    std::vector<char> bytes(p->c.bytes());
    if (cudaError_t e = cudaMemcpy(bytes.data(), p->c.Slice(0), bytes.size(), cudaMemcpyDeviceToHost); e != cudaSuccess)
      return CudaError("reading the result back", e);
    out[v] = Widen(s, bytes.data(), p->c.count());
  }
  for (double x : out[kCublas])
    if (!std::isfinite(x)) return "cuBLAS's result is not finite: the operands are not what this benchmark intends";
  for (int v : {kTuned, kOwn}) {
    p->rel_err[v] = RelativeError(out[v], out[kCublas]);
    if (!(p->rel_err[v] <= kVerifyTolerance))
      return format(
          "%s configuration %s disagrees with cuBLAS (max relative difference %g)%s", kVariantName[v],
          g.m.reg->entries[p->index[v]].name, p->rel_err[v],
          Kind(s) == BO_KIND_TRSV && !std::isfinite(p->rel_err[v]) ? ": does it read the NaN upper triangle?" : "");
  }
  return "";
}

std::unique_ptr<Prepared> Prepare(const Shape& s) {
  auto p = std::make_unique<Prepared>();
  p->shape = &s;
  const Counts n = OperandCounts(s);
  const size_t elem = ElementBytes(s);
  const size_t per_copy = Rotating::SliceBytes(n.a, elem) + Rotating::SliceBytes(n.b, elem) +
                          Rotating::SliceBytes(n.c, elem) + Rotating::SliceBytes(n.saved, elem);
  size_t copies = std::max<size_t>(1, (kRotateBytes + per_copy - 1) / per_copy);
  const size_t min_copies = per_copy < kTwoCopiesBelow ? 2 : 1;
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes); e != cudaSuccess) {
    p->error = CudaError("cudaMemGetInfo", e);
    return p;
  }
  const size_t usable = free_bytes > kDeviceReserve ? free_bytes - kDeviceReserve : 0;
  if (copies * per_copy > usable) copies = usable / per_copy;
  if (copies < min_copies) {
    p->error = format("does not fit in device memory: %zu cop%s of %.2f GiB needed, %.2f GiB free", min_copies,
                      min_copies == 1 ? "y" : "ies", per_copy / 1073741824.0, free_bytes / 1073741824.0);
    return p;
  }
  p->copies = copies;
  for (auto [r, count] : {std::pair<Rotating*, size_t>{&p->a, n.a}, {&p->b, n.b}, {&p->c, n.c}, {&p->saved, n.saved}})
    if (cudaError_t e = r->Allocate(count, copies, elem); e != cudaSuccess) {
      cudaGetLastError();
      p->error = format("cudaMalloc of %zu copies: %s", copies, cudaGetErrorString(e));
      return p;
    }

  cudaError_t e = Kind(s) == BO_KIND_TRSV ? FillLower(s, p->a.base(), copies, p->a.stride(), kSeedA)
                                          : Fill(s, p->a.base(), p->a.total(), kSeedA, 0);
  if (e == cudaSuccess) e = Fill(s, p->b.base(), p->b.total(), kSeedB, 0);
  if (e == cudaSuccess) e = Fill(s, p->c.base(), p->c.total(), kSeedC, 0);
  if (e == cudaSuccess) e = Fill(s, p->saved.base(), p->saved.total(), kSeedSaved, 0);
  if (e == cudaSuccess) e = cudaStreamSynchronize(g.stream);
  if (e != cudaSuccess) {
    p->error = CudaError("initialising the operands", e);
    return p;
  }

  const bo_kernel_args args = Args(*p, 0);
  p->index[kTuned] = g.m.reg->select_ex(s.routine, &args, BO_SELECT_TUNED);
  p->index[kOwn] = g.m.reg->select_ex(s.routine, &args, BO_SELECT_OWN);
  size_t workspace = 0;
  for (int v : {kTuned, kOwn}) {
    const int i = p->index[v];
    if (i < 0 || size_t(i) >= g.m.reg->count) {
      p->error = format("select_ex(%s) chose no configuration (%d)", kVariantName[v], i);
      return p;
    }
    const bo_kernel_entry& entry = g.m.reg->entries[i];
    if (!entry.can_implement(&args)) {
      p->error =
          format("select_ex(%s) chose %s, whose can_implement rejects these arguments", kVariantName[v], entry.name);
      return p;
    }
    workspace = std::max(workspace, entry.workspace_bytes(&args));
  }
  if (!EnsureWorkspace(workspace, &p->error)) return p;
  p->error = Verify(p.get());
  return p;
}

Prepared& Cached(const Shape& s) {
  if (!g_cache || g_cache->shape != &s) {
    g_cache.reset();  // free the previous case's copies before allocating this one's
    g_cache = Prepare(s);
  }
  return *g_cache;
}

// CUDA-event timing of each call on the stream; the three variants take turns going first.
bool TimeOnDevice(benchmark::State& state, Prepared& p, std::vector<double>* seconds) {
  const bool trsv = Kind(*p.shape) == BO_KIND_TRSV;
  const size_t rhs_bytes = p.c.bytes();
  std::string err;
  int64_t iteration = 0;
  for (auto _ : state) {
    for (int r = 0; r < kVariants && err.empty(); ++r) {
      const int v = int((iteration + r) % kVariants);
      const size_t copy = p.next++ % p.copies;
      // trsv solves in place: restore the right-hand side, outside the timed events.
      if (trsv) cudaMemcpyAsync(p.c.Slice(copy), p.saved.Slice(copy), rhs_bytes, cudaMemcpyDeviceToDevice, g.stream);
      cudaEventRecord(g.start[v], g.stream);
      if (Run(p, v, copy, nullptr, &err)) cudaEventRecord(g.stop[v], g.stream);
    }
    const cudaError_t e = cudaStreamSynchronize(g.stream);
    if (err.empty() && e != cudaSuccess) err = CudaError("timed run", e);
    float ms[kVariants] = {};
    for (int v = 0; v < kVariants && err.empty(); ++v)
      if (cudaError_t t = cudaEventElapsedTime(&ms[v], g.start[v], g.stop[v]); t != cudaSuccess)
        err = CudaError("cudaEventElapsedTime", t);
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      break;
    }
    for (int v = 0; v < kVariants; ++v) seconds[v].push_back(ms[v] * 1e-3);
    state.SetIterationTime(ms[kTuned] * 1e-3);
    ++iteration;
  }
  return err.empty();
}

// nrm2 as BLAS has it: the result is on the host when the call returns, so wall-clock time around the launch
// (ours writes the result into mapped pinned memory, as the module does) and the synchronisation; cuBLAS in host
// pointer mode copies its result back and synchronises internally.
bool TimeResultOnHost(benchmark::State& state, Prepared& p, std::vector<double>* seconds) {
  using Clock = std::chrono::steady_clock;
  std::string err;
  int64_t iteration = 0;
  for (auto _ : state) {
    double sec[kVariants] = {};
    for (int r = 0; r < kVariants && err.empty(); ++r) {
      const int v = int((iteration + r) % kVariants);
      const size_t copy = p.next++ % p.copies;
      double host = 0;  // room for either precision's result
      const auto t0 = Clock::now();
      if (!Run(p, v, copy, &host, &err)) break;
      if (v != kCublas)
        if (cudaError_t e = cudaStreamSynchronize(g.stream); e != cudaSuccess) err = CudaError("timed run", e);
      sec[v] = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      break;
    }
    for (int v = 0; v < kVariants; ++v) seconds[v].push_back(sec[v]);
    state.SetIterationTime(sec[kTuned]);
    ++iteration;
  }
  return err.empty();
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void RunCase(benchmark::State& state, const Shape* s) {
  Prepared& p = Cached(*s);
  if (!p.error.empty()) {
    state.SkipWithError(p.error.c_str());
    return;
  }
  std::vector<double> seconds[kVariants];
  const bool ok = Kind(*s) == BO_KIND_NRM2 ? TimeResultOnHost(state, p, seconds) : TimeOnDevice(state, p, seconds);
  if (!ok || seconds[kTuned].empty()) return;
  double med[kVariants];
  for (int v = 0; v < kVariants; ++v) med[v] = Median(seconds[v]);
  const double work = Work(*s);  // bytes or flops; both rates are in units of 1e9 per second
  state.counters["tuned_rate"] = work / med[kTuned] * 1e-9;
  state.counters["own_rate"] = work / med[kOwn] * 1e-9;
  state.counters["cublas_rate"] = work / med[kCublas] * 1e-9;
  state.counters["tuned_vs_cublas"] = med[kCublas] / med[kTuned];
  state.counters["own_vs_cublas"] = med[kCublas] / med[kOwn];
  state.counters["tuned_us"] = med[kTuned] * 1e6;
  state.counters["own_us"] = med[kOwn] * 1e6;
  state.counters["cublas_us"] = med[kCublas] * 1e6;
  state.counters["tuned_err"] = p.rel_err[kTuned];
  state.counters["own_err"] = p.rel_err[kOwn];
  state.counters["copies"] = double(p.copies);
  if (Kind(*s) == BO_KIND_NRM2) state.counters["result_on_host"] = 1;
  const std::string label =
      std::string("tuned=") + g.m.reg->entries[p.index[kTuned]].name + " own=" + g.m.reg->entries[p.index[kOwn]].name;
  state.SetLabel(label.c_str());
}

void RegisterAll(const std::vector<Shape>& shapes) {
  for (const Shape& s : shapes) {
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(s.name.c_str(), RunCase, &s);
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    // Big gemm/trsv/gemv calls: a few iterations give a stable median; --benchmark_min_time would probe with
    // growing counts and take minutes.
    const double per_iteration = kVariants * (EstimatedSeconds(s) + 20e-6);
    if (per_iteration > kFixedIterationsAbove)
      b->Iterations(std::clamp<int64_t>(int64_t(kFixedIterationBudget / per_iteration), 5, 50));
  }
}

// ---- Set-up: module (tests/gpu/gpu_module.h), device, stream, cuBLAS, benchmark context. ----

void HostLog(int /*level*/, const char* message) { std::fprintf(stderr, "blasoffload: %s\n", message); }

bool SetUp(const std::string& module_flag, std::string* err) {
  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    *err = format("no usable CUDA device (%s): nothing to benchmark",
                  ce != cudaSuccess ? cudaGetErrorString(ce) : "cudaGetDeviceCount found none");
    return false;
  }
  const int init = bo_gpu::load_and_init(module_flag, &HostLog, &g.m);
  if (init != BO_CUDA_OK) {
    *err = g.m.error + (init >= 0 ? ": nothing to benchmark" : "");
    return false;
  }
  // The module picks its device the same way (BLASOFFLOAD_DEVICE, default 0): our stream must live there too.
  g.device = bo_gpu::module_device();
  cudaError_t e = cudaSetDevice(g.device);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&g.prop, g.device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
  for (int v = 0; v < kVariants && e == cudaSuccess; ++v) {
    e = cudaEventCreate(&g.start[v]);
    if (e == cudaSuccess) e = cudaEventCreate(&g.stop[v]);
  }
  if (e == cudaSuccess) e = cudaHostAlloc(&g.pinned_result, sizeof(double), cudaHostAllocMapped);
  if (e != cudaSuccess) {
    *err = CudaError("setting up the device", e);
    return false;
  }
  cublasStatus_t st = cublasCreate(&g.cublas);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(g.cublas, g.stream);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(g.cublas, CUBLAS_POINTER_MODE_HOST);
  // The default math mode computes FP32 in FP32 (no TF32 tensor cores), as BLAS promises, and FP64 in FP64 (on the
  // FP64 tensor cores, which round as FP64 FMAs do); said explicitly in case a library default ever changes.
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(g.cublas, CUBLAS_DEFAULT_MATH);
  if (st != CUBLAS_STATUS_SUCCESS) {
    *err = format("cuBLAS set-up failed: %s", cublasGetStatusString(st));
    return false;
  }
  return true;
}

void TearDown() {
  g_cache.reset();
  if (g.cublas) cublasDestroy(g.cublas);
  for (int v = 0; v < kVariants; ++v) {
    if (g.start[v]) cudaEventDestroy(g.start[v]);
    if (g.stop[v]) cudaEventDestroy(g.stop[v]);
  }
  if (g.workspace) cudaFree(g.workspace);
  if (g.pinned_result) cudaFreeHost(g.pinned_result);
  if (g.stream) cudaStreamDestroy(g.stream);
  if (g.m.mod && g.m.mod->shutdown) g.m.mod->shutdown();
}

std::string Version(int v) { return format("%d.%d", v / 1000, (v % 1000) / 10); }

std::string Trimmed(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void AddContext() {
  benchmark::AddCustomContext("gpu", g.prop.name);
  benchmark::AddCustomContext("gpu_sms", std::to_string(g.prop.multiProcessorCount));
  benchmark::AddCustomContext("gpu_memory_gib", format("%.1f", g.prop.totalGlobalMem / 1073741824.0));
  benchmark::AddCustomContext("gpu_l2_mib", format("%.1f", g.prop.l2CacheSize / 1048576.0));
  int rt = 0, drv = 0, cublas = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cublasGetVersion(g.cublas, &cublas);
  benchmark::AddCustomContext("cuda_runtime", Version(rt));
  benchmark::AddCustomContext("cuda_driver", Version(drv));
  benchmark::AddCustomContext("cublas", format("%d.%d.%d", cublas / 10000, (cublas / 100) % 100, cublas % 100));
  benchmark::AddCustomContext("module", g.m.mod->name ? g.m.mod->name : "");
  benchmark::AddCustomContext("module_path", g.m.path);
  const char* info = g.m.reg->tuned_params_info();
  benchmark::AddCustomContext("tuned_params", info ? info : "(none)");
  const char* vendor = g.m.reg->vendor_info ? g.m.reg->vendor_info() : nullptr;
  benchmark::AddCustomContext("vendor", vendor ? vendor : "(none)");
  // Google Benchmark already writes a local "date"; this one is unambiguous.
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  benchmark::AddCustomContext("date_utc", date);
  std::ifstream commit(bo_gpu::exe_dir() + "/COMMIT");
  if (commit) {
    std::string text((std::istreambuf_iterator<char>(commit)), std::istreambuf_iterator<char>());
    benchmark::AddCustomContext("commit", Trimmed(text));
  }
  if (const char* r = bo_gpu::env_config("BO_READ_GBS"); r && *r) benchmark::AddCustomContext("read_gbs", r);
  benchmark::AddCustomContext("rotating_copies_span_mib", std::to_string(kRotateBytes >> 20));
}

void PrintHelp() {
  benchmark::PrintDefaultHelp();
  std::fprintf(stdout,
               "\nblasoffload_bench_kernels options:\n"
               "  --module=PATH   the CUDA module (else $BO_CUDA_MODULE, else <exe dir>/../../libblasoffload_cuda.so,\n"
               "                  else <exe dir>/../lib/, else <exe dir>/libblasoffload_cuda.so)\n"
               "Environment: BLASOFFLOAD_DEVICE (GPU index), BO_READ_GBS (read bandwidth for the report), and the\n"
               "module's own settings (the tuned table it loads).\n");
}

bool WantsListOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--benchmark_list_tests") return true;
    if (a.rfind("--benchmark_list_tests=", 0) == 0) {
      const std::string v = a.substr(a.find('=') + 1);
      return !(v == "false" || v == "0" || v == "no" || v == "f" || v == "n");
    }
  }
  return false;
}

}  // namespace
}  // namespace bo_bench

int main(int argc, char** argv) {
  using namespace bo_bench;
  std::string module_flag;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--module=", 9) == 0)
      module_flag = argv[i] + 9;
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  const bool list_only = WantsListOnly(argc, argv);  // before Initialize, which consumes the flag
  benchmark::Initialize(&argc, argv, PrintHelp);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const std::vector<Shape> shapes = AllShapes();
  RegisterAll(shapes);
  if (list_only) {  // listing needs no GPU
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  std::string err;
  if (!SetUp(module_flag, &err)) {
    std::fprintf(stderr, "blasoffload_bench_kernels: %s\n", err.c_str());
    return 2;
  }
  AddContext();
  benchmark::RunSpecifiedBenchmarks();
  TearDown();
  benchmark::Shutdown();
  return 0;
}
