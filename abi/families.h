// The symbol families of abi/families.def as C++: an enumeration and each family's names and integer width.
#pragma once

#include <cstdint>
#include <string>

#include "abi/blas_types.h"

namespace blasoffload {

using std::int32_t;
using std::int64_t;

enum class Family : int {
#define BO_FAMILY(id, fp, fs, cp, cs, I, complete) id,
#include "abi/families.def"
#undef BO_FAMILY
  kCount
};
constexpr int kNumFamilies = int(Family::kCount);

struct FamilyInfo {
  const char* name;  // "std"
  const char* fortran_prefix;
  const char* fortran_suffix;
  const char* cblas_prefix;
  const char* cblas_suffix;
  int int_bytes;
  bool complete;
};

inline const FamilyInfo& family_info(Family f) {
  static constexpr FamilyInfo kInfo[] = {
#define BO_FAMILY(id, fp, fs, cp, cs, I, complete) {#id, #fp, #fs, #cp, #cs, int(sizeof(I)), complete != 0},
#include "abi/families.def"
#undef BO_FAMILY
  };
  return kInfo[int(f)];
}

// The integer type of a family's arguments.
template <Family F>
struct FamilyTraits;
#define BO_FAMILY(id, fp, fs, cp, cs, I, complete) \
  template <>                                      \
  struct FamilyTraits<Family::id> {                \
    using Int = I;                                 \
  };
#include "abi/families.def"
#undef BO_FAMILY
template <Family F>
using FamilyInt = typename FamilyTraits<F>::Int;

// "dgemm" -> the family's Fortran name ("dgemm_64_"), and its CBLAS name ("cblas_dgemm64_").
inline std::string fortran_name(Family f, const char* base) {
  return std::string(family_info(f).fortran_prefix) + base + family_info(f).fortran_suffix;
}
inline std::string cblas_name(Family f, const char* base) {
  return std::string(family_info(f).cblas_prefix) + base + family_info(f).cblas_suffix;
}

}  // namespace blasoffload
