// The benchmark cases of blasoffload_bench_kernels: which shapes each routine is measured at, their names, and
// what counts as their work (bytes that must move, or flops).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bo_bench {

struct Shape {
  std::string name;  // Google Benchmark name, e.g. "sgemv_n/m:4096/n:4096"; report.py parses it back
  int routine = 0;   // bo_kernel_routine
  char op1 = 'N';    // sgemv trans, strsv trans, sgemm transa
  char op2 = 'N';    // sgemm transb
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
};

// Every case, in registration order (grouped by routine, small to large within a group).
std::vector<Shape> AllShapes();

// Bytes that must move (inputs read once, outputs written once) for snrm2/sgemv/strsv; 2mnk for sgemm.
double Work(const Shape& s);
// True when Work() counts flops (rates in GFLOP/s) rather than bytes (GB/s).
bool WorkIsFlops(const Shape& s);
// A rough H100-class time of one call in seconds: only decides which cases get a fixed iteration count.
double EstimatedSeconds(const Shape& s);

}  // namespace bo_bench
