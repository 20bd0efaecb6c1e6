// Reads every BLASOFFLOAD_* setting once per process through the registry (config_knobs.cpp): environment over
// config file, each value validated and its source recorded, problems warned about once.
#include "policy/config.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <utility>

#include "config/paths.h"
#include "dispatch/log.h"

extern char** environ;

namespace blasoffload {
namespace {

constexpr const char kPrefix[] = "BLASOFFLOAD_";

struct FileValue {
  std::string value;
  std::string where;  // FILE:LINE
};

struct State {
  Settings settings;
  std::vector<EffectiveValue> values;  // by knobs() index
  std::vector<std::string> problems;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::pair<std::string, FileValue>> file_values;  // canonical key -> value, every line kept
};

std::atomic<State*> g_state{nullptr};
std::mutex g_mutex;
std::string* g_library_dir = nullptr;

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool has_prefix(const std::string& s) { return s.rfind(kPrefix, 0) == 0; }

// Keys in the file may be written as in the environment (BLASOFFLOAD_MODE) or short (mode).
std::string canonical_key(const std::string& key) {
  const std::string k = upper(key);
  return has_prefix(k) ? k : kPrefix + k;
}

// Edit distance with adjacent transpositions counted as one edit (MDOE -> MODE is one).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string library_dir() {
  if (g_library_dir && !g_library_dir->empty()) return *g_library_dir;
  return paths::object_dir(reinterpret_cast<const void*>(&library_dir));
}

void read_file(State& st, const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(lineno);
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      st.problems.push_back(where + ": expected KEY = VALUE, ignored");
      continue;
    }
    const std::string written = trim(line.substr(0, eq));
    const std::string key = canonical_key(written);
    if (retired_knob(key)) continue;
    if (!find_knob(key) || key == "BLASOFFLOAD_CONFIG") {
      std::string msg = where + ": unknown key '" + written + "'";
      if (key == "BLASOFFLOAD_CONFIG") {
        msg = where + ": BLASOFFLOAD_CONFIG is read from the environment only; ignored";
      } else if (std::string near = nearest_knob(key); !near.empty()) {
        // Suggest it the way it was written: short and lower case, or in full.
        if (!has_prefix(upper(written))) near = near.substr(sizeof kPrefix - 1);
        if (written == lower(written)) near = lower(near);
        msg += "; did you mean '" + near + "'?";
      }
      st.problems.push_back(msg + (key == "BLASOFFLOAD_CONFIG" ? "" : " (ignored)"));
      continue;
    }
    st.file_values.emplace_back(key, FileValue{trim(line.substr(eq + 1)), where});
  }
}

// The config file: $BLASOFFLOAD_CONFIG if set, else the user's, else the system one (next to the installed
// library, then the configured prefix). Only the first existing file is read: a user file overrides the system's.
void read_config(State& st) {
  if (const char* p = secure_getenv("BLASOFFLOAD_CONFIG"); p && *p) {
    if (access(p, R_OK) != 0) {
      st.files.emplace_back(p, "cannot be read");
      st.problems.push_back(std::string("BLASOFFLOAD_CONFIG=") + p + " cannot be read; using the environment only");
      return;
    }
    st.files.emplace_back(p, "read");
    st.settings.config_file = p;
    read_file(st, p);
    return;
  }
  std::vector<std::string> candidates;
  if (const std::string u = paths::user_dir(); !u.empty()) candidates.push_back(u + "/blasoffload.conf");
  for (const auto& f : paths::system_config_files(library_dir())) candidates.push_back(f);
  for (const auto& path : candidates) {
    if (access(path.c_str(), F_OK) != 0) {
      st.files.emplace_back(path, "not present");
      continue;
    }
    if (access(path.c_str(), R_OK) != 0) {
      st.files.emplace_back(path, "cannot be read");
      st.problems.push_back(path + " cannot be read; skipped");
      continue;
    }
    st.files.emplace_back(path, "read");
    st.settings.config_file = path;
    read_file(st, path);
    return;
  }
}

void check_environment(State& st) {
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    const std::string name(*e, std::size_t(eq - *e));
    if (!has_prefix(name) || find_knob(name) || retired_knob(name) || !secure_getenv(name.c_str())) continue;
    std::string msg = name + ": unknown setting";
    if (const std::string near = nearest_knob(name); !near.empty()) msg += "; did you mean " + near + "?";
    st.problems.push_back(msg + " (ignored)");
  }
}

