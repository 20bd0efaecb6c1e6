/* Expands abi/routines.def: define BO_ENTRY(p, P, name, NAME, T) (one routine in one precision, either interface),
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
