// How a large trsm or syrk/herk is shared among GPU lanes (level3_mg.cu), as data (pure C++, so CI tests it without a
// GPU): contiguous ranges of B's independent columns or rows, or of C's triangle columns, of about equal work.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace bom {

struct LaneRange {
  int64_t s0 = 0, s1 = 0;  // [s0, s1)
  int64_t width() const { return s1 - s0; }
};

// `total` independent columns (or rows) in at most `lanes` ranges of about equal width, each a multiple of `align`
// except the last, none narrower than `align` (fewer ranges when there are too few columns). Empty for total <= 0.
inline std::vector<LaneRange> split_even(int64_t total, int lanes, int64_t align) {
  std::vector<LaneRange> out;
  if (total <= 0 || lanes < 1) return out;
  align = std::max<int64_t>(1, align);
  const int64_t units = std::max<int64_t>(1, total / align);  // whole units; the last range takes the rest
  const int64_t parts = std::min<int64_t>(lanes, units);
  int64_t at = 0;
  for (int64_t q = 0; q < parts; ++q) {
    const int64_t end = q + 1 == parts ? total : (units * (q + 1) / parts) * align;
    if (end > at) out.push_back({at, end});
    at = end;
  }
  return out;
}

// The n columns of a triangle (lower: column j holds n - j elements; upper: j + 1) in at most `lanes` ranges holding
// about equal numbers of elements (a syrk's work per column is proportional to them), boundaries multiples of
// `align`, none narrower than `align`.
inline std::vector<LaneRange> split_triangle(int64_t n, int lanes, bool lower, int64_t align) {
  std::vector<LaneRange> out;
  if (n <= 0 || lanes < 1) return out;
  align = std::max<int64_t>(1, align);
  const int64_t parts = std::min<int64_t>(lanes, std::max<int64_t>(1, n / align));
  // Elements in columns [0, j).
  auto area = [&](double j) { return lower ? j * double(n) - j * (j - 1) / 2 : j * (j + 1) / 2; };
  const double all = area(double(n));
  int64_t at = 0;
  for (int64_t q = 0; q < parts; ++q) {
    int64_t end = n;
    if (q + 1 < parts) {
      const double want = all * double(q + 1) / double(parts);
      // Solve area(j) = want: lower j^2 / 2 - (n + 1/2) j + want = 0 (the smaller root); upper j^2 + j - 2 want = 0.
      const double b = double(n) + 0.5;
      const double j = lower ? b - std::sqrt(std::max(0.0, b * b - 2 * want)) : (std::sqrt(1 + 8 * want) - 1) / 2;
      end = std::llround(j / double(align)) * align;
      // At least one unit for this range and for each one after it.
      end = std::clamp<int64_t>(end, at + align, (n - (parts - 1 - q) * align) / align * align);
    }
    if (end > at) out.push_back({at, end});
    at = end;
  }
  return out;
}

}  // namespace bom
