// The Routine enumeration and per-routine names of the core, generated from abi/routines.def: the same numbering
// as the C enum bo_routine that the CUDA module and the kernel registry use (src/routines/routine_ids.h).
#pragma once

#include <cstddef>

#include "routines/routine_ids.h"

namespace blasoffload {

enum class Routine : int {
#define BO_ENTRY(p, P, name, NAME, T) p##name = BO_R_##P##NAME,
#include "routines/routine_list.h"
#undef BO_ENTRY
};

constexpr std::size_t kNumRoutines = BO_R_COUNT;

inline const char* routine_name(Routine r) { return bo_routine_name(static_cast<int>(r)); }

// Upper-case names as reference BLAS passes them to XERBLA, padded to six characters.
inline const char* routine_srname(Routine r) {
  static constexpr const char* kNames[] = {
#define BO_ENTRY(p, P, name, NAME, T) #P #NAME "      ",
#include "routines/routine_list.h"
#undef BO_ENTRY
  };
  return kNames[static_cast<int>(r)];
}

inline constexpr std::size_t index(Routine r) { return static_cast<std::size_t>(r); }
inline bo_precision precision_of(Routine r) { return bo_routine_precision(static_cast<int>(r)); }
inline bo_routine_kind kind_of(Routine r) { return bo_routine_kind_of(static_cast<int>(r)); }

}  // namespace blasoffload
