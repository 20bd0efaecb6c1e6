// Every routine descriptor, and the run-time dispatch from a routine id (routine_ids.h) to its descriptor: what the
// policy and the CUDA module's executor use when they hold a bo_call rather than a type.
#pragma once

#include <cstdint>
#include <type_traits>

#include "routines/descriptor.h"
#include "routines/gels.h"
#include "routines/gemm.h"
#include "routines/gemv.h"
#include "routines/geqrf.h"
#include "routines/gesv.h"
#include "routines/gesvd.h"
#include "routines/getrf.h"
#include "routines/getri.h"
#include "routines/getrs.h"
#include "routines/nrm2.h"
#include "routines/orgqr.h"
#include "routines/ormqr.h"
#include "routines/posv.h"
#include "routines/potrf.h"
#include "routines/potri.h"
#include "routines/potrs.h"
#include "routines/syevd.h"
#include "routines/syevr.h"
#include "routines/syrk.h"
#include "routines/trsm.h"
#include "routines/trsv.h"
#include "routines/trtrs.h"

namespace bo::routines {

template <class D>
struct Tag {
  using type = D;
};

// Calls f(Tag<Descriptor<T>>{}) for the routine `routine`; every call of f must return the same type.
template <class F>
decltype(auto) visit(int routine, F&& f) {
  switch (routine) {
#define BO_ENTRY(p, P, name, NAME, T) \
  case BO_R_##P##NAME:                \
    return f(Tag<by_name::name<T>>{});
#include "routines/routine_list.h"
#undef BO_ENTRY
    default:
      return f(Tag<Gemm<float>>{});  // not a routine id: callers pass only ids of calls they built
  }
}

// The descriptor's answers for a call, by its routine id.
inline int operands(const bo_call& c, Operand out[kMaxOperands]) {
  return visit(c.routine, [&](auto t) { return decltype(t)::type::operands(c, out); });
}
inline double work(const bo_call& c) {
  return visit(c.routine, [&](auto t) { return decltype(t)::type::work(c); });
}
inline double flops(const bo_call& c) {
  return visit(c.routine, [&](auto t) { return decltype(t)::type::flops(c); });
}
inline int work_dims(int routine) {
  return visit(routine, [](auto t) { return decltype(t)::type::kWorkDims; });
}
inline void describe(const bo_call& c, char* buf, std::size_t size) {
  visit(c.routine, [&](auto t) { decltype(t)::type::describe(c, buf, size); });
}
// Whether a descriptor can run a normalised call through a CPU entry point (call_fortran): the routines whose CPU
// share or leftover tiles the module hands back (host services' cpu_call: gemm's hybrid split and failed tiles) and
// those of part 1; part 2's workspace routines are only ever forwarded with the caller's own arguments.
template <class D, class = void>
struct HasCallFortran : std::false_type {};
template <class D>
struct HasCallFortran<D, std::void_t<decltype(&D::call_fortran)>> : std::true_type {};

// Runs a normalised call through the Fortran entry point `fn` of its routine (the CPU library's), with the integer
// type of the interface the call came from (c.int_bytes). False for a routine without call_fortran.
inline bool call_fortran(void* fn, const bo_call& c) {
  return visit(c.routine, [&](auto t) {
    using D = typename decltype(t)::type;
    if constexpr (!HasCallFortran<D>::value) {
      return false;
    } else if (c.int_bytes == 8) {
      using D64 = typename D::template WithInt<std::int64_t>;
      D64::call_fortran(reinterpret_cast<typename D64::Fortran*>(fn), c);
      return true;
    } else {
      using D32 = typename D::template WithInt<std::int32_t>;
      D32::call_fortran(reinterpret_cast<typename D32::Fortran*>(fn), c);
      return true;
    }
  });
}

// The interface of a routine (descriptor.h): LAPACK descriptors declare kInterface.
template <class D, class = void>
struct InterfaceOf {
  static constexpr Interface value = Interface::kBlas;
};
template <class D>
struct InterfaceOf<D, std::void_t<decltype(D::kInterface)>> {
  static constexpr Interface value = D::kInterface;
};
// Whether the GPU path covers this call's variant (a descriptor's gpu_covers; absent: every call). A call it does not
// cover goes to the CPU library in every mode, as a routine the library does not accelerate would.
template <class D, class = void>
struct HasGpuCovers : std::false_type {};
template <class D>
struct HasGpuCovers<D, std::void_t<decltype(&D::gpu_covers)>> : std::true_type {};
template <class D>
inline bool gpu_covers([[maybe_unused]] const bo_call& c) {
  if constexpr (HasGpuCovers<D>::value)
    return D::gpu_covers(c);
  else
    return true;
}

// Bytes of a scalar result the call returns (nrm2's norm), 0 for routines that return nothing.
template <class D, class = void>
struct ResultBytes {
  static constexpr double value = 0;
};
template <class D>
struct ResultBytes<D, std::void_t<decltype(D::kResultBytes)>> {
  static constexpr double value = D::kResultBytes;
};
inline double result_bytes(const bo_call& c) {
  return visit(c.routine, [](auto t) { return ResultBytes<typename decltype(t)::type>::value; });
}
// Traits a descriptor may declare (absent: false).
template <class D, class = void>
struct ResidencyInPolicy : std::false_type {};
template <class D>
struct ResidencyInPolicy<D, std::void_t<decltype(D::kResidencyInPolicy)>> : std::bool_constant<D::kResidencyInPolicy> {
};
// Whether the policy's predictions credit the module's device copies of this routine's matrices.
inline bool residency_in_policy(int routine) {
  return visit(routine, [](auto t) { return ResidencyInPolicy<typename decltype(t)::type>::value; });
}

inline bool is_lapack(int routine) {
  return visit(routine, [](auto t) { return InterfaceOf<typename decltype(t)::type>::value == Interface::kLapack; });
}

inline int element_size(int routine) { return bo_element_size(bo_routine_precision(routine)); }

}  // namespace bo::routines
