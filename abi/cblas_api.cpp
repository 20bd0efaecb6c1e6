// The exported CBLAS entry points: a valid call becomes the column-major Fortran call of its descriptor and is routed
// like the Fortran entry points; an invalid one goes unchanged to the CPU library's own CBLAS so that its error
// protocol (cblas_xerbla) applies. One template per routine kind maps the row-major layout; the exports of every
// precision are made from the same parameter lists, which the system <cblas.h> declarations check.
#include <complex>
#include <cstdint>

// The system header declares the std family's functions: in the ILP64 build with 64-bit integers.
#ifdef BLASOFFLOAD_ILP64
#define CBLAS_INT int64_t
#endif
#include <cblas.h>

#include "dispatch/run.h"
#include "routines/all.h"

using namespace blasoffload;
namespace br = bo::routines;

#define BO_EXPORT extern "C" __attribute__((visibility("default")))

// CBLAS passes complex scalars and arrays as void pointers (real ones as float/double values and pointers): BO_CS a
// scalar, BO_CIN an array read, BO_COUT an array written, for element type T.
template <class T>
struct CblasTypes {
  using Scalar = T;
  using In = const T*;
  using Out = T*;
};
template <class R>
struct CblasTypes<std::complex<R>> {
  using Scalar = const void*;
  using In = const void*;
  using Out = void*;
};
#define BO_CS(T) typename CblasTypes<T>::Scalar
#define BO_CIN(T) typename CblasTypes<T>::In
#define BO_COUT(T) typename CblasTypes<T>::Out

// Each kind's CBLAS parameter list, written once: the template below and the exports of every precision are made
// from it.
#define BO_CBLAS_GEMM_RESULT(T) void
#define BO_CBLAS_GEMM_PARAMS(T, I)                                                                              \
  (const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb, const I m, const I n, \
   const I k, const BO_CS(T) alpha, BO_CIN(T) a, const I lda, BO_CIN(T) b, const I ldb, const BO_CS(T) beta,    \
   BO_COUT(T) c, const I ldc)
#define BO_CBLAS_GEMM_ARGS (layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

#define BO_CBLAS_GEMV_RESULT(T) void
#define BO_CBLAS_GEMV_PARAMS(T, I)                                                                                  \
  (const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const I m, const I n, const BO_CS(T) alpha, BO_CIN(T) a, \
   const I lda, BO_CIN(T) x, const I incx, const BO_CS(T) beta, BO_COUT(T) y, const I incy)
#define BO_CBLAS_GEMV_ARGS (layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)

#define BO_CBLAS_TRSV_RESULT(T) void
#define BO_CBLAS_TRSV_PARAMS(T, I)                                                                                  \
  (const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const I n, \
   BO_CIN(T) a, const I lda, BO_COUT(T) x, const I incx)
#define BO_CBLAS_TRSV_ARGS (layout, uplo, trans, diag, n, a, lda, x, incx)

#define BO_CBLAS_NRM2_RESULT(T) br::RealOf<T>
#define BO_CBLAS_NRM2_PARAMS(T, I) (const I n, BO_CIN(T) x, const I incx)
#define BO_CBLAS_NRM2_ARGS (n, x, incx)

#define BO_CBLAS_TRSM_RESULT(T) void
#define BO_CBLAS_TRSM_PARAMS(T, I)                                                                            \
  (const CBLAS_LAYOUT layout, const CBLAS_SIDE side, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,     \
   const CBLAS_DIAG diag, const I m, const I n, const BO_CS(T) alpha, BO_CIN(T) a, const I lda, BO_COUT(T) b, \
   const I ldb)
#define BO_CBLAS_TRSM_ARGS (layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb)

#define BO_CBLAS_SYRK_RESULT(T) void
#define BO_CBLAS_SYRK_PARAMS_OF(T, I, S)                                                                               \
  (const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans, const I n, const I k, const S alpha, \
   BO_CIN(T) a, const I lda, const S beta, BO_COUT(T) c, const I ldc)
#define BO_CBLAS_SYRK_PARAMS(T, I) BO_CBLAS_SYRK_PARAMS_OF(T, I, BO_CS(T))
#define BO_CBLAS_SYRK_ARGS (layout, uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
#define BO_CBLAS_HERK_RESULT(T) void
#define BO_CBLAS_HERK_PARAMS(T, I) BO_CBLAS_SYRK_PARAMS_OF(T, I, br::RealOf<T>)
#define BO_CBLAS_HERK_ARGS BO_CBLAS_SYRK_ARGS

