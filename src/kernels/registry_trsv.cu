// Registry entries of trsv (s and d): the substitution kernels (any alignment) and the wavefront spaces' points.
#include "kernels/registry_build.h"
#include "kernels/trsv.cuh"
#include "kernels/trsv_wave.cuh"

namespace bok {
namespace reg {
namespace {

template <class T>
struct TrsvFam {
  static constexpr auto space() { return std::is_same_v<T, float> ? space::kStrsv : space::kDtrsv; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space().point(int(I));
    constexpr auto verdict = std::is_same_v<T, float> ? space::strsv_verdict(p) : space::dtrsv_verdict(p);
    if constexpr (verdict == space::Verdict::kCompiled)
      v.push_back(entry<TrsvAlignedEntry, TrsvWave<T, p[0], p[1]>>(std::is_same_v<T, float> ? BO_R_STRSV : BO_R_DTRSV));
  }
};

}  // namespace

void add_trsv(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<TrsvEntry, Trsv<float, 64, 256, true>>(BO_R_STRSV));
  v.push_back(entry<TrsvEntry, Trsv<float, 32, 128>>(BO_R_STRSV));
  add_space<TrsvFam<float>>(v);
  // Double: 32-row blocks (two 64 x 65 double tiles would exceed the 48 KB of static shared memory).
  v.push_back(entry<TrsvEntry, Trsv<double, 32, 128, true>>(BO_R_DTRSV));
  v.push_back(entry<TrsvEntry, Trsv<double, 32, 128>>(BO_R_DTRSV));
  add_space<TrsvFam<double>>(v);
}

}  // namespace reg
}  // namespace bok
