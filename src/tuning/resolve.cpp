// Chooses the tuned-parameter table for the device we run on: override, exact name, same compute capability.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "tuning/table.h"

namespace bo::tuning {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "tuned parameters: ";
constexpr const char* kEnv = "BLASOFFLOAD_TUNED_PARAMS";

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

std::string cc_string(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

// Regular files (symlinks followed) named *.json, sorted so that the choice does not depend on the order
// the file system lists them in. Empty when dir is not a directory: absent system dirs are normal.
std::vector<std::string> json_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    // ".json" alone is a hidden file, not a table; save_table's "x.json.tmp.<pid>" never matches.
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back((fs::path(dir) / name).string());
  return paths;
}

struct Candidate {
  std::string path;
  std::size_t dir_rank = 0;   // position of its directory in the search order
  std::size_t file_rank = 0;  // position in the whole scan, the last tie-break
  Table table;
};

// Earlier directories win (the override directory is the user's choice); then, for a compute-capability
// match, the same SM count (same product variant, closest timings); then the newest table; then the first
// in sorted order. `created` is validated ISO 8601 UTC, so comparing strings compares times.
bool better(const Candidate& a, const Candidate& b, const DeviceInfo& dev, bool by_sm_count) {
  if (a.dir_rank != b.dir_rank) return a.dir_rank < b.dir_rank;
  if (by_sm_count) {
    bool a_sm = a.table.device.sm_count == dev.sm_count, b_sm = b.table.device.sm_count == dev.sm_count;
    if (a_sm != b_sm) return a_sm;
  }
  if (a.table.created != b.table.created) return a.table.created > b.table.created;
  return a.file_rank < b.file_rank;
}

void keep_better(std::optional<Candidate>* best, Candidate&& c, const DeviceInfo& dev, bool by_sm_count) {
  if (!*best || better(c, **best, dev, by_sm_count)) *best = std::move(c);
}

Resolution defaults(std::string why, std::vector<std::string> warnings) {
  Resolution r;
  r.source = Resolution::Source::kBuiltinDefaults;
  r.message = std::string(kPrefix) + "built-in defaults (" + why + ")";
  r.warnings = std::move(warnings);
  return r;
}

}  // namespace

Resolution resolve_table(const DeviceInfo& dev, const char* override_path,
                         const std::vector<std::string>& search_dirs) {
  std::vector<std::string> warnings;
  std::vector<std::string> dirs;
  if (override_path && *override_path) {
    const std::string over = override_path;
    std::error_code ec;
    fs::file_status st = fs::status(over, ec);
    // Not found, or stat failed otherwise (e.g. a directory on the way is not searchable).
    const bool inaccessible = ec && st.type() == fs::file_type::none;
    if (st.type() == fs::file_type::not_found || inaccessible) {
      std::string why = std::string(kEnv) + "=" + over +
                        (inaccessible ? " cannot be accessed: " + ec.message() : std::string(" does not exist"));
      warnings.push_back(kPrefix + why);
      return defaults(why, std::move(warnings));
    }
    if (fs::is_directory(st)) {
      dirs.push_back(over);
    } else {
      // A file is the user's explicit choice: used whatever device it was measured on.
      Table t;
      std::string error;
      if (!load_table(over, &t, &error)) {
        warnings.push_back(kPrefix + std::string("skipping malformed ") + over + ": " + error);
        return defaults(std::string(kEnv) + "=" + over + " is malformed: " + error, std::move(warnings));
      }
      if (t.device.name != dev.name) {
        warnings.push_back(kPrefix + std::string(kEnv) + "=" + over + " was measured on " + in_quotes(t.device.name) +
                           ", this is " + in_quotes(dev.name));
      }
      Resolution r;
      r.source = Resolution::Source::kOverrideFile;
      r.path = over;
      r.message = kPrefix + over + " (" + kEnv + ")";
      r.warnings = std::move(warnings);
      r.table = std::move(t);
      return r;
    }
  }
  dirs.insert(dirs.end(), search_dirs.begin(), search_dirs.end());

  std::optional<Candidate> exact, same_cc;
  std::size_t file_rank = 0;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    for (const std::string& path : json_files(dirs[d])) {
      Candidate c;
      std::string error;
      if (!load_table(path, &c.table, &error)) {
        warnings.push_back(kPrefix + std::string("skipping malformed ") + path + ": " + error);
        continue;
      }
      c.path = path;
      c.dir_rank = d;
      c.file_rank = file_rank++;
      const DeviceInfo& td = c.table.device;
      if (td.name == dev.name) {
        keep_better(&exact, std::move(c), dev, false);
      } else if (dev.cc_major > 0 && td.cc_major == dev.cc_major && td.cc_minor == dev.cc_minor) {
        keep_better(&same_cc, std::move(c), dev, true);
      }
    }
  }

  Resolution r;
  r.warnings = std::move(warnings);
  if (exact) {
    r.source = Resolution::Source::kExactName;
    r.message = kPrefix + exact->path + " (exact match for " + in_quotes(dev.name) + ")";
    r.path = std::move(exact->path);
    r.table = std::move(exact->table);
    return r;
  }
  if (same_cc) {
    r.source = Resolution::Source::kComputeCapability;
    r.message = kPrefix + same_cc->path + " (no table for " + in_quotes(dev.name) + "; same compute capability " +
                cc_string(dev.cc_major, dev.cc_minor) + ", measured on " + in_quotes(same_cc->table.device.name) + ")";
    r.path = std::move(same_cc->path);
    r.table = std::move(same_cc->table);
    return r;
  }
  std::string where;
  for (const std::string& d : dirs) where += (where.empty() ? "" : ", ") + d;
  if (where.empty()) where = "no directories";
  return defaults("no table for " + in_quotes(dev.name) + " (compute capability " +
                      cc_string(dev.cc_major, dev.cc_minor) + ") in " + where,
                  std::move(r.warnings));
}

}  // namespace bo::tuning
