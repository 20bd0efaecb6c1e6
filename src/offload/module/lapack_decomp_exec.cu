// The module's LAPACK path, part 2 (see lapack_decomp_exec.h): QR (geqrf orgqr ormqr gels), the symmetric
// eigenproblem (syevd syev syevr), the SVD (gesvd gesdd) and the inverses (getri potri), in the four precisions (the
// complex ones as ungqr unmqr heevd heev heevr and the same names: each runs as its real counterpart's steps).
//
// As part 1 (lapack_exec.cu): the host operands are staged through the calling thread's ring into packed device
// images; cuSOLVER computes there; INFO, scans for non-finite values and the largest magnitudes come back first. Only
// when every step succeeded, INFO is 0, the outputs are finite and the matrix needs none of the scaling LAPACK's
// drivers apply to extreme magnitudes are the outputs written to the program's memory, element-exactly. Otherwise
// nothing was written and the CPU LAPACK computes the call (its INFO, its scaling, bit for bit as without us).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/vendor_cublas.h"
#include "kernels/vendor_cusolver.h"
#include "offload/module/call_plan.h"
#include "offload/module/lapack_common.cuh"
#include "offload/module/lapack_decomp_exec.h"
#include "offload/module/lapack_order.h"
#include "offload/module/lapack_svd_polar.h"
#include "offload/module/resident_copies.h"
#include "offload/module/ring_transfer.h"
#include "offload/module/staging.h"  // packed_elements, packed_ld
#include "routines/all.h"

namespace bom {
namespace {

namespace vendor = bok::vendor;

// The n x n identity (leading dimension n), the right-hand sides of getri's solve; R the real type, kParts of them an
// element (a complex one's imaginary part zero).
template <class R, int kParts>
__global__ void identity(R* a, int64_t n) {
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      for (int p = 0; p < kParts; ++p) a[(i + j * n) * kParts + p] = i == j && p == 0 ? R(1) : R(0);
}

// Sets *flag when a diagonal element of the n x n matrix is exactly zero (gels: R singular, INFO > 0 on the CPU).
template <class R, int kParts>
__global__ void zero_diagonal(const R* a, int64_t n, int64_t ld, int* flag) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    bool zero = true;
    for (int p = 0; p < kParts; ++p) zero &= a[(i + i * ld) * kParts + p] == R(0);
    if (zero) *flag = 1;
  }
}

// LAPACK's drivers scale a matrix whose largest magnitude lies outside [lo, hi] (and gels answers a zero A itself):
// the CPU's business. The bounds by routine, from dlamch's safe minimum and precision as each driver forms them
// (syevr's upper bound is the tightest of the eigenvalue drivers and stands for all three).
template <class T>
void scaling_bounds(bo_routine_kind kind, double* lo, double* hi) {
  const double safmin = double(std::numeric_limits<T>::min()), eps = double(std::numeric_limits<T>::epsilon());
  const double small = safmin / eps;
  switch (kind) {
    case BO_KIND_GELS:
      *lo = small, *hi = 1 / small;
      return;
    case BO_KIND_SYEVD:
    case BO_KIND_SYEV:
    case BO_KIND_SYEVR:
      *lo = std::sqrt(small), *hi = std::min(std::sqrt(1 / small), 1 / std::sqrt(std::sqrt(safmin)));
      return;
    case BO_KIND_GESVD:
    case BO_KIND_GESDD:
      *lo = std::sqrt(safmin) / eps, *hi = eps / std::sqrt(safmin);
      return;
    default:
      *lo = 0, *hi = std::numeric_limits<double>::infinity();
  }
}

// The host-side INFO checks of the inverses: a zero on the factor's diagonal is the CPU's (its INFO, its output).
template <class T>
bool zero_on_diagonal(const bo_call& c) {
  const T* a = static_cast<const T*>(c.a);
  for (int64_t i = 0; i < c.n; ++i)
    if (a[i + i * c.lda] == T(0)) return true;
  return false;
}