// The knob's value: the environment, else the file's last line for it, validated.
EffectiveValue resolve(State& st, const Knob& k) {
  EffectiveValue v{&k, "", Source::kDefault, "default", ""};
  std::string given, where;
  Source src = Source::kDefault;
  if (const char* e = secure_getenv(k.name.c_str()); e && *e) {
    given = e;
    where = "environment";
    src = Source::kEnvironment;
  } else {
    for (const auto& fv : st.file_values)
      if (fv.first == k.name && !fv.second.value.empty()) {
        given = fv.second.value;
        where = fv.second.where;
        src = Source::kFile;
      }
  }
  if (src == Source::kDefault) return v;
  if (!knob_accepts(k, given)) {
    v.invalid = given;
    std::string dflt = k.def;
    if (k.def == "BLASOFFLOAD_MODE") dflt = std::string("BLASOFFLOAD_MODE's ") + mode_name(st.settings.mode);
    st.problems.push_back(k.name + "=" + given + " is not " + k.allowed + "; using " +
                          (dflt == "unset" ? std::string("none") : dflt) +
                          (src == Source::kFile ? " (" + where + ")" : std::string()));
    return v;
  }
  // Words are passed on in their canonical form, so the module's exact comparisons see what was meant.
  if (k.kind == KnobKind::kWords || !k.choices.empty()) {
    for (const auto& c : k.choices)
      if (lower(given) == c) given = c;
  }
  v.value = given;
  v.source = src;
  v.where = where;
  return v;
}

Mode to_mode(const std::string& s, Mode dflt) {
  if (s == "cpu") return Mode::kCpu;
  if (s == "gpu") return Mode::kGpu;
  if (s == "auto") return Mode::kAuto;
  return dflt;
}

LogLevel to_log(const std::string& s) {
  if (s == "summary" || s == "1") return LogLevel::kSummary;
  if (s == "calls" || s == "2") return LogLevel::kCalls;
  if (s == "debug" || s == "3") return LogLevel::kDebug;
  return LogLevel::kOff;
}

State* load() {
  auto* st = new State();
  read_config(*st);
  check_environment(*st);
  const auto& all = knobs();
  st->values.reserve(all.size());
  Settings& s = st->settings;
  auto value_of = [&](const std::string& name) -> const std::string& {
    static const std::string empty;
    const Knob* k = find_knob(name);
    const std::size_t i = k ? std::size_t(k - all.data()) : st->values.size();  // values are in knobs()'s order
    return i < st->values.size() ? st->values[i].value : empty;
  };
  // BLASOFFLOAD_MODE first: the per-routine knobs default to it.
  for (const auto& k : all) {
    st->values.push_back(resolve(*st, k));
    if (k.name == "BLASOFFLOAD_MODE") s.mode = to_mode(st->values.back().value, Mode::kAuto);
  }
  s.log = to_log(value_of("BLASOFFLOAD_LOG"));
  s.log_file = value_of("BLASOFFLOAD_LOG_FILE");
  for (std::size_t i = 0; i < kNumRoutines; ++i) {
    const std::string key = canonical_key(routine_name(static_cast<Routine>(i)));
    s.routine_mode[i] = to_mode(value_of(key), s.mode);
    const std::string& min = value_of(key + "_MIN");
    s.min_size[i] = min.empty() ? -1 : std::strtoll(min.c_str(), nullptr, 10);
  }
  s.frozen = value_of("BLASOFFLOAD_DECISIONS") == "frozen";
  s.eager_start = value_of("BLASOFFLOAD_STARTUP") == "eager";
  const std::string& core = value_of("BLASOFFLOAD_LEND_CORE");
  s.lend_core = core == "off" ? 0 : core == "on" ? 2 : 1;
  s.check_device_operands = value_of("BLASOFFLOAD_DEVICE_OPERANDS") == "check";
  const std::string& sl = value_of("BLASOFFLOAD_SCALAPACK");
  s.scalapack = sl == "gather" ? ScalapackTakeover::kGather
                : sl == "off"  ? ScalapackTakeover::kOff
                               : ScalapackTakeover::kAuto;
  if (const std::string& n = value_of("BLASOFFLOAD_SCALAPACK_MIN_N"); !n.empty())
    s.scalapack_min_n = std::strtoll(n.c_str(), nullptr, 10);
  const std::string& copy = value_of("BLASOFFLOAD_TEST_SCALAPACK_COPY");
  s.scalapack_copy = copy == "messages" ? ScalapackCopy::kMessages
                     : copy == "host"   ? ScalapackCopy::kHost
                                        : ScalapackCopy::kAuto;
  if (const std::string& w = value_of("BLASOFFLOAD_EXIT_WAIT_MS"); !w.empty())
    s.exit_wait_ms = int(std::strtol(w.c_str(), nullptr, 10));
  const std::string& hybrid = value_of("BLASOFFLOAD_HYBRID");
  s.hybrid_share = hybrid.empty() || hybrid == "auto" ? -1.0f
                   : hybrid == "off"                  ? 0.0f
                                                      : std::strtof(hybrid.c_str(), nullptr);
  if (const std::string& p = value_of("BLASOFFLOAD_POLICY_FILE"); !p.empty()) {
    s.policy_file = p;
    s.policy_file_explicit = true;
  } else if (const std::string u = paths::user_dir(); !u.empty()) {
    s.policy_file = u + "/policy.json";
  }
  s.cpu_blas = value_of("BLASOFFLOAD_CPU_BLAS");
  s.cpu_lapack = value_of("BLASOFFLOAD_CPU_LAPACK");
  s.cpu_library_root = value_of("BLASOFFLOAD_TEST_CPU_LIBRARY_ROOT");
  s.cuda_module = value_of("BLASOFFLOAD_CUDA_MODULE");
  return st;
}

