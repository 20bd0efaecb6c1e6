// Reads BLASOFFLOAD_* settings from the environment and the optional config file, once per process.
#include "policy/config.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

#include "dispatch/log.h"

#ifndef BLASOFFLOAD_SYSCONFDIR
#define BLASOFFLOAD_SYSCONFDIR "/usr/local/etc"
#endif

namespace blasoffload {
namespace {

std::vector<std::pair<std::string, std::string>>* g_file_values = nullptr;
Settings* g_settings = nullptr;
std::once_flag g_once;

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

// Keys in the file may be written as in the environment (BLASOFFLOAD_MODE) or short (mode).
std::string canonical_key(const std::string& key) {
  std::string k;
  for (char c : key) k += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (k.rfind("BLASOFFLOAD_", 0) != 0) k = "BLASOFFLOAD_" + k;
  return k;
}

// The config file: $BLASOFFLOAD_CONFIG if set, else the user's, else the system one. Only the first
// existing file is read, so a user file fully overrides the system file.
std::vector<std::string> config_candidates(bool* explicit_path) {
  std::vector<std::string> paths;
  *explicit_path = false;
  if (const char* p = secure_getenv("BLASOFFLOAD_CONFIG")) {
    *explicit_path = true;
    paths.emplace_back(p);
    return paths;
  }
  if (const char* x = secure_getenv("XDG_CONFIG_HOME"); x && *x) {
    paths.emplace_back(std::string(x) + "/blasoffload/blasoffload.conf");
  } else if (const char* h = secure_getenv("HOME"); h && *h) {
    paths.emplace_back(std::string(h) + "/.config/blasoffload/blasoffload.conf");
  }
  paths.emplace_back(std::string(BLASOFFLOAD_SYSCONFDIR) + "/blasoffload.conf");
  return paths;
}

void read_config_file(Settings& s) {
  bool explicit_path = false;
  for (const auto& path : config_candidates(&explicit_path)) {
    std::ifstream in(path);
    if (!in) {
      if (explicit_path) log_warning("BLASOFFLOAD_CONFIG=%s cannot be read; using the environment only", path.c_str());
      continue;
    }
    s.config_file = path;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
      line = trim(line);
      if (line.empty()) continue;
      auto eq = line.find('=');
      if (eq == std::string::npos) {
        log_warning("%s:%d: expected KEY = VALUE, ignored", path.c_str(), lineno);
        continue;
      }
      g_file_values->emplace_back(canonical_key(trim(line.substr(0, eq))), trim(line.substr(eq + 1)));
    }
    return;
  }
}

bool parse_mode(const char* key, const char* v, Mode* out) {
  if (!v) return false;
  std::string s = lower(v);
  if (s == "auto")
    *out = Mode::kAuto;
  else if (s == "cpu")
    *out = Mode::kCpu;
  else if (s == "gpu")
    *out = Mode::kGpu;
  else {
    log_warning("%s=%s is not one of auto|cpu|gpu; ignored", key, v);
    return false;
  }
  return true;
}

void parse_log(const char* v, LogLevel* out) {
  if (!v) return;
  std::string s = lower(v);
  if (s == "off" || s == "0" || s.empty())
    *out = LogLevel::kOff;
  else if (s == "summary" || s == "1")
    *out = LogLevel::kSummary;
  else if (s == "calls" || s == "2")
    *out = LogLevel::kCalls;
  else if (s == "debug" || s == "3")
    *out = LogLevel::kDebug;
  else
    log_warning("BLASOFFLOAD_LOG=%s is not one of off|summary|calls|debug; ignored", v);
}

void parse_min_size(const char* key, const char* v, std::int64_t* out) {
  if (!v || !*v) return;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (!end || *end != '\0' || n < 0) {
    log_warning("%s=%s is not a non-negative integer; ignored", key, v);
    return;
  }
  *out = n;
}

void parse_decisions(const char* v, bool* frozen) {
  if (!v) return;
  const std::string s = lower(v);
  if (s == "frozen")
    *frozen = true;
  else if (s == "adaptive" || s.empty())
    *frozen = false;
  else
    log_warning("BLASOFFLOAD_DECISIONS=%s is not one of adaptive|frozen; ignored", v);
}

void parse_startup(const char* v, bool* eager) {
  if (!v) return;
  const std::string s = lower(v);
  if (s == "eager" || s == "amortised" || s == "amortized" || s.empty())
    *eager = s == "eager";
  else
    log_warning("BLASOFFLOAD_STARTUP=%s is not one of amortised|eager; ignored", v);
}

void parse_hybrid(const char* v, float* share) {
  if (!v) return;
  const std::string s = lower(v);
  if (s == "auto" || s.empty()) {
    *share = -1;
    return;
  }
  if (s == "off") {
    *share = 0;
    return;
  }
  char* end = nullptr;
  const double f = std::strtod(v, &end);
  if (end != v && *end == '\0' && f >= 0 && f < 1)
    *share = float(f);
  else
    log_warning("BLASOFFLOAD_HYBRID=%s is not auto, off or a fraction in [0, 1); ignored", v);
}

// The policy file blasoffload-calibrate writes by default.
std::string default_policy_file() {
  if (const char* x = secure_getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/blasoffload/policy.json";
  if (const char* h = secure_getenv("HOME"); h && *h) return std::string(h) + "/.config/blasoffload/policy.json";
  return "";
}

void load() {
  g_file_values = new std::vector<std::pair<std::string, std::string>>();
  g_settings = new Settings();
  Settings& s = *g_settings;
  read_config_file(s);

  parse_log(config_value("BLASOFFLOAD_LOG"), &s.log);
  if (const char* f = config_value("BLASOFFLOAD_LOG_FILE")) s.log_file = f;
  // The logger needs the level and file before anything else is reported.
  log_configure(s.log, s.log_file);

  parse_mode("BLASOFFLOAD_MODE", config_value("BLASOFFLOAD_MODE"), &s.mode);
  for (std::size_t i = 0; i < kNumRoutines; ++i) {
    s.routine_mode[i] = s.mode;
    std::string key = canonical_key(routine_name(static_cast<Routine>(i)));
    parse_mode(key.c_str(), config_value(key.c_str()), &s.routine_mode[i]);
    s.min_size[i] = -1;
    const std::string min_key = key + "_MIN";
    parse_min_size(min_key.c_str(), config_value(min_key.c_str()), &s.min_size[i]);
  }
  parse_decisions(config_value("BLASOFFLOAD_DECISIONS"), &s.frozen);
  parse_startup(config_value("BLASOFFLOAD_STARTUP"), &s.eager_start);
  parse_hybrid(config_value("BLASOFFLOAD_HYBRID"), &s.hybrid_share);
  if (const char* v = config_value("BLASOFFLOAD_POLICY_FILE"); v && *v) {
    s.policy_file = v;
    s.policy_file_explicit = true;
  } else {
    s.policy_file = default_policy_file();
  }
  if (const char* v = config_value("BLASOFFLOAD_CPU_BLAS")) s.cpu_blas = v;
  if (const char* v = config_value("BLASOFFLOAD_CUDA_MODULE")) s.cuda_module = v;
  if (!s.config_file.empty()) log_debug("config file: %s", s.config_file.c_str());
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

const Settings& settings() {
  std::call_once(g_once, load);
  return *g_settings;
}

const char* config_value(const char* key) {
  if (const char* v = secure_getenv(key)) return v;
  if (!g_file_values) return nullptr;
  for (const auto& kv : *g_file_values)
    if (kv.first == key) return kv.second.c_str();
  return nullptr;
}

}  // namespace blasoffload
