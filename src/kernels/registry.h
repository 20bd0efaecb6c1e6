/* The kernel registry: every compiled kernel configuration, by name, behind one C table.
 *
 * Kernels are C++ templates (the .cuh files of src/kernels) whose tuning parameters are template arguments; each
 * instantiation has a derived name (e.g. "sgemm_128x128_8_8x8_v4_nn"), a can_implement check, a
 * workspace size and a launcher that works on DEVICE pointers with BLAS semantics (leading dimensions,
 * increments of either sign, alpha/beta special cases). Configurations exist per element type: an entry's
 * routine (src/routines/routine_ids.h) names routine and precision (BO_R_SGEMM, BO_R_DGEMM, ...). The CUDA module
 * exports this table (blasoffload_cuda_registry_v5) so that tests and a tuner can enumerate and run every
 * configuration. Plain C so a test linking its own CUDA runtime can call it. */
#ifndef BLASOFFLOAD_KERNEL_REGISTRY_H
#define BLASOFFLOAD_KERNEL_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "routines/call.h"
#include "routines/routine_ids.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel's arguments are the normalised call (routines/call.h) with DEVICE pointers of the routine's element
 * type (nrm2: c = the device scalar the result goes to). */
typedef struct bo_call bo_kernel_args;

struct bo_kernel_entry {
  const char* name;   /* e.g. "sgemm_128x128_8_8x8_v4_p2_nn", "dgemm_..."; "cublas_sgemm" for the vendor entries */
  const char* family; /* the name without the transpose suffix: what tuned tables store */
  int routine;        /* enum bo_routine: routine and element type */
  int vendor;         /* 1: calls cuBLAS (opened at run time; can_implement is 0 when it is missing);
                         2: cuBLAS timed as the reference only, never chosen (snrm2: cuBLAS returns Inf, not
                            the reference BLAS's NaN, for a vector holding both) */
  /* 1 when this configuration computes these arguments correctly (option letters included). */
  int (*can_implement)(const struct bo_call*);
  /* Device scratch the launch needs (bytes, 256-byte aligned pointer expected); 0 if none. */
  size_t (*workspace_bytes)(const struct bo_call*);
  /* Enqueue on a cudaStream_t; returns a cudaError_t (0 = success of the enqueue). */
  int (*launch)(const struct bo_call*, void* workspace, void* stream);
};

/* Selection policies for select_ex. */
enum bo_select_policy {
  BO_SELECT_TUNED = 0,   /* the tuned table's choice for the nearest tile (may be cuBLAS), else built-in */
  BO_SELECT_OWN = 1,     /* the tuned table's best own configuration, else built-in */
  BO_SELECT_BUILTIN = 2  /* the built-in defaults, ignoring any table */
};

struct bo_kernel_registry {
  uint32_t version; /* 5 (the bo_call of src/routines/call.h with the LAPACK fields) */
  size_t count;
  const struct bo_kernel_entry* entries;
  /* The configuration the module uses for these arguments (index into entries), or -1. */
  int (*select)(int routine, const struct bo_call*);
  /* The same under an explicit policy (bo_select_policy). O(log grid), allocation-free. */
  int (*select_ex)(int routine, const struct bo_call*, int policy);
  /* One line saying which tuned table is in use and why (or that the built-in defaults are); valid after
   * the module's init(). */
  const char* (*tuned_params_info)(void);
  /* "cuBLAS 13.0.2 (path)" or why cuBLAS is not available as a candidate. */
  const char* (*vendor_info)(void);
};

typedef const struct bo_kernel_registry* (*bo_kernel_registry_fn)(void);
#define BO_KERNEL_REGISTRY_ENTRY "blasoffload_cuda_registry_v5"

#ifdef __cplusplus
}
#endif

#endif
