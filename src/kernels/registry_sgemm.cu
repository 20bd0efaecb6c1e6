// Registry entries of sgemm: the register-tiled kernels (any alignment) and the warp-tiled space's points,
// each in its four transpose variants.
#include "kernels/registry_build.h"
#include "kernels/sgemm.cuh"
#include "kernels/sgemm_warp.cuh"

namespace bok {
namespace reg {
namespace {

template <int BM, int BN, int BK, int TM, int TN, int VEC, int STAGES = 1>
void add_gemm(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, false, false, STAGES>>(BO_K_SGEMM));
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, false, true, STAGES>>(BO_K_SGEMM));
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, true, false, STAGES>>(BO_K_SGEMM));
  v.push_back(entry<GemmEntry, Sgemm<BM, BN, BK, TM, TN, VEC, true, true, STAGES>>(BO_K_SGEMM));
}

struct SgemmWarpFam {
  static constexpr auto space() { return space::kSgemmWarp; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space::kSgemmWarp.point(int(I));
    if constexpr (space::sgemm_warp_verdict(p) == space::Verdict::kCompiled) {
      v.push_back(entry<GemmWarpEntry, SgemmWarp<p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], false, false>>(BO_K_SGEMM));
      v.push_back(entry<GemmWarpEntry, SgemmWarp<p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], false, true>>(BO_K_SGEMM));
      v.push_back(entry<GemmWarpEntry, SgemmWarp<p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], true, false>>(BO_K_SGEMM));
      v.push_back(entry<GemmWarpEntry, SgemmWarp<p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], true, true>>(BO_K_SGEMM));
    }
  }
};

}  // namespace

void add_sgemm(std::vector<bo_kernel_entry>& v) {
  add_gemm<128, 128, 8, 8, 8, 4, 2>(v);  // 37-39 TF/s on the H100 (vs 30-31 unpipelined)
  add_gemm<128, 128, 8, 8, 8, 4>(v);
  add_gemm<64, 64, 8, 4, 4, 1>(v);
  add_space<SgemmWarpFam>(v);
}

}  // namespace reg
}  // namespace bok