namespace {

const char kN = 'N', kT = 'T', kC = 'C', kU = 'U', kL = 'L', kR = 'R';

// Option letter for a CBLAS transpose; nullptr if the enum value is invalid.
const char* trans_letter(CBLAS_TRANSPOSE t) {
  switch (t) {
    case CblasNoTrans:
      return &kN;
    case CblasTrans:
      return &kT;
    case CblasConjTrans:
      return &kC;
    default:
      return nullptr;
  }
}
// Row-major flips a transpose: A^T in row-major is A in column-major (conjugation is moot for reals). A complex
// row-major A^H is the conjugate of the column-major matrix, which no Fortran option letter says: nullptr, and the
// CPU CBLAS takes the call.
const char* flipped_trans_letter(CBLAS_TRANSPOSE t, bool complex) {
  switch (t) {
    case CblasNoTrans:
      return &kT;
    case CblasTrans:
      return &kN;
    case CblasConjTrans:
      return complex ? nullptr : &kN;
    default:
      return nullptr;
  }
}
// The scalar CBLAS passes (a value, or a pointer for complex elements) as the pointer the Fortran call takes.
template <class T>
const T* scalar_ptr(const T& v) {
  return &v;
}
template <class T>
const T* scalar_ptr(const void* v) {
  return static_cast<const T*>(v);
}
template <class T>
const T* in(const void* p) {
  return static_cast<const T*>(p);
}
template <class T>
T* out(void* p) {
  return static_cast<T*>(p);
}
const char* uplo_letter(CBLAS_UPLO u, bool flip) {
  if (u == CblasUpper) return flip ? &kL : &kU;
  if (u == CblasLower) return flip ? &kU : &kL;
  return nullptr;
}
// Row-major swaps the sides: column-major storage sees the row-major X = B op(A)^-1 as X^T = op(A^T)^-1 B^T, a
// left-side solve with the stored matrix A^T (whose triangle is the other one) and the same op.
const char* side_letter(CBLAS_SIDE s, bool flip) {
  if (s == CblasLeft) return flip ? &kR : &kL;
  if (s == CblasRight) return flip ? &kL : &kR;
  return nullptr;
}
const char* diag_letter(CBLAS_DIAG d) {
  if (d == CblasUnit) return &kU;
  if (d == CblasNonUnit) return &kN;
  return nullptr;
}

// The common path: `valid` says the layout and option enums were valid; the descriptor's checks decide the rest.
// `cpu_only`: valid enums that no column-major Fortran call expresses (a complex row-major ConjTrans gemv or trsv, the
// row-major transposes reference CBLAS accepts for complex syrk and herk): the CPU CBLAS computes them, counted as CPU
// calls once the descriptor's other checks passed on args holding 'N' in place of the option.
// Entered from a CBLAS entry, the scope is open, so the CPU CBLAS may call its Fortran routine back through us
// without being counted twice.
template <class D, Family F, class Cpu>
ResultOf<D> cblas_call(bool valid, const typename D::Args& args, Cpu&& cpu_cblas, bool cpu_only = false) {
  constexpr Layer layer = LayerOf<D>::value;
  const bool was_reentered = reentered(layer);
  CallScope scope(layer);
  ensure_initialized(F);
  if (valid) {
    bo_call unused;
    FamilyInt<F> info = 0;
    valid = D::prepare(args, &unused, &info) != br::Prep::kInvalid;
  }
  if (!valid || was_reentered || cpu_only) {
    void* fn = __atomic_load_n(&g_cpu.cblas[int(F)][D::kRoutine], __ATOMIC_ACQUIRE);
    if (!fn) fn = resolve_late_cblas(Routine(D::kRoutine), F);
    if (!fn) cpu_blas_missing(cblas_name(F, routine_name(Routine(D::kRoutine))).c_str());
    if (!valid || was_reentered) return cpu_cblas(fn);
    const CpuCallCount count(Routine(D::kRoutine));
    return cpu_cblas(fn);
  }
  return run<D, F>(args);
}

// Calls the CPU CBLAS entry `fn` with this function's own type and arguments.
#define BO_CPU_CBLAS(...) [&](void* fn) { return reinterpret_cast<Self>(fn)(__VA_ARGS__); }

template <class T, Family F>
BO_CBLAS_GEMM_RESULT(T)
gemm BO_CBLAS_GEMM_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&gemm<T, F>);
  const bool row = layout == CblasRowMajor;
  const char* ta = trans_letter(transa);
  const char* tb = trans_letter(transb);
  using D = br::Gemm<T, FamilyInt<F>>;
  // Row-major C = A B is column-major C^T = B^T A^T.
  const typename D::Args args =
      row ? typename D::Args{tb,
                             ta,
                             &n,
                             &m,
                             &k,
                             scalar_ptr<T>(alpha),
                             in<T>(b),
                             &ldb,
                             in<T>(a),
                             &lda,
                             scalar_ptr<T>(beta),
                             out<T>(c),
                             &ldc,
                             1,
                             1}
          : typename D::Args{
                ta,        tb,   &m, &n, &k, scalar_ptr<T>(alpha), in<T>(a), &lda, in<T>(b), &ldb, scalar_ptr<T>(beta),
                out<T>(c), &ldc, 1,  1};
  cblas_call<D, F>((row || layout == CblasColMajor) && ta && tb, args,
                   BO_CPU_CBLAS(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}

template <class T, Family F>
BO_CBLAS_GEMV_RESULT(T)
gemv BO_CBLAS_GEMV_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&gemv<T, F>);
  const bool row = layout == CblasRowMajor;
  const char* t = row ? flipped_trans_letter(trans, br::kIsComplex<T>) : trans_letter(trans);
  const bool cpu_only = row && !t && trans_letter(trans);
  using D = br::Gemv<T, FamilyInt<F>>;
  const typename D::Args args = row ? typename D::Args{t ? t : &kN, &n,       &m,    scalar_ptr<T>(alpha), in<T>(a),
                                                       &lda,        in<T>(x), &incx, scalar_ptr<T>(beta),  out<T>(y),
                                                       &incy,       1}
                                    : typename D::Args{t ? t : &kN, &m,       &n,    scalar_ptr<T>(alpha), in<T>(a),
                                                       &lda,        in<T>(x), &incx, scalar_ptr<T>(beta),  out<T>(y),
                                                       &incy,       1};
  cblas_call<D, F>((row || layout == CblasColMajor) && (t || cpu_only), args,
                   BO_CPU_CBLAS(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), cpu_only);
}

