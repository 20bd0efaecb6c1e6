// Reading and validating tuned-parameter tables as JSON (schema blasoffload-tuned-params/1), whole or only their header
// (table_json_write.cpp writes them).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
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

// The file's text, at most kMaxFileBytes.
bool read_file(const std::string& path, std::string* text, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(error, "", std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(error, "", "is a directory");
  }
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
    text->append(buf, static_cast<std::size_t>(n));
    if (text->size() > kMaxFileBytes) {
      ::close(fd);
      return fail(error, "", "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return true;
}

// Collects the top-level "schema", "device" (a flat object) and "created" of a table and stops the parse once it has
// all three: choosing among tables needs no more, and the kernels are nearly all of a table's bytes. A value nested
// inside "device" is kept as an empty object (parse_device then rejects it, as for the whole document).
struct HeaderSax : nlohmann::json_sax<Json> {
  Json root = Json::object();
  std::string syntax_error;
  int depth = 0;
  std::string last_key;  // the last key at depth 1 (a member of the document) or 2 (of "device")
  std::string top_key;   // the member of the document being read
  int found = 0;         // schema, device and created, as bits
  bool done() const { return found == 7; }

  bool keep(Json v) {
    if (depth == 1) {
      if (last_key == "schema" || last_key == "created") {
        root[last_key] = std::move(v);
        found |= last_key == "schema" ? 1 : 4;
      }
    } else if (depth == 2 && top_key == "device") {
      root["device"][last_key] = std::move(v);
    }
    return !done();
  }
  bool null() override { return keep(nullptr); }
  bool boolean(bool v) override { return keep(v); }
  bool number_integer(number_integer_t v) override { return keep(v); }
  bool number_unsigned(number_unsigned_t v) override { return keep(v); }
  bool number_float(number_float_t v, const string_t&) override { return keep(v); }
  bool string(string_t& v) override { return keep(v); }
  bool binary(binary_t&) override { return keep(nullptr); }
  bool start_object(std::size_t) override { return open(Json::object()); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    last_key = k;
    if (depth == 1) top_key = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    const std::string what = e.what();
    const std::size_t tag_end = what.find("] ");
    syntax_error = tag_end == std::string::npos ? what : what.substr(tag_end + 2);
    return false;
  }

 private:
  bool open(Json empty) {
    if (depth == 1 && last_key == "device")
      root["device"] = Json::object();
    else if (depth >= 1)
      keep(std::move(empty));  // device's or the document's member: its type is what counts
    ++depth;
    return true;
  }
  bool close() {
    --depth;
    if (depth == 1 && top_key == "device") found |= 2;
    return !done();
  }
};

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
  std::string text;
  return read_file(path, &text, error) && parse_table(text, out, error);
}

bool peek_table(const std::string& path, TableHeader* out, std::string* error) {
  std::string text;
  if (!read_file(path, &text, error)) return false;
  HeaderSax sax;
  // A handler that returns false stops the parse: after the header, the rest of the file is not read.
  const bool whole = Json::sax_parse(text, &sax);
  if (whole || !sax.done()) {
    if (!sax.syntax_error.empty()) return fail(error, "", "invalid JSON: " + sax.syntax_error);
    // The whole document read without its header: parse_table names what is missing.
    Table ignored;
    if (parse_table(text, &ignored, error)) return fail(error, "", "no header");  // unreachable for a valid table
    return false;
  }
  std::string schema;
  TableHeader h;
  if (!expect_object(sax.root, "document", error) || !read_string(sax.root, "schema", "", false, &schema, error))
    return false;
  if (schema != kSchema)
    return fail(error, "schema", "expected " + json_quoted(kSchema) + ", got " + json_quoted(schema));
  if (!parse_device(sax.root, &h.device, error) || !read_string(sax.root, "created", "", false, &h.created, error))
    return false;
  if (!is_iso8601_utc(h.created)) return fail(error, "created", "not ISO 8601 UTC");
  *out = std::move(h);
  return true;
}

}  // namespace bo::tuning
