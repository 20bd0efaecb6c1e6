// ?NRM2 (snrm2 dnrm2 scnrm2 dznrm2): the Euclidean norm of a real or complex vector, returned as the function's
// value (a real).
#pragma once

#include <cstdio>

#include "routines/descriptor.h"

// The Fortran entry point's result and parameters, written once: the descriptor's type below and the exported
// definitions (abi/fortran_api.cpp) are made from them.
#define BO_NRM2_RESULT(T) bo::routines::RealOf<T>
#define BO_NRM2_PARAMS(T, I) (const I* n, const T* x, const I* incx)
#define BO_NRM2_ARGS (n, x, incx)

namespace bo::routines {

template <class T, class I = blas_int>
struct Nrm2 {
  static constexpr bo_routine_kind kKind = BO_KIND_NRM2;
  template <class J>
  using WithInt = Nrm2<T, J>;  // the same routine in another interface's integer type
  using Fortran = BO_NRM2_RESULT(T) BO_NRM2_PARAMS(T, I);
  static constexpr int kRoutine = routine_id(kKind, Element<T>::kPrecision);
  using Args = typename Signature<Fortran>::Args;
  enum { N, X, INCX };

  // No invalid arguments. Libraries disagree for incx <= 0 (reference: the norm of the |incx| stride or
  // sqrt(n)|x1|; OpenBLAS: 0), so those calls always go to the CPU library: the user gets their own library's answer.
  // The result goes to *result (the module writes it there).
  static Prep prepare(const Args& x, bo_call* call, I* info) {
    *info = 0;
    const I n = *std::get<N>(x), incx = *std::get<INCX>(x);
    if (n <= 0) return Prep::kQuick;
    if (incx <= 0) return Prep::kQuickCpu;
    *call = bo_call{kRoutine,       {},      0,       n,       0,    0, 0,       nullptr, 0,
                    std::get<X>(x), 0,       nullptr, 0,       incx, 0, nullptr, nullptr, 0,
                    kIntBytes<I>,   nullptr, 0,       nullptr, 0,    0};
    return Prep::kRun;
  }
  // The value a quick return gives.
  static constexpr RealOf<T> kQuickResult = 0;

  // The normalised call through a Fortran entry point; the value goes to *c.c.
  static void call_fortran(Fortran* fn, const bo_call& c) {
    const I n = I(c.n), incx = I(c.incx);
    *static_cast<RealOf<T>*>(c.c) = fn(&n, static_cast<const T*>(c.b), &incx);
  }

  static int operands(const bo_call& c, Operand* out) {
    out[0] = {1, Operand::kVector, Operand::kIn, c.n, 1, c.incx, Operand::kIncx};
    return 1;
  }
  // The scalar result travels too (written by the kernel into mapped host memory).
  static constexpr double kResultBytes = sizeof(RealOf<T>);

  static constexpr int kWorkDims = 1;
  static double work(const bo_call& c) { return double(c.n); }
  static double flops(const bo_call& c) { return (kIsComplex<T> ? 4 : 2) * work(c); }

  static constexpr ShapeClassInfo kClasses[] = {{"nrm2", 1, true}};
  static int shape_class(const bo_call&) { return 0; }
  static double class_size(const bo_call& c) { return sizeof(T) * work(c); }

  static void describe(const bo_call& c, char* buf, std::size_t size) {
    std::snprintf(buf, size, "n=%lld incx=%lld", (long long)c.n, (long long)c.incx);
  }
};

// The lower-case name the symbol list uses (all.h).
namespace by_name {
template <class T, class I = blas_int>
using nrm2 = Nrm2<T, I>;
}

}  // namespace bo::routines
