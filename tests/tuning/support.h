// Helpers shared by the tuned-parameter table tests: temporary directories, files and small tables.
#pragma once
#include <string>
#include <vector>

#include "tuning/table.h"

namespace bo::tuning::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);
std::vector<std::string> list_dir(const std::string& dir);  // sorted names

// A complete valid table: a 1-D "snrm2" (n: 1, 1024, 1048576) and a 2-D "sgemv_n" (m: 1, 16, 256;
// n: 1, 16) with every tile present, bandwidth curves, and optional fields set in some tiles only.
Table small_table();
// A table that only identifies a device (no kernels), for choosing among files.
Table device_table(const std::string& name, int cc_major, int cc_minor, int sm_count, const std::string& created);
// A 1-axis or multi-axis table with a tile at every grid point except `missing`; tile config names
// its position, e.g. "t16x1".
KernelTable full_grid(const std::vector<std::vector<int64_t>>& grid,
                      const std::vector<std::vector<int64_t>>& missing = {});
std::string tile_name(const std::vector<int64_t>& at);

// Heap allocations through operator new so far in this process (alloc_counter.cpp replaces it).
long allocation_count();

}  // namespace bo::tuning::test
