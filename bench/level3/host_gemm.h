// The host-operand gemm point of blasoffload_bench_level3: C = A B on malloc'd host memory through the library's
// Fortran gemm (libblasoffload.so, whatever its settings route the call to) against the CPU BLAS's, timed wall clock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "routines/routine_ids.h"

namespace bo_bench {

struct HostGemmOptions {
  std::vector<int64_t> sizes;  // n of the square NN products (alpha 1, beta 0)
  std::vector<bo_precision> precisions;
  std::string library;   // libblasoffload.so (candidate "library")
  std::string cpu_blas;  // the CPU BLAS (candidate "cpu"); empty: not timed
  int reps = 3;          // timed calls per candidate, after one untimed
  std::string date, commit;
};

// Prints one JSON line of context and one per (precision, n, candidate) on stdout; returns false when a candidate
// failed or its result disagreed with the other's.
bool RunHostGemm(const HostGemmOptions& o);

}  // namespace bo_bench
