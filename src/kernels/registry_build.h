// Internal to the registry: the adaptors from each kernel template's own signature to the C entry table,
// and the compile-time walk over a tuning space (kernels/spaces.h) that instantiates its compiled points.
// The registry is split over several .cu files (registry_*.cu) so that a 2-core build compiles them in
// parallel.
#pragma once
#include <memory>
#include <string>
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


template <class K>
struct Nrm2Entry {
  static int can(const Args* a) { return K::can_implement(a->n, a->incx); }
  static size_t ws(const Args* a) { return K::workspace(a->n); }
  static int launch(const Args* a, void* w, void* s) { return K::launch(a->n, a->b, a->incx, a->c, w, S(s)); }
};
template <class K>
struct GemvEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->m, a->n) && a->incx != 0 && a->incy != 0; }
  static size_t ws(const Args* a) { return K::workspace(a->m, a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->m, a->n, a->alpha, a->a, a->lda, a->b, a->incx, a->beta, a->c, a->incy, w, S(s));
  }
};
template <class K>
struct TrsvEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->opb, a->opc, a->n) && a->incx != 0; }
  static size_t ws(const Args* a) { return K::workspace(a->n); }
  static int launch(const Args* a, void* w, void* s) {
    return K::launch(a->opa, a->opb, a->opc, a->n, a->a, a->lda, a->c, a->incx, w, S(s));
  }
};
template <class K>
struct TrsvAlignedEntry : TrsvEntry<K> {
  static int can(const Args* a) { return K::can_implement(a->opa, a->opb, a->opc, a->n, a->a, a->lda) && a->incx != 0; }
};
template <class K>
struct GemmWarpEntry {
  static int can(const Args* a) {
    return K::can_implement(a->opa, a->opb, a->m, a->n, a->k, a->a, a->lda, a->b, a->ldb, a->c, a->ldc);
  }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->m, a->n, a->k, a->alpha, a->a, a->lda, a->b, a->ldb, a->beta, a->c, a->ldc, S(s));
  }
};
template <class K>
struct GemmEntry {
  static int can(const Args* a) { return K::can_implement(a->opa, a->opb, a->m, a->n, a->k); }
  static size_t ws(const Args*) { return 0; }
  static int launch(const Args* a, void*, void* s) {
    return K::launch(a->m, a->n, a->k, a->alpha, a->a, a->lda, a->b, a->ldb, a->beta, a->c, a->ldc, S(s));
  }
};

// cuBLAS as a candidate: the tuner times it like ours; a table that picks it makes the module call it.
struct VendorEntry {
  static int can(const Args* a) {
    (void)a;
    return vendor::cublas_available();
  }
  static size_t ws(const Args*) { return 0; }
  static int nrm2(const Args* a, void*, void* s) { return vendor::cublas_snrm2(a->n, a->b, a->incx, a->c, S(s)); }
  static int gemv(const Args* a, void*, void* s) {
    return vendor::cublas_sgemv(a->opa, a->m, a->n, a->alpha, a->a, a->lda, a->b, a->incx, a->beta, a->c, a->incy,
                                S(s));
  }
  static int trsv(const Args* a, void*, void* s) {
    return vendor::cublas_strsv(a->opa, a->opb, a->opc, a->n, a->a, a->lda, a->c, a->incx, S(s));
  }
  static int gemm(const Args* a, void*, void* s) {
    return vendor::cublas_sgemm(a->opa, a->opb, a->m, a->n, a->k, a->alpha, a->a, a->lda, a->b, a->ldb, a->beta,
                                a->c, a->ldc, S(s));
  }
};

// Names live for the process (entries hold c_str()).
const char* keep(std::string s);
// "sgemm_..._nn" -> "sgemm_...": the family a tuned table names.
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
void add_snrm2(std::vector<bo_kernel_entry>& v);
void add_sgemv(std::vector<bo_kernel_entry>& v);
void add_strsv(std::vector<bo_kernel_entry>& v);
void add_sgemm(std::vector<bo_kernel_entry>& v);
void add_level3(std::vector<bo_kernel_entry>& v);  // strsm, ssyrk

}  // namespace reg
}  // namespace bok
