// snrm2 / dnrm2: one pass, deterministic two-stage reduction.
//
// Single precision:
// Each element is squared and summed in double: a float squared cannot overflow or underflow to zero
// in double (|x|^2 <= 1.2e77, >= 2e-90), so no scaling pass is needed and the result is the exactly
// rounded sqrt of a sum with ~n*2^-53 relative error: error bound |r - ||x||| <= (1 + n*2^-52) ulp-ish,
// in practice <= 1 ulp of float. Inf anywhere gives Inf, NaN gives NaN (Inf and NaN: NaN, as the
// reference). Stage 1: G blocks (G depends on n only) each reduce a fixed strided subset in a fixed
// tree order into partial[G]; stage 2: one block reduces partial[] in a fixed order. No atomics.
// Double precision: a double squared can overflow or underflow, so each element goes to one of three
// accumulators by magnitude (Blue's algorithm, as LAPACK 3.10's dnrm2 and the reference BLAS): |x| > 2^486 as
// (x 2^-538)^2, |x| < 2^-511 as (x 2^537)^2, else x^2; the three sums are reduced like the single-precision one
// and combined at the end without overflow or harmful underflow. NaN anywhere gives NaN (it lands in the middle
// sum, which the combination always propagates), else Inf anywhere gives Inf.
#pragma once
#include <cooperative_groups.h>

#include <atomic>

#include "kernels/common.cuh"

