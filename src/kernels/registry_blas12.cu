// Registry entries of snrm2 and sgemv: the hand-written fallbacks and the tuning spaces' compiled points.
#include "kernels/registry_build.h"
#include "kernels/sgemv.cuh"
#include "kernels/snrm2.cuh"

namespace bok {
namespace reg {
namespace {

struct Snrm2Fam {
  static constexpr auto space() { return space::kSnrm2; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space::kSnrm2.point(int(I));
    if constexpr (space::snrm2_verdict(p) == space::Verdict::kCompiled)
      v.push_back(entry<Nrm2Entry, Snrm2OnePass<p[0], p[1], p[2]>>(BO_K_SNRM2));
  }
};
struct SgemvNFam {
  static constexpr auto space() { return space::kSgemvN; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space::kSgemvN.point(int(I));
    if constexpr (space::sgemv_n_verdict(p) == space::Verdict::kCompiled)
      v.push_back(entry<GemvEntry, SgemvN<p[0], p[1], p[2], p[3]>>(BO_K_SGEMV));
  }
};
struct SgemvTFam {
  static constexpr auto space() { return space::kSgemvT; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space::kSgemvT.point(int(I));
    if constexpr (space::sgemv_t_verdict(p) == space::Verdict::kCompiled)
      v.push_back(entry<GemvEntry, SgemvTV<p[0], p[1]>>(BO_K_SGEMV));
  }
};

}  // namespace

void add_snrm2(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<Nrm2Entry, Snrm2<256, 4, 4>>(BO_K_SNRM2));  // two launches; the one-pass family below
  add_space<Snrm2Fam>(v);
}
void add_sgemv(std::vector<bo_kernel_entry>& v) {
  add_space<SgemvNFam>(v);
  v.push_back(entry<GemvEntry, SgemvT<8, 4>>(BO_K_SGEMV));  // scalar loads
  v.push_back(entry<GemvEntry, SgemvT<4, 8>>(BO_K_SGEMV));
  add_space<SgemvTFam>(v);
}

}  // namespace reg
}  // namespace bok
