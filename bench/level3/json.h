// JSON string and number formatting for blasoffload_bench_level3's output lines.
#pragma once
#include <cmath>
#include <string>

#include "gpu_module.h"

namespace bo_bench {

inline std::string Json(const std::string& s) {
  std::string r = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      r += '\\', r += ch;
    else if (static_cast<unsigned char>(ch) < 0x20)
      r += bo_gpu::format("\\u%04x", ch);
    else
      r += ch;
  }
  return r + "\"";
}
// JSON has no NaN or Infinity.
inline std::string Num(double v) { return std::isfinite(v) ? bo_gpu::format("%.6g", v) : "null"; }

}  // namespace bo_bench
