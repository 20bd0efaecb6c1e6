// Registry entries of nrm2 and gemv (s and d): the hand-written fallbacks and the tuning spaces' compiled points; and
// scnrm2/dznrm2 on the real nrm2 kernels.
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

// The norm of a complex vector is the real norm of its 2n parts. Contiguous (incx = 1): one real vector of 2n elements.
// Strided: the real parts' norm and the imaginary parts' (each a real vector of stride 2 incx), then their hypotenuse.
// The real kernels carry the reference's answer for Inf and NaN (NaN wins, which cuBLAS's scnrm2 does not give), and
// the hypotenuse keeps it: a NaN part gives NaN, else an infinite part gives Inf.
template <class R>
__global__ void hypot_of_parts(const R* parts, R* result) {
  const R a = parts[0], b = parts[1];
  *result = isnan(a) || isnan(b) ? a + b : hypot(a, b);
}
template <class K>
struct ComplexNrm2Entry {
  using R = ElemT<K>;
  static size_t kernel_ws(const Args* a) { return (K::workspace(a->n) + 255) / 256 * 256; }
  static int can(const Args* a) { return a->incx >= 1 && K::can_implement(2 * a->n, 1); }
  static size_t ws(const Args* a) { return a->incx == 1 ? K::workspace(2 * a->n) : kernel_ws(a) + 2 * sizeof(R); }
  static int launch(const Args* a, void* w, void* s) {
    const R* x = cp<R>(a->b);
    if (a->incx == 1) return K::launch(2 * a->n, x, 1, mp<R>(a->c), w, S(s));
    // The two passes share the kernel's workspace: they run one after the other on the stream.
    R* parts = reinterpret_cast<R*>(static_cast<char*>(w) + kernel_ws(a));
    cudaError_t e = K::launch(a->n, x, 2 * a->incx, parts, w, S(s));
    if (!e) e = K::launch(a->n, x + 1, 2 * a->incx, parts + 1, w, S(s));
    if (e) return e;
    hypot_of_parts<R><<<1, 1, 0, S(s)>>>(parts, mp<R>(a->c));
    return cudaGetLastError();
  }
};
template <class K>
bo_kernel_entry complex_nrm2_entry(int routine) {
  const std::string name = std::string(bo_routine_name(routine)) + "_on_" + K::name();
  return {keep(name),
          keep(name),
          routine,
          0,
          &ComplexNrm2Entry<K>::can,
          &ComplexNrm2Entry<K>::ws,
          &ComplexNrm2Entry<K>::launch};
}

}  // namespace

void add_nrm2(std::vector<bo_kernel_entry>& v) {
  v.push_back(entry<Nrm2Entry, Nrm2<float, 256, 4, 4>>(BO_R_SNRM2));  // two launches; the one-pass family below
  add_space<Nrm2Fam<float>>(v);
  v.push_back(entry<Nrm2Entry, Nrm2<double, 256, 4, 2>>(BO_R_DNRM2));
  add_space<Nrm2Fam<double>>(v);
  // The complex norms on the real defaults (the first of each is the built-in choice).
  v.push_back(complex_nrm2_entry<Nrm2OnePass<float, 256, 4, 4>>(BO_R_SCNRM2));
  v.push_back(complex_nrm2_entry<Nrm2<float, 256, 4, 4>>(BO_R_SCNRM2));
  v.push_back(complex_nrm2_entry<Nrm2OnePass<double, 256, 4, 2>>(BO_R_DZNRM2));
  v.push_back(complex_nrm2_entry<Nrm2<double, 256, 4, 2>>(BO_R_DZNRM2));
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
