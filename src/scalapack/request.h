// What each ScaLAPACK routine the takeover handles is (takeover.cpp): its arguments as one Request, the checks that
// decide from them alone whether it can be taken over, and the LAPACK call that does its work on the dense copy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "abi/blas_types.h"
#include "routines/all.h"
#include "scalapack/blacs.h"

namespace blasoffload::scalapack {

// The routines taken over: the factorizations, and the drivers that also solve (their right-hand sides move too).
enum Kind { kGetrf, kPotrf, kGeqrf, kGesv, kPosv, kGels, kNumKinds };
inline const char* const kKindName[kNumKinds] = {"getrf", "potrf", "geqrf", "gesv", "posv", "gels"};
inline bool has_rhs(Kind k) { return k == kGesv || k == kPosv || k == kGels; }
inline bool has_pivots(Kind k) { return k == kGetrf || k == kGesv; }
inline bool is_cholesky(Kind k) { return k == kPotrf || k == kPosv; }

// A distributed submatrix: sub(X) = X(i0 .. i0 + rows - 1, j0 .. j0 + cols - 1) (0-based) and X's descriptor.
struct Sub {
  std::int64_t rows = 0, cols = 0, i0 = 0, j0 = 0;
  I dtype = 1;  // DESC(1)
  Layout L{};
};

inline Sub sub(std::int64_t rows, std::int64_t cols, const I* i, const I* j, const I* desc) {
  return Sub{rows,
             cols,
             std::int64_t(*i) - 1,
             std::int64_t(*j) - 1,
             desc[0],
             Layout{desc[1], desc[2], desc[3], desc[4], desc[5], desc[6], desc[7], desc[8], -1, -1, -1, -1}};
}

// One call's request, from its arguments (the same on every process of the grid, except the local ones).
struct Request {
  Kind kind;
  char precision;
  char uplo = 'L', trans = 'N';
  std::int64_t m, n, ia, ja;  // sub(A): ia, ja 0-based
  I dtype;                    // DESCA(1)
  Layout L;
  Sub b;                   // the drivers' right-hand sides: n x nrhs (?gesv, ?posv), max(m, n) x nrhs (?gels)
  I lwork = 0;             // ?geqrf's and ?gels's LWORK
  std::int64_t lwmin = 0;  // ?geqrf's and ?gels's least LWORK on this process (ScaLAPACK's answer to a query)
};

inline Request request(Kind kind, char precision, const I* m, const I* n, const I* ia, const I* ja, const I* desc) {
  const Sub a = sub(*m, *n, ia, ja, desc);
  return Request{kind, precision, 'L', 'N', a.rows, a.cols, a.i0, a.j0, a.dtype, a.L, {}, 0, 0};
}

// p?geqrf's least LWORK on this process, as ScaLAPACK computes it: NB * (MP0 + NQ0 + NB), MP0 and NQ0 this process's
// rows and columns of sub(A) (which starts on a block boundary here).
inline std::int64_t geqrf_lwmin(const Request& q) {
  const Layout& L = q.L;
  const std::int64_t mp0 = L.rows_before(q.ia + q.m, L.myrow) - L.rows_before(q.ia, L.myrow);
  const std::int64_t nq0 = L.cols_before(q.ja + q.n, L.mycol) - L.cols_before(q.ja, L.mycol);
  return std::int64_t(L.nb) * (mp0 + nq0 + L.nb);
}

// Why sub(X) cannot be moved: nullptr when it starts on a block boundary inside X, on a valid source process.
inline const char* sub_refusal(const Sub& x, const Layout& grid) {
  const Layout& L = x.L;
  if (x.dtype != 1) return "not a dense matrix descriptor";
  if (L.ctxt != grid.ctxt) return "B on another grid";
  if (L.mb < 1 || L.nb < 1) return "invalid blocks";
  if (x.i0 < 0 || x.j0 < 0 || x.i0 % L.mb || x.j0 % L.nb) return "a submatrix that does not start on a block boundary";
  if (x.i0 + x.rows > L.m_a || x.j0 + x.cols > L.n_a) return "outside the matrix";
  if (L.rsrc < 0 || L.rsrc >= grid.nprow || L.csrc < 0 || L.csrc >= grid.npcol) return "invalid source process";
  return nullptr;
}

// Why the takeover cannot take this call, from the arguments every process shares (and the settings, which every
// process of one job reads alike); nullptr when it can. Checked before any message, so all processes agree whether
// to vote at all. Unusual but valid calls (a submatrix inside a block) are ScaLAPACK's own.
inline const char* shared_refusal(const Request& q, bool complex, bool any_size, std::int64_t min_n) {
  const Layout& L = q.L;
  if (L.nprow < 1 || L.myrow < 0 || L.mycol < 0) return "not a process of a valid grid";
  if (q.m <= 0 || q.n <= 0) return "empty or invalid";
  // Square blocks: the pivots' and the triangles' block arithmetic (gather.h) assume them, as ScaLAPACK's LU does.
  if (L.mb != L.nb) return "blocks not square";
  Sub a{q.m, q.n, q.ia, q.ja, q.dtype, L};
  if (const char* why = sub_refusal(a, L)) return why;
  if (is_cholesky(q.kind) && (q.m != q.n || (q.uplo != 'L' && q.uplo != 'U'))) return "invalid arguments";
  if (q.kind == kGels && q.trans != 'N' && q.trans != (complex ? 'C' : 'T')) return "invalid arguments";
  if (has_rhs(q.kind)) {
    if (q.b.cols <= 0) return "no right-hand side";
    if (const char* why = sub_refusal(q.b, L)) return why;
  }
  if (!any_size && std::min(q.m, q.n) < min_n) return "below BLASOFFLOAD_SCALAPACK_MIN_N";
  if (L.nprow * L.npcol == 1) return "a grid of one process";
  return nullptr;
}

template <class D>
struct Tag {
  using type = D;
};

// Process (0,0)'s LAPACK call on the dense copy: its pivots, TAU, workspace and INFO.
template <class T>
struct RootCall {
  std::vector<I> piv;
  std::vector<T> tau, work;
  I info = 0;
  bool gpu = false;  // the policy sent the call to the GPU (asked in the vote)
};

// The buffers process (0,0)'s call needs, for sub(A) of m x n with k = min(m, n).
template <class T>
void size_root_call(const Request& q, RootCall<T>& r) {
  const std::size_t k = std::size_t(std::min(q.m, q.n));
  if (has_pivots(q.kind)) r.piv.resize(k);
  // LAPACK's blocked QR wants n times its block size (32 in the reference ILAENV; 64 covers the CPU libraries').
  if (q.kind == kGeqrf) r.tau.resize(k), r.work.resize(std::size_t(q.n) * 64);
  if (q.kind == kGels) r.work.resize((k + std::size_t(std::max<std::int64_t>(std::int64_t(k), q.b.cols))) * 64);
}

// The LAPACK call process (0,0) makes on the dense copies g (sub(A): m x n, leading dimension m) and gb (sub(B), its
// rows as leading dimension): f(Tag<D>{}, args) with D the routine's descriptor and args its Fortran arguments. `d`
// holds the integers they point to.
struct Dims {
  I m, n, lda, lwork, nrhs, ldb;
  char uplo, trans;
};
template <class T, class F>
decltype(auto) on_dense_copy(const Request& q, Dims& d, T* g, T* gb, RootCall<T>& r, F&& f) {
  namespace R = bo::routines;
  d = Dims{I(q.m), I(q.n), I(q.m), I(r.work.size()), I(q.b.cols), I(std::max<std::int64_t>(1, q.b.rows)),
           q.uplo, q.trans};
  const fortran_strlen one = 1;
  switch (q.kind) {
    case kGetrf:
      return f(Tag<R::Getrf<T, I>>{}, std::make_tuple(&d.m, &d.n, g, &d.lda, r.piv.data(), &r.info));
    case kGeqrf:
      return f(Tag<R::Geqrf<T, I>>{},
               std::make_tuple(&d.m, &d.n, g, &d.lda, r.tau.data(), r.work.data(), &d.lwork, &r.info));
    case kGesv:
      return f(Tag<R::Gesv<T, I>>{}, std::make_tuple(&d.n, &d.nrhs, g, &d.lda, r.piv.data(), gb, &d.ldb, &r.info));
    case kPosv:
      return f(Tag<R::Posv<T, I>>{}, std::make_tuple(&d.uplo, &d.n, &d.nrhs, g, &d.lda, gb, &d.ldb, &r.info, one));
    case kGels:
      return f(Tag<R::Gels<T, I>>{}, std::make_tuple(&d.trans, &d.m, &d.n, &d.nrhs, g, &d.lda, gb, &d.ldb,
                                                     r.work.data(), &d.lwork, &r.info, one));
    default:
      return f(Tag<R::Potrf<T, I>>{}, std::make_tuple(&d.uplo, &d.n, g, &d.lda, &r.info, one));
  }
}

}  // namespace blasoffload::scalapack
