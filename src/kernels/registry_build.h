// Internal to the registry: the adaptors from each kernel template's own signature to the C entry table,
// and the compile-time walk over a tuning space (kernels/spaces.h) that instantiates its compiled points.
// The registry is split over several .cu files (registry_*.cu) so that a 2-core build compiles them in
// parallel.
#pragma once
#include <complex>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common.cuh"
#include "kernels/registry.h"
#include "kernels/spaces.h"
#include "kernels/vendor_cublas.h"

namespace bok {
namespace reg {

using Args = bo_kernel_args;
inline cudaStream_t S(void* s) { return static_cast<cudaStream_t>(s); }

// Element pointers of a call (the registry's arguments carry void pointers; the routine fixes the type).
template <class T>
inline const T* cp(const void* p) {
  return static_cast<const T*>(p);
}
template <class T>
inline T* mp(void* p) {
  return static_cast<T*>(p);
}

// A call's scalar as the element type takes it: complex ones carry their imaginary part (bo_call's alpha_i, beta_i).
template <class T>
inline T scalar(double re, double im) {
  if constexpr (std::is_same_v<T, bo_cfloat> || std::is_same_v<T, bo_cdouble>)
    return T(typename T::value_type(re), typename T::value_type(im));
  else
    return T(re);
}
// The real type of an element type (nrm2's result, herk's scalars).
template <class T>
struct RealOfT {
  using type = T;
};
template <class R>
struct RealOfT<std::complex<R>> {
  using type = R;
};

// The adaptors read the kernel's element type from K::Elem (float unless the kernel says otherwise).
template <class K, class = void>
struct ElemOf {
  using type = float;
};
template <class K>
struct ElemOf<K, std::void_t<typename K::Elem>> {
  using type = typename K::Elem;
};
template <class K>
using ElemT = typename ElemOf<K>::type;

template <class K>
struct Nrm2Entry {
  using T = ElemT<K>;
  static int can(const Args* a) { return K::can_implement(a->n, a->incx); }
  static size_t ws(const Args* a) { return K::workspace(a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->n, cp<T>(a->b), a->incx, mp<T>(a->c), w, S(s));
  }
};
template <class K>
struct GemvEntry {
  using T = ElemT<K>;
  static int can(const Args* a) { return K::can_implement(a->op[0], a->m, a->n) && a->incx != 0 && a->incy != 0; }
  static size_t ws(const Args* a) { return K::workspace(a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->m, a->n, T(a->alpha), cp<T>(a->a), a->lda, cp<T>(a->b), a->incx, T(a->beta), mp<T>(a->c),
                     a->incy, w, S(s));
  }
};
template <class K>
struct TrsvEntry {
  using T = ElemT<K>;
  static int can(const Args* a) { return K::can_implement(a->op[0], a->op[1], a->op[2], a->n) && a->incx != 0; }
  static size_t ws(const Args* a) { return K::workspace(a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->op[0], a->op[1], a->op[2], a->n, cp<T>(a->a), a->lda, mp<T>(a->c), a->incx, w, S(s));
  }
};
template <class K>
struct TrsvAlignedEntry : TrsvEntry<K> {
  using T = ElemT<K>;
  static int can(const Args* a) {
    return K::can_implement(a->op[0], a->op[1], a->op[2], a->n, cp<T>(a->a), a->lda) && a->incx != 0;
  }
};
template <class K>
struct GemmWarpEntry {
  using T = ElemT<K>;
  static int can(const Args* a) {
    return K::can_implement(a->op[0], a->op[1], a->m, a->n, a->k, cp<T>(a->a), a->lda, cp<T>(a->b), a->ldb, cp<T>(a->c),
                            a->ldc);
  }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->m, a->n, a->k, T(a->alpha), cp<T>(a->a), a->lda, cp<T>(a->b), a->ldb, T(a->beta), mp<T>(a->c),
                     a->ldc, S(s));
  }
};
template <class K>
struct GemmEntry {
  using T = ElemT<K>;
  static int can(const Args* a) { return K::can_implement(a->op[0], a->op[1], a->m, a->n, a->k); }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->m, a->n, a->k, T(a->alpha), cp<T>(a->a), a->lda, cp<T>(a->b), a->ldb, T(a->beta), mp<T>(a->c),
                     a->ldc, S(s));
  }
};

