// The command line of blasoffload_bench_level3: what a run measures (Options, with the default shapes) and its parsing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "routines/routine_ids.h"

namespace bo_level3 {

using MxN = std::vector<std::pair<int64_t, int64_t>>;
struct Options {
  std::string module, commit, date, library, cpu_blas;
  bool trsm = true, syrk = true, right = false, queue_ahead = false;
  std::vector<bo_precision> precisions{BO_PREC_S, BO_PREC_D};
  MxN trsm_shapes[BO_PREC_COUNT] = {{{16384, 1}, {16384, 16}, {16384, 128}, {128, 16384}, {4096, 4096}, {8192, 8192}},
                                    {{16384, 16}, {16384, 128}, {4096, 4096}}};
  std::vector<int64_t> syrk_n[BO_PREC_COUNT] = {{2048, 4096, 8192}, {8192}};
  std::vector<int64_t> host_gemm_n;
  int reps = 9, warmup = 2, host_reps = 3;
};

extern const char kUsage[];

// Reads the arguments into *o; prints kUsage and exits on --help; false on an unknown or malformed argument.
bool ParseArgs(int argc, char** argv, Options* o);

}  // namespace bo_level3
