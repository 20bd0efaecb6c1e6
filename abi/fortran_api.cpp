// The exported Fortran-ABI entry points: every routine and precision of abi/routines.def in every symbol family of
// abi/families.def (dgemm_, dgemm_64_, scipy_dgemm_64_ ...; the std family also in the spellings compilers and
// NVBLAS-era codes use: dgemm, DGEMM, DGEMM_), each made from its descriptor's parameter list in the family's integer
// type.
#include "abi/families.h"
#include "dispatch/run.h"
#include "routines/all.h"

using namespace blasoffload;

#define BO_STR_(x) #x
#define BO_STR(x) BO_STR_(x)

// One routine in one family: a C++ function named by the family (bo_scipy64_dgemm) exported under the family's
// symbol name (scipy_dgemm_64_) through an assembler label.
#define BO_FAMILY_ENTRY(fam, fp, fs, cp, cs, I, complete, p, P, name, NAME, T)                 \
  extern "C" __attribute__((visibility("default"))) BO_##NAME##_RESULT(T)                      \
      bo_##fam##_##p##name BO_##NAME##_PARAMS(T, I) noexcept __asm__(BO_STR(fp##p##name##fs)); \
  extern "C" BO_##NAME##_RESULT(T) bo_##fam##_##p##name BO_##NAME##_PARAMS(T, I) noexcept {    \
    using D = bo::routines::by_name::name<T, I>;                                               \
    return fortran_entry<D, Family::fam>(D::Args BO_##NAME##_ARGS);                            \
  }

#define BO_EXPORT extern "C" __attribute__((visibility("default")))
#define BO_ENTRY(p, P, name, NAME, T)                                                         \
  BO_FAMILIES(BO_FAMILY_ENTRY, p, P, name, NAME, T)                                           \
  BO_EXPORT decltype(bo_std_##p##name) p##name __attribute__((alias(#p #name "_"), nothrow)); \
  BO_EXPORT decltype(bo_std_##p##name) P##NAME __attribute__((alias(#p #name "_"), nothrow)); \
  BO_EXPORT decltype(bo_std_##p##name) P##NAME##_ __attribute__((alias(#p #name "_"), nothrow));
#include "routines/routine_list.h"
#undef BO_ENTRY
