// The module's LAPACK path (see lapack_exec.h).
//
// One call: its host operands (the descriptor's extents: A a matrix or a triangle, B the right-hand sides) are staged
// into the calling thread's slot and uploaded in pieces while the staging threads pack the next; cuSOLVER (cuBLAS's
// trsm for trtrs) computes on the packed copies; INFO, the pivots and a scan for non-finite values in the outputs come
// back first. Only when every step succeeded, INFO is 0 and the outputs are finite are the outputs copied back and
// written to the program's memory, element-exactly (a triangle's other half and the bytes between rows untouched).
// Otherwise nothing was written and the CPU LAPACK computes the call: a singular or indefinite matrix gets the CPU's
// INFO and partial factors, bit for bit as without blasoffload. A factor with a device copy in the residency cache
// (a solve with factors used before, unchanged) is not moved again.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

#include "kernels/vendor_cublas.h"
#include "kernels/vendor_cusolver.h"
#include "offload/module/call_plan.h"
#include "offload/module/device.h"
#include "offload/module/lapack_common.cuh"
#include "offload/module/lapack_decomp_exec.h"
#include "offload/module/lapack_exec.h"
#include "offload/module/lapack_mg.h"
#include "offload/module/qr_mg.h"
#include "offload/module/resident_copies.h"
#include "offload/module/ring_transfer.h"
#include "offload/module/staged_seen.h"
#include "offload/module/staging.h"  // packed_elements
#include "routines/all.h"

