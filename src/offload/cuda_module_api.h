/* The C contract between the core library and the lazily dlopen'ed CUDA module (libblasoffload_cuda.so).
 *
 * The core never links CUDA: it dlopens the module on the first call routed to the GPU, looks up
 * blasoffload_cuda_module_v2 and talks to it only through this table. Arguments arrive already checked
 * (reference INFO rules passed), normalised (upper-case option letters) and past the reference quick
 * returns, so the module only computes. Plain C so either side may be built by any compiler. */
#ifndef BLASOFFLOAD_CUDA_MODULE_API_H
#define BLASOFFLOAD_CUDA_MODULE_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BO_CUDA_API_VERSION 2u

/* Results of a module call. Anything but BO_CUDA_OK means the output operand was NOT written and the
 * core must run the call on the CPU BLAS. */
enum bo_cuda_status {
  BO_CUDA_OK = 0,
  BO_CUDA_NO_DEVICE = 1,     /* no driver, no device, or initialisation failed */
  BO_CUDA_OUT_OF_MEMORY = 2, /* device or pinned memory exhausted */
  BO_CUDA_LAUNCH_FAILED = 3, /* a kernel or copy failed (possibly sticky) */
  BO_CUDA_UNSUPPORTED = 4,   /* this argument combination is left to the CPU by design */
  BO_CUDA_FORKED_CHILD = 5   /* we are in a fork() child of a CUDA process: CUDA must not be touched */
};

/* Routine codes of kernel_us (the order of abi/routines.def). */
enum bo_cuda_routine { BO_CUDA_SGEMM = 0, BO_CUDA_SGEMV = 1, BO_CUDA_STRSV = 2, BO_CUDA_SNRM2 = 3 };

/* What blasoffload-calibrate measures on the GPU side (see measure below). */
struct bo_cuda_rates {
  char gpu[128];          /* device name */
  double h2d_gbs;         /* host -> device DMA from pinned memory, large transfers */
  double d2h_gbs;         /* device -> host DMA into pinned memory */
  double pageable_gbs;    /* the module's staging copy of pageable data into pinned memory (and back) */
  double call_overhead_us; /* a tiny offloaded call end to end (one operand in, launch, synchronisation) */
  double copy_latency_us;  /* each further operand copied in or out (a tiny sgemm moves three in, one out) */
};

enum bo_log_level { BO_LOG_OFF = 0, BO_LOG_SUMMARY = 1, BO_LOG_CALLS = 2, BO_LOG_DEBUG = 3 };

/* What the core lends the module. */
struct bo_cuda_host_services {
  uint32_t version; /* BO_CUDA_API_VERSION */
  /* Configuration lookup: environment (secure_getenv semantics), then the config file. NULL if unset. */
  const char* (*config)(const char* key);
  /* Log a message at a level; the core filters by BLASOFFLOAD_LOG and prefixes "blasoffload: ". */
  void (*log)(int level, const char* message);
};

/* The module's entry table. Sizes are int64_t so an ILP64 core can use the same module. Matrices are
 * column-major, as in the Fortran BLAS. */
struct bo_cuda_module {
  uint32_t version; /* BO_CUDA_API_VERSION */
  const char* name; /* e.g. "blasoffload-cuda 0.1 (CUDA 13.0, sm_90)" */

  /* Called once, on the first call routed to the GPU. Returns BO_CUDA_OK when a device is usable. */
  int (*init)(const struct bo_cuda_host_services* host);

  int (*sgemm)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  int (*sgemv)(char trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x, int64_t incx,
               float beta, float* y, int64_t incy);
  int (*strsv)(char uplo, char trans, char diag, int64_t n, const float* a, int64_t lda, float* x, int64_t incx);
  int (*snrm2)(int64_t n, const float* x, int64_t incx, float* result);

  /* Predicted kernel time in microseconds, from the tuned table (the nearest tile's rate of the configuration
   * the call would use), for operands already in device memory: no transfers, no call overhead. op: sgemv
   * trans / strsv trans / sgemm transa; for snrm2 n is the length; m and k are ignored where the routine has
   * none. A negative result means no estimate (no tuned table for this kernel). O(1) after init, thread-safe,
   * allocation-free. */
  double (*kernel_us)(int routine, char op, int64_t m, int64_t n, int64_t k);
  /* 1 when p is device (or managed) memory the module would use in place, 0 for host memory. About a
   * microsecond: asked only for calls large enough for the GPU to matter, or when the program uses CUDA. */
  int (*is_device_pointer)(const void* p);
  /* blasoffload-calibrate: measures transfer rates and the call overhead on this GPU (a few seconds). */
  int (*measure)(struct bo_cuda_rates* out);

  /* Called in a fork() child: the module must never touch CUDA again in this process. */
  void (*forked_child)(void);
  /* Called once at process exit, before the core's summary; releases device resources safely. */
  void (*shutdown)(void);
};

/* The single symbol the module exports (its name carries the API version, so an old module is refused by
 * name, not misread). */
typedef const struct bo_cuda_module* (*bo_cuda_module_entry_fn)(void);
#define BO_CUDA_MODULE_ENTRY "blasoffload_cuda_module_v2"

#ifdef __cplusplus
}
#endif

#endif /* BLASOFFLOAD_CUDA_MODULE_API_H */
