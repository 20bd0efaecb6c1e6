// The tuner's measurement cache: one JSON line per measured (kernel, tile, candidate), appended and flushed
// as soon as it is measured, so an interrupted run resumes where it stopped.
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace bo::tune {

struct Measurement {
  bool valid = false;     // passed validation (an invalid candidate is never timed)
  bool pruned = false;    // skipped: its first run was far slower than the tile's best so far
  double time_us = 0;     // median
  double rate = 0;        // in the kernel's unit
  std::string note;       // why invalid / pruned
};

class Cache {
 public:
  // Opens (creating) path. Lines whose header (device, module id, mode) differs from this run's are
  // ignored. fresh: truncate.
  bool open(const std::string& path, const std::string& device, const std::string& module_id, bool quick, bool fresh,
            std::string* error);
  const Measurement* find(const std::string& kernel, const std::vector<int64_t>& at, const std::string& cand) const;
  void put(const std::string& kernel, const std::vector<int64_t>& at, const std::string& cand, const Measurement& m);
  size_t loaded() const { return loaded_; }
  ~Cache();

 private:
  static std::string key(const std::string& kernel, const std::vector<int64_t>& at, const std::string& cand);
  std::map<std::string, Measurement> map_;
  std::FILE* f_ = nullptr;
  std::string header_;
  size_t loaded_ = 0;
};

}  // namespace bo::tune