State& state() {
  if (State* s = g_state.load(std::memory_order_acquire)) return *s;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (State* s = g_state.load(std::memory_order_relaxed)) return *s;
  State* s = load();
  g_state.store(s, std::memory_order_release);
  // The logger needs the level and file before anything is reported; each problem is reported once, here.
  log_configure(s->settings.log, s->settings.log_file);
  for (const auto& p : s->problems) log_warning("%s", p.c_str());
  if (!s->settings.config_file.empty()) log_debug("config file: %s", s->settings.config_file.c_str());
  return *s;
}

}  // namespace

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kCpu:
      return "cpu";
    case Mode::kGpu:
      return "gpu";
    default:
      return "auto";
  }
}

bool knob_accepts(const Knob& k, const std::string& value) {
  const std::string v = lower(trim(value));
  if (std::find(k.choices.begin(), k.choices.end(), v) != k.choices.end()) return true;
  char* end = nullptr;
  switch (k.kind) {
    case KnobKind::kWords:
      return false;
    case KnobKind::kInteger: {
      if (v.empty()) return false;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      return *end == '\0' && double(n) >= k.min && double(n) <= k.max;
    }
    case KnobKind::kNumber: {
      if (v.empty()) return false;
      const double d = std::strtod(v.c_str(), &end);
      return *end == '\0' && d >= k.min && (k.max_open ? d < k.max : d <= k.max);
    }
    case KnobKind::kBytes: {
      if (v.empty()) return false;
      const double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || d < 0) return false;
      if (*end == '\0') return true;
      if (!std::strchr("kmgt", *end)) return false;
      return end[1] == '\0' || (end[1] == 'b' && end[2] == '\0');
    }
    case KnobKind::kIndices: {
      bool digit = false;
      for (char c : v) {
        if (std::isdigit(static_cast<unsigned char>(c)))
          digit = true;
        else if (c == ',' && digit)
          digit = false;
        else
          return false;
      }
      return digit;
    }
    case KnobKind::kPath:
    case KnobKind::kText:
      return true;
  }
  return false;
}

std::string nearest_knob(const std::string& name) {
  std::string n = upper(name);
  if (has_prefix(n)) n = n.substr(sizeof kPrefix - 1);
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& k : knobs()) {
    const std::size_t d = edit_distance(n, k.name.substr(sizeof kPrefix - 1));
    if (d < best_d) {
      best_d = d;
      best = k.name;
    }
  }
  // Close enough to be a typo: about one edit in three characters, at least one, at most three.
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, n.size() / 3));
  return best_d <= limit ? best : "";
}

const Settings& settings() { return state().settings; }

const char* config_value(const char* key) {
  State& st = state();
  const auto& all = knobs();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].name == key) return st.values[i].value.empty() ? nullptr : st.values[i].value.c_str();
  // Not registered (a knob added to the module but not yet here): read it as given, and say so when debugging.
  log_debug("%s is not a registered setting (src/policy/config_knobs.cpp)", key);
  if (const char* v = secure_getenv(key)) return v;
  for (const auto& fv : st.file_values)
    if (fv.first == key) return fv.second.value.c_str();
  return nullptr;
}

std::vector<EffectiveValue> effective_values() { return state().values; }

const std::vector<std::string>& config_problems() { return state().problems; }

const std::vector<std::pair<std::string, std::string>>& config_files_considered() { return state().files; }

void config_reload_for_tests() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_state.store(nullptr, std::memory_order_release);  // the old state is leaked: references to it may remain
}

void config_set_library_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_library_dir) g_library_dir = new std::string();
  *g_library_dir = dir;
}

}  // namespace blasoffload
