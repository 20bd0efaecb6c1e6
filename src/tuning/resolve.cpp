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
  TableHeader header;         // only the chosen file is read whole (load_table)
};

// Earlier directories win (the override directory is the user's choice); then, for a compute-capability
// match, the same SM count (same product variant, closest timings); then the newest table; then the first
// in sorted order. `created` is validated ISO 8601 UTC, so comparing strings compares times.
bool better(const Candidate& a, const Candidate& b, const DeviceInfo& dev, bool by_sm_count) {
  if (a.dir_rank != b.dir_rank) return a.dir_rank < b.dir_rank;
  if (by_sm_count) {
    bool a_sm = a.header.device.sm_count == dev.sm_count, b_sm = b.header.device.sm_count == dev.sm_count;
    if (a_sm != b_sm) return a_sm;
  }
  if (a.header.created != b.header.created) return a.header.created > b.header.created;
  return a.file_rank < b.file_rank;
}

// The best of `cs` that reads whole, best first; a file whose header read but whose body does not is warned about and
// the next best tried, so a malformed file is skipped as if it had not been there.
std::optional<Table> load_best(std::vector<Candidate> cs, const DeviceInfo& dev, bool by_sm_count,
                               std::vector<std::string>* warnings, std::string* path) {
  std::sort(cs.begin(), cs.end(),
            [&](const Candidate& a, const Candidate& b) { return better(a, b, dev, by_sm_count); });
  for (Candidate& c : cs) {
    Table t;
    std::string error;
    if (load_table(c.path, &t, &error)) {
      *path = std::move(c.path);
      return t;
    }
    warnings->push_back(kPrefix + std::string("skipping malformed ") + c.path + ": " + error);
  }
  return std::nullopt;
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

  std::vector<Candidate> exact, same_cc;
  std::size_t file_rank = 0;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    for (const std::string& path : json_files(dirs[d])) {
      Candidate c;
      std::string error;
      if (!peek_table(path, &c.header, &error)) {
        // Read whole: the reason as load_table words it, and a table the short read missed is still a table.
        Table t;
        if (!load_table(path, &t, &error)) {
          warnings.push_back(kPrefix + std::string("skipping malformed ") + path + ": " + error);
          continue;
        }
        c.header = {t.device, t.created};
      }
      c.path = path;
      c.dir_rank = d;
      c.file_rank = file_rank++;
      const DeviceInfo& td = c.header.device;
      if (td.name == dev.name) {
        exact.push_back(std::move(c));
      } else if (dev.cc_major > 0 && td.cc_major == dev.cc_major && td.cc_minor == dev.cc_minor) {
        same_cc.push_back(std::move(c));
      }
    }
  }

  Resolution r;
  if (std::optional<Table> t = load_best(std::move(exact), dev, false, &warnings, &r.path)) {
    r.source = Resolution::Source::kExactName;
    r.message = kPrefix + r.path + " (exact match for " + in_quotes(dev.name) + ")";
    r.warnings = std::move(warnings);
    r.table = std::move(t);
    return r;
  }
  if (std::optional<Table> t = load_best(std::move(same_cc), dev, true, &warnings, &r.path)) {
    r.source = Resolution::Source::kComputeCapability;
    r.message = kPrefix + r.path + " (no table for " + in_quotes(dev.name) + "; same compute capability " +
                cc_string(dev.cc_major, dev.cc_minor) + ", measured on " + in_quotes(t->device.name) + ")";
    r.warnings = std::move(warnings);
    r.table = std::move(t);
    return r;
  }
  std::string where;
  for (const std::string& d : dirs) where += (where.empty() ? "" : ", ") + d;
  if (where.empty()) where = "no directories";
  return defaults("no table for " + in_quotes(dev.name) + " (compute capability " +
                      cc_string(dev.cc_major, dev.cc_minor) + ") in " + where,
                  std::move(warnings));
}

}  // namespace bo::tuning
