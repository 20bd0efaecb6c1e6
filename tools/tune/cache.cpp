// JSON-lines measurement cache of the tuner (see cache.h).
#include "cache.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace bo::tune {

std::string Cache::key(const std::string& kernel, const std::vector<int64_t>& at, const std::string& cand) {
  std::string k = kernel + "|";
  for (int64_t v : at) k += std::to_string(v) + ",";
  return k + "|" + cand;
}

bool Cache::open(const std::string& path, const std::string& device, const std::string& module_id, bool quick,
                 bool fresh, std::string* error) {
  nlohmann::json h = {{"device", device}, {"module", module_id}, {"mode", quick ? "quick" : "full"}};
  header_ = h.dump();
  if (!fresh) {
    std::ifstream in(path);
    std::string line;
    bool ours = false;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) continue;  // a line cut by an interruption
      if (j.contains("device")) {
        ours = j.dump() == header_;
        continue;
      }
      if (!ours || !j.contains("kernel")) continue;
      Measurement m;
      m.valid = j.value("valid", false);
      m.pruned = j.value("pruned", false);
      m.time_us = j.value("time_us", 0.0);
      m.rate = j.value("rate", 0.0);
      m.note = j.value("note", "");
      map_[key(j["kernel"], j["at"].get<std::vector<int64_t>>(), j["candidate"])] = m;
      ++loaded_;
    }
  }
  f_ = std::fopen(path.c_str(), fresh ? "w" : "a");
  if (!f_) {
    *error = "cannot open the cache " + path;
    return false;
  }
  std::fprintf(f_, "%s\n", header_.c_str());
  std::fflush(f_);
  return true;
}

const Measurement* Cache::find(const std::string& kernel, const std::vector<int64_t>& at,
                               const std::string& cand) const {
  auto it = map_.find(key(kernel, at, cand));
  return it == map_.end() ? nullptr : &it->second;
}

void Cache::put(const std::string& kernel, const std::vector<int64_t>& at, const std::string& cand,
                const Measurement& m) {
  map_[key(kernel, at, cand)] = m;
  if (!f_) return;
  nlohmann::json j = {{"kernel", kernel}, {"at", at},          {"candidate", cand}, {"valid", m.valid},
                      {"pruned", m.pruned}, {"time_us", m.time_us}, {"rate", m.rate},  {"note", m.note}};
  std::fprintf(f_, "%s\n", j.dump().c_str());
  std::fflush(f_);
}

Cache::~Cache() {
  if (f_) std::fclose(f_);
}

}  // namespace bo::tune
