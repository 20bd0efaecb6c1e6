// The benchmark cases of blasoffload_bench_kernels: which shapes each routine is measured at in each precision, their
// names, and what counts as their work (bytes that must move, or flops).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bo_bench {

struct Shape {
  std::string name;  // Google Benchmark name, e.g. "sgemv_n/m:4096/n:4096", "dgemm_nn/m:8192/n:8192/k:8192"
  int routine = 0;   // enum bo_routine: routine and precision (BO_R_SGEMV, BO_R_DGEMV, ...)
  char op1 = 'N';    // gemv trans, trsv trans, gemm transa
  char op2 = 'N';    // gemm transb
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
};

// Every case, in registration order (grouped by precision and routine, small to large within a group).
std::vector<Shape> AllShapes();

// Bytes of one element of the shape's precision.
size_t ElementBytes(const Shape& s);
// Bytes that must move (inputs read once, outputs written once) for nrm2/gemv/trsv; 2mnk for gemm.
double Work(const Shape& s);
// True when Work() counts flops (rates in GFLOP/s) rather than bytes (GB/s).
bool WorkIsFlops(const Shape& s);
// A rough H100-class time of one call in seconds: only decides which cases get a fixed iteration count.
double EstimatedSeconds(const Shape& s);

}  // namespace bo_bench
