// Writing tuned-parameter tables as JSON (schema blasoffload-tuned-params/1): a stable, diff-friendly layout, and
// an atomic save that refuses a table the reader would reject (table_json.cpp reads them).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "tuning/table.h"

namespace bo::tuning {
namespace {

using OrderedJson = nlohmann::ordered_json;

bool fail(std::string* error, const std::string& what) {
  if (error) *error = what;
  return false;
}

// A key as JSON writes it (quoted, escaped).
std::string json_quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_flat_object(const OrderedJson& v) {
  return v.is_object() && std::none_of(v.begin(), v.end(), [](const OrderedJson& e) { return e.is_structured(); });
}

// Writes JSON with 2-space indent like dump(2), but arrays of scalars on one line and arrays of flat objects
// one object per line: a grid, a tile's "at" and a bandwidth point stay readable, and a re-tuned tile
// changes a handful of lines in a diff.
void write_json(const OrderedJson& v, int indent, bool one_line, std::string* s) {
  const bool is_object = v.is_object();
  if (!is_object && !v.is_array()) {
    *s += v.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
    return;
  }
  const char* open = is_object ? "{" : "[";
  const char* close = is_object ? "}" : "]";
  if (v.empty()) {
    *s += open;
    *s += close;
    return;
  }
  const bool scalar_array =
      !is_object && std::none_of(v.begin(), v.end(), [](const OrderedJson& e) { return e.is_structured(); });
  const bool flat_objects = !is_object && std::all_of(v.begin(), v.end(), is_flat_object);
  const bool same_line = one_line || scalar_array;
  *s += open;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (same_line) {
      if (it != v.begin()) *s += ", ";
    } else {
      *s += it == v.begin() ? "\n" : ",\n";
      s->append(static_cast<std::size_t>(indent + 2), ' ');
    }
    if (is_object) {
      *s += json_quoted(it.key());
      *s += ": ";
    }
    write_json(*it, indent + 2, one_line || flat_objects, s);
  }
  if (!same_line) {
    *s += "\n";
    s->append(static_cast<std::size_t>(indent), ' ');
  }
  *s += close;
}

// Whole byte counts read better as integers ("bytes": 1024, not 1024.0); doubles hold them exactly to 2^53.
OrderedJson bytes_value(double b) {
  if (b >= 0 && b <= 9007199254740992.0 && std::floor(b) == b) return OrderedJson(static_cast<int64_t>(b));
  return OrderedJson(b);
}

OrderedJson curve_json(const std::vector<BandwidthPoint>& pts) {
  OrderedJson arr = OrderedJson::array();
  for (const BandwidthPoint& p : pts) {
    OrderedJson o;
    o["bytes"] = bytes_value(p.bytes);
    o["gbs"] = p.gbs;
    arr.push_back(std::move(o));
  }
  return arr;
}

OrderedJson kernel_json(const KernelTable& k) {
  OrderedJson o;
  o["unit"] = k.unit;
  o["axes"] = k.axes;
  OrderedJson grid = OrderedJson::object();
  for (std::size_t a = 0; a < k.axes.size(); ++a) {
    grid[k.axes[a]] = a < k.grid.size() ? OrderedJson(k.grid[a]) : OrderedJson::array();
  }
  o["grid"] = std::move(grid);
  std::vector<const Tile*> sorted;
  for (const Tile& t : k.tiles) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Tile* a, const Tile* b) { return a->at < b->at; });
  OrderedJson tiles = OrderedJson::array();
  for (const Tile* t : sorted) {
    OrderedJson j;
    j["at"] = t->at;
    j["config"] = t->config;
    j["rate"] = t->rate;
    j["time_us"] = t->time_us;
    j["own_config"] = t->own_config;
    j["own_rate"] = t->own_rate;
    if (t->cublas_rate) j["cublas_rate"] = *t->cublas_rate;
    if (t->model_rate) j["model_rate"] = *t->model_rate;
    if (!t->candidates.empty()) {
      OrderedJson c = OrderedJson::object();
      for (const auto& [name, rate] : t->candidates) c[name] = rate;
      j["candidates"] = std::move(c);
    }
    tiles.push_back(std::move(j));
  }
  o["tiles"] = std::move(tiles);
  return o;
}

}  // namespace

std::string to_json(const Table& t) {
  OrderedJson root;
  root["schema"] = kSchema;
  OrderedJson dev;
  dev["name"] = t.device.name;
  dev["compute_capability"] = std::to_string(t.device.cc_major) + "." + std::to_string(t.device.cc_minor);
  dev["sm_count"] = t.device.sm_count;
  dev["memory_gib"] = t.device.memory_gib;
  root["device"] = std::move(dev);
  root["toolkit"] = t.toolkit;
  root["driver"] = t.driver;
  root["cublas"] = t.cublas;
  root["created"] = t.created;
  root["tuner"] = t.tuner;
  OrderedJson bw;
  bw["read"] = curve_json(t.read);
  bw["write"] = curve_json(t.write);
  root["bandwidth"] = std::move(bw);
  OrderedJson kernels = OrderedJson::object();
  for (const auto& [name, k] : t.kernels) kernels[name] = kernel_json(k);
  root["kernels"] = std::move(kernels);
  std::string s;
  write_json(root, 0, false, &s);
  s += "\n";
  return s;
}

bool save_table(const std::string& path, const Table& t, std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) return fail(error, "cannot create " + parent.string() + ": " + ec.message());
  }
  const std::string text = to_json(t);
  // A table built by hand (the tuner) may hold what the reader rejects, e.g. a NaN rate (written as null):
  // better to fail here than to have every later process skip the file.
  Table check;
  std::string why;
  if (!parse_table(text, &check, &why)) return fail(error, "not saving an invalid table: " + why);
  // Temp file next to the target (same file system, so rename is atomic), named per process so that two
  // tuners writing the same table do not interleave; readers see the old table or the new one.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(error, "cannot create " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(error, "cannot write " + tmp + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  // Data on disk before the rename, else a crash can leave an empty file under the final name.
  int rc = ::fsync(fd);
  int e = errno;
  if (::close(fd) != 0 && rc == 0) {
    rc = -1;
    e = errno;
  }
  if (rc != 0) {
    ::unlink(tmp.c_str());
    return fail(error, "cannot write " + tmp + ": " + std::strerror(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    e = errno;
    ::unlink(tmp.c_str());
    return fail(error, "cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
  return true;
}

}  // namespace bo::tuning
