// Loads cuSOLVER's kernels ahead of the program's first LAPACK call on the GPU. CUDA loads a kernel at its first
// launch, and on the lent H100 a process's first factorization took 0.4-0.9 s more than the next (dgesv n = 2048: 502
// ms, then 9 ms; dgetrf n = 8192: 1027, then 91), of which opening cuSOLVER and its handle were 9-55 ms: the rest is
// the kernels' loading. The start-up runs this when the program's LAPACK calls are to go to the GPU, so that the first
// one costs what the policy predicts.
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/vendor_cusolver.h"
#include "offload/module/solver_warm.h"

namespace bom {
namespace {

std::atomic<bool> g_warm{false};

// getrf, getrs (one and 64 right-hand sides), potrf and potrs of order n in precision T, on device memory only: a
// diagonally dominant symmetric matrix, so that both factorizations run their full course.
template <class T>
void factor_and_solve(int n, cudaStream_t st) {
  std::vector<T> h(size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) h[size_t(j) * n + i] = i == j ? T(n) : T(((i + j) % 7) - 3) / T(8);
  const int rhs = 64;
  T *a = nullptr, *b = nullptr, *work = nullptr;
  int *ipiv = nullptr, *info = nullptr;
  if (cudaMalloc(&a, sizeof(T) * h.size()) || cudaMalloc(&b, sizeof(T) * size_t(n) * rhs) ||
      cudaMalloc(&ipiv, sizeof(int) * n) || cudaMalloc(&info, sizeof(int))) {
    cudaGetLastError();
  } else {
    cudaMemsetAsync(b, 0, sizeof(T) * size_t(n) * rhs, st);
    int err = 0;
    const int64_t lw = std::max(bok::vendor::cusolver_getrf_work(n, n, a, n, st, &err),
                                bok::vendor::cusolver_potrf_work('L', n, a, n, st, &err));
    if (!err && cudaMalloc(&work, sizeof(T) * size_t(std::max<int64_t>(lw, 1))) == cudaSuccess) {
      cudaMemcpyAsync(a, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice, st);
      bok::vendor::cusolver_getrf(n, n, a, n, work, ipiv, info, st);
      for (int k : {1, rhs}) bok::vendor::cusolver_getrs('N', n, k, a, n, ipiv, b, n, info, st);
      cudaMemcpyAsync(a, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice, st);
      bok::vendor::cusolver_potrf('L', n, a, n, work, lw, info, st);
      for (int k : {1, rhs}) bok::vendor::cusolver_potrs('L', n, k, a, n, b, n, info, st);
      cudaStreamSynchronize(st);
    }
  }
  for (void *p : {static_cast<void *>(a), static_cast<void *>(b), static_cast<void *>(work), static_cast<void *>(ipiv),
                  static_cast<void *>(info)})
    if (p) cudaFree(p);
  cudaGetLastError();
}

}  // namespace

bool warm_solver() {
  if (!bok::vendor::cusolver_available()) return false;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaStream_t st = nullptr;
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return;
    // Orders on both sides of cuSOLVER's blocked algorithms' switch (its panels and its calls of cuBLAS).
    for (int n : {256, 1024}) {
      factor_and_solve<float>(n, st);
      factor_and_solve<double>(n, st);
    }
    cudaStreamDestroy(st);
    g_warm.store(true, std::memory_order_release);
  });
  return true;
}

bool solver_warm() { return g_warm.load(std::memory_order_acquire); }
void note_solver_used() { g_warm.store(true, std::memory_order_release); }

}  // namespace bom
