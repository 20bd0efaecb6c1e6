// snrm2: one pass, deterministic two-stage reduction.
//
// Each element is squared and summed in double: a float squared cannot overflow or underflow to zero
// in double (|x|^2 <= 1.2e77, >= 2e-90), so no scaling pass is needed and the result is the exactly
// rounded sqrt of a sum with ~n*2^-53 relative error: error bound |r - ||x||| <= (1 + n*2^-52) ulp-ish,
// in practice <= 1 ulp of float. Inf anywhere gives Inf, NaN gives NaN (Inf and NaN: NaN, as the
// reference). Stage 1: G blocks (G depends on n only) each reduce a fixed strided subset in a fixed
// tree order into partial[G]; stage 2: one block reduces partial[] in a fixed order. No atomics.
#pragma once
#include <cooperative_groups.h>

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
        acc += double(v[u].x) * v[u].x + double(v[u].y) * v[u].y + double(v[u].z) * v[u].z +
               double(v[u].w) * v[u].w;
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

template <int THREADS, int UNROLL, int VEC>
__global__ void __launch_bounds__(THREADS) snrm2_stage1(int64_t n, const float* __restrict__ x, int64_t incx,
                                                       double* __restrict__ partial) {
  __shared__ double sh[32];
  double acc = snrm2_thread_sum<THREADS, UNROLL, VEC>(n, x, incx);
  acc = block_sum<THREADS>(acc, sh);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS) snrm2_stage2(int g, const double* __restrict__ partial,
                                                       float* __restrict__ result) {
  __shared__ double sh[32];
  double acc = 0.0;
  for (int i = threadIdx.x; i < g; i += THREADS) acc += partial[i];
  acc = block_sum<THREADS>(acc, sh);
  if (threadIdx.x == 0) result[0] = float(sqrt(acc));
}

template <int THREADS, int UNROLL, int VEC>
struct Snrm2 {
  static constexpr int kMaxBlocks = 1024;
  static std::string name() {
    return "snrm2_" + std::to_string(THREADS) + "_" + std::to_string(UNROLL) + "_v" + std::to_string(VEC);
  }
  static int blocks(int64_t n) {
    int64_t g = cdiv(n, int64_t(THREADS) * UNROLL * VEC);
    return int(g < 1 ? 1 : (g > kMaxBlocks ? kMaxBlocks : g));
  }
  static bool can_implement(int64_t n, int64_t incx) { return n >= 1 && incx >= 1; }
  static size_t workspace(int64_t n) { return sizeof(double) * size_t(blocks(n)); }
  static cudaError_t launch(int64_t n, const float* x, int64_t incx, float* result, void* ws, cudaStream_t s) {
    const int g = blocks(n);
    double* partial = static_cast<double*>(ws);
    snrm2_stage1<THREADS, UNROLL, VEC><<<g, THREADS, 0, s>>>(n, x, incx, partial);
    snrm2_stage2<256><<<1, 256, 0, s>>>(g, partial, result);
    return cudaGetLastError();
  }
};

// One-launch variant for the latency-bound sizes (n <= 1e7): a cooperative launch, every block writes its
// partial, a grid-wide barrier, then block 0 sums the partials in index order. No memset, no second kernel,
// no atomics in the sum: deterministic. The grid never exceeds what is co-resident (a cooperative launch
// requires it); it is min(blocks for n, 1056) on an H100, so results depend on n only there.
template <int THREADS, int UNROLL, int VEC>
__global__ void __launch_bounds__(THREADS) snrm2_onepass(int64_t n, const float* __restrict__ x, int64_t incx,
                                                        double* __restrict__ partial, float* __restrict__ result) {
  __shared__ double sh[32];
  double acc = snrm2_thread_sum<THREADS, UNROLL, VEC>(n, x, incx);
  acc = block_sum<THREADS>(acc, sh);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
  cooperative_groups::this_grid().sync();
  if (blockIdx.x != 0) return;
  double s = 0.0;
  for (int i = threadIdx.x; i < int(gridDim.x); i += THREADS) s += __ldcg(partial + i);
  __syncthreads();  // sh reused
  s = block_sum<THREADS>(s, sh);
  if (threadIdx.x == 0) result[0] = float(sqrt(s));
}

template <int THREADS, int UNROLL, int VEC>
struct Snrm2OnePass {
  static constexpr int kMaxBlocks = 1056;  // 8 per SM on a 132-SM H100
  static constexpr bool valid() { return THREADS % 32 == 0 && THREADS <= 1024 && (VEC == 1 || VEC == 4); }
  static std::string name() {
    return "snrm2_1p_" + std::to_string(THREADS) + "_" + std::to_string(UNROLL) + "_v" + std::to_string(VEC);
  }
  // Co-resident blocks of this kernel on the current device (a cooperative launch's upper bound), once.
  static int resident() {
    static int r = [] {
      int dev = 0, sms = 0, per = 0;
      cudaGetDevice(&dev);
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, snrm2_onepass<THREADS, UNROLL, VEC>, THREADS, 0);
      return sms * per;
    }();
    return r;
  }
  static int blocks(int64_t n) {
    int64_t g = cdiv(n, int64_t(THREADS) * UNROLL * VEC);
    const int cap = resident() < kMaxBlocks ? resident() : kMaxBlocks;
    return int(g < 1 ? 1 : (g > cap ? cap : g));
  }
  static bool can_implement(int64_t n, int64_t incx) { return n >= 1 && incx >= 1; }
  static size_t workspace(int64_t) { return sizeof(double) * size_t(kMaxBlocks); }
  static cudaError_t launch(int64_t n, const float* x, int64_t incx, float* result, void* ws, cudaStream_t s) {
    int g = blocks(n);
    if (g < 1) return cudaErrorNotSupported;
    double* partial = static_cast<double*>(ws);
    void* args[] = {&n, &x, &incx, &partial, &result};
    return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(snrm2_onepass<THREADS, UNROLL, VEC>), dim3(g),
                                       dim3(THREADS), args, 0, s);
  }
};

}  // namespace bok
