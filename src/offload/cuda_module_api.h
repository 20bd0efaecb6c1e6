/* The C contract between the core library and the lazily dlopen'ed CUDA module (libblasoffload_cuda.so).
 *
 * The core never links CUDA: it dlopens the module on the first call routed to the GPU, looks up
 * blasoffload_cuda_module_v13 and talks to it only through this table. Calls arrive as one struct bo_call
 * (src/routines/call.h), already checked (reference INFO rules passed), normalised (upper-case option letters)
 * and past the reference quick returns, so the module only computes. Which operands a call reads and writes, and
 * how much work it is, come from the routine's descriptor (src/routines/), which both sides compile. Plain C so
 * either side may be built by any compiler. */
#ifndef BLASOFFLOAD_CUDA_MODULE_API_H
#define BLASOFFLOAD_CUDA_MODULE_API_H

#include <stdint.h>

#include "routines/call.h"
#include "routines/routine_ids.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BO_CUDA_API_VERSION 18u /* 18: bo_cuda_host_services.exiting */

/* Results of a module call. Anything but BO_CUDA_OK means the output operand was NOT written and the
 * core must run the call on the CPU BLAS. */
enum bo_cuda_status {
  BO_CUDA_OK = 0,
  BO_CUDA_NO_DEVICE = 1,     /* no driver, no device, or initialisation failed */
  BO_CUDA_OUT_OF_MEMORY = 2, /* device or pinned memory exhausted */
  BO_CUDA_LAUNCH_FAILED = 3, /* a kernel or copy failed (possibly sticky) */
  BO_CUDA_UNSUPPORTED = 4,   /* this argument combination is left to the CPU by design */
  BO_CUDA_FORKED_CHILD = 5,  /* we are in a fork() child of a CUDA process: CUDA must not be touched */
  BO_CUDA_CPU_ANSWERS = 6    /* LAPACK: the GPU found INFO > 0 (a singular or not positive definite matrix) or
                                non-finite results; the CPU LAPACK computes the call, so that INFO and the outputs are
                                exactly its own (not a failure) */
};

/* What blasoffload-calibrate measures on the GPU side (see measure below). */
struct bo_cuda_rates {
  char gpu[128];           /* device name */
  double h2d_gbs;          /* host -> device DMA from pinned memory, large transfers */
  double d2h_gbs;          /* device -> host DMA into pinned memory */
  double pageable_gbs;     /* pageable host memory <-> device through the module's staging pipeline (threaded
                              staging copies overlapped with the DMA): bytes in plus bytes out per second */
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
  /* Runs a normalised call on the CPU BLAS (the routine's own CPU entry point): the module computes the CPU share of
   * a hybrid gemm with it, and finishes on the CPU the tiles a failing GPU did not write back. */
  void (*cpu_call)(const struct bo_call* call);
  /* Work of the module's own threads beside the program starts (+1) or ends (-1): the core has the CPU BLAS run a
   * thread less meanwhile where its threads fill the CPUs (src/policy/lent_core.h). NULL: nobody to tell. */
  void (*want_core)(int delta);
  /* Nonzero once the program has begun to exit: init() then leaves to a first call what it would only have done
   * ahead of one (opening cuBLAS), since the program's exit waits for it. NULL: never. */
  int (*exiting)(void);
};

/* What the module's last gemm (either precision) on the calling thread did (blasoffload-calibrate, benchmarks, tests).
 * Times in milliseconds; the *_busy_ms are sums of CUDA-event intervals over all devices (an engine stage's busy time,
 * not its wall time), pack/unpack are host wall times of the staging copies. */
struct bo_gemm_stats {
  int path;    /* 0: direct (whole operands staged), 1: tiled pipeline */
  int devices; /* GPUs that took part */
  int64_t tile_m, tile_n, k_passes;
  int64_t tiles;                  /* C tiles computed on the GPU */
  int64_t tiles_cpu;              /* C tiles finished on the CPU after a GPU failure */
  int64_t panel_uploads;          /* A and B panels moved (each panel of A and B once when everything fits) */
  int64_t n_cpu_cols, m_cpu_rows; /* the hybrid CPU share: trailing columns (or rows) of C */
  int pinned_operands; /* operands (A, B, C) moved by DMA straight from registered host memory, without staging */
  double bytes_h2d, bytes_d2h;
  double wall_ms, cpu_part_ms, first_kernel_ms; /* first_kernel_ms: call start to the first tile's kernel start */
  double h2d_busy_ms, kernel_busy_ms, d2h_busy_ms, pack_ms, unpack_ms;
  double bytes_peer; /* panel bytes copied from another GPU instead of staged again (several GPUs sharing panels) */
};

