// Support for the GPU tests, generic over the element type (float, double and the complex bo_cfloat, bo_cdouble): the
// module loaded once (gpu_module.h, the code under test is the shipped libblasoffload_cuda.so), the precision traits
// every error bound derives from, guarded operand images, one runner that executes a normalised call (bo_call) on a
// registry entry or through the module with host or device operands, and image checks.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "abi/blas_types.h"
#include "gpu_module.h"

namespace gt {

// ---- Precision traits. Bounds are multiples of u, the unit roundoff of the element type's real parts; references
// accumulate in Acc, whose unit roundoff u_acc is far below u (float: double; double: x87 80-bit long double, 64-bit
// significand; a complex type: the complex of its part's Acc). `arith` scales the real bounds for complex arithmetic:
// a complex product's error is at most sqrt(2) gamma_2 |x| |y| and a complex sum's sqrt(2) u |s| (Higham, Accuracy and
// Stability, 3.6), so 2 covers the real bound's terms taken with complex moduli. ----
template <typename T>
struct Real;
template <>
struct Real<float> {
  using Part = float;
  using Acc = double;
  using Bits = uint32_t;
  static constexpr double u = 0x1p-24;
  static constexpr long double u_acc = 0x1p-53L;
  static constexpr double arith = 1;
  static constexpr bo_precision prec = BO_PREC_S;
  static constexpr const char* name = "float";
  static constexpr Bits sentinel_bits = 0x7fc0deadu;  // a quiet NaN with a payload nothing computes
  // Scales whose squares overflow (underflow) the element type: nrm2 must not.
  static constexpr double huge = 1e30, small = 1e-30;
};
template <>
struct Real<double> {
  using Part = double;
  using Acc = long double;
  using Bits = uint64_t;
  static constexpr double u = 0x1p-53;
  static constexpr long double u_acc = 0x1p-64L;
  static constexpr double arith = 1;
  static constexpr bo_precision prec = BO_PREC_D;
  static constexpr const char* name = "double";
  static constexpr Bits sentinel_bits = 0x7ff800000000deadull;
  static constexpr double huge = 1e300, small = 1e-300;
};
static_assert(std::numeric_limits<long double>::digits >= 64, "the double references need x87 long double");
// A complex element: two parts of type R, each the real sentinel in a guard zone.
template <typename R>
struct ComplexReal {
  using Part = R;
  using Acc = std::complex<typename Real<R>::Acc>;
  using Bits = std::array<typename Real<R>::Bits, 2>;
  static constexpr double u = Real<R>::u;
  static constexpr long double u_acc = Real<R>::u_acc;
  static constexpr double arith = 2;
  static constexpr Bits sentinel_bits = {Real<R>::sentinel_bits, Real<R>::sentinel_bits};
  static constexpr double huge = Real<R>::huge, small = Real<R>::small;
};
template <>
struct Real<bo_cfloat> : ComplexReal<float> {
  static constexpr bo_precision prec = BO_PREC_C;
  static constexpr const char* name = "cfloat";
};
template <>
struct Real<bo_cdouble> : ComplexReal<double> {
  static constexpr bo_precision prec = BO_PREC_Z;
  static constexpr const char* name = "cdouble";
};

// Whether a type (an element or an accumulator) is complex, and arithmetic that reads the same for both kinds.
template <typename X>
struct IsComplex : std::false_type {};
template <typename R>
struct IsComplex<std::complex<R>> : std::true_type {};
template <typename X>
inline constexpr bool is_complex_v = IsComplex<X>::value;
// |x| (a complex modulus), in x's real type.
template <typename X>
auto absval(const X& x) {
  if constexpr (is_complex_v<X>)
    return std::abs(x);
  else
    return std::fabs(x);
}
template <typename X>
using MagOf = decltype(absval(X()));
template <typename X>
X conj_if(const X& x, bool conjugate) {
  if constexpr (is_complex_v<X>)
    return conjugate ? std::conj(x) : x;
  else
    return x;
}
// x without its imaginary part (of x's type).
template <typename X>
X real_only(const X& x) {
  if constexpr (is_complex_v<X>)
    return X(x.real());
  else
    return x;
}
template <typename X>
bool all_finite(const X& x) {
  if constexpr (is_complex_v<X>)
    return std::isfinite(x.real()) && std::isfinite(x.imag());
  else
    return std::isfinite(x);
}
template <typename X>
bool any_nan(const X& x) {
  if constexpr (is_complex_v<X>)
    return std::isnan(x.real()) || std::isnan(x.imag());
  else
    return std::isnan(x);
}
// The scalars of a case: complex, read as their real part by a real routine (whose cases give no imaginary parts).
using Scalar = std::complex<double>;
template <typename X>
X from_scalar(const Scalar& s) {
  if constexpr (is_complex_v<X>)
    return X(typename X::value_type(s.real()), typename X::value_type(s.imag()));
  else
    return X(s.real());
}
std::string scalar_str(const Scalar& s);  // "1.5", or "(1.5,-2)" with an imaginary part
// A case's scalar: `cx` for complex elements, `real` for real ones (so that one case list serves both, and the real
// suites keep their cases).
template <typename T>
Scalar sc(Scalar cx, double real) {
  return is_complex_v<T> ? cx : Scalar(real);
}
inline constexpr Scalar kI{0, 1};
// The transposes N, T and, where it differs from T, C (the conjugate transpose of a complex matrix).
template <typename T>
std::vector<char> transposes() {
  if constexpr (is_complex_v<T>)
    return {'N', 'T', 'C'};
  else
    return {'N', 'T'};
}
// A value of T widened for comparisons (long double, or its complex).
template <typename T>
using WideOf = std::conditional_t<is_complex_v<T>, std::complex<long double>, long double>;
// An element of value re + i im (im dropped for a real type), and NaN in every part.
template <typename T>
T elem(double re, double im = 0) {
  return from_scalar<T>(Scalar(re, im));
}
template <typename T>
T nan_elem() {
  return elem<T>(NAN, NAN);
}

// The absolute slack of every bound: below the smallest normal number errors are absolute, not relative.
template <typename T>
constexpr long double tiny() {
  return std::numeric_limits<typename Real<T>::Part>::min();
}

// The routine of a kind in T's precision (BO_R_SGEMM / BO_R_DGEMM / BO_R_CGEMM ...; nrm2: BO_R_SCNRM2 for bo_cfloat).
template <typename T>
int routine_of(bo_routine_kind kind) {
  return bo_routine_id(kind, Real<T>::prec);
}

// Typed test suites, named ".../float", ".../double", ".../cfloat" and ".../cdouble" (a gtest filter picks one).
// Precisions: the real types (the pipeline's and the residency cache's suites); AllPrecisions: all four (the routines'
// suites); ComplexPrecisions: herk, which exists for complex elements only.
using Precisions = ::testing::Types<float, double>;
using AllPrecisions = ::testing::Types<float, double, bo_cfloat, bo_cdouble>;
using ComplexPrecisions = ::testing::Types<bo_cfloat, bo_cdouble>;
struct PrecisionNames {
  template <typename T>
  static std::string GetName(int) {
    return Real<T>::name;
  }
};
// Declares the typed test suite Name over the real precisions (its tests: TYPED_TEST(Name, Test), T = TypeParam);
// GPU_TYPED_SUITE_ALL over all four, GPU_TYPED_SUITE_COMPLEX over the complex ones.
#define GPU_TYPED_SUITE_OVER(Name, Types) \
  template <typename T>                   \
  class Name : public ::testing::Test {}; \
  TYPED_TEST_SUITE(Name, Types, gt::PrecisionNames)
#define GPU_TYPED_SUITE(Name) GPU_TYPED_SUITE_OVER(Name, gt::Precisions)
#define GPU_TYPED_SUITE_ALL(Name) GPU_TYPED_SUITE_OVER(Name, gt::AllPrecisions)
#define GPU_TYPED_SUITE_COMPLEX(Name) GPU_TYPED_SUITE_OVER(Name, gt::ComplexPrecisions)

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
// Factorizations the module said it ran on several GPUs ("... (cuSOLVERMg)" in its log, any level).
std::atomic<int64_t>& multi_gpu_calls();
// Calls of trsm and syrk/herk that level3_mg.cu split over `lanes` GPU lanes (1 or 2), counted from its log lines.
std::atomic<int64_t>& split_calls(int lanes);
// trsm/syrk calls over two lanes whose A was staged once and copied between the lanes (level3_mg.cu).
std::atomic<int64_t>& a_shared_calls();
// geqrf calls that qr_mg.cu ran over `lanes` GPU lanes (1 or 2), counted from its summary lines.
std::atomic<int64_t>& qr_calls(int lanes);

#define GPU_TEST_PREAMBLE()                                                   \
  do {                                                                        \
    if (!gt::have_gpu()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
    ASSERT_NE(gt::module().mod, nullptr) << gt::module().error;               \
    ASSERT_EQ(gt::module().init_status, BO_CUDA_OK) << "module init failed";  \
  } while (0)

// Whether the GPU runs a routine: always where it has own entries; a complex routine other than the norms has only
// cuBLAS's entries, whose can_implement is 0 without cuBLAS's complex routines (the module then declines its calls and
// the core keeps them on the CPU library: nothing to test here).
bool gpu_runs(int routine);
#define GPU_ROUTINE_PREAMBLE(routine)                                                                           \
  do {                                                                                                          \
    GPU_TEST_PREAMBLE();                                                                                        \
    if (!gt::gpu_runs(routine))                                                                                 \
      GTEST_SKIP() << bo_routine_name(routine) << " has no GPU path here: " << gt::module().reg->vendor_info(); \
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
  std::memcpy(static_cast<void*>(&f), &Real<T>::sentinel_bits, sizeof f);
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
// expected: NaN; Inf: the same Inf); every other element must be bit-identical to before. Complex elements (CExpect):
// |got - expected| within bound (the modulus), a NaN part expected: a NaN part; else an infinite part expected: some
// part not finite (complex products turn Inf into NaN parts by Inf * 0 in their cross terms, in any order).
struct Expect {
  size_t off;
  long double value, bound;
};
struct CExpect {
  size_t off;
  std::complex<long double> value;
  long double bound;
};
template <typename T>
using ExpectOf = std::conditional_t<is_complex_v<T>, CExpect, Expect>;
template <typename T>
::testing::AssertionResult check_image(const Image<T>& before, const Image<T>& after,
                                       const std::vector<ExpectOf<T>>& out);
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
// An element uniform in [-1, 1) (each part of a complex element).
template <typename T>
T rand_elem() {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    const R re = uni<R>();
    return T(re, uni<R>());
  } else {
    return uni<T>();
  }
}
// A real r times a random unit phase (complex), or times a random sign (real): a diagonal entry of modulus r.
template <typename T>
T with_phase(typename Real<T>::Part r) {
  if constexpr (is_complex_v<T>)
    return std::polar(r, uni<typename T::value_type>(-M_PI, M_PI));
  else
    return r * (uni<T>() < 0 ? -1 : 1);
}

// Runs f(j) for j in [0, n) on all cores.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

// ---- Running a call. ----
// A normalised call (routines/call.h) of `routine`: option letters in the routine's order (a C string, "" for none),
// sizes, scalars (their imaginary parts go to alpha_i and beta_i), leading dimensions and increments; the operand
// pointers are left null for run_call or the caller.
bo_call make_call(int routine, const char* ops, int64_t m, int64_t n, int64_t k, Scalar alpha, Scalar beta, int64_t lda,
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
// and c (written; nrm2: one element, whose first real part takes the real result), any of a and b null when the routine
// has none. The images are
// replaced by what the call left: written directly by a host-operand module call, copied back from device memory
// otherwise (A from `da` when given: an already uploaded A, left where it is and not copied back). Returns the
// module's status (BO_CUDA_OK for an entry), or -1 when the entry's can_implement declines the real operands.
template <typename T>
int run_call(const Runner& rn, bo_call call, Image<T>* a, Image<T>* b, Image<T>* c, DevImage<T>* da = nullptr);

}  // namespace gt
