// The exported Fortran-ABI entry points, every routine and precision of abi/routines.def in every spelling compilers
// and NVBLAS-era codes use (dgemm_, dgemm, DGEMM, DGEMM_), each made from its descriptor's parameter list.
#include "dispatch/run.h"
#include "routines/all.h"

using namespace blasoffload;

#define BO_EXPORT extern "C" __attribute__((visibility("default")))

#define BO_ENTRY(p, P, name, NAME, T)                                                   \
  BO_EXPORT BO_##NAME##_RESULT(T) p##name##_ BO_##NAME##_PARAMS(T) noexcept {           \
    using D = bo::routines::by_name::name<T>;                                           \
    return fortran_entry<D>(D::Args BO_##NAME##_ARGS);                                  \
  }                                                                                     \
  BO_EXPORT decltype(p##name##_) p##name __attribute__((alias(#p #name "_"), nothrow)); \
  BO_EXPORT decltype(p##name##_) P##NAME __attribute__((alias(#p #name "_"), nothrow)); \
  BO_EXPORT decltype(p##name##_) P##NAME##_ __attribute__((alias(#p #name "_"), nothrow));
#include "routines/routine_list.h"
#undef BO_ENTRY
