// The tuning grids as data: for each tuned kernel key, its axes and the grid points per axis (full run and
// --quick), the routine and option letters it is measured with, and its unit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bo::tune {

struct GridSpec {
  std::string key;                 // table key: snrm2, sgemv_n, sgemv_t, strsv_n, strsv_t, sgemm, strsm, ssyrk and
                                   // their double twins dnrm2 ... dsyrk
  int routine;                     // enum bo_routine (routine and precision)
  char op;                         // gemv trans / trsv trans ('N' or 'T'); gemm transa = transb = 'N'
  std::vector<std::string> axes;   // e.g. {"m", "n"}
  std::vector<std::vector<int64_t>> points;  // per axis, ascending
  std::string unit;                // "GB/s" or "GFLOP/s"
};

// Log-spaced points lo * ratio^i up to hi (rounded to integers, de-duplicated, hi included).
std::vector<int64_t> log_spaced(double lo, double hi, double ratio);

// All kernel keys' grids, single precision first. quick: a few points per axis (a smoke run of about a minute). The
// double keys' grids are coarser (FP64 speed tuning is later work).
std::vector<GridSpec> grid_specs(bool quick);

// Number of tiles of a spec (product of axis sizes).
int64_t tile_count(const GridSpec& g);
// The tile's coordinates for a flat index (last axis fastest).
std::vector<int64_t> tile_at(const GridSpec& g, int64_t index);

// Bytes a memory-bound kernel must move for a tile (inputs read once, outputs written once), split into
// read and written; gemm, trsm and syrk return their flop count in `read` and 0 in `written`.
struct Work {
  double read = 0, written = 0;
};
Work tile_work(const GridSpec& g, const std::vector<int64_t>& at);

}  // namespace bo::tune
