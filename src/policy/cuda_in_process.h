// Whether the program itself uses CUDA, so that its operands may be device memory (docs/policy.md, step
// 1): what the policy asks at start and again now and then on the call path, cheap enough for it.
#pragma once

#include "policy/config.h"

namespace blasoffload::policy {

// True at most every 100 ms (a vDSO clock read: nanoseconds): a large call's turn to look again.
bool recheck_due();
// Whether CUDA is in the process because of the program: the driver before our module loaded, a shared CUDA runtime
// after. Looks only when the dynamic linker loaded something since the last look, never while our module loads.
bool program_uses_cuda(const Settings& s);

}  // namespace blasoffload::policy
