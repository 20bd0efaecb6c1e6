// Reading, validating and writing tuned-parameter tables as JSON (schema blasoffload-tuned-params/1).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tuning/table.h"

namespace bo::tuning {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// A corrupt grid could otherwise ask finalize() for an index of any size.
constexpr uint64_t kMaxGridCells = uint64_t{1} << 20;
// Guards against an override such as /dev/zero; real tables are well under a megabyte.
constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;

// Sets the one-line reason, naming the offending field where there is one.
bool fail(std::string* error, const std::string& path, const std::string& what) {
  if (error) *error = path.empty() ? what : path + ": " + what;
  return false;
}

std::string field(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string element(const std::string& parent, std::size_t i) { return parent + "[" + std::to_string(i) + "]"; }

std::string json_quoted(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string got(const Json& v) { return std::string("got ") + v.type_name(); }

// The member `key` of `obj`, or nullptr (with the error set) when it is missing.
const Json* member(const Json& obj, const std::string& key, const std::string& path, std::string* error) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    fail(error, path, "missing");
    return nullptr;
  }
  return &*it;
}

bool expect_object(const Json& v, const std::string& path, std::string* error) {
  return v.is_object() || fail(error, path, "expected an object, " + got(v));
}

bool expect_array(const Json& v, const std::string& path, std::string* error) {
  return v.is_array() || fail(error, path, "expected an array, " + got(v));
}

bool read_string(const Json& obj, const std::string& key, const std::string& parent, bool non_empty, std::string* out,
                 std::string* error) {
  const std::string path = field(parent, key);
  const Json* v = member(obj, key, path, error);
  if (!v) return false;
  if (!v->is_string()) return fail(error, path, "expected a string, " + got(*v));
  *out = v->get<std::string>();
  if (non_empty && out->empty()) return fail(error, path, "must not be empty");
  return true;
}

// A finite number >= 0 (> 0 if `positive`), integer or not. JSON has no NaN/Inf, but 1e999 parses as Inf.
bool check_number(const Json& v, const std::string& path, bool positive, double* out, std::string* error) {
  if (!v.is_number()) return fail(error, path, "expected a number, " + got(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) return fail(error, path, "not finite");
  if (positive ? !(d > 0) : d < 0) return fail(error, path, positive ? "must be > 0" : "must be >= 0");
  *out = d;
  return true;
}

bool read_number(const Json& obj, const std::string& key, const std::string& parent, double* out, std::string* error) {
  const std::string path = field(parent, key);
  const Json* v = member(obj, key, path, error);
  return v && check_number(*v, path, false, out, error);
}

bool read_optional_number(const Json& obj, const std::string& key, const std::string& parent,
                          std::optional<double>* out, std::string* error) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    out->reset();
    return true;
  }
  double d = 0;
  if (!check_number(*it, field(parent, key), false, &d, error)) return false;
  *out = d;
  return true;
}

