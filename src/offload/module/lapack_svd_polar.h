// The SVD by polar decomposition (cuSOLVER's Xgesvdp), the fast route of gesvd and gesdd: on the lent H100 0.30 s
// for n = 4096 in double where gesvd took 1.84 s. Computed in double precision (in single, Xgesvdp's own error
// estimate was far beyond LAPACK's bounds), then rounded; its error estimate is checked against LAPACK's bound, and
// the caller falls back to gesvd when it is not met.
#pragma once

#include <cuda_runtime.h>

#include "routines/call.h"

namespace bom {

// Whether the route covers the call's jobs (normalised as gesvd's JOBU, JOBVT): economy-size vectors only, so U in
// full (job A) only for a square or wide matrix, V^T in full only for a square or tall one; cuSOLVER must have it.
bool polar_covers(const bo_call& c);
// The same without asking for cuSOLVER (the time model's question: it must not open a library).
bool polar_jobs(const bo_call& c);

// The SVD of A's device image (m x n, leading dimension m, left intact) into the images of S (min(m, n)), U (leading
// dimension m), V^T (leading dimension its rows) or, for a job O, A's image da_out. *accepted false (nothing written)
// when the route's error estimate exceeds LAPACK's bound or it reports no convergence. Synchronises `st`.
template <class T>
cudaError_t svd_polar(const bo_call& c, const T* da, T* ds, T* du, T* dvt, T* da_out, bool* accepted, cudaStream_t st);

}  // namespace bom
