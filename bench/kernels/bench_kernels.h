// What the files of blasoffload_bench_kernels share: the device and cuBLAS set up once, the variants timed, one
// case's rotating operands, and the functions each file offers the others.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpu_module.h"
#include "shapes.h"

namespace bo_bench {

// Operand copies together span at least this much, so each call finds its operands outside the 50 MB L2.
inline constexpr size_t kRotateBytes = size_t(256) << 20;

enum Variant { kTuned = 0, kOwn = 1, kCublas = 2, kVariants = 3 };
inline const char* const kVariantName[kVariants] = {"tuned", "own", "cuBLAS"};

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
extern Gpu g;  // bench_kernels.cpp

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

inline bool IsDouble(const Shape& s) { return bo_routine_precision(s.routine) == BO_PREC_D; }
inline bo_routine_kind Kind(const Shape& s) { return bo_routine_kind_of(s.routine); }

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
extern std::unique_ptr<Prepared> g_cache;  // bench_kernels_operands.cpp

// ---- One case's operands and calls (bench_kernels_operands.cpp) ----

// Enqueues one call of a variant on copy `copy`. cuBLAS's nrm2 (host pointer mode) returns into *host_result (a
// float or a double) and is synchronous, as BLAS is; everything else is only enqueued on g.stream. On failure fills
// *err.
bool Run(const Prepared& p, int variant, size_t copy, void* host_result, std::string* err);
std::string CudaError(const char* what, cudaError_t e);
// The case's operands, selected and verified, kept until another case asks (then the previous case's are freed).
Prepared& Cached(const Shape& s);

// ---- Timing and registration (bench_kernels_timing.cpp) ----

// Registers one benchmark per shape (shapes must outlive the run: each benchmark keeps a pointer to its shape).
void RegisterAll(const std::vector<Shape>& shapes);

}  // namespace bo_bench
