// blasoffload_bench_kernels's cases before timing: rotating operand copies filled on the device, the configurations
// the registry selects, each variant's call, and the check of ours against cuBLAS that also warms up.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_kernels.h"
#include "device_fill.h"

namespace bo_bench {

std::unique_ptr<Prepared> g_cache;

namespace {

// Below this size of one copy, at least two copies exist even if one would span kRotateBytes (it cannot).
constexpr size_t kTwoCopiesBelow = size_t(128) << 20;
// Left free for the CUDA contexts' growth, cuBLAS's own workspace and our kernels' workspace.
constexpr size_t kDeviceReserve = size_t(768) << 20;
// A result further than this from cuBLAS's (max abs difference over max abs value) is reported, not timed.
constexpr double kVerifyTolerance = 1e-2;
constexpr uint64_t kSeedA = 11, kSeedB = 22, kSeedC = 33, kSeedSaved = 44;

// Device fills in the shape's precision (device_fill.h).
cudaError_t Fill(const Shape& s, void* p, size_t count, uint64_t seed, size_t first) {
  return IsDouble(s) ? FillUniform(static_cast<double*>(p), count, seed, first, g.stream)
                     : FillUniform(static_cast<float*>(p), count, seed, first, g.stream);
}
cudaError_t FillLower(const Shape& s, void* p, size_t copies, size_t stride, uint64_t seed) {
  return IsDouble(s) ? FillLowerTriangular(static_cast<double*>(p), s.n, copies, stride, seed, g.stream)
                     : FillLowerTriangular(static_cast<float*>(p), s.n, copies, stride, seed, g.stream);
}

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

}  // namespace

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

namespace {

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

}  // namespace

Prepared& Cached(const Shape& s) {
  if (!g_cache || g_cache->shape != &s) {
    g_cache.reset();  // free the previous case's copies before allocating this one's
    g_cache = Prepare(s);
  }
  return *g_cache;
}

}  // namespace bo_bench
