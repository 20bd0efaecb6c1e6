/* Expands abi/routines.def: define BO_ENTRY(p, P, name, NAME, T) (one routine in one precision) and, optionally,
 * BO_KIND(name, NAME) (one routine, all precisions), then include this file. Plain C preprocessor (the version
 * script is made from it). */
#ifndef BO_KIND
#define BO_KIND(name, NAME)
#define BO_KIND_DEFAULTED_
#endif
#ifndef BO_ENTRY
#define BO_ENTRY(p, P, name, NAME, T)
#define BO_ENTRY_DEFAULTED_
#endif
#define BO_PRECISIONS_SD(name, NAME) BO_ENTRY(s, S, name, NAME, float) BO_ENTRY(d, D, name, NAME, double)
#define BO_ROUTINE(name, NAME, precisions) BO_KIND(name, NAME) BO_PRECISIONS_##precisions(name, NAME)
#include "../../abi/routines.def"
#undef BO_ROUTINE
#undef BO_PRECISIONS_SD
#ifdef BO_KIND_DEFAULTED_
#undef BO_KIND
#undef BO_KIND_DEFAULTED_
#endif
#ifdef BO_ENTRY_DEFAULTED_
#undef BO_ENTRY
#undef BO_ENTRY_DEFAULTED_
#endif
