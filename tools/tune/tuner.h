// The tuning engine: for each kernel key and grid tile, validates and times every registered candidate
// (ours and cuBLAS) on device-resident, L2-rotated operands and keeps the fastest.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "cache.h"
#include "grids.h"
#include "kernels/registry.h"
#include "tuning/table.h"

namespace bo::tune {

struct Options {
  bool quick = false;
  std::vector<std::string> kernels;  // keys or precision letters (key_selected); empty = all
  std::string out;                   // table path
  std::string cache;                 // cache path (default: out + ".cache.jsonl")
  std::string module;                // libblasoffload_cuda.so
  double max_seconds = 0;            // 0 = no limit; else stop (resumable) after this long
  bool fresh = false;                // ignore the cache
  double target_ms = 25;             // timed work per candidate and tile
};

class Tuner {
 public:
  Tuner(const Options& o, const bo_kernel_registry* reg, std::string module_desc);
  // Returns 0 when the table is complete, 3 when stopped by --max-seconds (rerun resumes), 1 on error.
  int run();

 private:
  struct Buffers;
  bool setup(std::string* error);
  void measure_bandwidth();
  bool tune_kernel(const GridSpec& g);  // false: out of time
  void tune_tile(const GridSpec& g, const std::vector<int64_t>& at, bo::tuning::Tile* tile);
  bool out_of_time() const;
  void save(const char* why);

  Options o_;
  const bo_kernel_registry* reg_;
  std::string module_desc_;
  Cache cache_;
  bo::tuning::Table table_;
  char* pool_ = nullptr;  // operands of either element type, carved by byte offsets
  size_t pool_bytes_ = 0;
  float* scratch_ = nullptr;  // validation result, workspace pool follows
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  void* stream_ = nullptr;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace bo::tune
