// The tuned tables' kernel keys as data: one slot per tuned routine kind and transpose (nrm2, gemv_n, gemv_t, ...)
// in each precision, named after the routine ("sgemm", "dgemv_t", "scnrm2", "cgemv_t", "zherk"). The CUDA module's
// lookup, the work model and the tuner's grids all derive their keys from here, so a new precision or kind is data
// (the routine list and one slot), not another hand-written name list to keep in step.
#pragma once
#include <cstdint>
#include <string>

#include "routines/routine_ids.h"

namespace bo::tuning {

// One key per precision: the routine kind, and for gemv and trsv which transposes it holds: 'N' the untransposed
// calls (the _n key), 'T' the others, the conjugate transpose 'C' included (the _t key: both read A across its
// columns, at the same cost); 0 every call of the kind.
struct KeySlot {
  bo_routine_kind kind;
  char trans;
  const char* suffix;  // appended to the routine's name
};
inline constexpr KeySlot kKeySlots[] = {{BO_KIND_NRM2, 0, ""},     {BO_KIND_GEMV, 'N', "_n"}, {BO_KIND_GEMV, 'T', "_t"},
                                        {BO_KIND_TRSV, 'N', "_n"}, {BO_KIND_TRSV, 'T', "_t"}, {BO_KIND_GEMM, 0, ""},
                                        {BO_KIND_TRSM, 0, ""},     {BO_KIND_SYRK, 0, ""},     {BO_KIND_HERK, 0, ""}};
inline constexpr int kKeysPerPrecision = int(sizeof kKeySlots / sizeof kKeySlots[0]);
// Key index = precision * kKeysPerPrecision + slot. Some indices name no routine (sherk, dherk do not exist).
inline constexpr int kKeyCount = int(BO_PREC_COUNT) * kKeysPerPrecision;

// The key of a call of `routine` (enum bo_routine) whose transpose letter is `trans` (gemv's trans, trsv's trans;
// ignored for the other kinds), or -1 where the routine has no key (LAPACK, an unknown id). Allocation-free.
int key_index(int routine, char trans);
// The key's name ("cgemv_t"), or nullptr for an index that names no routine or is out of range. Static storage, never
// allocates (the tuned lookup calls it on the policy's path).
const char* key_name(int index);
// The routine (enum bo_routine) a key is measured and chosen for, or -1.
int key_routine(int index);
// The index of the key named `name`, or -1 for a name that is not a key (tables may carry keys a newer tuner wrote).
int find_key(const std::string& name);

}  // namespace bo::tuning
