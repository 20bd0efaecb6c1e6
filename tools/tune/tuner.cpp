// The tuning engine (see tuner.h), for the real and complex keys alike. Measurement protocol per tile:
// fill operands (random, never zeros; complex ones in both parts), compute a reference with the built-in configuration
// (cuBLAS for gemm, trsm, syrk and herk when present), then for each
// candidate: run once untimed (module loading, first-call setup), poison the output, run once and compare with the
// reference within the routine's error bound (an invalid candidate is recorded and never chosen), prune it if that
// first run was over 3x the tile's best so far, else time `reps` runs with CUDA events, each from an idle GPU on the
// next of several operand copies spanning >= 256 MB (cold L2), and take the median.
#include "tuner.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "device_kernels.h"

namespace bo::tune {
namespace {

constexpr size_t kRotateBytes = size_t(256) << 20;

std::string at_str(const GridSpec& g, const std::vector<int64_t>& at) {
  std::string s;
  for (size_t i = 0; i < at.size(); ++i) s += (i ? " " : "") + g.axes[i] + "=" + std::to_string(at[i]);
  return s;
}
size_t align256(size_t b) { return (b + 255) & ~size_t(255); }
bool ck(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "blasoffload-tune: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

Tuner::Tuner(const Options& o, const bo_kernel_registry* reg, std::string module_desc)
    : o_(o), reg_(reg), module_desc_(std::move(module_desc)) {}

bool Tuner::out_of_time() const {
  if (o_.max_seconds <= 0) return false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > o_.max_seconds;
}

bool Tuner::setup(std::string* error) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    *error = "no CUDA device";
    return false;
  }
  table_.device.name = p.name;
  table_.device.cc_major = p.major;
  table_.device.cc_minor = p.minor;
  table_.device.sm_count = p.multiProcessorCount;
  table_.device.memory_gib = double(p.totalGlobalMem) / double(1ull << 30);
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  table_.toolkit = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  table_.driver = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  table_.tuner = "blasoffload-tune 0.3 (" + module_desc_ + ")";
  char buf[32];
  std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  table_.created = buf;
  cudaStream_t st;
  if (!ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream")) return false;
  stream_ = st;
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  // Everything the largest tiles need (sgemv 65536^2: 16 GiB; sgemm 65536^2 with C, its saved copy and
  // the reference: 48 GiB) out of one pool; leave room for cuBLAS and the workspace.
  pool_bytes_ = std::min(free_b > (size_t(6) << 30) ? free_b - (size_t(6) << 30) : free_b / 2, size_t(70) << 30);
  if (!ck(cudaMalloc(&pool_, pool_bytes_), "device pool")) return false;
  ws_bytes_ = size_t(512) << 20;
  if (!ck(cudaMalloc(&ws_, ws_bytes_), "workspace") || !ck(cudaMalloc(&scratch_, 256), "scratch")) return false;
  std::fprintf(stderr, "blasoffload-tune: %s (sm_%d%d, %d SMs, %.1f GiB), CUDA %s, pool %.1f GiB\n", p.name, p.major,
               p.minor, p.multiProcessorCount, table_.device.memory_gib, table_.toolkit.c_str(),
               double(pool_bytes_) / double(1ull << 30));
  return true;
}

void Tuner::measure_bandwidth() {
  std::fprintf(stderr, "blasoffload-tune: read/write bandwidth (SREAD/SMSET)");
  const size_t maxb = std::min(pool_bytes_, size_t(4) << 30);
  for (size_t b = 4096; b <= maxb; b *= 4) {
    const int reps = b < (size_t(64) << 20) ? 20 : 5;
    // Small sizes are timed on data spread over the pool: rotate the start past L2.
    table_.read.push_back({double(b), measure_read_gbs(pool_, b, reps)});
    table_.write.push_back({double(b), measure_write_gbs(pool_, b, reps)});
    std::fprintf(stderr, " .");
  }
  std::fprintf(stderr, "\nblasoffload-tune: read %.0f GB/s, write %.0f GB/s at %.0f MiB\n", table_.read.back().gbs,
               table_.write.back().gbs, table_.read.back().bytes / 1048576.0);
}

void Tuner::save(const char* why) {
  std::string err;
  if (!bo::tuning::save_table(o_.out, table_, &err))
    std::fprintf(stderr, "blasoffload-tune: cannot write %s: %s\n", o_.out.c_str(), err.c_str());
  else
    std::fprintf(stderr, "blasoffload-tune: wrote %s (%s)\n", o_.out.c_str(), why);
}

// Operands of one tile, `copies` times, carved from the pool (byte offsets: elements are 4, 8 or 16 bytes).
struct Tuner::Buffers {
  int copies = 0;
  size_t es = 4;      // element size (a complex element is two reals)
  size_t stride = 0;  // bytes per copy
  // Per copy byte offsets of: a, b (x for Level 1/2), c (y / x), saved input of c (strsv rhs, sgemm C
  // for beta = 1).
  size_t a = 0, b = 0, c = 0;
  int64_t na = 0, nb = 0, nc = 0;
  char* ref = nullptr;    // reference output
  char* saved = nullptr;  // one saved copy of the output's input (trsv rhs, gemm C0)
  char* base = nullptr;
  void* A(int i) const { return base + i * stride + a; }
  void* B(int i) const { return base + i * stride + b; }
  void* C(int i) const { return base + i * stride + c; }
};

namespace {
// The device helpers on untyped buffers of reals of size rs (4 or 8 bytes): n counts reals, so a complex operand is
// twice its element count (its parts interleaved); only the triangle needs to know its elements are complex.
void fill_uniform_es(size_t rs, void* x, int64_t n, uint32_t seed, cudaStream_t st) {
  if (rs == 8)
    fill_uniform(static_cast<double*>(x), n, seed, st);
  else
    fill_uniform(static_cast<float*>(x), n, seed, st);
}
void fill_lower_triangle_es(size_t rs, bool cpx, void* a, int64_t n, int64_t lda, uint32_t seed, cudaStream_t st) {
  if (rs == 8)
    cpx ? fill_lower_triangle_complex(static_cast<double*>(a), n, lda, seed, st)
        : fill_lower_triangle(static_cast<double*>(a), n, lda, seed, st);
  else
    cpx ? fill_lower_triangle_complex(static_cast<float*>(a), n, lda, seed, st)
        : fill_lower_triangle(static_cast<float*>(a), n, lda, seed, st);
}
void fill_nan_es(size_t rs, void* x, int64_t n, cudaStream_t st) {
  if (rs == 8)
    fill_nan(static_cast<double*>(x), n, st);
  else
    fill_nan(static_cast<float*>(x), n, st);
}
void max_scaled_error_es(size_t rs, const void* x, const void* ref, int64_t n, double tol_abs, double tol_rel,
                         float* out, cudaStream_t st) {
  if (rs == 8)
    max_scaled_error(static_cast<const double*>(x), static_cast<const double*>(ref), n, tol_abs, tol_rel, out, st);
  else
    max_scaled_error(static_cast<const float*>(x), static_cast<const float*>(ref), n, float(tol_abs), float(tol_rel),
                     out, st);
}
}  // namespace

void Tuner::tune_tile(const GridSpec& g, const std::vector<int64_t>& at, bo::tuning::Tile* tile) {
  cudaStream_t st = static_cast<cudaStream_t>(stream_);
  const int kind = bo_routine_kind_of(g.routine);
  const bo_precision prec = bo_routine_precision(g.routine);
  const bool dbl = bo_real_size(prec) == 8, cpx = bo_is_complex(prec);
  // herk is syrk's update with real scalars (and a real diagonal): the same operands and checks.
  const bool nrm2 = kind == BO_KIND_NRM2, gemv = kind == BO_KIND_GEMV, trsv = kind == BO_KIND_TRSV,
             gemm = kind == BO_KIND_GEMM, trsm = kind == BO_KIND_TRSM, herk = kind == BO_KIND_HERK,
             syrk = kind == BO_KIND_SYRK || herk;
  const double eps = dbl ? 1.0 / 9007199254740992.0 : 1.0 / (1 << 24);
  const int64_t m = nrm2 || trsv ? 1 : at[0];
  const int64_t n = gemv || gemm || trsm ? at[1] : at[0];
  const int64_t k = gemm ? at[2] : syrk ? at[1] : 0;
  const Work wk = tile_work(g, at);
  const double work = wk.read + wk.written;
  // Far too long to time against the rest of the grid (over 2.2e12 real flops: t^2 r, four times that for complex).
  if (trsm && wk.read > 2.2e12) {
    tile->config.clear();
    return;
  }
  // LU-shaped gemm updates (k <= 256) as LAPACK issues them: alpha = -1, beta = 1; deep products beta = 0.
  const bool beta1 = gemm && k <= 256;
  Buffers bf;
  bf.es = size_t(bo_element_size(prec));
  const size_t es = bf.es, rs = size_t(bo_real_size(prec));
  const int64_t parts = cpx ? 2 : 1;  // reals per element
  if (nrm2) {
    bf.nb = n, bf.nc = 1;
  } else if (gemv) {
    bf.na = m * n, bf.nb = g.op == 'N' ? n : m, bf.nc = g.op == 'N' ? m : n;
  } else if (trsv) {
    bf.na = n * n, bf.nc = n;
  } else if (trsm) {
    bf.na = m * m, bf.nc = m * n;
  } else if (syrk) {
    bf.na = n * k, bf.nc = n * n;
  } else {
    bf.na = m * k, bf.nb = k * n, bf.nc = m * n;
  }
  bf.a = 0;
  bf.b = align256(es * size_t(bf.na));
  bf.c = bf.b + align256(es * size_t(bf.nb));
  bf.stride = bf.c + align256(es * size_t(bf.nc));
  const size_t fixed = 2 * align256(es * size_t(bf.nc));  // ref + saved
  if (bf.stride + fixed > pool_bytes_) {
    tile->config.clear();
    std::fprintf(stderr, "  %s: does not fit in the pool, skipped\n", at_str(g, at).c_str());
    return;
  }
  bf.copies = int(std::clamp<size_t>((kRotateBytes + bf.stride - 1) / bf.stride, 1, 16));
  bf.copies = int(std::min<size_t>(bf.copies, (pool_bytes_ - fixed) / bf.stride));
  bf.base = pool_;
  bf.ref = pool_ + bf.copies * bf.stride;
  bf.saved = bf.ref + align256(es * size_t(bf.nc));
  // The output compared and poisoned, in reals: a norm's result is one real whatever its vector's elements.
  const int64_t nc_reals = nrm2 ? 1 : bf.nc * parts;
  for (int i = 0; i < bf.copies; ++i) {
    if (trsv)
      fill_lower_triangle_es(rs, cpx, bf.A(i), n, n, 11 + i, st);
    else if (trsm)
      fill_lower_triangle_es(rs, cpx, bf.A(i), m, m, 11 + i, st);
    else
      fill_uniform_es(rs, bf.A(i), bf.na * parts, 11 + i, st);
    fill_uniform_es(rs, bf.B(i), bf.nb * parts, 101 + i, st);
    fill_uniform_es(rs, bf.C(i), bf.nc * parts, 1001 + i, st);
  }
  fill_uniform_es(rs, bf.saved, bf.nc * parts, 7, st);  // trsv rhs / gemm C0
  // Complex scalars get imaginary parts, so that a configuration dropping alpha_i or beta_i fails validation (herk's
  // scalars are real by definition); a zero beta stays zero, as the real keys measure it.
  const double ai = cpx && !herk ? 0.5 : 0.0, bi = cpx && !herk ? 0.25 : 0.0;
  auto args_for = [&](int i) {
    bo_call a{};
    a.routine = g.routine;
    if (nrm2) {
      a.n = n, a.b = bf.B(i), a.incx = 1, a.c = bf.C(i);
    } else if (gemv) {
      a.op[0] = g.op, a.m = m, a.n = n, a.alpha = 1.0, a.alpha_i = ai, a.beta = 0.0, a.a = bf.A(i);
      a.lda = std::max<int64_t>(m, 1);
      a.b = bf.B(i), a.c = bf.C(i), a.incx = 1, a.incy = 1;
    } else if (trsv) {
      a.op[0] = 'L', a.op[1] = g.op, a.op[2] = 'N', a.n = n, a.a = bf.A(i), a.lda = std::max<int64_t>(n, 1);
      a.c = bf.C(i), a.incx = 1;
    } else if (trsm) {
      a.op[0] = 'L', a.op[1] = 'L', a.op[2] = 'N', a.op[3] = 'N', a.m = m, a.n = n, a.alpha = 1.0, a.alpha_i = ai;
      a.a = bf.A(i), a.lda = m, a.c = bf.C(i), a.ldc = m;
    } else if (syrk) {  // as potrf's trailing update (herk: zpotrf's)
      a.op[0] = 'L', a.op[1] = 'N', a.n = n, a.k = k, a.alpha = -1.0, a.alpha_i = ai, a.beta = 1.0, a.beta_i = bi;
      a.a = bf.A(i), a.lda = n, a.c = bf.C(i), a.ldc = n;
    } else {
      a.op[0] = 'N', a.op[1] = 'N', a.m = m, a.n = n, a.k = k, a.alpha = beta1 ? -1.0 : 1.0, a.alpha_i = ai;
      a.beta = beta1 ? 1.0 : 0.0, a.beta_i = beta1 ? bi : 0.0;
      a.a = bf.A(i), a.lda = std::max<int64_t>(m, 1), a.b = bf.B(i), a.ldb = std::max<int64_t>(k, 1), a.c = bf.C(i);
      a.ldc = std::max<int64_t>(m, 1);
    }
    return a;
  };
  // The output's input before a run: trsv's right-hand side and gemm's C (beta = 1) are restored; an
  // output that is not read (beta = 0, nrm2) is poisoned so a kernel leaving it unwritten fails.
  auto prepare = [&](int i, bool poison) {
    if (trsv || beta1 || trsm || syrk)
      cudaMemcpyAsync(bf.C(i), bf.saved, es * size_t(bf.nc), cudaMemcpyDeviceToDevice, st);
    else if (poison)
      fill_nan_es(rs, bf.C(i), nc_reals, st);
  };
  auto launch = [&](int idx, int i) -> int {
    bo_call a = args_for(i);
    const size_t w = reg_->entries[idx].workspace_bytes(&a);
    if (w > ws_bytes_) return int(cudaErrorMemoryAllocation);
    return reg_->entries[idx].launch(&a, ws_, st);
  };
  // Error bound of the comparison: inputs in [-1, 1), so each output is a sum of `len` products of size
  // <= 1; 16 len eps covers a different summation order and still catches a missing or doubled term.
  const double len = gemv ? double(g.op == 'N' ? n : m) : gemm || syrk ? double(k) : double(n);
  double tol_abs = 16 * eps * std::max(1.0, len), tol_rel = 16 * eps;
  // A part of a complex product sums two real products, of parts up to 1, and the complex scalars exceed 1 in modulus.
  if (cpx) tol_abs *= 4;
  if (nrm2) tol_abs = 1e-30, tol_rel = dbl ? 1e-10 : 1e-5;  // double: n eps at n = 1e6, sqrt(n) eps far beyond
  if (trsv || trsm) tol_abs = tol_rel = dbl ? 1e-12 : 1e-4;
  if (syrk) tol_abs += 4 * eps;
  if (beta1) tol_abs += 4 * eps;

  // Reference: cuBLAS for gemm/trsm/syrk/herk when present (the deep products are where a template's bug would show),
  // else the built-in configuration, which the GPU test suite checks against higher precision (complex: cuBLAS's, the
  // norms ours).
  bo_call a0 = args_for(0);
  int ref_idx = reg_->select_ex(g.routine, &a0, BO_SELECT_BUILTIN);
  if (gemm || trsm || syrk)
    for (size_t i = 0; i < reg_->count; ++i)
      if (reg_->entries[i].vendor && reg_->entries[i].routine == g.routine && reg_->entries[i].can_implement(&a0))
        ref_idx = int(i);
  if (ref_idx < 0) {  // the complex keys without cuBLAS's complex routines (an older or partial cuBLAS)
    std::fprintf(stderr, "  %s: no configuration can run it (%s)\n", at_str(g, at).c_str(), reg_->vendor_info());
    return;
  }
  prepare(0, true);
  if (launch(ref_idx, 0) != 0 ||
      cudaMemcpyAsync(bf.ref, bf.C(0), es * size_t(bf.nc), cudaMemcpyDeviceToDevice, st) != cudaSuccess ||
      cudaStreamSynchronize(st) != cudaSuccess) {
    std::fprintf(stderr, "  %s: reference run failed (%s)\n", at_str(g, at).c_str(),
                 cudaGetErrorString(cudaGetLastError()));
    return;
  }
  cudaEvent_t ev[64];
  for (auto& e : ev) cudaEventCreate(&e);
  double best_t = 0;
  std::string best_name, best_own;
  double best_own_t = 0;
  int next = 1 % bf.copies;
  for (size_t idx = 0; idx < reg_->count; ++idx) {
    const bo_kernel_entry& e = reg_->entries[idx];
    bo_call a = args_for(0);
    if (e.routine != g.routine || !e.can_implement(&a)) continue;
    const std::string cand = e.vendor ? "cublas" : e.family;
    Measurement ms;
    if (const Measurement* c = cache_.find(g.key, at, cand)) {
      ms = *c;
    } else {
      // Warm-up: the first launch of a kernel (or cuBLAS call) loads its module and sets things up; that
      // must not count against it. Then the validation run, timed to prune hopeless candidates.
      prepare(0, true);
      if (launch(int(idx), 0) != 0 || cudaStreamSynchronize(st) != cudaSuccess) cudaGetLastError();
      prepare(0, true);
      cudaEventRecord(ev[0], st);
      int rc = launch(int(idx), 0);
      cudaEventRecord(ev[1], st);
      max_scaled_error_es(rs, bf.C(0), bf.ref, nc_reals, tol_abs, tol_rel, scratch_, st);
      float err = INFINITY, first_ms = 0;
      if (rc == 0 && cudaStreamSynchronize(st) == cudaSuccess) {
        cudaMemcpy(&err, scratch_, 4, cudaMemcpyDeviceToHost);
        cudaEventElapsedTime(&first_ms, ev[0], ev[1]);
      } else {
        cudaGetLastError();
      }
      if (!(err <= 1.0f)) {
        ms.note = rc ? std::string("launch failed: ") + cudaGetErrorString(cudaError_t(rc))
                     : "wrong result (error " + std::to_string(err) + " x bound)";
      } else if (best_t > 0 && first_ms * 1e3 > 3 * best_t) {
        ms.valid = true;
        ms.pruned = true;
        ms.time_us = first_ms * 1e3;
        ms.note = "first run over 3x the best so far";
      } else {
        ms.valid = true;
        const int reps = int(std::clamp(std::ceil(o_.target_ms / std::max(1e-3, double(first_ms))), 2.0, 31.0));
        // Each timed call starts on an idle GPU, as a BLAS call from the host does: the start event fires at
        // once and the kernel arrives after the host's launch overhead, so for small shapes a configuration
        // needing two launches (split + finalize) pays for both, as it would in the library.
        std::vector<float> t;
        for (int r = 0; r < reps; ++r) {
          prepare(next, false);
          cudaStreamSynchronize(st);
          cudaEventRecord(ev[2 * r + 2], st);
          launch(int(idx), next);
          cudaEventRecord(ev[2 * r + 3], st);
          next = (next + 1) % bf.copies;
        }
        cudaStreamSynchronize(st);
        for (int r = 0; r < reps; ++r) {
          float x = 0;
          cudaEventElapsedTime(&x, ev[2 * r + 2], ev[2 * r + 3]);
          t.push_back(x);
        }
        std::sort(t.begin(), t.end());
        ms.time_us = double(t[t.size() / 2]) * 1e3;
      }
      if (ms.valid && ms.time_us > 0) ms.rate = work / (ms.time_us * 1e-6) / 1e9;
      cache_.put(g.key, at, cand, ms);
    }
    if (!ms.valid) {
      std::fprintf(stderr, "  %s: %s INVALID: %s\n", at_str(g, at).c_str(), cand.c_str(), ms.note.c_str());
      continue;
    }
    if (ms.pruned) continue;
    tile->candidates[cand] = ms.rate;
    if (e.vendor == 2) continue;  // timed as the reference, never chosen (see registry.h)
    if (best_t == 0 || ms.time_us < best_t) best_t = ms.time_us, best_name = cand;
    if (!e.vendor && (best_own_t == 0 || ms.time_us < best_own_t)) best_own_t = ms.time_us, best_own = cand;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  if (best_name.empty()) return;
  tile->config = best_name;
  tile->time_us = best_t;
  tile->rate = work / (best_t * 1e-6) / 1e9;
  tile->own_config = best_own.empty() ? best_name : best_own;
  tile->own_rate = best_own.empty() ? tile->rate : work / (best_own_t * 1e-6) / 1e9;
  if (tile->candidates.count("cublas")) tile->cublas_rate = tile->candidates["cublas"];
  if (g.unit != "GFLOP/s" && !table_.read.empty()) {
    // Seed 000 eqs. 2-4: the bytes read at the measured read bandwidth for that size, plus the bytes
    // written at the write bandwidth.
    const double t = wk.read / (table_.read_gbs(wk.read) * 1e9) + wk.written / (table_.write_gbs(wk.written) * 1e9);
    if (t > 0) tile->model_rate = work / t / 1e9;
  }
}

bool Tuner::tune_kernel(const GridSpec& g) {
  bo::tuning::KernelTable kt;
  kt.unit = g.unit;
  kt.axes = g.axes;
  kt.grid = g.points;
  const int64_t count = tile_count(g);
  for (int64_t t = 0; t < count; ++t) {
    if (out_of_time()) {
      if (!kt.tiles.empty()) {
        kt.finalize();
        table_.kernels[g.key] = kt;
      }
      return false;
    }
    const auto at = tile_at(g, t);
    bo::tuning::Tile tile;
    tile.at = at;
    const auto t0 = std::chrono::steady_clock::now();
    tune_tile(g, at, &tile);
    if (tile.config.empty()) continue;
    kt.tiles.push_back(tile);
    std::fprintf(
        stderr, "[%-7s %3lld/%-3lld %5.1fs] %-22s %-32s %9.1f %s  own %-30s cuBLAS %9.1f  model %9.1f  (%.2fs)\n",
        g.key.c_str(), (long long)(t + 1), (long long)count,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(), at_str(g, at).c_str(),
        tile.config.c_str(), tile.rate, g.unit.c_str(), tile.own_config.c_str(), tile.cublas_rate.value_or(0.0),
        tile.model_rate.value_or(0.0), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  kt.finalize();
  table_.kernels[g.key] = kt;
  return true;
}

int Tuner::run() {
  start_ = std::chrono::steady_clock::now();
  std::string err;
  if (!setup(&err)) {
    std::fprintf(stderr, "blasoffload-tune: %s\n", err.c_str());
    return 1;
  }
  if (o_.cache.empty()) o_.cache = o_.out + ".cache.jsonl";
  if (!cache_.open(o_.cache, table_.device.name, module_desc_, o_.quick, o_.fresh, &err)) {
    std::fprintf(stderr, "blasoffload-tune: %s\n", err.c_str());
    return 1;
  }
  if (cache_.loaded())
    std::fprintf(stderr, "blasoffload-tune: resuming: %zu measurements from %s\n", cache_.loaded(), o_.cache.c_str());
  // A run over some kernels updates an existing table for this GPU: the other kernels' tiles are kept.
  if (!o_.kernels.empty()) {
    bo::tuning::Table old;
    std::string why;
    if (bo::tuning::load_table(o_.out, &old, &why) && old.device.name == table_.device.name) {
      for (auto& [key, kt] : old.kernels)
        if (!key_selected(o_.kernels, key)) table_.kernels[key] = kt;
      std::fprintf(stderr, "blasoffload-tune: updating %s (keeping its other kernels)\n", o_.out.c_str());
    }
  }
  measure_bandwidth();
  // cuBLAS's identity goes into the table (its entries report availability through can_implement).
  table_.cublas = reg_->vendor_info();
  std::fprintf(stderr, "blasoffload-tune: %s\n", table_.cublas.c_str());
  for (const GridSpec& g : grid_specs(o_.quick)) {
    if (!key_selected(o_.kernels, g.key)) continue;
    std::fprintf(stderr, "blasoffload-tune: %s: %lld tiles\n", g.key.c_str(), (long long)tile_count(g));
    if (!tune_kernel(g)) {
      save("incomplete: time limit reached; run again to resume from the cache");
      return 3;
    }
    save(("after " + g.key).c_str());
  }
  save("complete");
  return 0;
}

}  // namespace bo::tune