template <class T, Family F>
BO_CBLAS_TRSV_RESULT(T)
trsv BO_CBLAS_TRSV_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&trsv<T, F>);
  const bool row = layout == CblasRowMajor;
  const char* ul = uplo_letter(uplo, row);
  const char* t = row ? flipped_trans_letter(trans, br::kIsComplex<T>) : trans_letter(trans);
  const bool cpu_only = row && !t && trans_letter(trans);
  const char* d = diag_letter(diag);
  using D = br::Trsv<T, FamilyInt<F>>;
  cblas_call<D, F>(
      (row || layout == CblasColMajor) && ul && (t || cpu_only) && d,
      typename D::Args{ul ? ul : &kN, t ? t : &kN, d ? d : &kN, &n, in<T>(a), &lda, out<T>(x), &incx, 1, 1, 1},
      BO_CPU_CBLAS(layout, uplo, trans, diag, n, a, lda, x, incx), cpu_only);
}

template <class T, Family F>
BO_CBLAS_NRM2_RESULT(T)
nrm2 BO_CBLAS_NRM2_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&nrm2<T, F>);
  return cblas_call<br::Nrm2<T, FamilyInt<F>>, F>(true, typename br::Nrm2<T, FamilyInt<F>>::Args{&n, in<T>(x), &incx},
                                                  BO_CPU_CBLAS(n, x, incx));
}

