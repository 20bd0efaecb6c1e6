/* The kernel registry: every compiled kernel configuration, by name, behind one C table.
 *
 * Kernels are C++ templates (the .cuh files of src/kernels) whose tuning parameters are template arguments; each
 * instantiation has a derived name (e.g. "sgemm_128x128_8_8x8_v4_nn"), a can_implement check, a
 * workspace size and a launcher that works on DEVICE pointers with BLAS semantics (leading dimensions,
 * increments of either sign, alpha/beta special cases). The CUDA module exports this table
 * (blasoffload_cuda_registry_v3) so that tests and a tuner can enumerate and run every configuration.
 * Plain C so a test linking its own CUDA runtime can call it. */
#ifndef BLASOFFLOAD_KERNEL_REGISTRY_H
#define BLASOFFLOAD_KERNEL_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bo_kernel_routine {
  BO_K_SNRM2 = 0,
  BO_K_SGEMV = 1,
  BO_K_STRSV = 2,
  BO_K_SGEMM = 3,
  BO_K_STRSM = 4,
  BO_K_SSYRK = 5
};

/* One argument block for all routines (device pointers; upper-case option letters).
 *   snrm2: n, b = x, incx (> 0), c = device float result
 *   sgemv: opa = trans, m, n, alpha, a/lda, b = x/incx, beta, c = y/incy
 *   strsv: opa = uplo, opb = trans, opc = diag, n, a/lda, c = x/incx (solved in place)
 *   sgemm: opa = transa, opb = transb, m, n, k, alpha, a/lda, b/ldb, beta, c/ldc
 *   strsm: opa = side, opb = uplo, opc = transa, opd = diag, m, n, alpha (!= 0), a/lda, c = B/ldc (solved in place)
 *   ssyrk: opa = uplo, opb = trans, n, k, alpha, a/lda, beta, c/ldc (only the uplo triangle read and written) */
struct bo_kernel_args {
  char opa, opb, opc;
  int64_t m, n, k;
  float alpha, beta;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
  int64_t incx, incy;
  char opd; /* last, so that the older routines' aggregate initialisers stay valid */
};

struct bo_kernel_entry {
  const char* name;   /* e.g. "sgemm_128x128_8_8x8_v4_p2_nn"; "cublas_sgemm" for the vendor entries */
  const char* family; /* the name without the transpose suffix: what tuned tables store */
  int routine;        /* bo_kernel_routine */
  int vendor;         /* 1: calls cuBLAS (opened at run time; can_implement is 0 when it is missing);
                         2: cuBLAS timed as the reference only, never chosen (snrm2: cuBLAS returns Inf, not
                            the reference BLAS's NaN, for a vector holding both) */
  /* 1 when this configuration computes these arguments correctly (option letters included). */
  int (*can_implement)(const struct bo_kernel_args*);
  /* Device scratch the launch needs (bytes, 256-byte aligned pointer expected); 0 if none. */
  size_t (*workspace_bytes)(const struct bo_kernel_args*);
  /* Enqueue on a cudaStream_t; returns a cudaError_t (0 = success of the enqueue). */
  int (*launch)(const struct bo_kernel_args*, void* workspace, void* stream);
};

/* Selection policies for select_ex. */
enum bo_select_policy {
  BO_SELECT_TUNED = 0,   /* the tuned table's choice for the nearest tile (may be cuBLAS), else built-in */
  BO_SELECT_OWN = 1,     /* the tuned table's best own configuration, else built-in */
  BO_SELECT_BUILTIN = 2  /* the built-in defaults, ignoring any table */
};

struct bo_kernel_registry {
  uint32_t version; /* 3 */
  size_t count;
  const struct bo_kernel_entry* entries;
  /* The configuration the module uses for these arguments (index into entries), or -1. */
  int (*select)(int routine, const struct bo_kernel_args*);
  /* The same under an explicit policy (bo_select_policy). O(log grid), allocation-free. */
  int (*select_ex)(int routine, const struct bo_kernel_args*, int policy);
  /* One line saying which tuned table is in use and why (or that the built-in defaults are); valid after
   * the module's init(). */
  const char* (*tuned_params_info)(void);
  /* "cuBLAS 13.0.2 (path)" or why cuBLAS is not available as a candidate. */
  const char* (*vendor_info)(void);
};

typedef const struct bo_kernel_registry* (*bo_kernel_registry_fn)(void);
#define BO_KERNEL_REGISTRY_ENTRY "blasoffload_cuda_registry_v3"

#ifdef __cplusplus
}
#endif

#endif
