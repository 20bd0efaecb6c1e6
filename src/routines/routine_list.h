/* Expands abi/routines.def: define BO_ENTRY(p, P, name, NAME, T) (one routine in one precision, either interface;
 * T is float, double, bo_cfloat or bo_cdouble, the C++ complex types of abi/blas_types.h),
 * optionally BO_BLAS_ENTRY / BO_LAPACK_ENTRY (the same, for the routines of one interface only) and BO_KIND(name,
 * NAME) (one routine, all precisions), then include this file. Plain C preprocessor (the version script is made from
 * it). */
#ifndef BO_KIND
#define BO_KIND(name, NAME)
#define BO_KIND_DEFAULTED_
#endif
#ifndef BO_ENTRY
#define BO_ENTRY(p, P, name, NAME, T)
#define BO_ENTRY_DEFAULTED_
#endif
#ifndef BO_BLAS_ENTRY
#define BO_BLAS_ENTRY(p, P, name, NAME, T)
#define BO_BLAS_ENTRY_DEFAULTED_
#endif
#ifndef BO_LAPACK_ENTRY
#define BO_LAPACK_ENTRY(p, P, name, NAME, T)
#define BO_LAPACK_ENTRY_DEFAULTED_
#endif
#define BO_PRECISIONS_SD(E, name, NAME) E(s, S, name, NAME, float) E(d, D, name, NAME, double)
#define BO_PRECISIONS_CZ(E, name, NAME) E(c, C, name, NAME, bo_cfloat) E(z, Z, name, NAME, bo_cdouble)
#define BO_PRECISIONS_SDCZ(E, name, NAME) BO_PRECISIONS_SD(E, name, NAME) BO_PRECISIONS_CZ(E, name, NAME)
/* The norms: snrm2, dnrm2 and the complex scnrm2, dznrm2 (their precision written with two letters). */
#define BO_PRECISIONS_NRM2(E, name, NAME) \
  BO_PRECISIONS_SD(E, name, NAME) E(sc, SC, name, NAME, bo_cfloat) E(dz, DZ, name, NAME, bo_cdouble)
#define BO_ROUTINE(name, NAME, precisions) \
  BO_KIND(name, NAME)                      \
  BO_PRECISIONS_##precisions(BO_ENTRY, name, NAME) BO_PRECISIONS_##precisions(BO_BLAS_ENTRY, name, NAME)
#define BO_LAPACK(name, NAME, precisions) \
  BO_KIND(name, NAME)                     \
  BO_PRECISIONS_##precisions(BO_ENTRY, name, NAME) BO_PRECISIONS_##precisions(BO_LAPACK_ENTRY, name, NAME)
#include "../../abi/routines.def"
#undef BO_ROUTINE
#undef BO_LAPACK
#undef BO_PRECISIONS_SD
#undef BO_PRECISIONS_CZ
#undef BO_PRECISIONS_SDCZ
#undef BO_PRECISIONS_NRM2
#ifdef BO_KIND_DEFAULTED_
#undef BO_KIND
#undef BO_KIND_DEFAULTED_
#endif
#ifdef BO_ENTRY_DEFAULTED_
#undef BO_ENTRY
#undef BO_ENTRY_DEFAULTED_
#endif
#ifdef BO_BLAS_ENTRY_DEFAULTED_
#undef BO_BLAS_ENTRY
#undef BO_BLAS_ENTRY_DEFAULTED_
#endif
#ifdef BO_LAPACK_ENTRY_DEFAULTED_
#undef BO_LAPACK_ENTRY
#undef BO_LAPACK_ENTRY_DEFAULTED_
#endif
