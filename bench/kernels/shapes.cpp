// The case list of blasoffload_bench_kernels (see shapes.h): target sizes, the tuner's grid points and a few
// off-grid shapes that make the nearest-tile lookup interpolate.
#include "shapes.h"

#include <algorithm>

#include "kernels/registry.h"

namespace bo_bench {
namespace {

std::string Dims(int64_t m, int64_t n) { return "/m:" + std::to_string(m) + "/n:" + std::to_string(n); }

void AddSnrm2(std::vector<Shape>* out) {
  // The tuner's grid (powers of ten), which includes the targets 1e5..1e8, plus off-grid points.
  std::vector<int64_t> ns;
  for (int64_t n = 1; n <= 100000000; n *= 10) ns.push_back(n);
  for (int64_t n : {int64_t(3000), int64_t(500000), int64_t(30000000)}) ns.push_back(n);
  std::sort(ns.begin(), ns.end());
  for (int64_t n : ns) {
    Shape s;
    s.name = "snrm2/n:" + std::to_string(n);
    s.routine = BO_K_SNRM2;
    s.n = n;
    out->push_back(s);
  }
}

void AddSgemv(char trans, std::vector<Shape>* out) {
  const std::string prefix = trans == 'N' ? "sgemv_n" : "sgemv_t";
  const int64_t grid[] = {16, 256, 1024, 4096, 16384, 65536};
  std::vector<std::pair<int64_t, int64_t>> mn;
  for (int64_t m : grid)
    for (int64_t n : grid)
      if (m * n <= (int64_t(1) << 30)) mn.push_back({m, n});  // at most 4 GiB of matrix
  // Skinny shapes (tall-and-thin updates, wide reductions) and off-grid ones (odd leading dimensions too).
  for (auto p : {std::pair<int64_t, int64_t>{1000000, 32}, {32, 1000000}, {65536, 64}, {64, 65536}, {1000, 3000},
                 {5000, 7}, {7, 5000}, {12345, 6789}})
    mn.push_back(p);
  for (auto [m, n] : mn) {
    Shape s;
    s.name = prefix + Dims(m, n);
    s.routine = BO_K_SGEMV;
    s.op1 = trans;
    s.m = m;
    s.n = n;
    out->push_back(s);
  }
}

void AddStrsv(std::vector<Shape>* out) {
  for (int64_t n : {64, 256, 1024, 3000, 4096, 8192, 16384, 32768}) {
    Shape s;
    s.name = "strsv_n/n:" + std::to_string(n);
    s.routine = BO_K_STRSV;
    s.n = n;
    out->push_back(s);
  }
  for (int64_t n : {4096, 16384}) {
    Shape s;
    s.name = "strsv_t/n:" + std::to_string(n);
    s.routine = BO_K_STRSV;
    s.op1 = 'T';
    s.n = n;
    out->push_back(s);
  }
}

void AddSgemm(std::vector<Shape>* out) {
  auto add = [out](char ta, char tb, int64_t m, int64_t n, int64_t k, bool rank_update) {
    Shape s;
    s.name = std::string("sgemm_") + char(ta + 'a' - 'A') + char(tb + 'a' - 'A') + Dims(m, n) + "/k:" +
             std::to_string(k);
    s.routine = BO_K_SGEMM;
    s.op1 = ta;
    s.op2 = tb;
    s.m = m;
    s.n = n;
    s.k = k;
    if (rank_update) {  // C := C - A B, as LAPACK's right-looking factorisations issue them
      s.alpha = -1.0f;
      s.beta = 1.0f;
    }
    out->push_back(s);
  };
  for (int64_t n : {1024, 2048, 4096, 8192, 16384}) add('N', 'N', n, n, n, false);
  add('N', 'N', 4096, 4096, 64, true);
  add('N', 'N', 8192, 8192, 256, true);
  add('N', 'N', 16384, 16384, 64, true);
  add('N', 'N', 16384, 16384, 256, true);
  add('N', 'N', 3000, 5000, 700, false);
  add('T', 'N', 4096, 4096, 4096, false);
}

}  // namespace

std::vector<Shape> AllShapes() {
  std::vector<Shape> out;
  AddSnrm2(&out);
  AddSgemv('N', &out);
  AddSgemv('T', &out);
  AddStrsv(&out);
  AddSgemm(&out);
  return out;
}

double Work(const Shape& s) {
  const double m = double(s.m), n = double(s.n), k = double(s.k);
  switch (s.routine) {
    case BO_K_SNRM2:
      return 4.0 * n;
    case BO_K_SGEMV:  // A, x and y (beta = 0: y is only written)
      return 4.0 * (m * n + m + n);
    case BO_K_STRSV:  // the triangle, x read and x written
      return 4.0 * (n * (n + 1) / 2 + 2 * n);
    default:
      return 2.0 * m * n * k;
  }
}

bool WorkIsFlops(const Shape& s) { return s.routine == BO_K_SGEMM; }

double EstimatedSeconds(const Shape& s) {
  switch (s.routine) {
    case BO_K_SNRM2:
      return 20e-6 + Work(s) / 2.5e12;
    case BO_K_SGEMV:
      return 5e-6 + Work(s) / 2.5e12;
    case BO_K_STRSV:  // latency-bound: cuBLAS needs ~1 ms at n = 16384
      return 20e-6 + Work(s) / 5e11;
    default:
      return 10e-6 + Work(s) / 3e13;
  }
}

}  // namespace bo_bench
