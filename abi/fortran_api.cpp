// The exported Fortran-ABI entry points: every routine and precision of abi/routines.def in every symbol family of
// abi/families.def (dgemm_, dgemm_64_, scipy_dgemm_64_ ...; the std family also in the spellings compilers and
// NVBLAS-era codes use: dgemm, DGEMM, DGEMM_), each made from its descriptor's parameter list in the family's integer
// type.
#include "abi/families.h"
#include "dispatch/run.h"
#include "routines/all.h"

using namespace blasoffload;

// A routine whose parameter list depends on the element type (the complex ?gesvd and ?gesdd take RWORK) defines
// BO_<NAME>_PARAMS_<T> and BO_<NAME>_ARGS_<T> as `~, ~, list` for that T (routines/gesvd.h); BO_BY_TYPE picks that
// list where it is defined, the common BO_<NAME>_PARAMS / _ARGS elsewhere (an undefined name stays one argument).
#define BO_THIRD_(a, b, c, ...) c
#define BO_THIRD(...) BO_THIRD_(__VA_ARGS__)
#define BO_BY_TYPE(by_type, common) BO_THIRD(by_type, common, common)

// One routine in one family: a C++ function named by the family (bo_scipy64_dgemm) exported under the family's
// symbol name (scipy_dgemm_64_) through an assembler label.
#define BO_FAMILY_ENTRY(fam, fp, fs, cp, cs, I, complete, p, P, name, NAME, T)                         \
  BO_DEFINE_EXPORT_AS(BO_##NAME##_RESULT(T), bo_##fam##_##p##name,                                     \
                      BO_BY_TYPE(BO_##NAME##_PARAMS_##T, BO_##NAME##_PARAMS)(T, I), fp##p##name##fs) { \
    using D = bo::routines::by_name::name<T, I>;                                                       \
    return fortran_entry<D, Family::fam>(D::Args BO_BY_TYPE(BO_##NAME##_ARGS_##T, BO_##NAME##_ARGS));  \
  }

#define BO_EXPORT extern "C" __attribute__((visibility("default")))
#define BO_ENTRY(p, P, name, NAME, T)                                                         \
  BO_FAMILIES(BO_FAMILY_ENTRY, p, P, name, NAME, T)                                           \
  BO_EXPORT decltype(bo_std_##p##name) p##name __attribute__((alias(#p #name "_"), nothrow)); \
  BO_EXPORT decltype(bo_std_##p##name) P##NAME __attribute__((alias(#p #name "_"), nothrow)); \
  BO_EXPORT decltype(bo_std_##p##name) P##NAME##_ __attribute__((alias(#p #name "_"), nothrow));
#include "routines/routine_list.h"
#undef BO_ENTRY
