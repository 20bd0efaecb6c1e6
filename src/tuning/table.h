// Tuned-parameter tables (tuned_params/*.json): the data model, JSON reading/writing, nearest-tile lookup
// and the run-time choice of a table for a device (exact name, else same compute capability, else the
// built-in defaults). Plain C++17, no CUDA: the CUDA module, the tuner and CPU-only tests share it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bo::tuning {

inline constexpr const char* kSchema = "blasoffload-tuned-params/1";

// What identifies the GPU a table was measured on (and the GPU we run on).
struct DeviceInfo {
  std::string name;  // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double memory_gib = 0;
};

// One measured point of a bandwidth curve (seed 000's SREAD / SMSET kernels).
struct BandwidthPoint {
  double bytes = 0;
  double gbs = 0;
};

// The tuner's result for one grid tile.
struct Tile {
  std::vector<int64_t> at;  // the grid point, one value per axis
  std::string config;       // chosen configuration family, or "cublas"
  double rate = 0;          // the chosen one's rate in the kernel's unit
  double time_us = 0;       // the chosen one's time
  std::string own_config;   // fastest of our own configurations (== config unless cuBLAS won)
  double own_rate = 0;
  std::optional<double> cublas_rate;         // absent when cuBLAS was not available to the tuner
  std::optional<double> model_rate;          // seed 000's bandwidth-model estimate (memory-bound kernels only)
  std::map<std::string, double> candidates;  // every candidate's rate (validated ones only)
};

// One kernel's table: a full cartesian grid over its axes (tiles may be missing where a shape did not
// fit in memory; lookup then takes the nearest existing tile).
struct KernelTable {
  std::string unit;                        // "GB/s" or "GFLOP/s"
  std::vector<std::string> axes;           // e.g. {"n"}, {"m","n"}, {"m","n","k"}
  std::vector<std::vector<int64_t>> grid;  // grid points per axis, ascending, all >= 1
  std::vector<Tile> tiles;
  // The tile nearest to dims (one value per axis; values < 1 count as 1), nearest per axis in log
  // distance (ties to the smaller grid point). nullptr only when there are no tiles. O(axes * log grid);
  // allocation-free after finalize().
  // Where that grid point has no tile: the existing tile nearest to it in summed log distance (ties to the
  // lexicographically smaller `at`). Without an index (finalize() not called, or the grid/tiles are
  // inconsistent) the same answer comes from a linear scan over the tiles, still allocation-free.
  const Tile* nearest(const int64_t* dims) const;
  // Sorts tiles by `at` (the order to_json writes) and builds the lookup index; parse_table calls it.
  // Call after filling or changing tiles by hand: the index holds tile positions, so it goes stale.
  void finalize();

 private:
  std::vector<int32_t> index_;  // flat grid index -> tile index, -1 where missing (then filled by nearest)
};

struct Table {
  DeviceInfo device;
  std::string toolkit;                         // CUDA runtime version, "13.0"
  std::string driver;                          // driver's CUDA version
  std::string cublas;                          // cuBLAS version string, empty if it was not available
  std::string created;                         // ISO 8601 UTC
  std::string tuner;                           // "blasoffload-tune <version> (<commit>)"
  std::vector<BandwidthPoint> read, write;     // ascending bytes
  std::map<std::string, KernelTable> kernels;  // keys (tuning/keys.h): snrm2, sgemv_n, sgemv_t, strsv_n, strsv_t,
                                               // sgemm, strsm, ssyrk; dnrm2 ... dsyrk; scnrm2, cgemv_n ... csyrk,
                                               // cherk; dznrm2 ... zherk. Any other key is carried, unused.
  // Measured bandwidth for a transfer of `bytes` (log-log interpolation, clamped at the ends); 0 if none.
  double read_gbs(double bytes) const;
  double write_gbs(double bytes) const;
};

// The work a table's rate is measured in for one call of kernel `key` (a name of tuning/keys.h: snrm2, sgemv_n, ...,
// dsyrk, scnrm2, cgemv_n, ..., zherk) at `dims` (its axes' values): bytes read and written by a memory-bound kernel
// (inputs once, outputs once; beta = 0; elements of 4, 8, 8 and 16 bytes for s, d, c and z; a norm's result is real),
// or the real flop count of gemm / trsm / syrk / herk in `read` and 0 in `written` (complex: four times the real
// count, as the routines' descriptors count it). rate = (read + written) / time. Unknown key: zeros.
struct KernelWork {
  double read = 0, written = 0;
};
KernelWork kernel_work(const std::string& key, const int64_t* dims);
// The same by key index (tuning/keys.h), without the name lookup: the tuned kernel time's path. Allocation-free.
KernelWork kernel_work(int key, const int64_t* dims);

// Field-by-field equality (doubles compared exactly; KernelTable's lookup index is not compared, since it is
// derived from the tiles). Mostly for round-trip tests.
bool operator==(const DeviceInfo& a, const DeviceInfo& b);
bool operator==(const BandwidthPoint& a, const BandwidthPoint& b);
bool operator==(const Tile& a, const Tile& b);
bool operator==(const KernelTable& a, const KernelTable& b);
bool operator==(const Table& a, const Table& b);
inline bool operator!=(const Table& a, const Table& b) { return !(a == b); }

// Parses and validates (schema string, required fields, types, axes/grid/tile consistency, ascending
// grids, positive rates). On failure returns false with a one-line reason naming the offending field.
// Unknown fields are ignored (a newer tuner may add some); *out is only written on success, finalized.
bool parse_table(const std::string& json_text, Table* out, std::string* error);
bool load_table(const std::string& path, Table* out, std::string* error);
// What choosing among tables needs: the device and the date, read from the start of the file (the parse stops once
// it has them), validated as parse_table validates them. A file whose header reads may still fail load_table.
struct TableHeader {
  DeviceInfo device;
  std::string created;
};
bool peek_table(const std::string& path, TableHeader* out, std::string* error);
// Pretty JSON (2-space indent), stable key order, so committed tables diff well.
std::string to_json(const Table& t);
// Atomic (temp file + rename; missing parent directories are created). Refuses a table that parse_table would
// reject, so a tuner never leaves a file every reader skips. Errors from load/save give the reason, not the path.
bool save_table(const std::string& path, const Table& t, std::string* error);

// Which table to use on `dev`.
struct Resolution {
  enum class Source { kOverrideFile, kExactName, kComputeCapability, kBuiltinDefaults };
  Source source = Source::kBuiltinDefaults;
  std::string path;                   // the table's file (empty for built-in defaults)
  std::string message;                // one line for the log: what was chosen and why
  std::vector<std::string> warnings;  // malformed files met on the way, device mismatch of an override
  std::optional<Table> table;         // empty for built-in defaults
};
// override_path: $BLASOFFLOAD_TUNED_PARAMS (nullptr/empty if unset): a file is used whatever device it
// names (warning if it differs; malformed -> warning and the built-in defaults); a directory is searched
// before search_dirs. Directories are scanned for *.json; malformed files are warned about and skipped.
// Exact device name wins; else same compute capability (prefer same SM count, then newest `created`);
// else built-in defaults. Among several matches of one kind, an earlier directory wins first (so the override
// directory beats the shipped tables), then the rules above, then the first file in sorted name order.
Resolution resolve_table(const DeviceInfo& dev, const char* override_path, const std::vector<std::string>& search_dirs);

}  // namespace bo::tuning