/* The residency cache's sizes, shared by the module (offload/module/residency.h) and the policy, which asks about
 * operands of at least BO_RESIDENT_MIN_BYTES and, before the module is up, prices a copy as the module does before it
 * has measured one. */
#define BO_RESIDENT_MIN_BYTES (1 << 20)
#define BO_RESIDENT_COPY_NS_PER_BYTE 0.15

/* What the residency cache knows of a host operand (host_resident). */
struct bo_resident_info {
  int state;            /* 0: not cached (moved as usual); 1: a device copy exists; 2: a clean candidate: the module
                           makes a copy if the call runs on the GPU, and the same matrix was used `reuses` times
                           unchanged before (the policy shares the upload over them) */
  int64_t reuses;       /* state 2 */
  int64_t upload_bytes; /* bytes the call would move to the device copy (state 1: pages found written; 2: all) */
  double check_us;      /* state 1: the write-record scan before the use; 2: making the copy, its upload included,
                           once (estimates) */
};

/* A rectangle of rows x cols elements in host memory (leading dimension host_ld) and its place in device memory
 * (leading dimension dev_ld), for regions_copy. */
struct bo_region {
  void* host;
  int64_t host_ld;
  void* dev;
  int64_t dev_ld;
  int64_t rows, cols;
};

#define BO_SHARED_HANDLE_BYTES 64 /* a CUDA IPC memory handle */

/* The module's entry table. Sizes are int64_t so an ILP64 core can use the same module. Matrices are
 * column-major, as in the Fortran BLAS. */
struct bo_cuda_module {
  uint32_t version; /* BO_CUDA_API_VERSION */
  const char* name; /* e.g. "blasoffload-cuda 0.1 (CUDA 13.0, sm_90)" */

  /* Called once, on the first call routed to the GPU. Returns BO_CUDA_OK when a device is usable. */
  int (*init)(const struct bo_cuda_host_services* host);

  /* Runs one call (call.h) on the GPU: host operands staged or served from device copies, device operands in
   * place, outputs written back element-exactly only after everything succeeded. nrm2 writes its result to the
   * host scalar call->c. cpu_share (gemm only, else 0): the fraction of C the CPU BLAS computes at the same time
   * (host services' cpu_call; trailing columns, or trailing rows when m > n); 0 = all on the GPU. */
  int (*call)(const struct bo_call* call, double cpu_share);

