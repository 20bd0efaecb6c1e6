// blasoffload_regret's shapes: parsing --shapes for a routine, and each routine's default list.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "regret.h"

namespace bo_bench {

std::string kind_of(const std::string& routine) {
  return routine.size() > 1 && (routine[0] == 's' || routine[0] == 'd') ? routine.substr(1) : "";
}

namespace {

bool parse_count(const std::string& s, int64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || v < 0 || v > 2147483647.0 || v != std::floor(v)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace

bool parse_shape(const std::string& routine, const std::string& text, Shape* s) {
  std::vector<int64_t> d;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find('x', b);
    if (e == std::string::npos) e = text.size();
    int64_t v;
    if (!parse_count(text.substr(b, e - b), &v)) return false;
    d.push_back(v);
    b = e + 1;
  }
  s->text = text;
  const std::string kind = kind_of(routine);
  if (kind == "gemm_nn") {
    if (d.size() == 1) d = {d[0], d[0], d[0]};
    if (d.size() != 3) return false;
    s->m = d[0], s->n = d[1], s->k = d[2];
  } else if (kind == "gemm_lu") {
    if (d.size() == 2) d = {d[0], d[0], d[1]};
    if (d.size() != 3) return false;
    s->m = d[0], s->n = d[1], s->k = d[2];
  } else if (kind == "gemv_n" || kind == "gemv_t") {
    if (d.size() == 1) d = {d[0], d[0]};
    if (d.size() != 2) return false;
    s->m = d[0], s->n = d[1];
  } else {
    if (d.size() != 1) return false;
    s->n = d[0];
  }
  return true;
}

// Defaults: tiny to the largest that fits, denser where the CPU/GPU crossover is expected from the anchors (sgemm near
// n = 512..2048, strsv near 4096, snrm2 near 1e6, the LU updates near m = n = 16384 x 64; sgemv from host memory
// moves 4 bytes per element over PCIe against the CPU's 100+ GB/s, so it should stay on the CPU and needs fewer
// points). About 1 s per shape keeps one mode's pass near a minute and the default run.sh under 8 minutes.
std::vector<std::string> default_shapes(const std::string& routine, bool quick, bool large) {
  const std::string r = kind_of(routine);
  if (r == "gemm_nn") {
    if (quick) return {"8", "64", "256"};
    std::vector<std::string> v = {"8", "32", "128", "256", "512", "1024", "2048", "4096", "8192"};
    if (large) v.push_back("16384");
    return v;
  }
  if (r == "gemm_lu") {
    if (quick) return {"256x64", "512x256"};
    return {"2048x64", "4096x64", "8192x64", "16384x64", "4096x256", "8192x256", "16384x256"};
  }
  if (r == "gemv_n" || r == "gemv_t") {
    if (quick) return {"16", "128", "1024"};
    return {"16", "256", "2048", "8192", "16384", "32768"};
  }
  if (r == "trsv_ln" || r == "trsv_lt") {
    if (quick) return {"16", "128", "1024"};
    return {"16", "128", "1024", "2048", "4096", "8192", "16384", "32768"};
  }
  if (r == "nrm2") {
    if (quick) return {"4", "1000", "100000"};
    return {"4", "1000", "10000", "100000", "1000000", "1e7", "1e8", "1e9"};
  }
  return {};
}

}  // namespace bo_bench
