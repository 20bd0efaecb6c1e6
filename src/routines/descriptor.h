// What every routine descriptor (src/routines/<routine>.h) shares: the element-type helpers, the Fortran argument
// tuple, the outcome of the reference checks and quick returns, and the shape classes of the policy.
//
// A descriptor is a class template on the element type T and the integer type I of its interface (blas_int; int64 for
// the ILP64 families of abi/families.def) with static members only:
//   kKind, kRoutine            the routine kind and the routine id (routine_ids.h)
//   Fortran, Args              the exported function type (gfortran ABI; made from the BO_<NAME>_PARAMS macro the
//                              exports use too) and its arguments as a tuple
//   prepare(args, call, info)  netlib INFO checks, then reference quick returns, then the normalised call
//   operands(call, out)        what the call reads and writes (operand.h)
//   work(call), kWorkDims      the size measure of the policy's floors: a product of kWorkDims dimensions, so that
//                              BLASOFFLOAD_<ROUTINE>_MIN is work^(1/kWorkDims)
//   kClasses, shape_class(call) the CPU-rate classes of the policy (name suffix, class size per unit of work)
//   describe(call, buf, size)  the arguments as BLASOFFLOAD_LOG=calls prints them
// LAPACK routines (lapack.h) also declare kInterface = Interface::kLapack; their prepare() writes the caller's INFO
// as the reference does (0 first, -i on an argument error).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "abi/blas_types.h"
#include "routines/call.h"
#include "routines/operand.h"
#include "routines/routine_ids.h"

namespace bo::routines {

using blasoffload::blas_int;
using blasoffload::fortran_strlen;

// The element types: precision, the real type beneath (a complex element is two of them), complex or not.
template <class T>
struct Element;
template <>
struct Element<float> {
  static constexpr bo_precision kPrecision = BO_PREC_S;
  using Real = float;
};
template <>
struct Element<double> {
  static constexpr bo_precision kPrecision = BO_PREC_D;
  using Real = double;
};
template <>
struct Element<bo_cfloat> {
  static constexpr bo_precision kPrecision = BO_PREC_C;
  using Real = float;
};
template <>
struct Element<bo_cdouble> {
  static constexpr bo_precision kPrecision = BO_PREC_Z;
  using Real = double;
};
template <class T>
using RealOf = typename Element<T>::Real;
template <class T>
constexpr bool kIsComplex = !std::is_same_v<T, RealOf<T>>;
// Real flops per multiply-add, relative to a real one: a complex multiply-add is four real multiplies and four adds.
template <class T>
constexpr double kFlopScale = kIsComplex<T> ? 4.0 : 1.0;

// A scalar's real and imaginary parts as bo_call carries them (alpha, alpha_i; beta, beta_i), and back.
inline double re(float v) { return v; }
inline double re(double v) { return v; }
template <class R>
double re(const std::complex<R>& v) {
  return double(v.real());
}
inline double im(float) { return 0; }
inline double im(double) { return 0; }
template <class R>
double im(const std::complex<R>& v) {
  return double(v.imag());
}
template <class T>
T scalar(double r, double i) {
  if constexpr (kIsComplex<T>)
    return T(RealOf<T>(r), RealOf<T>(i));
  else
    return T(r);
}
template <class T>
T alpha_of(const bo_call& c) {
  return scalar<T>(c.alpha, c.alpha_i);
}
template <class T>
T beta_of(const bo_call& c) {
  return scalar<T>(c.beta, c.beta_i);
}
inline bool alpha_is_zero(const bo_call& c) { return c.alpha == 0 && c.alpha_i == 0; }
inline bool beta_is_zero(const bo_call& c) { return c.beta == 0 && c.beta_i == 0; }
// Sets the imaginary parts after a call was made from the real ones.
template <class T>
void set_imaginary(bo_call* c, const T& alpha, const T& beta) {
  c->alpha_i = im(alpha), c->beta_i = im(beta);
}

// The precision of a routine id, at compile time (routine_ids.h's bo_routine_precision is for run time).
constexpr bo_precision precision_of(int routine) {
  constexpr unsigned char kPrec[] = {
#define BO_ENTRY(p, P, name, NAME, T) BO_PREC_##P,
#include "routines/routine_list.h"
#undef BO_ENTRY
  };
  return bo_precision(kPrec[routine]);
}
constexpr bool is_complex(bo_precision p) { return p == BO_PREC_C || p == BO_PREC_Z; }

// The routine id of a kind in an element type (the numbering of routine_ids.h, computed at compile time).
constexpr int routine_id(bo_routine_kind kind, bo_precision prec) {
  constexpr unsigned char kKind[] = {
#define BO_ENTRY(p, P, name, NAME, T) BO_KIND_##NAME,
#include "routines/routine_list.h"
#undef BO_ENTRY
  };
  for (int r = 0; r < BO_R_COUNT; ++r)
    if (kKind[r] == kind && precision_of(r) == prec) return r;
  return -1;
}

// The arguments of a Fortran entry point, as the tuple of its parameters (pointers and hidden lengths): what the
// exported function received, and what forwarding passes on unchanged.
template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
};

// The interface a routine belongs to: its re-entry layer (dispatch/runtime.h) and where its CPU definition is found.
enum class Interface { kBlas, kLapack };

// What the reference checks and quick returns leave to do.
enum class Prep {
  kRun,       // a normalised call to decide and run
  kInvalid,   // INFO != 0: XERBLA, nothing written
  kQuick,     // the reference returns without touching anything
  kQuickCpu,  // the reference's answer is a simple scaling (trsm alpha = 0, syrk alpha = 0 or k = 0) or libraries
              // disagree (nrm2 incx <= 0): the CPU library computes it, counted as a quick return
};

// One CPU-rate class of the policy: its name after the precision letter ("gemm.square" -> "sgemm.square") and the
// class size (bytes or flops) per unit of work(), for the floors.
struct ShapeClassInfo {
  const char* suffix;
  double size_per_work;  // at element size 1 for byte-sized classes: multiplied by the element size (see by_bytes)
  bool by_bytes;         // the class's size is bytes (Level 1/2), else flops
};

// LSAME for one option letter: case-insensitive, only the first character counts.
inline char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }
inline bool is_trans(char c) { return c == 'N' || c == 'T' || c == 'C'; }
inline bool is_uplo(char c) { return c == 'U' || c == 'L'; }
inline bool is_diag(char c) { return c == 'U' || c == 'N'; }
inline bool is_side(char c) { return c == 'L' || c == 'R'; }
// The normalised call's int_bytes for an interface of integer type I (call.h).
template <class I>
constexpr int kIntBytes = int(sizeof(I));

template <class I>
I max1(I v) {
  return v > 1 ? v : 1;
}

}  // namespace bo::routines
