// The summary's note when no call was intercepted: the likely cause, from what the loaded objects import.
#pragma once

#include <string>

namespace blasoffload {

// Looks at the loaded objects' dynamic symbol tables (only at exit, only when nothing was intercepted) and names
// the cause: a LAPACK inside the CPU BLAS library, calls in routines or precisions not intercepted, or no BLAS
// calls of the program's own. Starts with "no BLAS call reached blasoffload."
std::string nothing_intercepted_note();

}  // namespace blasoffload
