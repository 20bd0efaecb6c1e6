// The median of a few timings: what the module's measurements report, so that one rep slowed by the machine (another
// process's memory traffic, a preemption) or sped by a quiet moment does not decide a rate.
#pragma once

#include <algorithm>
#include <vector>

namespace bom {

// Of an odd count the middle value, of an even count the mean of the two middle ones; 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + h, v.end());
  if (v.size() % 2) return v[h];
  return 0.5 * (v[h] + *std::max_element(v.begin(), v.begin() + h));
}

}  // namespace bom
