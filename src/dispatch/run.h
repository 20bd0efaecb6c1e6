// One call of any routine, from its descriptor: the reference checks and quick returns, then the decision and the
// GPU or the CPU BLAS (route.h). The exported Fortran and CBLAS entry points end here.
#pragma once

#include <cstdint>
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

// The CPU library's own routine for family F (abi/families.h), with the caller's arguments unchanged (hidden string
// lengths included). Inlined, as route() is: each call level passes the arguments on again, nanoseconds a tiny call
// feels.
template <class D, Family F>
__attribute__((always_inline)) inline ResultOf<D> forward(const typename D::Args& args) {
  auto* fn =
      reinterpret_cast<typename D::Fortran*>(__atomic_load_n(&g_cpu.fortran[int(F)][D::kRoutine], __ATOMIC_ACQUIRE));
  if (__builtin_expect(!fn, 0)) {
    fn = reinterpret_cast<typename D::Fortran*>(resolve_late(Routine(D::kRoutine), F));
    if (!fn) cpu_blas_missing_routine(Routine(D::kRoutine), F);
  }
  return std::apply(fn, args);
}

// True when every size of a call from a 64-bit-integer interface fits the 32-bit integers of the GPU path (the CUDA
// module, cuBLAS and cuSOLVER take int sizes); larger calls run on the CPU library, which takes them as they are.
inline bool fits_int32(const bo_call& c) {
  constexpr std::int64_t kMax = 0x7fffffff;
  for (std::int64_t v : {c.m, c.n, c.k, c.lda, c.ldb, c.ldc, c.incx, c.incy})
    if (v > kMax || v < -kMax) return false;
  return true;
}

// kReport: `on_gpu_out` is set when the GPU ran the call (a routine without a result: the ScaLAPACK takeover asks); a
// template argument, so that the exported entry points carry no such question.
template <class D, Family F, bool kReport = false>
ResultOf<D> run(const typename D::Args& args, bool* on_gpu_out = nullptr) {
  using R = ResultOf<D>;
  using I = FamilyInt<F>;
  const Routine r = Routine(D::kRoutine);
  policy::Call pc;
  I info = 0;
  switch (D::prepare(args, &pc.call, &info)) {
    case bo::routines::Prep::kInvalid:
      count_error(r);
      report_xerbla(F, routine_srname(r), info);
      return R();
    case bo::routines::Prep::kQuick:
      count_quick_return(r);
      return R();  // a function's quick result is 0 (nrm2 of an empty vector)
    case bo::routines::Prep::kQuickCpu:
      count_quick_return(r);
      return forward<D, F>(args);
    case bo::routines::Prep::kRun:
      break;
  }
  pc.call.family = int(F);  // the descriptor wrote int_bytes
  if constexpr (sizeof(I) > 4) {
    if (!fits_int32(pc.call)) return forward<D, F>(args);
  }
  if constexpr (std::is_void_v<R>) {
    const bool on_gpu = route<D>(pc, [&] { forward<D, F>(args); });
    if constexpr (kReport) *on_gpu_out = on_gpu;
    // WORK(1) (and IWORK(1)) as the CPU LAPACK leaves them: its answer to the same call's workspace query.
    if constexpr (bo::routines::HasWorkspace<D>::value) {
      if (on_gpu) bo::routines::answer_workspace<D>(args, [](const typename D::Args& q) { forward<D, F>(q); });
    }
  } else {
    R result{};
    pc.call.c = &result;  // the module writes a function's value there
    route<D>(pc, [&] { result = forward<D, F>(args); });
    return result;
  }
}

// The interface layer of a routine (runtime.h), from its descriptor's interface (routines/all.h).
template <class D>
struct LayerOf {
  static constexpr Layer value =
      bo::routines::InterfaceOf<D>::value == bo::routines::Interface::kLapack ? Layer::kLapack : Layer::kBlas;
};

// An exported Fortran entry point of family F: a call arriving while we are inside one of ours of the same layer (the
// CPU CBLAS calling its Fortran routine back through us) goes straight to the CPU library, neither counted nor decided
// twice.
// kReport and `on_gpu` as run()'s.
template <class D, Family F, bool kReport = false>
ResultOf<D> fortran_entry(const typename D::Args& args, bool* on_gpu = nullptr) noexcept {
  constexpr Layer layer = LayerOf<D>::value;
  if (reentered(layer)) return forward<D, F>(args);
  CallScope scope(layer);
  ensure_initialized(F);
  return run<D, F, kReport>(args, on_gpu);
}

}  // namespace blasoffload
