// Registry entries of strsv: the substitution kernels (any alignment) and the wavefront space's points.
#include "kernels/registry_build.h"
#include "kernels/strsv.cuh"
#include "kernels/strsv_wave.cuh"

namespace bok {
namespace reg {
namespace {

struct StrsvFam {
  static constexpr auto space() { return space::kStrsv; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space::kStrsv.point(int(I));
    if constexpr (space::strsv_verdict(p) == space::Verdict::kCompiled)
      v.push_back(entry<TrsvAlignedEntry, StrsvWave<p[0], p[1]>>(BO_K_STRSV));
  }
};

}  // namespace

void add_strsv(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<TrsvEntry, Strsv<64, 256, true>>(BO_K_STRSV));
  v.push_back(entry<TrsvEntry, Strsv<32, 128>>(BO_K_STRSV));
  add_space<StrsvFam>(v);
}

}  // namespace reg
}  // namespace bok