namespace bok {

template <int THREADS>
__device__ inline double block_sum(double v, double* sh) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  v = 0.0;
  if (warp == 0) {
    v = lane < THREADS / 32 ? sh[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

// This thread's sum of squares over its share of the grid-strided chunks (16-byte loads where x allows),
// in a fixed order: what both the two-launch and the one-launch kernels reduce.
template <int THREADS, int UNROLL, int VEC>
__device__ inline double snrm2_thread_sum(int64_t n, const float* __restrict__ x, int64_t incx) {
  double acc = 0.0;
  const int64_t chunk = int64_t(THREADS) * UNROLL * VEC;
  const bool vec_ok = VEC == 4 && incx == 1 && (reinterpret_cast<uintptr_t>(x) & 15) == 0;
  for (int64_t base = int64_t(blockIdx.x) * chunk; base < n; base += int64_t(gridDim.x) * chunk) {
    if (vec_ok && base + chunk <= n) {
      float4 v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        v[u] = __ldg(reinterpret_cast<const float4*>(x + base) + u * THREADS + threadIdx.x);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        acc += double(v[u].x) * v[u].x + double(v[u].y) * v[u].y + double(v[u].z) * v[u].z + double(v[u].w) * v[u].w;
    } else {
      float v[UNROLL * VEC];
#pragma unroll
      for (int u = 0; u < UNROLL * VEC; ++u) {
        const int64_t i = base + int64_t(u) * THREADS + threadIdx.x;
        v[u] = i < n ? __ldg(x + i * incx) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < UNROLL * VEC; ++u) acc += double(v[u]) * v[u];
    }
  }
  return acc;
}

// Blue's accumulators (double precision): small, medium and big magnitudes, each scaled into range.
struct BlueAcc {
  double sml = 0.0, med = 0.0, big = 0.0;
};
inline constexpr double kBlueTsml = 0x1p-511, kBlueTbig = 0x1p486, kBlueSsml = 0x1p537, kBlueSbig = 0x1p-538;
__device__ __forceinline__ void blue_add(BlueAcc& a, double x) {
  const double ax = fabs(x);
  if (ax > kBlueTbig) {
    const double y = ax * kBlueSbig;
    a.big += y * y;
  } else if (ax < kBlueTsml) {
    const double y = ax * kBlueSsml;
    a.sml += y * y;
  } else {
    a.med += ax * ax;  // NaN lands here
  }
}
// ||x|| from the three sums (LAPACK 3.10 dnrm2's combination).
__device__ inline double blue_finish(double asml, double amed, double abig) {
  if (abig > 0.0) {
    if (amed > 0.0 || amed != amed) abig += (amed * kBlueSbig) * kBlueSbig;
    return sqrt(abig) * (1.0 / kBlueSbig);
  }
  if (asml > 0.0) {
    if (amed > 0.0 || amed != amed) {
      const double ymed = sqrt(amed), ysml = sqrt(asml) / kBlueSsml;
      const double ymin = ysml > ymed ? ymed : ysml, ymax = ysml > ymed ? ysml : ymed;
      const double r = ymin / ymax;
      return sqrt(ymax * ymax * (1.0 + r * r));
    }
    return sqrt(asml) * (1.0 / kBlueSsml);
  }
  return sqrt(amed);
}
template <int THREADS>
__device__ inline BlueAcc block_sum(BlueAcc v, double* sh) {
  BlueAcc r;
  r.sml = block_sum<THREADS>(v.sml, sh);
  __syncthreads();  // sh reused
  r.med = block_sum<THREADS>(v.med, sh);
  __syncthreads();
  r.big = block_sum<THREADS>(v.big, sh);
  return r;
}

// This thread's three sums over its share of the grid-strided chunks (16-byte loads where x allows), in a fixed
// order.
template <int THREADS, int UNROLL, int VEC>
__device__ inline BlueAcc dnrm2_thread_sum(int64_t n, const double* __restrict__ x, int64_t incx) {
  BlueAcc acc;
  const int64_t chunk = int64_t(THREADS) * UNROLL * VEC;
  const bool vec_ok = VEC == 2 && incx == 1 && (reinterpret_cast<uintptr_t>(x) & 15) == 0;
  for (int64_t base = int64_t(blockIdx.x) * chunk; base < n; base += int64_t(gridDim.x) * chunk) {
    if (vec_ok && base + chunk <= n) {
      double2 v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        v[u] = __ldg(reinterpret_cast<const double2*>(x + base) + u * THREADS + threadIdx.x);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        blue_add(acc, v[u].x);
        blue_add(acc, v[u].y);
      }
    } else {
      double v[UNROLL * VEC];
#pragma unroll
      for (int u = 0; u < UNROLL * VEC; ++u) {
        const int64_t i = base + int64_t(u) * THREADS + threadIdx.x;
        v[u] = i < n ? __ldg(x + i * incx) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < UNROLL * VEC; ++u) blue_add(acc, v[u]);
    }
  }
  return acc;
}

// The per-type pieces of the kernels below: float sums squares in double (partial: one double per block),
// double keeps Blue's three sums (partial: three arrays of `stride` doubles).
template <class T>
struct Nrm2Traits;
template <>
struct Nrm2Traits<float> {
  using Acc = double;
  static constexpr int kParts = 1;
  template <int THREADS, int UNROLL, int VEC>
  __device__ static double thread_sum(int64_t n, const float* x, int64_t incx) {
    return snrm2_thread_sum<THREADS, UNROLL, VEC>(n, x, incx);
  }
  __device__ static void store(double* partial, int64_t, int64_t i, double v) { partial[i] = v; }
  __device__ static void add_partial(double& acc, const double* partial, int64_t, int64_t i) { acc += partial[i]; }
  __device__ static void add_partial_cg(double& acc, const double* partial, int64_t, int64_t i) {
    acc += __ldcg(partial + i);
  }
  __device__ static float finish(double acc) { return float(sqrt(acc)); }
};
template <>
struct Nrm2Traits<double> {
  using Acc = BlueAcc;
  static constexpr int kParts = 3;
  template <int THREADS, int UNROLL, int VEC>
  __device__ static BlueAcc thread_sum(int64_t n, const double* x, int64_t incx) {
    return dnrm2_thread_sum<THREADS, UNROLL, VEC>(n, x, incx);
  }
  __device__ static void store(double* partial, int64_t stride, int64_t i, const BlueAcc& v) {
    partial[i] = v.sml;
    partial[stride + i] = v.med;
    partial[2 * stride + i] = v.big;
  }
  __device__ static void add_partial(BlueAcc& acc, const double* partial, int64_t stride, int64_t i) {
    acc.sml += partial[i];
    acc.med += partial[stride + i];
    acc.big += partial[2 * stride + i];
  }
  __device__ static void add_partial_cg(BlueAcc& acc, const double* partial, int64_t stride, int64_t i) {
    acc.sml += __ldcg(partial + i);
    acc.med += __ldcg(partial + stride + i);
    acc.big += __ldcg(partial + 2 * stride + i);
  }
  __device__ static double finish(const BlueAcc& a) { return blue_finish(a.sml, a.med, a.big); }
};

template <class T, int THREADS, int UNROLL, int VEC>
__global__ void __launch_bounds__(THREADS)
    nrm2_stage1(int64_t n, const T* __restrict__ x, int64_t incx, double* __restrict__ partial) {
  using Tr = Nrm2Traits<T>;
  __shared__ double sh[32];
  typename Tr::Acc acc = Tr::template thread_sum<THREADS, UNROLL, VEC>(n, x, incx);
  acc = block_sum<THREADS>(acc, sh);
  if (threadIdx.x == 0) Tr::store(partial, gridDim.x, blockIdx.x, acc);
}

template <class T, int THREADS>
__global__ void __launch_bounds__(THREADS)
    nrm2_stage2(int g, const double* __restrict__ partial, T* __restrict__ result) {
  using Tr = Nrm2Traits<T>;
  __shared__ double sh[32];
  typename Tr::Acc acc{};
  for (int i = threadIdx.x; i < g; i += THREADS) Tr::add_partial(acc, partial, g, i);
  acc = block_sum<THREADS>(acc, sh);
  if (threadIdx.x == 0) result[0] = Tr::finish(acc);
}

template <class T, int THREADS, int UNROLL, int VEC>
struct Nrm2 {
  using Elem = T;
  static constexpr int kMaxBlocks = 1024;
  static std::string name() {
    return std::string(prec_letter<T>()) + "nrm2_" + std::to_string(THREADS) + "_" + std::to_string(UNROLL) + "_v" +
           std::to_string(VEC);
  }
  static int blocks(int64_t n) {
    int64_t g = cdiv(n, int64_t(THREADS) * UNROLL * VEC);
    return int(g < 1 ? 1 : (g > kMaxBlocks ? kMaxBlocks : g));
  }
  static bool can_implement(int64_t n, int64_t incx) { return n >= 1 && incx >= 1; }
  static size_t workspace(int64_t n) { return sizeof(double) * Nrm2Traits<T>::kParts * size_t(blocks(n)); }
  static cudaError_t launch(int64_t n, const T* x, int64_t incx, T* result, void* ws, cudaStream_t s) {
    const int g = blocks(n);
    double* partial = static_cast<double*>(ws);
    nrm2_stage1<T, THREADS, UNROLL, VEC><<<g, THREADS, 0, s>>>(n, x, incx, partial);
    nrm2_stage2<T, 256><<<1, 256, 0, s>>>(g, partial, result);
    return cudaGetLastError();
  }
};

// One-launch variant for the latency-bound sizes (n <= 1e7): a cooperative launch, every block writes its
// partial, a grid-wide barrier, then block 0 sums the partials in index order. No memset, no second kernel,
// no atomics in the sum: deterministic. The grid never exceeds what is co-resident (a cooperative launch
// requires it); it is min(blocks for n, 1056) on an H100, so results depend on n only there.
template <class T, int THREADS, int UNROLL, int VEC>
__global__ void __launch_bounds__(THREADS) nrm2_onepass(int64_t n, const T* __restrict__ x, int64_t incx,
                                                        double* __restrict__ partial, T* __restrict__ result) {
  using Tr = Nrm2Traits<T>;
  constexpr int64_t kStride = 1056;  // Nrm2OnePass::kMaxBlocks
  __shared__ double sh[32];
  typename Tr::Acc acc = Tr::template thread_sum<THREADS, UNROLL, VEC>(n, x, incx);
  acc = block_sum<THREADS>(acc, sh);
  if (threadIdx.x == 0) Tr::store(partial, kStride, blockIdx.x, acc);
  cooperative_groups::this_grid().sync();
  if (blockIdx.x != 0) return;
  typename Tr::Acc s{};
  for (int i = threadIdx.x; i < int(gridDim.x); i += THREADS) Tr::add_partial_cg(s, partial, kStride, i);
  __syncthreads();  // sh reused
  s = block_sum<THREADS>(s, sh);
  if (threadIdx.x == 0) result[0] = Tr::finish(s);
}

template <class T, int THREADS, int UNROLL, int VEC>
struct Nrm2OnePass {
  using Elem = T;
  static constexpr int kMaxBlocks = 1056;  // 8 per SM on a 132-SM H100
  static constexpr bool valid() { return THREADS % 32 == 0 && THREADS <= 1024 && (VEC == 1 || VEC == kVecN<T>); }
  static std::string name() {
    return std::string(prec_letter<T>()) + "nrm2_1p_" + std::to_string(THREADS) + "_" + std::to_string(UNROLL) + "_v" +
           std::to_string(VEC);
  }
  // Co-resident blocks of this kernel on the current device (a cooperative launch's upper bound), once per device: GPUs
  // of one process may differ in their SM count.
  static int resident() {
    static std::atomic<int> known[64] = {};
    int dev = 0;
    cudaGetDevice(&dev);
    if (dev >= 0 && dev < 64)
      if (const int r = known[dev].load(std::memory_order_relaxed)) return r;
    int sms = 0, per = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, nrm2_onepass<T, THREADS, UNROLL, VEC>, THREADS, 0);
    const int r = sms * per;
    if (dev >= 0 && dev < 64 && r > 0) known[dev].store(r, std::memory_order_relaxed);
    return r;
  }
  static int blocks(int64_t n) {
    int64_t g = cdiv(n, int64_t(THREADS) * UNROLL * VEC);
    const int cap = resident() < kMaxBlocks ? resident() : kMaxBlocks;
    return int(g < 1 ? 1 : (g > cap ? cap : g));
  }
  static bool can_implement(int64_t n, int64_t incx) { return n >= 1 && incx >= 1; }
  static size_t workspace(int64_t) { return sizeof(double) * Nrm2Traits<T>::kParts * size_t(kMaxBlocks); }
  static cudaError_t launch(int64_t n, const T* x, int64_t incx, T* result, void* ws, cudaStream_t s) {
    int g = blocks(n);
    if (g < 1) return cudaErrorNotSupported;
    double* partial = static_cast<double*>(ws);
    void* args[] = {&n, &x, &incx, &partial, &result};
    return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(nrm2_onepass<T, THREADS, UNROLL, VEC>), dim3(g),
                                       dim3(THREADS), args, 0, s);
  }
};

}  // namespace bok
