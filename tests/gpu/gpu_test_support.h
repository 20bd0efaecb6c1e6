// Support for the GPU tests: the module loaded with dlopen (the code under test is the shipped
// libblasoffload_cuda.so), guarded operand images, and double-precision references.
#pragma once
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/registry.h"
#include "offload/cuda_module_api.h"

namespace gt {

// ---- The module. ----
struct Module {
  const bo_cuda_module* mod = nullptr;
  const bo_kernel_registry* reg = nullptr;
  int init_status = -1;
  std::string error;
};
const Module& module();  // loaded and init()'ed once
bool have_gpu();         // a CUDA device is visible to this process

// Calls the module made to the host services' cpu_sgemm (a double-accumulating reference, thread-safe): the
// hybrid CPU share and the tiles finished on the CPU after a GPU failure. Tests read the counter before and after
// a call; bad calls are those whose arguments break the BLAS rules (the reference then leaves C untouched).
std::atomic<int64_t>& cpu_sgemm_calls();
std::atomic<int64_t>& cpu_sgemm_bad_calls();

#define GPU_TEST_PREAMBLE()                                                                  \
  do {                                                                                       \
    if (!gt::have_gpu()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";                \
    ASSERT_NE(gt::module().mod, nullptr) << gt::module().error;                              \
    ASSERT_EQ(gt::module().init_status, BO_CUDA_OK) << "module init failed";                 \
  } while (0)

std::vector<const bo_kernel_entry*> configs(int routine);
// Runs one registry entry on device operands (default stream) with the workspace it asks for, and waits.
void run_entry(const bo_kernel_entry* k, const bo_kernel_args& args);

// ---- Guarded operand images: G sentinel elements, the operand's span (gaps between rows/strided
// elements also sentinel), G sentinel elements. ----
constexpr size_t kGuard = 64;  // 256-byte aligned operands on the device; see g_dev_shift
// Device images are placed this many floats past a 256-byte boundary (tests set 1 to check that
// misaligned operands take the scalar paths correctly).
extern int g_dev_shift;
inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float sentinel() {
  uint32_t u = 0x7fc0dead;  // a quiet NaN with a payload nothing computes
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
struct Image {
  std::vector<float> v;
  explicit Image(size_t span) : v(span + 2 * kGuard, sentinel()) {}
  float* p() { return v.data() + kGuard; }
  const float* p() const { return v.data() + kGuard; }
  size_t size() const { return v.size(); }
};
inline size_t vspan(int64_t n, int64_t inc) { return n > 0 ? size_t(1 + (n - 1) * std::llabs(inc)) : 0; }
inline size_t mspan(int64_t rows, int64_t cols, int64_t ld) { return cols > 0 ? size_t((cols - 1) * ld + rows) : 0; }
inline int64_t vi(int64_t i, int64_t n, int64_t inc) { return inc > 0 ? i * inc : (n - 1 - i) * (-inc); }

// Device copy of an image (whole image, guards included).
struct DevImage {
  float* base = nullptr;
  float* d = nullptr;
  size_t n = 0;
  explicit DevImage(const Image& im) : n(im.size()) {
    EXPECT_EQ(cudaMalloc(&base, 4 * n + 64), cudaSuccess);
    d = base + g_dev_shift;
    EXPECT_EQ(cudaMemcpy(d, im.v.data(), 4 * n, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DevImage() { cudaFree(base); }
  float* p() { return d + kGuard; }
  Image back() const {
    Image im(n - 2 * kGuard);
    EXPECT_EQ(cudaMemcpy(im.v.data(), d, 4 * n, cudaMemcpyDeviceToHost), cudaSuccess);
    return im;
  }
};

// Checks an image after a call: positions in `out` (offsets into the operand) must match expected
// within bound (NaN expected: NaN; Inf: same Inf); every other element must be bit-identical to before.
struct Expect {
  size_t off;
  double value, bound;
};
::testing::AssertionResult check_image(const Image& before, const Image& after, const std::vector<Expect>& out);
::testing::AssertionResult same_bits(const Image& a, const Image& b);

std::mt19937_64& rng();
float uni(float lo = -1.0f, float hi = 1.0f);

// Runs f(j) for j in [0, n) on all cores.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

}  // namespace gt
