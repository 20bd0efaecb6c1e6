// Kernel choice from a tuned table: the module loads the table for its GPU once at init; every call then
// looks up the nearest tile and takes the configuration named there (ours or cuBLAS).
#pragma once
#include <stddef.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tuning/table.h"

namespace bok {

const bo_kernel_entry* registry_entries(size_t* count);

// Resolves and installs the table for `dev` (see tuning/table.h resolve_table). Messages go to `log`
// (level 0 = warning, always shown; 1 = summary level). Call once, before any select; not thread-safe.
void load_tuned_params(const bo::tuning::DeviceInfo& dev, const char* override_path,
                       const std::vector<std::string>& search_dirs, void (*log)(int level, const char* message));

// Index of the table's choice for these arguments (own = the best of our own configurations, never cuBLAS), or -1 if
// there is no table, no tile, or the named configuration cannot run these arguments. routine: enum bo_routine (it,
// not a->routine, picks the table key). Allocation-free.
int tuned_select(int routine, const bo_kernel_args* a, bool own);

// The table's kernel time in microseconds for this call (its routine and precision pick the table key: sgemm, dgemm,
// cgemm, zherk, ...): the work over the nearest tile's rate. -1 without a table, key or tile. Allocation-free.
double tuned_kernel_us(const bo_call* call);

// The table key of a call ("sgemm", "dgemv_t", "cgemv_t" for a 'C' transpose too, "dznrm2", ...; nullptr for a
// routine without one) and its tile coordinates (dims[0..2], 1 where unused). Keys: tuning/keys.h.
const char* tuned_key(const bo_call* call, int64_t* dims);

// The one-line description of the table in use.
const char* tuned_params_info();

}  // namespace bok