bool check_integer(const Json& v, const std::string& path, int64_t min, int64_t max, int64_t* out, std::string* error) {
  if (!v.is_number_integer()) return fail(error, path, "expected an integer, " + got(v));
  // Unsigned JSON integers above INT64_MAX would wrap in get<int64_t>().
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return fail(error, path, "out of range");
  }
  int64_t i = v.get<int64_t>();
  if (i < min || i > max) {
    return fail(error, path,
                std::to_string(i) + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  *out = i;
  return true;
}

bool is_digits(const std::string& s, std::size_t from, std::size_t n) {
  if (from + n > s.size()) return false;
  for (std::size_t i = from; i < from + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// "YYYY-MM-DDTHH:MM:SS[.fff]Z": resolve_table orders tables by comparing these strings, which only works
// for one fixed UTC format.
bool is_iso8601_utc(const std::string& s) {
  if (s.size() < 20 || !is_digits(s, 0, 4) || s[4] != '-' || !is_digits(s, 5, 2) || s[7] != '-' ||
      !is_digits(s, 8, 2) || s[10] != 'T' || !is_digits(s, 11, 2) || s[13] != ':' || !is_digits(s, 14, 2) ||
      s[16] != ':' || !is_digits(s, 17, 2) || s.back() != 'Z') {
    return false;
  }
  if (s.size() == 20) return true;
  return s[19] == '.' && s.size() > 21 && is_digits(s, 20, s.size() - 21);
}

bool parse_compute_capability(const std::string& s, int* major, int* minor) {
  std::size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 3 || s.size() - dot - 1 == 0 || s.size() - dot - 1 > 3) {
    return false;
  }
  if (!is_digits(s, 0, dot) || !is_digits(s, dot + 1, s.size() - dot - 1)) return false;
  *major = std::stoi(s.substr(0, dot));
  *minor = std::stoi(s.substr(dot + 1));
  return true;
}

bool parse_device(const Json& root, DeviceInfo* dev, std::string* error) {
  const Json* d = member(root, "device", "device", error);
  if (!d || !expect_object(*d, "device", error)) return false;
  if (!read_string(*d, "name", "device", true, &dev->name, error)) return false;
  std::string cc;
  if (!read_string(*d, "compute_capability", "device", false, &cc, error)) return false;
  if (!parse_compute_capability(cc, &dev->cc_major, &dev->cc_minor)) {
    return fail(error, "device.compute_capability", "expected \"<major>.<minor>\", got " + json_quoted(cc));
  }
  const Json* sm = member(*d, "sm_count", "device.sm_count", error);
  int64_t sm_count = 0;
  if (!sm || !check_integer(*sm, "device.sm_count", 0, std::numeric_limits<int>::max(), &sm_count, error)) {
    return false;
  }
  dev->sm_count = static_cast<int>(sm_count);
  return read_number(*d, "memory_gib", "device", &dev->memory_gib, error);
}

bool parse_curve(const Json& bw, const std::string& key, std::vector<BandwidthPoint>* out, std::string* error) {
  const std::string path = field("bandwidth", key);
  const Json* arr = member(bw, key, path, error);
  if (!arr || !expect_array(*arr, path, error)) return false;
  out->clear();
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string p = element(path, i);
    const Json& pt = (*arr)[i];
    if (!expect_object(pt, p, error)) return false;
    BandwidthPoint b;
    // Both must be positive: read_gbs/write_gbs interpolate in log-log.
    const Json* bytes = member(pt, "bytes", field(p, "bytes"), error);
    if (!bytes || !check_number(*bytes, field(p, "bytes"), true, &b.bytes, error)) return false;
    const Json* gbs = member(pt, "gbs", field(p, "gbs"), error);
    if (!gbs || !check_number(*gbs, field(p, "gbs"), true, &b.gbs, error)) return false;
    if (!out->empty() && !(b.bytes > out->back().bytes)) {
      return fail(error, field(p, "bytes"),
                  "not ascending (previous point has " + Json(out->back().bytes).dump() + ")");
    }
    out->push_back(b);
  }
  return true;
}

bool parse_tile(const Json& v, const std::string& path, const KernelTable& k, Tile* t, std::string* error) {
  if (!expect_object(v, path, error)) return false;
  const std::string at_path = field(path, "at");
  const Json* at = member(v, "at", at_path, error);
  if (!at || !expect_array(*at, at_path, error)) return false;
  if (at->size() != k.axes.size()) {
    return fail(error, at_path,
                "expected " + std::to_string(k.axes.size()) + " value" + (k.axes.size() == 1 ? "" : "s") + ", got " +
                    std::to_string(at->size()));
  }
  t->at.resize(k.axes.size());
  for (std::size_t a = 0; a < k.axes.size(); ++a) {
    const std::string p = element(at_path, a);
    if (!check_integer((*at)[a], p, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &t->at[a],
                       error)) {
      return false;
    }
    if (!std::binary_search(k.grid[a].begin(), k.grid[a].end(), t->at[a])) {
      return fail(error, p, std::to_string(t->at[a]) + " is not a grid point of " + k.axes[a]);
    }
  }
  if (!read_string(v, "config", path, true, &t->config, error)) return false;
  if (!read_number(v, "rate", path, &t->rate, error)) return false;
  if (!read_number(v, "time_us", path, &t->time_us, error)) return false;
  if (!read_string(v, "own_config", path, false, &t->own_config, error)) return false;
  if (!read_number(v, "own_rate", path, &t->own_rate, error)) return false;
  if (!read_optional_number(v, "cublas_rate", path, &t->cublas_rate, error)) return false;
  if (!read_optional_number(v, "model_rate", path, &t->model_rate, error)) return false;
  t->candidates.clear();
  auto c = v.find("candidates");
  if (c != v.end()) {
    const std::string cpath = field(path, "candidates");
    if (!expect_object(*c, cpath, error)) return false;
    for (auto it = c->begin(); it != c->end(); ++it) {
      if (it.key().empty()) return fail(error, cpath, "empty configuration name");
      double rate = 0;
      if (!check_number(it.value(), field(cpath, it.key()), false, &rate, error)) return false;
      t->candidates[it.key()] = rate;
    }
  }
  return true;
}

bool parse_kernel(const Json& v, const std::string& path, KernelTable* k, std::string* error) {
  if (!expect_object(v, path, error)) return false;
  if (!read_string(v, "unit", path, false, &k->unit, error)) return false;
  if (k->unit != "GB/s" && k->unit != "GFLOP/s") {
    return fail(error, field(path, "unit"), "expected \"GB/s\" or \"GFLOP/s\", got " + json_quoted(k->unit));
  }

  const std::string axes_path = field(path, "axes");
  const Json* axes = member(v, "axes", axes_path, error);
  if (!axes || !expect_array(*axes, axes_path, error)) return false;
  if (axes->empty()) return fail(error, axes_path, "must not be empty");
  for (std::size_t a = 0; a < axes->size(); ++a) {
    const Json& name = (*axes)[a];
    const std::string p = element(axes_path, a);
    if (!name.is_string()) return fail(error, p, "expected a string, " + got(name));
    if (name.get<std::string>().empty()) return fail(error, p, "must not be empty");
    if (std::find(k->axes.begin(), k->axes.end(), name.get<std::string>()) != k->axes.end()) {
      return fail(error, p, "duplicate axis " + json_quoted(name.get<std::string>()));
    }
    k->axes.push_back(name.get<std::string>());
  }

  const std::string grid_path = field(path, "grid");
  const Json* grid = member(v, "grid", grid_path, error);
  if (!grid || !expect_object(*grid, grid_path, error)) return false;
  for (auto it = grid->begin(); it != grid->end(); ++it) {
    if (std::find(k->axes.begin(), k->axes.end(), it.key()) == k->axes.end()) {
      return fail(error, field(grid_path, it.key()), "not one of the axes");
    }
  }
  uint64_t cells = 1;
  for (const std::string& axis : k->axes) {
    const std::string p = field(grid_path, axis);
    const Json* g = member(*grid, axis, p, error);
    if (!g || !expect_array(*g, p, error)) return false;
    if (g->empty()) return fail(error, p, "must not be empty");
    std::vector<int64_t> points(g->size());
    for (std::size_t i = 0; i < g->size(); ++i) {
      if (!check_integer((*g)[i], element(p, i), 1, std::numeric_limits<int64_t>::max(), &points[i], error)) {
        return false;
      }
      if (i > 0 && points[i] <= points[i - 1]) {
        return fail(
            error, element(p, i),
            "not strictly ascending (" + std::to_string(points[i]) + " after " + std::to_string(points[i - 1]) + ")");
      }
    }
    cells *= points.size();
    if (cells > kMaxGridCells) {
      return fail(error, grid_path, "more than " + std::to_string(kMaxGridCells) + " grid cells");
    }
    k->grid.push_back(std::move(points));
  }

  const std::string tiles_path = field(path, "tiles");
  const Json* tiles = member(v, "tiles", tiles_path, error);
  if (!tiles || !expect_array(*tiles, tiles_path, error)) return false;
  std::map<std::vector<int64_t>, std::size_t> seen;
  for (std::size_t i = 0; i < tiles->size(); ++i) {
    Tile t;
    const std::string p = element(tiles_path, i);
    if (!parse_tile((*tiles)[i], p, *k, &t, error)) return false;
    auto [where, inserted] = seen.emplace(t.at, i);
    if (!inserted) return fail(error, field(p, "at"), "duplicate of " + element("tiles", where->second));
    k->tiles.push_back(std::move(t));
  }
  k->finalize();
  return true;
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

bool parse_table(const std::string& json_text, Table* out, std::string* error) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& e) {
    // what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ..."; the tag is noise.
    std::string what = e.what();
    std::size_t tag_end = what.find("] ");
    return fail(error, "", "invalid JSON: " + (tag_end == std::string::npos ? what : what.substr(tag_end + 2)));
  }
  if (!expect_object(root, "document", error)) return false;

  Table t;
  // Schema first: a table of another schema version should say so, not fail on some renamed field.
  std::string schema;
  if (!read_string(root, "schema", "", false, &schema, error)) return false;
  if (schema != kSchema)
    return fail(error, "schema", "expected " + json_quoted(kSchema) + ", got " + json_quoted(schema));
  if (!parse_device(root, &t.device, error)) return false;
  if (!read_string(root, "toolkit", "", false, &t.toolkit, error)) return false;
  if (!read_string(root, "driver", "", false, &t.driver, error)) return false;
  if (!read_string(root, "cublas", "", false, &t.cublas, error)) return false;
  if (!read_string(root, "created", "", false, &t.created, error)) return false;
  if (!is_iso8601_utc(t.created)) {
    return fail(error, "created", "expected ISO 8601 UTC like \"2026-11-21T21:40:00Z\", got " + json_quoted(t.created));
  }
  if (!read_string(root, "tuner", "", false, &t.tuner, error)) return false;

  const Json* bw = member(root, "bandwidth", "bandwidth", error);
  if (!bw || !expect_object(*bw, "bandwidth", error)) return false;
  if (!parse_curve(*bw, "read", &t.read, error) || !parse_curve(*bw, "write", &t.write, error)) return false;

  const Json* kernels = member(root, "kernels", "kernels", error);
  if (!kernels || !expect_object(*kernels, "kernels", error)) return false;
  for (auto it = kernels->begin(); it != kernels->end(); ++it) {
    if (it.key().empty()) return fail(error, "kernels", "empty kernel name");
    KernelTable k;
    if (!parse_kernel(it.value(), field("kernels", it.key()), &k, error)) return false;
    t.kernels.emplace(it.key(), std::move(k));
  }
  *out = std::move(t);
  return true;
}

bool load_table(const std::string& path, Table* out, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(error, "", std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(error, "", "is a directory");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return fail(error, "", std::string("cannot read: ") + std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxFileBytes) {
      ::close(fd);
      return fail(error, "", "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return parse_table(text, out, error);
}

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
    if (ec) return fail(error, "", "cannot create " + parent.string() + ": " + ec.message());
  }
  const std::string text = to_json(t);
  // A table built by hand (the tuner) may hold what the reader rejects, e.g. a NaN rate (written as null):
  // better to fail here than to have every later process skip the file.
  Table check;
  std::string why;
  if (!parse_table(text, &check, &why)) return fail(error, "", "not saving an invalid table: " + why);
  // Temp file next to the target (same file system, so rename is atomic), named per process so that two
  // tuners writing the same table do not interleave; readers see the old table or the new one.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(error, "", "cannot create " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(error, "", "cannot write " + tmp + ": " + std::strerror(e));
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
    return fail(error, "", "cannot write " + tmp + ": " + std::strerror(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    e = errno;
    ::unlink(tmp.c_str());
    return fail(error, "", "cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
  return true;
}

}  // namespace bo::tuning
