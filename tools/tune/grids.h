// The tuning grids as data: for each tuned kernel key, its axes and the grid points per axis (full run and
// --quick), the routine and option letters it is measured with, and its unit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bo::tune {

struct GridSpec {
  std::string key;  // table key (tuning/keys.h): snrm2, sgemv_n, sgemv_t, strsv_n, strsv_t, sgemm, strsm, ssyrk, their
                    // double twins dnrm2 ... dsyrk, and the complex scnrm2, cgemv_n ... csyrk, cherk, dznrm2 ... zherk
  int routine;      // enum bo_routine (routine and precision)
  char op;          // gemv trans / trsv trans ('N', 'T'; the complex _t keys 'C'); gemm transa = transb = 'N'
  std::vector<std::string> axes;             // e.g. {"m", "n"}
  std::vector<std::vector<int64_t>> points;  // per axis, ascending
  std::string unit;                          // "GB/s" or "GFLOP/s"
};

// Log-spaced points lo * ratio^i up to hi (rounded to integers, de-duplicated, hi included).
std::vector<int64_t> log_spaced(double lo, double hi, double ratio);

// All kernel keys' grids, in the order of tuning/keys.h (s, d, c, z; within each nrm2, gemv_n, gemv_t, trsv_n, trsv_t,
// gemm, trsm, syrk, herk). quick: a few points per axis, the same in every precision (a smoke run of about a minute
// per precision). The double keys' grids are coarser (FP64 speed tuning is later work); the complex ones are the
// double ones, z's matrices to 32768.
std::vector<GridSpec> grid_specs(bool quick);

// Whether --kernels=`selection` takes `key`: empty takes every key; an entry is a key's name, or a precision letter
// (s, d, c, z) for all of its keys ("d,c,z": the double and complex keys).
bool key_selected(const std::vector<std::string>& selection, const std::string& key);
// The first entry of a selection that is neither a key nor a precision letter ("" if none).
std::string unknown_selection(const std::vector<std::string>& selection);

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