  /* Predicted kernel time in microseconds, from the tuned table (the nearest tile's rate of the configuration
   * the call would use), for operands already in device memory: no transfers, no call overhead. Only the
   * routine, option letters and dimensions of the call are read. A negative result means no estimate (no tuned
   * table for this kernel). O(1) after init, thread-safe, allocation-free. */
  double (*kernel_us)(const struct bo_call* call);
  /* 1 when p is device (or managed) memory the module would use in place, 0 for host memory. About a
   * microsecond: asked only for calls large enough for the GPU to matter, or when the program uses CUDA. */
  int (*is_device_pointer)(const void* p);
  /* blasoffload-calibrate: measures transfer rates and the call overhead on this GPU (a few seconds). */
  int (*measure)(struct bo_cuda_rates* out);
  /* The link alone, as measure() does it but over tens of MiB (about a tenth of a second on the calling thread, whose
   * priority the staging threads it may start keep): gpu, h2d_gbs, d2h_gbs and pageable_gbs (staged through the
   * LAPACK path's ring); the call overhead and copy latency are left 0. The core asks for it at the start-up of a
   * process without a calibration of this GPU, so that its first run decides with this machine's link. */
  int (*measure_link)(struct bo_cuda_rates* out);
  /* 1 when [p, p + bytes) is host memory the module moves by DMA without staging copies (registered by the module
   * on an earlier call, or page-locked by the program); 2 when it is not yet but the module registers it the second
   * time an sgemm operand lies in that mapping (private anonymous memory whose changes it can track); 0 otherwise
   * (staged).
   * Never registers anything. A microsecond, plus a read of /proc/self/maps for a mapping not seen before. */
  int (*host_pinned)(const void* p, int64_t bytes);
  /* The residency cache's view of a host operand (rows x cols elements of elem_size bytes, leading dimension ld) of
   * the coming call.
   * first_of_call: 1 for the call's first operand asked about (all operands of one call count as one use of their
   * memory). Registers nothing, uploads nothing; may write-protect a few sample pages (residency.h). Returns 0. */
  int (*host_resident)(const void* p, int64_t rows, int64_t cols, int64_t ld, int elem_size, int first_of_call,
                       struct bo_resident_info* out);
  /* The calling thread's last gemm; 0 when there was one. */
  int (*last_gemm_stats)(struct bo_gemm_stats* out);
  /* Microseconds of the calling thread's last call() spent on one-time costs (offload/one_time_cost.h): growing the
   * module's device and pinned buffers, registering host memory, opening cuSOLVER or creating a handle, loading a
   * kernel at its first launch. The policy's predictions leave them out, so learning subtracts them from the call's
   * measured time. Costs the policy prices (making a residency copy) are not in it. */
  double (*last_one_time_us)(void);
  /* What a call staging `staged_bytes` through the generic path would spend, before it runs, growing the calling
   * thread's staging buffers (as much device and pinned memory), in microseconds: the bytes they would grow by at the
   * rates the module measured growing them (pinning costs about 0.4 ns a byte); 0 when they hold that much. The policy
   * passes the bytes its model moves (operands with device copies spared) for calls of the generic path (not the tiled
   * pipeline's, not LAPACK's: their rings are bounded) and amortises the answer like the start-up (docs/policy.md). */
  double (*growth_us)(double staged_bytes);
  /* The calling thread's next call() makes no device copy: its clean candidates (bo_resident_info state 2) are staged
   * as if the cache had none, their use still counted. The policy asks for it where staging the call is predicted
   * faster than making the copy with its share of the making (the copy has not paid yet). Cleared when call() returns
   * and by the next call's first host_resident question. */
  void (*stage_candidates)(void);
  /* The rate the program's own staged uploads of full matrices of 64 MiB or more reached (the LAPACK path's ring:
   * their bytes over the time from the first piece's packing to the last piece's arrival on the GPU), the median of
   * the last five, in GB/s; 0 with none. *samples: how many were timed so far. The core prices staged copies at it
   * where only the start-up's measure_link stood for the link. A mutex, no CUDA call. */
  double (*staged_gbs_seen)(int64_t* samples);
  /* The LAPACK path's solver library (cuSOLVER): 1 opened and usable, -1 unavailable, 0 not opened yet. With open
   * != 0 it is opened first when it was not (on the calling thread: loading the library and creating a handle, a few
   * hundred milliseconds once per process, what the first LAPACK call on the GPU would otherwise pay). */
  int (*solver)(int open);

  /* Called in a fork() child: the module must never touch CUDA again in this process. */
  void (*forked_child)(void);
  /* Called once at process exit, before the core's summary; releases device resources safely. */
  void (*shutdown)(void);

  /* Device memory several processes of one node use (the ScaLAPACK takeover, src/scalapack/device_copy.h), so that
   * each copies its own part of a matrix straight to the GPU that factors it. shared_alloc: `bytes` of zeroed memory
   * on this process's GPU, and the handle another process opens it with; shared_open: that memory in this process
   * (its own GPU may be another of the node's); shared_close: closes it (owner 0) or frees it (owner 1, once every
   * other process has closed it). BO_CUDA_OK or why not; nothing is left allocated on failure. */
  int (*shared_alloc)(int64_t bytes, void** dev, unsigned char handle[BO_SHARED_HANDLE_BYTES]);
  int (*shared_open)(const unsigned char handle[BO_SHARED_HANDLE_BYTES], void** dev);
  void (*shared_close)(void* dev, int owner);
  /* Copies `count` regions to (to_device 1) or from device memory through the calling thread's pinned ring, the
   * staging threads packing one piece while the DMA engine moves others. Returns when every byte has arrived. A
   * failure may leave the destination partly written. */
  int (*regions_copy)(const struct bo_region* regions, int64_t count, int elem_size, int to_device);
  /* A LAPACK call (getrf, potrf, gesv, posv) whose A (and B) are device memory of this process's GPU, computed there
   * in place; IPIV and INFO are host memory. BO_CUDA_OK (the factors, pivots and solution written, INFO = 0);
   * BO_CUDA_CPU_ANSWERS when the GPU found INFO > 0 or non-finite values; BO_CUDA_UNSUPPORTED for another routine or
   * size. Unlike call(), A and B may be overwritten whatever the result: the caller keeps its own copy. */
  int (*lapack_in_place)(const struct bo_call* call);
};

/* The single symbol the module exports (its name carries the API version, so an old module is refused by
 * name, not misread). */
typedef const struct bo_cuda_module* (*bo_cuda_module_entry_fn)(void);
#define BO_CUDA_MODULE_ENTRY "blasoffload_cuda_module_v13"

#ifdef __cplusplus
}
#endif

#endif /* BLASOFFLOAD_CUDA_MODULE_API_H */