// cuBLAS as a candidate: the tuner times it like ours; a table that picks it makes the module call it. T is our
// element type (float, double, bo_cfloat, bo_cdouble).
template <class T>
struct VendorEntry {
  using R = typename RealOfT<T>::type;
  static constexpr bool kComplex = !std::is_same_v<T, R>;
  static int can(const Args* a) {
    (void)a;
    return kComplex ? vendor::cublas_complex_available() : vendor::cublas_available();
  }
  static size_t ws(const Args*) { return 0; }
  static T alpha(const Args* a) { return scalar<T>(a->alpha, a->alpha_i); }
  static T beta(const Args* a) { return scalar<T>(a->beta, a->beta_i); }
  static int nrm2(const Args* a, void*, void* s) {
    return vendor::cublas_nrm2(a->n, cp<T>(a->b), a->incx, mp<R>(a->c), S(s));
  }
  static int gemv(const Args* a, void*, void* s) {
    return vendor::cublas_gemv(a->op[0], a->m, a->n, alpha(a), cp<T>(a->a), a->lda, cp<T>(a->b), a->incx, beta(a),
                               mp<T>(a->c), a->incy, S(s));
  }
  static int trsv(const Args* a, void*, void* s) {
    return vendor::cublas_trsv(a->op[0], a->op[1], a->op[2], a->n, cp<T>(a->a), a->lda, mp<T>(a->c), a->incx, S(s));
  }
  static int gemm(const Args* a, void*, void* s) {
    return vendor::cublas_gemm(a->op[0], a->op[1], a->m, a->n, a->k, alpha(a), cp<T>(a->a), a->lda, cp<T>(a->b), a->ldb,
                               beta(a), mp<T>(a->c), a->ldc, S(s));
  }
  static int trsm(const Args* a, void*, void* s) {
    return vendor::cublas_trsm(a->op[0], a->op[1], a->op[2], a->op[3], a->m, a->n, alpha(a), cp<T>(a->a), a->lda,
                               mp<T>(a->c), a->ldc, S(s));
  }
  static int syrk(const Args* a, void*, void* s) {
    return vendor::cublas_syrk(a->op[0], a->op[1], a->n, a->k, alpha(a), cp<T>(a->a), a->lda, beta(a), mp<T>(a->c),
                               a->ldc, S(s));
  }
  static int herk(const Args* a, void*, void* s) {
    return vendor::cublas_herk(a->op[0], a->op[1], a->n, a->k, R(a->alpha), cp<T>(a->a), a->lda, R(a->beta),
                               mp<T>(a->c), a->ldc, S(s));
  }
};

// Names live for the process (entries hold c_str()).
const char* keep(std::string s);
// "sgemm_..._nn" -> "sgemm_..." (likewise dgemm): the family a tuned table names.
std::string strip_transposes(const std::string& name);

template <template <class> class E, class K>
bo_kernel_entry entry(int routine) {
  const std::string name = K::name();
  return {keep(name), keep(strip_transposes(name)), routine, 0, &E<K>::can, &E<K>::ws, &E<K>::launch};
}

// ---- The tuning spaces (kernels/spaces.h) instantiated point by point: exactly the compiled verdicts. ----
template <class Fam, size_t... I>
void add_space(std::vector<bo_kernel_entry>& v, std::index_sequence<I...>) {
  (Fam::template add<I>(v), ...);
}
template <class Fam>
void add_space(std::vector<bo_kernel_entry>& v) {
  add_space<Fam>(v, std::make_index_sequence<size_t(Fam::space().size())>{});
}

// Each file adds its routines' entries, hand-written fallbacks first.
void add_nrm2(std::vector<bo_kernel_entry>& v);
void add_gemv(std::vector<bo_kernel_entry>& v);
void add_trsv(std::vector<bo_kernel_entry>& v);
void add_gemm(std::vector<bo_kernel_entry>& v);
void add_level3(std::vector<bo_kernel_entry>& v);  // trsm, syrk

}  // namespace reg
}  // namespace bok
