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

// Index of the table's choice for these arguments (own = the best of our own configurations), or -1 if
// there is no table, no tile, or the named configuration cannot run these arguments. Allocation-free.
int tuned_select(int routine, const bo_kernel_args* a, bool own);

// The table's kernel time in microseconds for a call of this shape (routine: bo_kernel_routine; op: sgemv or strsv
// trans, sgemm transa): the work over the nearest tile's rate. -1 without a table or tile. Allocation-free.
double tuned_kernel_us(int routine, char op, int64_t m, int64_t n, int64_t k);

// Whether the installed table chooses cuBLAS anywhere (then the module opens it at start-up, not on a first call).
bool tuned_uses_cublas();

// The one-line description of the table in use.
const char* tuned_params_info();

}  // namespace bok
