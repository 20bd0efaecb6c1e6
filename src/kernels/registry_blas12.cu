// Registry entries of nrm2 and gemv (s and d): the hand-written fallbacks and the tuning spaces' compiled points.
#include "kernels/gemv.cuh"
#include "kernels/nrm2.cuh"
#include "kernels/registry_build.h"

namespace bok {
namespace reg {
namespace {

// One family per element type: T, its space, the space's verdict and the routine id.
template <class T>
struct Nrm2Fam {
  static constexpr auto space() { return std::is_same_v<T, float> ? space::kSnrm2 : space::kDnrm2; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space().point(int(I));
    constexpr auto verdict = std::is_same_v<T, float> ? space::snrm2_verdict(p) : space::dnrm2_verdict(p);
    if constexpr (verdict == space::Verdict::kCompiled)
      v.push_back(
          entry<Nrm2Entry, Nrm2OnePass<T, p[0], p[1], p[2]>>(std::is_same_v<T, float> ? BO_R_SNRM2 : BO_R_DNRM2));
  }
};
template <class T>
struct GemvNFam {
  static constexpr auto space() { return std::is_same_v<T, float> ? space::kSgemvN : space::kDgemvN; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space().point(int(I));
    constexpr auto verdict = std::is_same_v<T, float> ? space::sgemv_n_verdict(p) : space::dgemv_n_verdict(p);
    if constexpr (verdict == space::Verdict::kCompiled)
      v.push_back(
          entry<GemvEntry, GemvN<T, p[0], p[1], p[2], p[3]>>(std::is_same_v<T, float> ? BO_R_SGEMV : BO_R_DGEMV));
  }
};
template <class T>
struct GemvTFam {
  static constexpr auto space() { return std::is_same_v<T, float> ? space::kSgemvT : space::kDgemvT; }
  template <size_t I>
  static void add(std::vector<bo_kernel_entry>& v) {
    constexpr auto p = space().point(int(I));
    constexpr auto verdict = std::is_same_v<T, float> ? space::sgemv_t_verdict(p) : space::dgemv_t_verdict(p);
    if constexpr (verdict == space::Verdict::kCompiled)
      v.push_back(entry<GemvEntry, GemvTV<T, p[0], p[1]>>(std::is_same_v<T, float> ? BO_R_SGEMV : BO_R_DGEMV));
  }
};

}  // namespace

void add_nrm2(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<Nrm2Entry, Nrm2<float, 256, 4, 4>>(BO_R_SNRM2));  // two launches; the one-pass family below
  add_space<Nrm2Fam<float>>(v);
  v.push_back(entry<Nrm2Entry, Nrm2<double, 256, 4, 2>>(BO_R_DNRM2));
  add_space<Nrm2Fam<double>>(v);
}
void add_gemv(std::vector<bo_kernel_entry>& v) {
  add_space<GemvNFam<float>>(v);
  v.push_back(entry<GemvEntry, GemvT<float, 8, 4>>(BO_R_SGEMV));  // scalar loads
  v.push_back(entry<GemvEntry, GemvT<float, 4, 8>>(BO_R_SGEMV));
  add_space<GemvTFam<float>>(v);
  add_space<GemvNFam<double>>(v);
  v.push_back(entry<GemvEntry, GemvT<double, 8, 4>>(BO_R_DGEMV));  // scalar loads
  add_space<GemvTFam<double>>(v);
}

}  // namespace reg
}  // namespace bok
