// The rates of the program's large staged uploads (see staged_seen.h).
#include "offload/module/staged_seen.h"

#include <mutex>
#include <vector>

#include "offload/module/median.h"

namespace bom {
namespace {

// The last few: a median over them follows a link that changed (another process's transfers beside ours) within a few
// calls, and one upload slowed by a preemption does not move it.
constexpr int kKeep = 5;

std::mutex mu;
double rates[kKeep];
int64_t noted = 0;

}  // namespace

void note_staged_upload(double bytes, double ms) {
  if (!(bytes >= kSeenMinBytes) || !(ms > 0)) return;
  std::lock_guard<std::mutex> g(mu);
  rates[noted % kKeep] = bytes / (ms * 1e6);
  ++noted;
}

double staged_gbs_seen(int64_t* samples) {
  std::lock_guard<std::mutex> g(mu);
  *samples = noted;
  const int n = int(std::min<int64_t>(noted, kKeep));
  if (n == 0) return 0;
  return median(std::vector<double>(rates, rates + n));
}

}  // namespace bom
