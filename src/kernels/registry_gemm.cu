// Registry entries of gemm (s and d): the register-tiled kernels (any alignment) and the warp-tiled spaces' points,
// each in its four transpose variants.
#include "kernels/gemm.cuh"
#include "kernels/gemm_warp.cuh"
#include "kernels/registry_build.h"

namespace bok {
namespace reg {
namespace {

template <class T>
constexpr int gemm_routine() {
  return std::is_same_v<T, float> ? BO_R_SGEMM : BO_R_DGEMM;
}

template <class T, int BM, int BN, int BK, int TM, int TN, int VEC, int STAGES = 1>
void add_tiled(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<GemmEntry, Gemm<T, BM, BN, BK, TM, TN, VEC, false, false, STAGES>>(gemm_routine<T>()));
  v.push_back(entry<GemmEntry, Gemm<T, BM, BN, BK, TM, TN, VEC, false, true, STAGES>>(gemm_routine<T>()));
  v.push_back(entry<GemmEntry, Gemm<T, BM, BN, BK, TM, TN, VEC, true, false, STAGES>>(gemm_routine<T>()));
  v.push_back(entry<GemmEntry, Gemm<T, BM, BN, BK, TM, TN, VEC, true, true, STAGES>>(gemm_routine<T>()));
}

template <class T>
struct GemmWarpFam {
  static constexpr auto space() { return std::is_same_v<T, float> ? space::kSgemmWarp : space::kDgemmWarp; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space().point(int(I));
    constexpr auto verdict = std::is_same_v<T, float> ? space::sgemm_warp_verdict(p) : space::dgemm_warp_verdict(p);
    if constexpr (verdict == space::Verdict::kCompiled) {
      constexpr int r = gemm_routine<T>();
      v.push_back(entry<GemmWarpEntry, GemmWarp<T, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], false, false>>(r));
      v.push_back(entry<GemmWarpEntry, GemmWarp<T, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], false, true>>(r));
      v.push_back(entry<GemmWarpEntry, GemmWarp<T, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], true, false>>(r));
      v.push_back(entry<GemmWarpEntry, GemmWarp<T, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], true, true>>(r));
    }
  }
};

}  // namespace

void add_gemm(std::vector<bo_kernel_entry>& v) {
  add_tiled<float, 128, 128, 8, 8, 8, 4, 2>(v);  // 37-39 TF/s on the H100 (vs 30-31 unpipelined)
  add_tiled<float, 128, 128, 8, 8, 8, 4>(v);
  add_tiled<float, 64, 64, 8, 4, 4, 1>(v);
  add_space<GemmWarpFam<float>>(v);
  // Double: 4 x 4 thread tiles (32 accumulator registers); the pipelined one first (the built-in fallback).
  add_tiled<double, 64, 64, 8, 4, 4, 2, 2>(v);
  add_tiled<double, 64, 64, 8, 4, 4, 2>(v);
  add_space<GemmWarpFam<double>>(v);
}

}  // namespace reg
}  // namespace bok
