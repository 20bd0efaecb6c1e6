// Helpers shared by the tuned-parameter table tests: temporary directories, files and small tables.
#include "support.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace bo::tuning::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/bo-tuning-test.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) ADD_FAILURE() << "cannot write " << path;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string tile_name(const std::vector<int64_t>& at) {
  std::string s = "t";
  for (std::size_t i = 0; i < at.size(); ++i) s += (i ? "x" : "") + std::to_string(at[i]);
  return s;
}

KernelTable full_grid(const std::vector<std::vector<int64_t>>& grid, const std::vector<std::vector<int64_t>>& missing) {
  static const char* kNames[] = {"m", "n", "k", "l"};
  KernelTable k;
  k.unit = "GB/s";
  k.grid = grid;
  for (std::size_t a = 0; a < grid.size(); ++a) k.axes.push_back(kNames[a]);
  std::vector<std::size_t> pos(grid.size(), 0);
  for (;;) {
    std::vector<int64_t> at;
    for (std::size_t a = 0; a < grid.size(); ++a) at.push_back(grid[a][pos[a]]);
    if (std::find(missing.begin(), missing.end(), at) == missing.end()) {
      Tile t;
      t.at = at;
      t.config = tile_name(at);
      t.own_config = t.config;
      t.rate = t.own_rate = 1;
      t.time_us = 1;
      k.tiles.push_back(t);
    }
    std::size_t a = grid.size();
    while (a > 0 && ++pos[a - 1] == grid[a - 1].size()) pos[--a] = 0;
    if (a == 0) break;
  }
  k.finalize();
  return k;
}

Table device_table(const std::string& name, int cc_major, int cc_minor, int sm_count, const std::string& created) {
  Table t;
  t.device.name = name;
  t.device.cc_major = cc_major;
  t.device.cc_minor = cc_minor;
  t.device.sm_count = sm_count;
  t.device.memory_gib = 80;
  t.toolkit = t.driver = "13.0";
  t.created = created;
  t.tuner = "test";
  return t;
}

Table small_table() {
  Table t = device_table("NVIDIA H100 80GB HBM3", 9, 0, 132, "2026-11-21T21:40:00Z");
  t.device.memory_gib = 79.1;
  t.cublas = "13.0.0";
  t.tuner = "blasoffload-tune 0.3 (abc1234)";
  t.read = {{1024, 1.5}, {1048576, 600.25}, {268435456, 3000.5}};
  t.write = {{1024, 1.25}, {268435456, 2900}};

  KernelTable nrm;
  nrm.unit = "GB/s";
  nrm.axes = {"n"};
  nrm.grid = {{1, 1024, 1048576}};
  for (int64_t n : nrm.grid[0]) {
    Tile tile;
    tile.at = {n};
    tile.own_config = "snrm2_256_u4";
    tile.own_rate = 0.001 * static_cast<double>(n);
    tile.cublas_rate = n == 1 ? 0.5 : 0.0005 * static_cast<double>(n);
    tile.config = n == 1 ? "cublas" : tile.own_config;
    tile.rate = std::max(tile.own_rate, *tile.cublas_rate);
    tile.time_us = 4.0 * static_cast<double>(n) / (tile.rate * 1e3);
    tile.model_rate = 0.002 * static_cast<double>(n);
    nrm.tiles.push_back(tile);
  }
  nrm.finalize();
  t.kernels["snrm2"] = nrm;

  KernelTable gemv;
  gemv.unit = "GB/s";
  gemv.axes = {"m", "n"};
  gemv.grid = {{1, 16, 256}, {1, 16}};
  for (int64_t m : gemv.grid[0]) {
    for (int64_t n : gemv.grid[1]) {
      Tile tile;
      tile.at = {m, n};
      tile.config = tile.own_config = m == 16 ? "sgemv_n_64x4" : "sgemv_n_32x8";
      tile.rate = tile.own_rate = static_cast<double>(m * n) + 0.25;
      tile.time_us = 3.5;
      if (m > 1) tile.cublas_rate = static_cast<double>(m * n) / 3;  // absent in some tiles
      if (m == 256) tile.candidates = {{"sgemv_n_32x8", tile.rate}, {"sgemv_n_64x4", 1e-3}, {"cublas", 0}};
      gemv.tiles.push_back(tile);
    }
  }
  gemv.finalize();
  t.kernels["sgemv_n"] = gemv;
  return t;
}

}  // namespace bo::tuning::test
