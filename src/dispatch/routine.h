// The Routine enumeration and per-routine names, generated from abi/routines.def.
#pragma once

#include <cstddef>

namespace blasoffload {

enum class Routine : int {
#define BO_ROUTINE(lower, UPPER) lower,
#include "routines.def"
#undef BO_ROUTINE
};

constexpr std::size_t kNumRoutines = 0
#define BO_ROUTINE(lower, UPPER) +1
#include "routines.def"
#undef BO_ROUTINE
    ;

inline const char* routine_name(Routine r) {
  static constexpr const char* kNames[] = {
#define BO_ROUTINE(lower, UPPER) #lower,
#include "routines.def"
#undef BO_ROUTINE
  };
  return kNames[static_cast<int>(r)];
}

// Upper-case names as reference BLAS passes them to XERBLA, padded to six characters.
inline const char* routine_srname(Routine r) {
  static constexpr const char* kNames[] = {
#define BO_ROUTINE(lower, UPPER) #UPPER "      ",
#include "routines.def"
#undef BO_ROUTINE
  };
  return kNames[static_cast<int>(r)];
}

inline constexpr std::size_t index(Routine r) { return static_cast<std::size_t>(r); }

}  // namespace blasoffload
