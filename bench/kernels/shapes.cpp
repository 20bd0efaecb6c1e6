// The case list of blasoffload_bench_kernels (see shapes.h). Single precision: target sizes, the tuner's grid points
// and a few off-grid shapes that make the nearest-tile lookup interpolate. Double precision: the sizes the double
// routines are judged at (dgemm square 1024..8192, dgemv 4096^2 and 16384^2, dtrsv 4096 and 16384, dnrm2 1e6 and 1e7).
#include "shapes.h"

#include <algorithm>

#include "routines/routine_ids.h"

namespace bo_bench {
namespace {

std::string Dims(int64_t m, int64_t n) { return "/m:" + std::to_string(m) + "/n:" + std::to_string(n); }
// "sgemv", "dgemm", ...
std::string Prefix(bo_routine_kind kind, bo_precision p) { return bo_routine_name(bo_routine_id(kind, p)); }

void AddNrm2(bo_precision p, const std::vector<int64_t>& ns, std::vector<Shape>* out) {
  for (int64_t n : ns) {
    Shape s;
    s.name = Prefix(BO_KIND_NRM2, p) + "/n:" + std::to_string(n);
    s.routine = bo_routine_id(BO_KIND_NRM2, p);
    s.n = n;
    out->push_back(s);
  }
}

void AddGemv(bo_precision p, char trans, const std::vector<std::pair<int64_t, int64_t>>& mn, std::vector<Shape>* out) {
  const std::string prefix = Prefix(BO_KIND_GEMV, p) + (trans == 'N' ? "_n" : "_t");
  for (auto [m, n] : mn) {
    Shape s;
    s.name = prefix + Dims(m, n);
    s.routine = bo_routine_id(BO_KIND_GEMV, p);
    s.op1 = trans;
    s.m = m;
    s.n = n;
    out->push_back(s);
  }
}

void AddTrsv(bo_precision p, char trans, const std::vector<int64_t>& ns, std::vector<Shape>* out) {
  for (int64_t n : ns) {
    Shape s;
    s.name = Prefix(BO_KIND_TRSV, p) + (trans == 'N' ? "_n" : "_t") + "/n:" + std::to_string(n);
    s.routine = bo_routine_id(BO_KIND_TRSV, p);
    s.op1 = trans;
    s.n = n;
    out->push_back(s);
  }
}

void AddGemm(bo_precision p, char ta, char tb, int64_t m, int64_t n, int64_t k, bool rank_update,
             std::vector<Shape>* out) {
  Shape s;
  s.name = Prefix(BO_KIND_GEMM, p) + "_" + char(ta + 'a' - 'A') + char(tb + 'a' - 'A') + Dims(m, n) +
           "/k:" + std::to_string(k);
  s.routine = bo_routine_id(BO_KIND_GEMM, p);
  s.op1 = ta;
  s.op2 = tb;
  s.m = m;
  s.n = n;
  s.k = k;
  if (rank_update) {  // C := C - A B, as LAPACK's right-looking factorisations issue them
    s.alpha = -1.0;
    s.beta = 1.0;
  }
  out->push_back(s);
}

void AddSingle(std::vector<Shape>* out) {
  const bo_precision p = BO_PREC_S;
  // snrm2: the tuner's grid (powers of ten), which includes the targets 1e5..1e8, plus off-grid points.
  std::vector<int64_t> ns;
  for (int64_t n = 1; n <= 100000000; n *= 10) ns.push_back(n);
  for (int64_t n : {int64_t(3000), int64_t(500000), int64_t(30000000)}) ns.push_back(n);
  std::sort(ns.begin(), ns.end());
  AddNrm2(p, ns, out);
  // sgemv: the grid (at most 4 GiB of matrix), skinny shapes (tall-and-thin updates, wide reductions) and off-grid
  // ones (odd leading dimensions too).
  const int64_t grid[] = {16, 256, 1024, 4096, 16384, 65536};
  std::vector<std::pair<int64_t, int64_t>> mn;
  for (int64_t m : grid)
    for (int64_t n : grid)
      if (m * n <= (int64_t(1) << 30)) mn.push_back({m, n});
  for (auto q : {std::pair<int64_t, int64_t>{1000000, 32},
                 {32, 1000000},
                 {65536, 64},
                 {64, 65536},
                 {1000, 3000},
                 {5000, 7},
                 {7, 5000},
                 {12345, 6789}})
    mn.push_back(q);
  AddGemv(p, 'N', mn, out);
  AddGemv(p, 'T', mn, out);
  AddTrsv(p, 'N', {64, 256, 1024, 3000, 4096, 8192, 16384, 32768}, out);
  AddTrsv(p, 'T', {4096, 16384}, out);
  for (int64_t n : {1024, 2048, 4096, 8192, 16384}) AddGemm(p, 'N', 'N', n, n, n, false, out);
  AddGemm(p, 'N', 'N', 4096, 4096, 64, true, out);
  AddGemm(p, 'N', 'N', 8192, 8192, 256, true, out);
  AddGemm(p, 'N', 'N', 16384, 16384, 64, true, out);
  AddGemm(p, 'N', 'N', 16384, 16384, 256, true, out);
  AddGemm(p, 'N', 'N', 3000, 5000, 700, false, out);
  AddGemm(p, 'T', 'N', 4096, 4096, 4096, false, out);
}

void AddDouble(std::vector<Shape>* out) {
  const bo_precision p = BO_PREC_D;
  AddNrm2(p, {1000000, 10000000}, out);
  const std::vector<std::pair<int64_t, int64_t>> mn{{4096, 4096}, {16384, 16384}};
  AddGemv(p, 'N', mn, out);
  AddGemv(p, 'T', mn, out);
  AddTrsv(p, 'N', {4096, 16384}, out);
  AddTrsv(p, 'T', {4096, 16384}, out);
  for (int64_t n : {1024, 2048, 4096, 8192}) AddGemm(p, 'N', 'N', n, n, n, false, out);
  AddGemm(p, 'N', 'N', 8192, 8192, 256, true, out);  // dgetrf's trailing update
}

}  // namespace

std::vector<Shape> AllShapes() {
  std::vector<Shape> out;
  AddSingle(&out);
  AddDouble(&out);
  return out;
}

size_t ElementBytes(const Shape& s) { return size_t(bo_element_size(bo_routine_precision(s.routine))); }

double Work(const Shape& s) {
  const double m = double(s.m), n = double(s.n), k = double(s.k), e = double(ElementBytes(s));
  switch (bo_routine_kind_of(s.routine)) {
    case BO_KIND_NRM2:
      return e * n;
    case BO_KIND_GEMV:  // A, x and y (beta = 0: y is only written)
      return e * (m * n + m + n);
    case BO_KIND_TRSV:  // the triangle, x read and x written
      return e * (n * (n + 1) / 2 + 2 * n);
    default:
      return 2.0 * m * n * k;
  }
}

bool WorkIsFlops(const Shape& s) { return bo_routine_kind_of(s.routine) == BO_KIND_GEMM; }

double EstimatedSeconds(const Shape& s) {
  switch (bo_routine_kind_of(s.routine)) {
    case BO_KIND_NRM2:
      return 20e-6 + Work(s) / 2.5e12;
    case BO_KIND_GEMV:
      return 5e-6 + Work(s) / 2.5e12;
    case BO_KIND_TRSV:  // latency-bound: cuBLAS needs ~1 ms at n = 16384
      return 20e-6 + Work(s) / 5e11;
    default:  // FP32 without tensor cores, FP64 on its tensor cores: both some 30-50 TFLOP/s
      return 10e-6 + Work(s) / 3e13;
  }
}

}  // namespace bo_bench