namespace bom {
namespace {

using bo::routines::Operand;

// in_place: A (and B) are device memory of the module's GPU (lapack_in_place): nothing moves, the factorization and
// the solve overwrite them, and the outputs' checks are made as for host operands.
template <class T>
int run(const bo_call& c, bool in_place) {
  const int es = int(sizeof(T));
  const bo_routine_kind kind = bo_routine_kind_of(c.routine);
  const char* name = bo_routine_name(c.routine);
  Operand ops[bo::routines::kMaxOperands];
  const int nops = bo::routines::operands(c, ops);
  const Operand& oa = ops[0];
  const Operand* ob = nops > 1 ? &ops[1] : nullptr;
  // cuSOLVER's 32-bit interface: every packed operand must be indexable by int.
  if (!fits_int(packed_elements(oa)) || (ob && !fits_int(packed_elements(*ob)))) return BO_CUDA_UNSUPPORTED;
  // LAPACK's entry points take host memory (pointers of a CUDA-aware program are left to the CPU LAPACK, as without
  // blasoffload).
  const bool device_ops = on_device(c.a) || (c.c && on_device(c.c));
  if (device_ops != in_place || (in_place && ob && !on_device(c.c))) return BO_CUDA_UNSUPPORTED;
  const bool factor = kind == BO_KIND_GETRF || kind == BO_KIND_GESV || kind == BO_KIND_POTRF || kind == BO_KIND_POSV;
  const bool lu = kind == BO_KIND_GETRF || kind == BO_KIND_GESV || kind == BO_KIND_GETRS;
  constexpr bool kComplex = bo::routines::kIsComplex<T>;
  if (kind == BO_KIND_TRTRS) {
    // The reference's singularity check (a zero on a non-unit diagonal), done where the matrix is: INFO is the CPU's.
    if (!(kComplex ? bok::vendor::cublas_complex_available() : bok::vendor::cublas_available()))
      return BO_CUDA_UNSUPPORTED;
    if (c.op[2] == 'N') {
      const T* a = static_cast<const T*>(c.a);
      for (int64_t i = 0; i < c.n; ++i)
        if (a[i + i * c.lda] == T(0)) return BO_CUDA_CPU_ANSWERS;
    }
  } else if (!(kComplex ? bok::vendor::cusolver_complex_available() : bok::vendor::cusolver_available())) {
    return BO_CUDA_UNSUPPORTED;
  }
  const int64_t npiv = kind == BO_KIND_GETRF ? std::min(c.m, c.n) : lu ? c.n : 0;

  CallScope cs(name);
  Slot& s = cs.slot();
  cudaStream_t st = s.stream;
  // A factor the program solves with again may have a device copy (residency.h): used in place, not moved.
  Residency* rc = factor || in_place ? nullptr : resident_copies(host(), device());
  Residency::Lease lease;
  struct Release {
    Residency* rc;
    Residency::Lease* l;
    ~Release() {
      if (rc) rc->release(*l);
    }
  } release{rc, &lease};

  const size_t a_elems = in_place ? 0 : size_t(packed_elements(oa));
  const size_t b_elems = ob && !in_place ? size_t(packed_elements(*ob)) : 0;
  const size_t ints = 4;  // INFO of the factorization, INFO of the solve, the non-finite flag, spare
  auto dev_bytes = [&](size_t work_elems) {
    return align256(size_t(es) * a_elems) + align256(size_t(es) * b_elems) + align256(sizeof(int) * size_t(npiv)) +
           align256(sizeof(int) * ints) + align256(size_t(es) * work_elems);
  };
  // Pinned memory: the transfer ring (ring_transfer.h), the pivots and INFO.
  const size_t piece = in_place ? 0 : std::max(ring_piece_bytes(oa, es), ob ? ring_piece_bytes(*ob, es) : 0);
  const size_t pin_bytes =
      size_t(kRingSlots) * piece + align256(sizeof(int) * size_t(npiv)) + align256(sizeof(int) * ints);
  if (cudaError_t e = reserve(s, dev_bytes(0), pin_bytes)) return cs.fail(e);
  st = s.stream;
  // The factorization's workspace, asked with the operand's device address (its size depends only on the shape).
  int64_t work = 0;
  {
    T* da = in_place ? static_cast<T*>(const_cast<void*>(c.a)) : reinterpret_cast<T*>(s.dev);
    int err = 0;
    const int64_t lda = in_place ? c.lda : std::max<int64_t>(oa.rows, 1);
    if (kind == BO_KIND_GETRF || kind == BO_KIND_GESV)
      work = bok::vendor::cusolver_getrf_work(c.m, c.n, da, lda, st, &err);
    else if (kind == BO_KIND_POTRF || kind == BO_KIND_POSV)
      work = bok::vendor::cusolver_potrf_work(c.op[0], c.n, da, lda, st, &err);
    if (err) return cs.fail(cudaError_t(err));
    if (cudaError_t e = reserve(s, dev_bytes(size_t(std::max<int64_t>(work, 1))), pin_bytes)) return cs.fail(e);
    st = s.stream;
  }
  Carver dv{s.dev}, pv{s.pin};
  T* da = reinterpret_cast<T*>(dv.take(size_t(es) * a_elems));
  T* db = reinterpret_cast<T*>(dv.take(size_t(es) * b_elems));
  if (in_place) da = static_cast<T*>(const_cast<void*>(c.a)), db = static_cast<T*>(c.c);
  int* dpiv = reinterpret_cast<int*>(dv.take(sizeof(int) * size_t(npiv)));
  int* dinfo = reinterpret_cast<int*>(dv.take(sizeof(int) * ints));
  T* dwork = reinterpret_cast<T*>(dv.take(size_t(es) * size_t(std::max<int64_t>(work, 1))));
  const Ring ring{pv.take(size_t(kRingSlots) * piece), piece, kRingSlots};
  int* ppiv = reinterpret_cast<int*>(pv.take(sizeof(int) * size_t(npiv)));
  int* pinfo = reinterpret_cast<int*>(pv.take(sizeof(int) * ints));

  cudaError_t e = cudaMemsetAsync(dinfo, 0, sizeof(int) * ints, st);
  // The factors' device copy, or A staged (packed: leading dimension rows).
  const T* a_in = da;
  int64_t lda_dev = in_place ? c.lda : std::max<int64_t>(oa.rows, 1);
  if (!e && rc) {
    lease =
        rc->acquire(resident_view(c.a, oa, es), Residency::Role::kInput, st, resident_call_use(), resident_may_copy());
    if (lease.dev) {
      a_in = reinterpret_cast<const T*>(lease.dev);
      lda_dev = oa.ld;
    }
  }
  // Only where every operand moved is a full matrix: a triangle's pieces shrink along it, and moved at 20 GB/s where
  // matrices moved at 30 on the lent H100 (the model's one staged rate is a matrix's, as the start-up measures it).
  const bool matrices =
      !in_place && (lease.dev || oa.shape == Operand::kMatrix) && (!ob || ob->shape == Operand::kMatrix);
  UploadClock clock(matrices ? double(es) * ((lease.dev ? 0.0 : oa.elements()) + (ob ? ob->elements() : 0.0)) : 0.0,
                    st);
  if (!e && !lease.dev && !in_place) e = ring_upload(ring, da, c.a, oa, es, st);
  if (!e && ob && !in_place) e = ring_upload(ring, db, c.c, *ob, es, st);
  if (!e) clock.uploaded();
  if (!e && kind == BO_KIND_GETRS) {
    copy_pivots_in(ppiv, c, npiv);
    e = cudaMemcpyAsync(dpiv, ppiv, sizeof(int) * size_t(npiv), cudaMemcpyHostToDevice, st);
  }
  // Non-finite inputs too: cuSOLVER 12's LU returned finite factors of a matrix holding a NaN on the lent H100, where
  // the CPU LAPACK's carry the NaN on.
  if (!e) e = scan(a_in, oa, lda_dev, dinfo + 2, st, kind == BO_KIND_TRTRS && c.op[2] == 'U');
  const int64_t n = c.n, nrhs = c.k, ldb = in_place ? c.ldc : std::max<int64_t>(c.n, 1);
  if (!e && ob) e = scan(db, *ob, ldb, dinfo + 2, st);
  auto ok = [](int r) { return cudaError_t(r); };
  if (!e) switch (kind) {
      case BO_KIND_GETRF:
        e = ok(bok::vendor::cusolver_getrf(c.m, c.n, da, lda_dev, dwork, dpiv, dinfo, st));
        break;
      case BO_KIND_GESV:
        e = ok(bok::vendor::cusolver_getrf(n, n, da, lda_dev, dwork, dpiv, dinfo, st));
        if (!e && nrhs > 0)
          e = ok(bok::vendor::cusolver_getrs('N', n, nrhs, da, lda_dev, dpiv, db, ldb, dinfo + 1, st));
        break;
      case BO_KIND_GETRS:
        e = ok(bok::vendor::cusolver_getrs(c.op[0], n, nrhs, a_in, lda_dev, dpiv, db, ldb, dinfo + 1, st));
        break;
      case BO_KIND_POTRF:
        e = ok(bok::vendor::cusolver_potrf(c.op[0], n, da, lda_dev, dwork, work, dinfo, st));
        break;
      case BO_KIND_POSV:
        e = ok(bok::vendor::cusolver_potrf(c.op[0], n, da, lda_dev, dwork, work, dinfo, st));
        if (!e && nrhs > 0) e = ok(bok::vendor::cusolver_potrs(c.op[0], n, nrhs, da, lda_dev, db, ldb, dinfo + 1, st));
        break;
      case BO_KIND_POTRS:
        e = ok(bok::vendor::cusolver_potrs(c.op[0], n, nrhs, a_in, lda_dev, db, ldb, dinfo + 1, st));
        break;
      case BO_KIND_TRTRS:
        e = ok(bok::vendor::cublas_trsm('L', c.op[0], c.op[1], c.op[2], n, nrhs, T(1), a_in, lda_dev, db, ldb, st));
        break;
      default:
        return BO_CUDA_UNSUPPORTED;
    }
  // Non-finite outputs: the CPU's answer (its NaN and Inf placement, its INFO) is the reference.
  if (!e && factor) e = scan(da, oa, lda_dev, dinfo + 2, st);
  if (!e && ob) e = scan(db, *ob, ldb, dinfo + 2, st);
  if (!e) e = cudaMemcpyAsync(pinfo, dinfo, sizeof(int) * ints, cudaMemcpyDeviceToHost, st);
  if (!e && npiv && kind != BO_KIND_GETRS)
    e = cudaMemcpyAsync(ppiv, dpiv, sizeof(int) * size_t(npiv), cudaMemcpyDeviceToHost, st);
  if (!e) e = cudaStreamSynchronize(st);
  if (e) return cs.fail(e);
  clock.synchronised();
  if (pinfo[0] < 0 || pinfo[1] < 0) return BO_CUDA_UNSUPPORTED;  // cuSOLVER refused an argument: the CPU's business
  if (pinfo[0] > 0 || pinfo[2] != 0) {
    log_line(BO_LOG_DEBUG, "%s n=%lld: the GPU found INFO = %d%s; the CPU LAPACK answers", name, (long long)c.n,
             pinfo[0], pinfo[2] ? " and non-finite values" : "");
    return BO_CUDA_CPU_ANSWERS;
  }
  // The outputs to the program's memory, piece by piece as they arrive. Past the first piece nothing can be handed to
  // the CPU LAPACK any more (its input is partly overwritten): a GPU that fails now ends the process, as a call on
  // device operands does.
  Residency* written = resident_copies(host(), device());
  auto back = [&](void* h, const void* d, const Operand& o) {
    bool touched = false;
    if (cudaError_t err = ring_download(ring, h, d, o, es, st, &touched)) {
      if (touched) write_back_failed(name, err);
      return err;
    }
    if (written) written->host_written(resident_view(h, o, es));
    return cudaSuccess;
  };
  if (factor && !in_place) e = back(const_cast<void*>(c.a), da, oa);
  if (!e && ob && !in_place) e = back(c.c, db, *ob);
  if (e) {
    if (factor && ob) write_back_failed(name, e);  // A is already the factors: B cannot be left to the CPU
    return cs.fail(e);
  }
  if (npiv && kind != BO_KIND_GETRS) copy_pivots_out(c, ppiv, npiv);
  set_info_zero(c);
  log_line(BO_LOG_DEBUG, "%s %.3s m=%lld n=%lld nrhs=%lld: on the GPU%s", name, c.op, (long long)c.m, (long long)c.n,
           (long long)c.k, lease.dev ? " (factors from their device copy)" : "");
  return BO_CUDA_OK;
}

}  // namespace

int lapack_call(const bo_call& c) {
  if (int g = gate()) return g;
  // Which engine LAPACK calls have, said once (the summary keeps it): opening cuSOLVER waits for the first call.
  static std::once_flag said;
  std::call_once(said, [] {
    const bool have = bok::vendor::cusolver_available();
    log_line(have ? BO_LOG_DEBUG : BO_LOG_SUMMARY, "%s", bok::vendor::cusolver_description());
  });
  if (is_decomp_kind(bo_routine_kind_of(c.routine))) {
    // A large QR over several GPUs, or one beyond the one-GPU path's 32-bit interface (qr_mg.h).
    if (int r = mg_qr_call(c); r != BO_CUDA_UNSUPPORTED) return r;
    return decomp_call(c);
  }
  // A large factorization over several GPUs, where the process has them (lapack_mg.h); else one GPU.
  if (int r = mg_factor_call(c); r != BO_CUDA_UNSUPPORTED) return r;
  return by_precision(c, [&](auto t) { return run<decltype(t)>(c, false); });
}

int lapack_in_place(const bo_call& c) {
  if (int g = gate()) return g;
  const bo_routine_kind kind = bo_routine_kind_of(c.routine);
  const bo_routine_kind real_kind = bo::routines::real_counterpart(kind);
  if (real_kind == BO_KIND_GEQRF || real_kind == BO_KIND_GELS) return decomp_in_place(c);
  if (kind != BO_KIND_GETRF && kind != BO_KIND_POTRF && kind != BO_KIND_GESV && kind != BO_KIND_POSV)
    return BO_CUDA_UNSUPPORTED;
  return by_precision(c, [&](auto t) { return run<decltype(t)>(c, true); });
}

}  // namespace bom
