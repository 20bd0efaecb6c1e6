// The SVD by polar decomposition for gesvd and gesdd (see lapack_svd_polar.h): cuSOLVER's Xgesvdp in double
// precision on a double copy of A (or of A^T for a wide matrix), its results rounded into the call's images.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/vendor_cusolver.h"
#include "offload/module/lapack_common.cuh"
#include "offload/module/lapack_svd_polar.h"

namespace bom {

bool polar_jobs(const bo_call& c) {
  const char ju = c.op[0], jv = c.op[1];
  if (c.m >= c.n) return ju == 'S' || ju == 'O' || ju == 'N' || (ju == 'A' && c.m == c.n);
  return (jv == 'S' || jv == 'N') && ju != 'O';
}
bool polar_covers(const bo_call& c) { return polar_jobs(c) && bok::vendor::cusolver_polar_available(); }

template <class T>
cudaError_t svd_polar(const bo_call& c, const T* da, T* ds, T* du, T* dvt, T* da_out, bool* accepted, cudaStream_t st) {
  *accepted = false;
  const int64_t m = c.m, n = c.n;
  const bool wide = m < n;
  const int64_t rows = wide ? n : m, cols = wide ? m : n;  // the oriented matrix: rows >= cols
  const char ju = c.op[0], jv = c.op[1];
  const bool vectors = ju != 'N' || jv != 'N';
  double *pa = nullptr, *pu = nullptr, *pv = nullptr, *ps = nullptr;
  int* pinfo = nullptr;
  const size_t ra = size_t(rows) * size_t(cols);
  cudaError_t e = cudaMallocAsync(&pa, sizeof(double) * (2 * ra + size_t(cols) * size_t(cols) + size_t(cols)) + 64, st);
  if (e) return e;
  pu = pa + ra, pv = pu + ra, ps = pv + size_t(cols) * size_t(cols);
  pinfo = reinterpret_cast<int*>(ps + cols);
  double err = 0, smax = 0;
  int info = 0;
  e = put(pa, rows, da, m, m, n, wide, st);  // A's image (m x n, leading dimension m) or its transpose
  if (!e) e = cudaMemsetAsync(pinfo, 0, sizeof(int), st);
  if (!e)
    e = cudaError_t(
        bok::vendor::cusolver_gesvdp(vectors, rows, cols, pa, rows, ps, pu, rows, pv, cols, pinfo, &err, st));
  if (!e) e = cudaMemcpyAsync(&info, pinfo, sizeof(int), cudaMemcpyDeviceToHost, st);
  if (!e) e = cudaMemcpyAsync(&smax, ps, sizeof(double), cudaMemcpyDeviceToHost, st);
  if (!e) e = cudaStreamSynchronize(st);
  // Its own estimate of the singular values' error, against LAPACK's bound in the call's precision (Xgesvdp in single
  // precision reported 7e2 on random matrices where double reported 0: hence double here).
  const double tol = double(cols) * double(std::numeric_limits<T>::epsilon()) * std::max(smax, 1e-300);
  if (!e && info == 0 && std::isfinite(err) && err <= tol) {
    *accepted = true;
    e = put(ds, cols, ps, cols, cols, 1, false, st);
    if (!wide) {
      // A = U S V^T: U is m x n (job S, O, or A when square), V^T n x n.
      T* u_to = ju == 'O' ? da_out : du;
      if (!e && ju != 'N') e = put(u_to, m, pu, m, m, n, false, st);
      T* vt_to = jv == 'O' ? da_out : dvt;
      const int64_t ldvt = jv == 'O' ? m : n;
      if (!e && jv != 'N') e = put(vt_to, ldvt, pv, n, n, n, true, st);
    } else {
      // A^T = U' S V'^T: U = V' (m x m), V^T = U'^T (m x n, job S).
      if (!e && ju != 'N') e = put(du, m, pv, m, m, m, false, st);
      if (!e && jv != 'N') e = put(dvt, m, pu, n, n, m, true, st);
    }
  }
  cudaFreeAsync(pa, st);
  return e;
}

template cudaError_t svd_polar<float>(const bo_call&, const float*, float*, float*, float*, float*, bool*,
                                      cudaStream_t);
template cudaError_t svd_polar<double>(const bo_call&, const double*, double*, double*, double*, double*, bool*,
                                       cudaStream_t);

}  // namespace bom
