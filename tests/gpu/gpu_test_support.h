// Support for the GPU tests, generic over the element type (float, double): the module loaded once (gpu_module.h,
// the code under test is the shipped libblasoffload_cuda.so), the precision traits every error bound derives from,
// guarded operand images, one runner that executes a normalised call (bo_call) on a registry entry or through the
// module with host or device operands, and image checks.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpu_module.h"

namespace gt {

// ---- Precision traits. Bounds are multiples of u, the element type's unit roundoff; references accumulate in Acc,
// whose unit roundoff u_acc is far below u (float: double; double: x87 80-bit long double, 64-bit significand). ----
template <typename T>
struct Real;
template <>
struct Real<float> {
  using Acc = double;
  using Bits = uint32_t;
  static constexpr double u = 0x1p-24;
  static constexpr long double u_acc = 0x1p-53L;
  static constexpr bo_precision prec = BO_PREC_S;
  static constexpr const char* name = "float";
  static constexpr Bits sentinel_bits = 0x7fc0deadu;  // a quiet NaN with a payload nothing computes
  // Scales whose squares overflow (underflow) the element type: nrm2 must not.
  static constexpr double huge = 1e30, small = 1e-30;
};
template <>
struct Real<double> {
  using Acc = long double;
  using Bits = uint64_t;
  static constexpr double u = 0x1p-53;
  static constexpr long double u_acc = 0x1p-64L;
  static constexpr bo_precision prec = BO_PREC_D;
  static constexpr const char* name = "double";
  static constexpr Bits sentinel_bits = 0x7ff800000000deadull;
  static constexpr double huge = 1e300, small = 1e-300;
};
static_assert(std::numeric_limits<long double>::digits >= 64, "the double references need x87 long double");

// The absolute slack of every bound: below the smallest normal number errors are absolute, not relative.
template <typename T>
constexpr long double tiny() {
  return std::numeric_limits<T>::min();
}

// The routine of a kind in T's precision (BO_R_SGEMM / BO_R_DGEMM ...).
template <typename T>
int routine_of(bo_routine_kind kind) {
  return bo_routine_id(kind, Real<T>::prec);
}

// Typed test suites run for both precisions, named ".../float" and ".../double" (a gtest filter picks one).
using Precisions = ::testing::Types<float, double>;
struct PrecisionNames {
  template <typename T>
  static std::string GetName(int) {
    return Real<T>::name;
  }
};
// Declares the typed test suite Name over both precisions (its tests: TYPED_TEST(Name, Test), T = TypeParam).
#define GPU_TYPED_SUITE(Name)             \
  template <typename T>                   \
  class Name : public ::testing::Test {}; \
  TYPED_TEST_SUITE(Name, gt::Precisions, gt::PrecisionNames)

// ---- The module. ----
struct Module {
  const bo_cuda_module* mod = nullptr;
  const bo_kernel_registry* reg = nullptr;
  int init_status = -1;
  std::string error;
};
const Module& module();  // loaded and init()'ed once
bool have_gpu();         // a CUDA device is visible to this process
int device_count();

// Calls the module made to the host services' cpu_call (a gemm reference accumulating in Real<T>::Acc, thread-safe):
// the hybrid CPU share and the tiles finished on the CPU after a GPU failure. Tests read the counters before and
// after a call; bad calls are those whose arguments break the BLAS rules or are no gemm (nothing is then written).
std::atomic<int64_t>& cpu_calls();
std::atomic<int64_t>& cpu_bad_calls();

#define GPU_TEST_PREAMBLE()                                                   \
  do {                                                                        \
    if (!gt::have_gpu()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
    ASSERT_NE(gt::module().mod, nullptr) << gt::module().error;               \
    ASSERT_EQ(gt::module().init_status, BO_CUDA_OK) << "module init failed";  \
  } while (0)

std::vector<const bo_kernel_entry*> configs(int routine);
// Runs one registry entry on device operands (default stream) with the workspace it asks for, and waits.
void run_entry(const bo_kernel_entry* k, const bo_call& args);

// ---- Guarded operand images: G sentinel elements, the operand's span (gaps between rows/strided elements also
// sentinel), G sentinel elements. ----
constexpr size_t kGuard = 64;  // 256-byte aligned operands on the device; see g_dev_shift
// Device images are placed this many elements past a 256-byte boundary (tests set 1 to check that misaligned operands
// take the scalar paths correctly).
extern int g_dev_shift;

template <typename T>
typename Real<T>::Bits bits(T f) {
  typename Real<T>::Bits u;
  std::memcpy(&u, &f, sizeof f);
  return u;
}
template <typename T>
T sentinel() {
  T f;
  std::memcpy(&f, &Real<T>::sentinel_bits, sizeof f);
  return f;
}
template <typename T>
struct Image {
  std::vector<T> v;
  explicit Image(size_t span) : v(span + 2 * kGuard, sentinel<T>()) {}
  T* p() { return v.data() + kGuard; }
  const T* p() const { return v.data() + kGuard; }
  size_t size() const { return v.size(); }
};
inline size_t vspan(int64_t n, int64_t inc) { return n > 0 ? size_t(1 + (n - 1) * std::llabs(inc)) : 0; }
inline size_t mspan(int64_t rows, int64_t cols, int64_t ld) { return cols > 0 ? size_t((cols - 1) * ld + rows) : 0; }
inline int64_t vi(int64_t i, int64_t n, int64_t inc) { return inc > 0 ? i * inc : (n - 1 - i) * (-inc); }

// Device copy of an image (whole image, guards included).
template <typename T>
struct DevImage {
  T* base = nullptr;
  T* d = nullptr;
  size_t n = 0;
  explicit DevImage(const Image<T>& im) : n(im.size()) {
    EXPECT_EQ(cudaMalloc(&base, sizeof(T) * n + 256), cudaSuccess);
    d = base + g_dev_shift;
    EXPECT_EQ(cudaMemcpy(d, im.v.data(), sizeof(T) * n, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DevImage() { cudaFree(base); }
  DevImage(const DevImage&) = delete;
  DevImage& operator=(const DevImage&) = delete;
  T* p() { return d + kGuard; }
  Image<T> back() const {
    Image<T> im(n - 2 * kGuard);
    EXPECT_EQ(cudaMemcpy(im.v.data(), d, sizeof(T) * n, cudaMemcpyDeviceToHost), cudaSuccess);
    return im;
  }
};
// An address aligned as the test's device images are (for select() and can_implement before operands exist).
template <typename T>
T* fake_dev_ptr() {
  return reinterpret_cast<T*>(uintptr_t(1) << 20) + g_dev_shift;
}

// Checks an image after a call: positions in `out` (offsets into the operand) must match expected within bound (NaN
// expected: NaN; Inf: the same Inf); every other element must be bit-identical to before.
struct Expect {
  size_t off;
  long double value, bound;
};
template <typename T>
::testing::AssertionResult check_image(const Image<T>& before, const Image<T>& after, const std::vector<Expect>& out);
template <typename T>
::testing::AssertionResult same_bits(const Image<T>& a, const Image<T>& b) {
  if (a.size() != b.size() || std::memcmp(a.v.data(), b.v.data(), sizeof(T) * a.size()) != 0)
    return ::testing::AssertionFailure() << "results differ between two identical runs";
  return ::testing::AssertionSuccess();
}
// The whole image bit-identical (cheaper than check_image for a GiB of A).
template <typename T>
::testing::AssertionResult unchanged(const Image<T>& before, const Image<T>& after) {
  if (before.size() != after.size()) return ::testing::AssertionFailure() << "image sizes differ";
  for (size_t k = 0; k < before.size(); ++k)
    if (bits(before.v[k]) != bits(after.v[k]))
      return ::testing::AssertionFailure() << "changed, first at operand offset " << int64_t(k) - int64_t(kGuard);
  return ::testing::AssertionSuccess();
}

std::mt19937_64& rng();
// Uniform in [lo, hi) with the full significand of T (a double test must not run on float data).
template <typename T>
T uni(T lo = T(-1), T hi = T(1)) {
  return std::uniform_real_distribution<T>(lo, hi)(rng());
}

// Runs f(j) for j in [0, n) on all cores.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

// ---- Running a call. ----
// A normalised call (routines/call.h) of `routine`: option letters in the routine's order (a C string, "" for none),
// sizes, scalars, leading dimensions and increments; the operand pointers are left null for run_call or the caller.
bo_call make_call(int routine, const char* ops, int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t lda,
                  int64_t ldb, int64_t ldc, int64_t incx = 0, int64_t incy = 0);
// The call with its operand pointers (host or device memory) set.
inline bo_call with_operands(bo_call g, const void* a, const void* b, void* c) {
  g.a = a;
  g.b = b;
  g.c = c;
  return g;
}

// What runs a case: one registry entry on device operands, or the module's call() with host or device operands.
enum class Mode { kEntry, kModuleHost, kModuleDevice };
struct Runner {
  Mode mode;
  const bo_kernel_entry* e = nullptr;  // kEntry only
  std::string name() const;
};
// Every entry of the routine, then the module with host and with device operands.
std::vector<Runner> runners_for(int routine);
inline Runner entry_runner(const bo_kernel_entry* e) { return {Mode::kEntry, e}; }

// Runs `call` (routine, options, sizes, scalars; pointers are filled in here) on operand images a (read), b (read)
// and c (written; nrm2: one element, the result), any of a and b null when the routine has none. The images are
// replaced by what the call left: written directly by a host-operand module call, copied back from device memory
// otherwise (A from `da` when given: an already uploaded A, left where it is and not copied back). Returns the
// module's status (BO_CUDA_OK for an entry), or -1 when the entry's can_implement declines the real operands.
template <typename T>
int run_call(const Runner& rn, bo_call call, Image<T>* a, Image<T>* b, Image<T>* c, DevImage<T>* da = nullptr);

}  // namespace gt