// ISUPPZ of syevr from the eigenvectors as written: each column's first and last nonzero row (1-based).
template <class I, class T>
void support(const bo_call& c) {
  const T* z = static_cast<const T*>(c.c);
  I* s = static_cast<I*>(c.ipiv);
  for (int64_t j = 0; j < c.n; ++j) {
    int64_t first = 0, last = -1;
    for (int64_t i = 0; i < c.n; ++i)
      if (z[i + j * c.ldc] != T(0)) {
        if (last < 0) first = i;
        last = i;
      }
    if (last < 0) first = last = 0;
    s[2 * j] = I(first + 1), s[2 * j + 1] = I(last + 1);
  }
}

// in_place (geqrf, gels: decomp_in_place): A, and gels's B, are device memory of the module's GPU, computed there in
// place with their own leading dimensions; TAU is host memory as usual.
template <class T>
int run(const bo_call& c, bool in_place) {
  using R = typename Parts<T>::Real;  // the eigenvalues', singular values' type
  constexpr int kParts = Parts<T>::kCount;
  const int es = int(sizeof(T));
  const bo_routine_kind kind = bo::routines::real_counterpart(bo_routine_kind_of(c.routine));
  const char* name = bo_routine_name(c.routine);
  Operand ops[bo::routines::kMaxOperands];
  const int nops = bo::routines::operands(c, ops);
  for (int i = 0; i < nops; ++i)
    if (!fits_int(packed_elements(ops[i])) || !fits_int(ops[i].rows) || !fits_int(ops[i].cols))
      return BO_CUDA_UNSUPPORTED;
  // Which operand slots (a, b, c, d) are device memory used in place.
  const bool in_place_slot[4] = {in_place, false, in_place && kind == BO_KIND_GELS, false};
  const void* slot_ptr[4] = {c.a, c.b, c.c, c.d};
  for (int i = 0; i < 4; ++i)  // LAPACK takes host memory: a CUDA program's is the CPU's
    if (slot_ptr[i] && on_device(slot_ptr[i]) != in_place_slot[i]) return BO_CUDA_UNSUPPORTED;
  if (in_place && (kind != BO_KIND_GEQRF && kind != BO_KIND_GELS)) return BO_CUDA_UNSUPPORTED;
  if (!vendor::cusolver_available()) return BO_CUDA_UNSUPPORTED;
  if (kind == BO_KIND_GELS && !vendor::cublas_available()) return BO_CUDA_UNSUPPORTED;
  if (kParts == 2 && !vendor::cusolver_complex_available()) return BO_CUDA_UNSUPPORTED;
  if ((kind == BO_KIND_GETRI || kind == BO_KIND_POTRI) && zero_on_diagonal<T>(c)) return BO_CUDA_CPU_ANSWERS;

  const int64_t m = c.m, n = c.n, k = std::min(c.m, c.n);
  const Operand& oa = ops[0];
  // Where each operand slot (a, b, c, d) has its operand in ops, or -1.
  int at[4] = {-1, -1, -1, -1};
  for (int i = 0; i < nops; ++i) at[ops[i].slot] = i;
  const bool svd = kind == BO_KIND_GESVD || kind == BO_KIND_GESDD;
  const bool wide = svd && m < n;  // the SVD of A^T: U and V^T trade places
  const char ju = c.op[0], jv = c.op[1];
  const char ct = kParts == 2 ? 'C' : 'T';  // gels's transposes: the conjugate one for complex
  // Device buffers (elements). A: the packed matrix (syevr: the eigenvector work matrix); B, C, D: the other slots'
  // operands; extras: gels's and getri's internal ones, the wide SVD's transposes.
  size_t e_a = in_place ? 0 : size_t(packed_elements(oa));
  if (kind == BO_KIND_SYEVR) e_a = size_t(n) * size_t(n);
  size_t e_slot[4] = {e_a, 0, 0, 0};
  for (int s = 1; s < 4; ++s)
    if (at[s] >= 0 && !in_place_slot[s]) e_slot[s] = size_t(packed_elements(ops[at[s]]));
  // An operand's leading dimension where the GPU has it: its packed image's, or its own in place.
  auto ld_of = [&](const Operand& o) { return in_place_slot[o.slot] ? o.ld : packed_ld(o); };
  size_t e_extra = 0, e_extra2 = 0;  // gels: TAU; getri: the identity; wide SVD: A^T and the transposed factors
  if (kind == BO_KIND_GELS) e_extra = size_t(n);
  if (kind == BO_KIND_GETRI) e_extra = size_t(n) * size_t(n);
  if (wide) {
    e_extra = size_t(m) * size_t(n);                   // A^T, n x m
    e_extra2 = size_t(n) * size_t(jv == 'A' ? n : m);  // U' of A^T: n x n or n x m
  }
  const size_t npiv = kind == BO_KIND_GETRI ? size_t(n) : 0;
  const size_t ints = 4;   // INFO, INFO of a second step, the non-finite flag, the zero-diagonal flag
  const size_t maxes = 2;  // the largest magnitudes of A and B (bits of doubles)
  auto dev_bytes = [&](size_t work) {
    size_t b = 0;
    for (size_t e : e_slot) b += align256(size_t(es) * e);
    return b + align256(size_t(es) * e_extra) + align256(size_t(es) * e_extra2) + align256(sizeof(int) * npiv) +
           align256(sizeof(int) * ints) + align256(sizeof(unsigned long long) * maxes) + align256(size_t(es) * work);
  };
  size_t piece = 0;
  for (int i = 0; i < nops; ++i) piece = std::max(piece, ring_piece_bytes(ops[i], es));
  const size_t pin_bytes = size_t(kRingSlots) * piece + align256(sizeof(int) * npiv) + align256(sizeof(int) * ints) +
                           align256(sizeof(unsigned long long) * maxes);

  CallScope cs(name);
  Slot& s = cs.slot();
  if (cudaError_t e = reserve(s, dev_bytes(0), pin_bytes)) return cs.fail(e);
  // cuSOLVER's workspace, asked with device addresses of the right kind (its size depends only on the shapes).
  int64_t work = 0;
  {
    T* d0 = reinterpret_cast<T*>(s.dev);
    const int64_t lda = packed_ld(oa);
    int err = 0;
    cudaStream_t st = s.stream;
    switch (kind) {
      case BO_KIND_GEQRF:
        work = vendor::cusolver_geqrf_work(m, n, d0, lda, st, &err);
        break;
      case BO_KIND_ORGQR:
        work = vendor::cusolver_orgqr_work(m, n, c.k, d0, lda, d0, st, &err);
        break;
      case BO_KIND_ORMQR:
        work = vendor::cusolver_ormqr_work(c.op[0], c.op[1], m, n, c.k, d0, lda, d0, d0, std::max<int64_t>(m, 1), st,
                                           &err);
        break;
      case BO_KIND_GELS: {
        const int64_t ldb = std::max<int64_t>(m, 1);
        work = std::max(vendor::cusolver_geqrf_work(m, n, d0, lda, st, &err),
                        err ? 0
                            : vendor::cusolver_ormqr_work('L', c.op[0] == 'N' ? ct : 'N', m, c.k, n, d0, lda, d0, d0,
                                                          ldb, st, &err));
        break;
      }
      case BO_KIND_SYEVD:
      case BO_KIND_SYEV:
      case BO_KIND_SYEVR:
        work = vendor::cusolver_syevd_work(c.op[0], kind == BO_KIND_SYEVR ? c.op[2] : c.op[1], n, d0,
                                           std::max<int64_t>(n, 1), reinterpret_cast<R*>(d0), st, &err);
        break;
      case BO_KIND_GESVD:
      case BO_KIND_GESDD:
        work = vendor::cusolver_gesvd_work<T>(wide ? n : m, wide ? m : n, st, &err);
        work += k;  // rwork: the unconverged superdiagonal
        break;
      case BO_KIND_POTRI:
        work = vendor::cusolver_potri_work(c.op[0], n, d0, std::max<int64_t>(n, 1), st, &err);
        break;
      default:
        break;
    }
    if (err) return cs.fail(cudaError_t(err));
    if (cudaError_t e = reserve(s, dev_bytes(size_t(std::max<int64_t>(work, 1))), pin_bytes)) return cs.fail(e);
  }
  cudaStream_t st = s.stream;
  Carver dv{s.dev}, pv{s.pin};
  T* dslot[4];
  for (int i = 0; i < 4; ++i) dslot[i] = reinterpret_cast<T*>(dv.take(size_t(es) * e_slot[i]));
  for (int i = 0; i < 4; ++i)
    if (in_place_slot[i]) dslot[i] = static_cast<T*>(const_cast<void*>(slot_ptr[i]));
  T* dextra = reinterpret_cast<T*>(dv.take(size_t(es) * e_extra));
  T* dextra2 = reinterpret_cast<T*>(dv.take(size_t(es) * e_extra2));
  int* dpiv = reinterpret_cast<int*>(dv.take(sizeof(int) * npiv));
  int* dinfo = reinterpret_cast<int*>(dv.take(sizeof(int) * ints));
  auto* dmax = reinterpret_cast<unsigned long long*>(dv.take(sizeof(unsigned long long) * maxes));
  T* dwork = reinterpret_cast<T*>(dv.take(size_t(es) * size_t(std::max<int64_t>(work, 1))));
  const Ring ring{pv.take(size_t(kRingSlots) * piece), piece, kRingSlots};
  int* ppiv = reinterpret_cast<int*>(pv.take(sizeof(int) * npiv));
  int* pinfo = reinterpret_cast<int*>(pv.take(sizeof(int) * ints));
  auto* pmax = reinterpret_cast<unsigned long long*>(pv.take(sizeof(unsigned long long) * maxes));

  cudaError_t e = cudaMemsetAsync(dinfo, 0, sizeof(int) * ints, st);
  if (!e) e = cudaMemsetAsync(dmax, 0, sizeof(unsigned long long) * maxes, st);
  T* da = dslot[0];
  const int64_t lda = kind == BO_KIND_SYEVR ? std::max<int64_t>(n, 1) : ld_of(oa);
  // Inputs up (the read operands), each scanned for non-finite values where LAPACK reads it.
  double up_bytes = 0;
  for (int i = 0; i < nops; ++i)
    if (ops[i].read()) up_bytes += double(es) * ops[i].elements();
  UploadClock clock(up_bytes, st);
  for (int i = 0; i < nops && !e; ++i) {
    const Operand& o = ops[i];
    if (!o.read()) continue;
    const void* h = o.slot == 0 ? c.a : o.slot == 1 ? c.b : o.slot == 2 ? c.c : c.d;
    if (!in_place_slot[o.slot]) e = ring_upload(ring, dslot[o.slot], h, o, o.real ? int(sizeof(R)) : es, st);
    // What LAPACK reads: the eigenproblems' triangle only; gels's B with TRANS T or C only its first n rows.
    Operand read = o;
    if (o.slot == 0 && (kind == BO_KIND_SYEVD || kind == BO_KIND_SYEV))
      read.shape = c.op[1] == 'L' ? Operand::kLower : Operand::kUpper;
    if (o.slot == 2 && kind == BO_KIND_GELS && c.op[0] != 'N') read.rows = n;  // T (C: complex)
    if (!e) e = scan(dslot[o.slot], read, ld_of(o), dinfo + 2, st);
    if (!e && o.slot == 0) e = max_abs(dslot[0], read, ld_of(o), dmax, st);
    if (!e && o.slot == 2 && kind == BO_KIND_GELS) e = max_abs(dslot[2], read, ld_of(o), dmax + 1, st);
  }
  if (!e) clock.uploaded();
  if (!e && kind == BO_KIND_GETRI) {
    copy_pivots_in(ppiv, c, n);
    e = cudaMemcpyAsync(dpiv, ppiv, sizeof(int) * npiv, cudaMemcpyHostToDevice, st);
  }
  auto ok = [](int r) { return cudaError_t(r); };
  if (!e) switch (kind) {
      case BO_KIND_GEQRF:
        e = ok(vendor::cusolver_geqrf(m, n, da, lda, dslot[1], dwork, work, dinfo, st));
        break;
      case BO_KIND_ORGQR:
        e = ok(vendor::cusolver_orgqr(m, n, c.k, da, lda, dslot[1], dwork, work, dinfo, st));
        break;
      case BO_KIND_ORMQR:
        e = ok(vendor::cusolver_ormqr(c.op[0], c.op[1], m, n, c.k, da, lda, dslot[1], dslot[2], std::max<int64_t>(m, 1),
                                      dwork, work, dinfo, st));
        break;
      case BO_KIND_GELS: {
        // QR of A (m >= n); TRANS N: X = R^-1 (Q^T B)(1:n); TRANS T: X = Q (R^-T B(1:n); 0) (complex: Q^H, R^-H, C).
        const int64_t ldb = at[2] >= 0 ? ld_of(ops[at[2]]) : std::max<int64_t>(m, 1), nrhs = c.k;
        T* db = dslot[2];
        e = ok(vendor::cusolver_geqrf(m, n, da, lda, dextra, dwork, work, dinfo, st));
        if (!e) {
          zero_diagonal<R, kParts><<<unsigned(std::min<int64_t>((n + 255) / 256, 1024)), 256, 0, st>>>(
              reinterpret_cast<const R*>(da), n, lda, dinfo + 3);
          e = cudaGetLastError();
        }
        if (c.op[0] == 'N') {
          if (!e)
            e = ok(vendor::cusolver_ormqr('L', ct, m, nrhs, n, da, lda, dextra, db, ldb, dwork, work, dinfo + 1, st));
          if (!e) e = ok(vendor::cublas_trsm('L', 'U', 'N', 'N', n, nrhs, T(1), da, lda, db, ldb, st));
        } else {
          if (!e) e = ok(vendor::cublas_trsm('L', 'U', ct, 'N', n, nrhs, T(1), da, lda, db, ldb, st));
          if (!e && m > n) e = cudaMemset2DAsync(db + n, size_t(ldb) * es, 0, size_t(m - n) * es, size_t(nrhs), st);
          if (!e)
            e = ok(vendor::cusolver_ormqr('L', 'N', m, nrhs, n, da, lda, dextra, db, ldb, dwork, work, dinfo + 1, st));
        }
        break;
      }
      case BO_KIND_SYEVD:
      case BO_KIND_SYEV:
        e = ok(vendor::cusolver_syevd(c.op[0], c.op[1], n, da, lda, reinterpret_cast<R*>(dslot[1]), dwork, work, dinfo,
                                      st));
        break;
      case BO_KIND_SYEVR:
        e = ok(vendor::cusolver_syevd(c.op[0], c.op[2], n, da, lda, reinterpret_cast<R*>(dslot[1]), dwork, work, dinfo,
                                      st));
        break;
      case BO_KIND_GESVD:
      case BO_KIND_GESDD: {
        R* rwork = reinterpret_cast<R*>(dwork + (work - k));
        R* ds = reinterpret_cast<R*>(dslot[1]);
        const int64_t lw = work - k;
        // cuSOLVER reads U's and VT's leading dimensions even for jobs that write neither.
        T* du = dslot[2] ? dslot[2] : dwork;
        T* dvt = dslot[3] ? dslot[3] : dwork;
        // The polar route first where it covers the jobs; gesvd when it does not, or its estimate misses LAPACK's
        // bound.
        // The complex ones run gesvd (the polar route is real only).
        bool done = false;
        if constexpr (kParts == 1) {
          if (polar_covers(c)) {
            e = svd_polar<T>(c, da, dslot[1], dslot[2], dslot[3], da, &done, st);
            if (!e && !done) log_line(BO_LOG_DEBUG, "%s: the polar SVD's error estimate missed the bound; gesvd", name);
          }
        }
        if (e || done) {
        } else if (!wide) {
          const int64_t ldu = at[2] >= 0 ? packed_ld(ops[at[2]]) : std::max<int64_t>(m, 1);
          const int64_t ldvt = at[3] >= 0 ? packed_ld(ops[at[3]]) : std::max<int64_t>(n, 1);
          e = ok(vendor::cusolver_gesvd(ju, jv, m, n, da, lda, ds, du, ldu, dvt, ldvt, dwork, lw, rwork, dinfo, st));
        } else {
          // A^T (n x m) = U' S V'^T, so A = V' S U'^T: U = (V'^T)^T (m x m) and V^T = U'^T (U' is n x n for job A,
          // n x m for S). V'^T goes into A's image, free once A^T is made (m x n >= m x m elements). Complex: the
          // conjugate transposes throughout (A^H = U' S V'^H).
          T* dat = dextra;
          T* du2 = dextra2;
          T* dvt2 = da;
          const int64_t ucols = jv == 'A' ? n : m;
          e = put_adjoint(dat, n, da, m, m, n, st);
          if (!e)
            e = ok(vendor::cusolver_gesvd(jv, ju, n, m, dat, std::max<int64_t>(n, 1), ds, du2, std::max<int64_t>(n, 1),
                                          dvt2, std::max<int64_t>(m, 1), dwork, lw, rwork, dinfo, st));
          if (!e && ju != 'N') e = put_adjoint(dslot[2], m, dvt2, m, m, m, st);
          if (!e && jv != 'N') e = put_adjoint(dslot[3], ucols, du2, n, n, ucols, st);
        }
        break;
      }
      case BO_KIND_GETRI:
        identity<R, kParts><<<unsigned(std::min<int64_t>(n, 65535)), 256, 0, st>>>(reinterpret_cast<R*>(dextra), n);
        e = cudaGetLastError();
        if (!e) e = ok(vendor::cusolver_getrs('N', n, n, da, lda, dpiv, dextra, std::max<int64_t>(n, 1), dinfo, st));
        break;
      case BO_KIND_POTRI:
        e = ok(vendor::cusolver_potri(c.op[0], n, da, lda, dwork, work, dinfo, st));
        break;
      default:
        return BO_CUDA_UNSUPPORTED;
    }
  // The outputs: each scanned; getri's inverse is in the identity's image.
  T* out_image[4] = {kind == BO_KIND_GETRI ? dextra : da, dslot[1], dslot[2], dslot[3]};
  for (int i = 0; i < nops && !e; ++i) {
    if (!ops[i].written()) continue;
    const Operand& o = ops[i];
    e = o.real ? scan(reinterpret_cast<const R*>(out_image[o.slot]), o, ld_of(o), dinfo + 2, st)
               : scan(out_image[o.slot], o, ld_of(o), dinfo + 2, st);
  }
  if (!e && kind == BO_KIND_SYEVR && c.op[0] == 'V') {
    const Operand z{2, Operand::kMatrix, Operand::kOut, n, n, n};
    e = scan(da, z, std::max<int64_t>(n, 1), dinfo + 2, st);
  }
  if (!e) e = cudaMemcpyAsync(pinfo, dinfo, sizeof(int) * ints, cudaMemcpyDeviceToHost, st);
  if (!e) e = cudaMemcpyAsync(pmax, dmax, sizeof(unsigned long long) * maxes, cudaMemcpyDeviceToHost, st);
  if (!e) e = cudaStreamSynchronize(st);
  if (e) return cs.fail(e);
  clock.synchronised();
  if (pinfo[0] < 0 || pinfo[1] < 0) return BO_CUDA_UNSUPPORTED;  // cuSOLVER refused an argument: the CPU's business
  double lo = 0, hi = 0;
  scaling_bounds<R>(kind, &lo, &hi);
  const double amax = bits_to_double(pmax[0]), bmax = bits_to_double(pmax[1]);
  const bool scaled = (amax > 0 && (amax < lo || amax > hi)) ||
                      (kind == BO_KIND_GELS && (amax == 0 || (bmax > 0 && (bmax < lo || bmax > hi))));
  if (pinfo[0] > 0 || pinfo[1] > 0 || pinfo[2] != 0 || pinfo[3] != 0 || scaled) {
    log_line(BO_LOG_DEBUG, "%s m=%lld n=%lld: the GPU found INFO = %d%s%s%s; the CPU LAPACK answers", name,
             (long long)m, (long long)n, std::max(pinfo[0], pinfo[1]), pinfo[2] ? ", non-finite values" : "",
             pinfo[3] ? ", a singular triangular factor" : "", scaled ? ", a magnitude LAPACK scales" : "");
    return BO_CUDA_CPU_ANSWERS;
  }
  // The outputs to the program's memory. Past the first piece nothing can be handed to the CPU LAPACK any more.
  Residency* written = resident_copies(host(), device());
  bool any = false;
  for (int i = 0; i < nops; ++i) {
    const Operand& o = ops[i];
    if (!o.written() || in_place_slot[o.slot]) continue;
    void* h = o.slot == 0 ? const_cast<void*>(c.a) : o.slot == 1 ? const_cast<void*>(c.b) : o.slot == 2 ? c.c : c.d;
    const T* from = out_image[o.slot];
    if (kind == BO_KIND_SYEVR && o.slot == 2) from = da;  // the eigenvectors were computed in A's image
    bool touched = false;
    const int oes = o.real ? int(sizeof(R)) : es;
    if (cudaError_t err = ring_download(ring, h, from, o, oes, st, &touched)) {
      if (touched || any) write_back_failed(name, err);
      return cs.fail(err);
    }
    any = true;
    if (written) written->host_written(resident_view(h, o, oes));
  }
  if (put_in_lapack_order<T>(c, kind))
    log_line(BO_LOG_DEBUG, "%s n=%lld: values put in LAPACK's order", name, (long long)n);
  if (kind == BO_KIND_SYEVR) {
    if (c.int_bytes == 8) {
      *static_cast<int64_t*>(c.found) = n;
      if (c.op[0] == 'V') support<int64_t, T>(c);
    } else {
      *static_cast<int*>(c.found) = int(n);
      if (c.op[0] == 'V') support<int, T>(c);
    }
  }
  set_info_zero(c);
  log_line(BO_LOG_DEBUG, "%s %.3s m=%lld n=%lld k=%lld: on the GPU", name, c.op, (long long)m, (long long)n,
           (long long)c.k);
  return BO_CUDA_OK;
}

}  // namespace

bool is_decomp_kind(int kind) {
  switch (bo::routines::real_counterpart(bo_routine_kind(kind))) {
    case BO_KIND_GEQRF:
    case BO_KIND_ORGQR:
    case BO_KIND_ORMQR:
    case BO_KIND_GELS:
    case BO_KIND_SYEVD:
    case BO_KIND_SYEV:
    case BO_KIND_SYEVR:
    case BO_KIND_GESVD:
    case BO_KIND_GESDD:
    case BO_KIND_GETRI:
    case BO_KIND_POTRI:
      return true;
    default:
      return false;
  }
}

int decomp_call(const bo_call& c) {
  return by_precision(c, [&](auto t) { return run<decltype(t)>(c, false); });
}

int decomp_in_place(const bo_call& c) {
  return by_precision(c, [&](auto t) { return run<decltype(t)>(c, true); });
}

}  // namespace bom
