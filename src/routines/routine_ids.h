/* The one routine numbering, generated from abi/routines.def: shared by the core, the CUDA module, the kernel
 * registry and the tuner (tuned tables store names, never these numbers, so the order may change freely). Plain C
 * so that either side of the module boundary, and tests with their own CUDA runtime, can use it. */
#ifndef BLASOFFLOAD_ROUTINE_IDS_H
#define BLASOFFLOAD_ROUTINE_IDS_H

#ifdef __cplusplus
extern "C" {
#endif

/* One value per routine and precision: BO_R_SGEMM, BO_R_DGEMM, ... */
enum bo_routine {
#define BO_ENTRY(p, P, name, NAME, T) BO_R_##P##NAME,
#include "routine_list.h"
#undef BO_ENTRY
  BO_R_COUNT
};

/* The routine without its precision: BO_KIND_GEMM, ... */
enum bo_routine_kind {
#define BO_KIND(name, NAME) BO_KIND_##NAME,
#include "routine_list.h"
#undef BO_KIND
  BO_KIND_COUNT
};

/* Element types, in the order of the precision letters s, d, c, z. The complex norms scnrm2 and dznrm2 name their
 * precision with two letters (the symbol list's SC and DZ): the same element types as c and z. */
enum bo_precision { BO_PREC_S = 0, BO_PREC_D = 1, BO_PREC_C = 2, BO_PREC_Z = 3, BO_PREC_COUNT };
enum { BO_PREC_SC = BO_PREC_C, BO_PREC_DZ = BO_PREC_Z };

static inline enum bo_routine_kind bo_routine_kind_of(int r) {
  static const unsigned char kKind[] = {
#define BO_ENTRY(p, P, name, NAME, T) BO_KIND_##NAME,
#include "routine_list.h"
#undef BO_ENTRY
  };
  return (enum bo_routine_kind)kKind[r];
}

static inline enum bo_precision bo_routine_precision(int r) {
  static const unsigned char kPrec[] = {
#define BO_ENTRY(p, P, name, NAME, T) BO_PREC_##P,
#include "routine_list.h"
#undef BO_ENTRY
  };
  return (enum bo_precision)kPrec[r];
}

/* Bytes of one element. */
static inline int bo_element_size(enum bo_precision p) {
  static const unsigned char kBytes[BO_PREC_COUNT] = {4, 8, 8, 16};
  return kBytes[p];
}

/* Complex elements (c, z). */
static inline int bo_is_complex(enum bo_precision p) { return p == BO_PREC_C || p == BO_PREC_Z; }

/* Bytes of one real number of the precision (a complex element holds two). */
static inline int bo_real_size(enum bo_precision p) { return p == BO_PREC_S || p == BO_PREC_C ? 4 : 8; }

/* The precision's letter as the policy's class names and the tuned tables use it: s, d, c, z. */
static inline char bo_precision_letter(enum bo_precision p) { return "sdcz"[p]; }

/* Lower-case name ("dgemm"). */
static inline const char* bo_routine_name(int r) {
  static const char* const kNames[] = {
#define BO_ENTRY(p, P, name, NAME, T) #p #name,
#include "routine_list.h"
#undef BO_ENTRY
  };
  return (r >= 0 && r < BO_R_COUNT) ? kNames[r] : "?";
}

/* The routine of a kind in a precision, or -1 where it is not built. */
static inline int bo_routine_id(enum bo_routine_kind k, enum bo_precision p) {
  for (int r = 0; r < BO_R_COUNT; ++r)
    if (bo_routine_kind_of(r) == k && bo_routine_precision(r) == p) return r;
  return -1;
}

#ifdef __cplusplus
}
#endif

#endif
