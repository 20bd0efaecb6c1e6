// The level-3 GPU tests' common part (test_trsm.cpp, test_syrk.cpp): the per-runner tally each test prints and checks
// (every entry must run some case), the check that only an output block was written, the check that select() names an
// entry that takes a case, and the knobs of the trsm/syrk lane path.
#pragma once
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "pipeline_support.h"  // Knobs

namespace gt::level3 {

// Host-reference work (multiply-adds) above which a shape runs one alpha/conditioning variant per combination
// instead of all of them, so that the references stay within seconds.
inline constexpr double kBigWork = 1e8;

inline int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Per runner, for the summary a test prints: how many cases ran, how close to its bound the worst one came, and
// (trsm, ill-conditioned data) the worst backward error in u and relative to the rounded reference solution's.
struct Stat {
  int ran = 0, declined = 0;
  double worst = 0, worst_be_u = 0, worst_be_vs_ref = 0;
};
using Tally = std::map<std::string, Stat>;
inline void print_tally(const std::string& what, const Tally& t) {
  std::printf("%s:\n", what.c_str());
  for (const auto& [name, s] : t) {
    std::printf("  %-40s %5d cases (%d declined), worst error %.3f of its bound", name.c_str(), s.ran, s.declined,
                s.worst);
    if (s.worst_be_u > 0)
      std::printf("; worst backward error %.1f u, %.2fx the rounded reference solution's", s.worst_be_u,
                  s.worst_be_vs_ref);
    std::printf("\n");
  }
}
// Prints the tally, and checks that every entry ran somewhere: a can_implement that declines everything would otherwise
// go unnoticed.
inline void report(const std::string& what, const std::vector<Runner>& rs, const Tally& t) {
  print_tally(what, t);
  for (const Runner& r : rs) {
    auto it = t.find(r.name());
    EXPECT_TRUE(it != t.end() && it->second.ran > 0) << r.name() << " ran no case";
  }
}

// Everything in the image outside the rows x cols block (of leading dimension ld) must be bit-identical.
template <typename T>
::testing::AssertionResult only_block_written(const Image<T>& before, const Image<T>& after, int64_t rows, int64_t cols,
                                              int64_t ld) {
  size_t changed = 0;
  std::ostringstream msg;
  const size_t span = before.size() - 2 * kGuard;
  for (size_t k = 0; k < before.size(); ++k) {
    const int64_t o = int64_t(k) - int64_t(kGuard);
    const bool out = o >= 0 && size_t(o) < span && o % ld < rows && o / ld < cols;
    if (!out && bits(before.v[k]) != bits(after.v[k]) && changed++ < 5) msg << " [operand offset " << o << "]";
  }
  if (changed) return ::testing::AssertionFailure() << changed << " elements outside the output changed:" << msg.str();
  return ::testing::AssertionSuccess();
}
// The trsm/syrk lane path (level3_mg.h) for one test: two lanes, the several-GPU split from small sizes on, on GPUs 0
// and 1 where the machine has two (else two shares of GPU 0: BLASOFFLOAD_DEVICES=0,0), or one lane (operands beyond a
// 1 MiB staging limit go through rings).
inline void set_lane_knobs(gt::pipe::Knobs& knobs, int lanes) {
  if (lanes == 2) {
    knobs.set("BLASOFFLOAD_DEVICES", device_count() >= 2 ? "0,1" : "0,0");
    knobs.set("BLASOFFLOAD_MULTI_GPU_MIN_N", "64");
  } else {
    knobs.set("BLASOFFLOAD_PINNED_MAX_MB", "1");
  }
}
// The module's call() on host operands alone (the path under test takes host operands only).
inline std::vector<Runner> host_runner(int routine) {
  std::vector<Runner> rs;
  for (const Runner& r : runners_for(routine))
    if (r.mode == Mode::kModuleHost) rs.push_back(r);
  return rs;
}
inline bool has_host_mode(const std::vector<Runner>& rs) {
  return std::any_of(rs.begin(), rs.end(), [](const Runner& r) { return r.mode == Mode::kModuleHost; });
}
// select() names an entry of the routine that takes the case (pointers: aligned stand-ins).
template <typename T>
void expect_select_takes(bo_call g) {
  g.a = g.c = fake_dev_ptr<T>();
  const int idx = module().reg->select(g.routine, &g);
  EXPECT_GE(idx, 0) << "select() found no " << bo_routine_name(g.routine) << " entry";
  if (idx >= 0) {
    const bo_kernel_entry& e = module().reg->entries[idx];
    EXPECT_EQ(e.routine, g.routine) << e.name;
    EXPECT_TRUE(e.can_implement(&g)) << "select() chose " << e.name << ", which declines the case";
  }
}

}  // namespace gt::level3