template <class T, Family F>
BO_CBLAS_TRSM_RESULT(T)
trsm BO_CBLAS_TRSM_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&trsm<T, F>);
  const bool row = layout == CblasRowMajor;
  const char* sd = side_letter(side, row);
  const char* ul = uplo_letter(uplo, row);
  const char* ta = trans_letter(transa);  // kept (see side_letter)
  const char* d = diag_letter(diag);
  using D = br::Trsm<T, FamilyInt<F>>;
  const bool valid = (row || layout == CblasColMajor) && sd && ul && ta && d;
  if (!valid) sd = ul = ta = d = &kN;  // not read: cblas_call hands the call to the CPU CBLAS
  // Row-major B (m x n) is column-major B^T (n x m).
  const typename D::Args args =
      row ? typename D::Args{sd, ul, ta, d, &n, &m, scalar_ptr<T>(alpha), in<T>(a), &lda, out<T>(b), &ldb, 1, 1, 1, 1}
          : typename D::Args{sd, ul, ta, d, &m, &n, scalar_ptr<T>(alpha), in<T>(a), &lda, out<T>(b), &ldb, 1, 1, 1, 1};
  cblas_call<D, F>(valid, args, BO_CPU_CBLAS(layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb));
}

template <class T, Family F>
BO_CBLAS_SYRK_RESULT(T)
syrk BO_CBLAS_SYRK_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&syrk<T, F>);
  const bool row = layout == CblasRowMajor;
  // Row-major C's upper triangle is column-major C^T's lower one, and row-major A A^T is (A^T)^T A^T.
  const char* ul = uplo_letter(uplo, row);
  const char* t = row ? flipped_trans_letter(trans, br::kIsComplex<T>) : trans_letter(trans);
  const bool cpu_only = row && !t && trans_letter(trans);
  using D = br::Syrk<T, FamilyInt<F>>;
  cblas_call<D, F>((row || layout == CblasColMajor) && ul && (t || cpu_only),
                   typename D::Args{ul ? ul : &kN, t ? t : &kN, &n, &k, scalar_ptr<T>(alpha), in<T>(a), &lda,
                                    scalar_ptr<T>(beta), out<T>(c), &ldc, 1, 1},
                   BO_CPU_CBLAS(layout, uplo, trans, n, k, alpha, a, lda, beta, c, ldc), cpu_only);
}

template <class T, Family F>
BO_CBLAS_HERK_RESULT(T)
herk BO_CBLAS_HERK_PARAMS(T, FamilyInt<F>) {
  using Self = decltype(&herk<T, F>);
  const bool row = layout == CblasRowMajor;
  // As syrk, with the conjugate transpose: row-major A A^H is column-major (A^T)^H A^T.
  const char* ul = uplo_letter(uplo, row);
  const char* t = !row                      ? trans_letter(trans)
                  : trans == CblasNoTrans   ? &kC
                  : trans == CblasConjTrans ? &kN
                                            : nullptr;  // Trans: not herk's, which reference CBLAS computes
  const bool cpu_only = row && !t && trans_letter(trans);
  using D = br::Herk<T, FamilyInt<F>>;
  cblas_call<D, F>(
      (row || layout == CblasColMajor) && ul && (t || cpu_only),
      typename D::Args{ul ? ul : &kN, t ? t : &kN, &n, &k, &alpha, in<T>(a), &lda, &beta, out<T>(c), &ldc, 1, 1},
      BO_CPU_CBLAS(layout, uplo, trans, n, k, alpha, a, lda, beta, c, ldc), cpu_only);
}

}  // namespace

// One CBLAS function in one family: bo_cblas_scipy64_dgemm = gemm<double, Family::scipy64>, exported as
// scipy_cblas_dgemm64_ through an assembler label.
#define BO_CBLAS_FAMILY_ENTRY(fam, fp, fs, cp, cs, I, complete, p, P, name, NAME, T)                           \
  BO_DEFINE_EXPORT_AS(BO_CBLAS_##NAME##_RESULT(T), bo_cblas_##fam##_##p##name, BO_CBLAS_##NAME##_PARAMS(T, I), \
                      cp##p##name##cs) {                                                                       \
    return name<T, Family::fam> BO_CBLAS_##NAME##_ARGS;                                                        \
  }

// The system <cblas.h> declarations check the std family's types.
#define BO_BLAS_ENTRY(p, P, name, NAME, T)                \
  BO_FAMILIES(BO_CBLAS_FAMILY_ENTRY, p, P, name, NAME, T) \
  [[maybe_unused]] constexpr decltype(&cblas_##p##name) kChecked_##p##name = &bo_cblas_std_##p##name;
#include "routines/routine_list.h"
#undef BO_BLAS_ENTRY
