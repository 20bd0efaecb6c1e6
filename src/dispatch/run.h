// One call of any routine, from its descriptor: the reference checks and quick returns, then the decision and the
// GPU or the CPU BLAS (route.h). The exported Fortran and CBLAS entry points end here.
#pragma once

#include <tuple>
#include <type_traits>

#include "abi/xerbla.h"
#include "dispatch/cpu_blas.h"
#include "dispatch/route.h"
#include "dispatch/runtime.h"
#include "routines/all.h"

namespace blasoffload {

template <class D>
using ResultOf = typename bo::routines::Signature<typename D::Fortran>::Result;

// The CPU BLAS's own routine, with the caller's arguments unchanged (hidden string lengths included). Inlined, as
// route() is: each call level passes the arguments on again, nanoseconds a tiny call feels.
template <class D>
__attribute__((always_inline)) inline ResultOf<D> forward(const typename D::Args& args) {
  auto* fn = reinterpret_cast<typename D::Fortran*>(__atomic_load_n(&g_cpu.fortran[D::kRoutine], __ATOMIC_ACQUIRE));
  if (__builtin_expect(!fn, 0)) {
    fn = reinterpret_cast<typename D::Fortran*>(resolve_late(Routine(D::kRoutine)));
    if (!fn) cpu_blas_missing_routine(Routine(D::kRoutine));
  }
  return std::apply(fn, args);
}

template <class D>
ResultOf<D> run(const typename D::Args& args) {
  using R = ResultOf<D>;
  const Routine r = Routine(D::kRoutine);
  policy::Call pc;
  blas_int info = 0;
  switch (D::prepare(args, &pc.call, &info)) {
    case bo::routines::Prep::kInvalid:
      count_error(r);
      report_xerbla(routine_srname(r), info);
      return R();
    case bo::routines::Prep::kQuick:
      count_quick_return(r);
      return R();  // a function's quick result is 0 (nrm2 of an empty vector)
    case bo::routines::Prep::kQuickCpu:
      count_quick_return(r);
      return forward<D>(args);
    case bo::routines::Prep::kRun:
      break;
  }
  if constexpr (std::is_void_v<R>) {
    route<D>(pc, [&] { forward<D>(args); });
  } else {
    R result{};
    pc.call.c = &result;  // the module writes a function's value there
    route<D>(pc, [&] { result = forward<D>(args); });
    return result;
  }
}

// The interface layer of a routine (runtime.h), from its descriptor's interface (routines/all.h).
template <class D>
struct LayerOf {
  static constexpr Layer value =
      bo::routines::InterfaceOf<D>::value == bo::routines::Interface::kLapack ? Layer::kLapack : Layer::kBlas;
};

// An exported Fortran entry point: a call arriving while we are inside one of ours of the same layer (the CPU CBLAS
// calling its Fortran routine back through us) goes straight to the CPU library, neither counted nor decided twice.
template <class D>
ResultOf<D> fortran_entry(const typename D::Args& args) noexcept {
  constexpr Layer layer = LayerOf<D>::value;
  if (reentered(layer)) return forward<D>(args);
  CallScope scope(layer);
  ensure_initialized();
  return run<D>(args);
}

}  // namespace blasoffload
