// Checks a policy file's rates against each other before the policy uses them, and removes the inconsistent ones.
//
// Why: a rate measured while other work ran (another process's CPU BLAS, the host's steal) reads too slow, and a
// disturbed calibration read factorizations a thousand times slower than the same CPU's gemm; every later program
// trusted it and waited for the GPU's start-up on calls the CPU finishes in milliseconds. Disturbance only ever makes a
// rate lower, and by factors that no undisturbed CPU shows between its own routines at the same size, so each point is
// compared with the same precision's reference class (gemm.square for classes by flops, gemv.n for classes by bytes)
// at its size and with the point before it in its own class. Points removed leave the curve to interpolate over the
// rest; a class left with none is derived or built in, as for a file that lacks it. A GPU side outside what any PCIe or
// NVLink machine measures is replaced by the built-in GPU numbers (and the link the start-up measures).
#pragma once

#include <string>
#include <vector>

#include "policy/calibration.h"

namespace blasoffload::policy {

struct Rejection {
  std::string what;  // "dgesv at 1.13e+07 flops: 0.03 GFLOP/s"
  std::string why;   // "3800x below dgemm.square at that size (an undisturbed CPU: at most 100x)"
};

// Removes from `c` every CPU rate point and class, and the GPU side, that is inconsistent with the rest; returns what
// was removed and why (empty: nothing). Never adds anything.
std::vector<Rejection> reject_inconsistent(Calibration* c);

// Whether link rates and fixed costs measured on a GPU are physically plausible (also for the link the start-up
// measures); `why` names the first value out of range.
bool plausible_gpu(double h2d_gbs, double d2h_gbs, double pageable_gbs, std::string* why);

// One line for a rejection: "WHAT (WHY)".
std::string describe(const Rejection& r);

}  // namespace blasoffload::policy
