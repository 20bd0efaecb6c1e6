// The BLACS functions the ScaLAPACK takeover calls (found at run time in the process's ScaLAPACK, never linked), and
// the block-cyclic index arithmetic of a ScaLAPACK descriptor.
#pragma once

#include <cstdint>
#include <type_traits>

#include "abi/blas_types.h"

namespace blasoffload::scalapack {

using I = std::int32_t;  // ScaLAPACK's LP64 INTEGER

// BLACS's Fortran interface (Debian's libscalapack-openmpi: the BLACS are inside it). The CHARACTER arguments' hidden
// lengths are not read by the BLACS (C code), so they are not passed.
struct Blacs {
  void (*gridinfo)(const I* ctxt, I* nprow, I* npcol, I* myrow, I* mycol) = nullptr;
  void (*igamx2d)(const I* ctxt, const char* scope, const char* top, const I* m, const I* n, I* a, const I* lda, I* ra,
                  I* ca, const I* rcflag, const I* rdest, const I* cdest) = nullptr;
  void (*igebs2d)(const I* ctxt, const char* scope, const char* top, const I* m, const I* n, const I* a,
                  const I* lda) = nullptr;
  void (*igebr2d)(const I* ctxt, const char* scope, const char* top, const I* m, const I* n, I* a, const I* lda,
                  const I* rsrc, const I* csrc) = nullptr;
  void (*igesd2d)(const I* ctxt, const I* m, const I* n, const I* a, const I* lda, const I* rdest,
                  const I* cdest) = nullptr;
  void (*igerv2d)(const I* ctxt, const I* m, const I* n, I* a, const I* lda, const I* rsrc, const I* csrc) = nullptr;
  // ?gesd2d / ?gerv2d by element type: [0] s, [1] d, [2] c, [3] z.
  void (*gesd2d[4])(const I* ctxt, const I* m, const I* n, const void* a, const I* lda, const I* rdest,
                    const I* cdest) = {};
  void (*gerv2d[4])(const I* ctxt, const I* m, const I* n, void* a, const I* lda, const I* rsrc, const I* csrc) = {};
  // ?gebs2d / ?gebr2d (broadcast over the grid) by element type, as above.
  void (*gebs2d[4])(const I* ctxt, const char* scope, const char* top, const I* m, const I* n, const void* a,
                    const I* lda) = {};
  void (*gebr2d[4])(const I* ctxt, const char* scope, const char* top, const I* m, const I* n, void* a, const I* lda,
                    const I* rsrc, const I* csrc) = {};
};

// The process's BLACS, looked up once; nullptr when any function is missing (no ScaLAPACK in the process).
const Blacs* blacs();

template <class T>
constexpr int type_index() {
  if constexpr (std::is_same_v<T, float>) return 0;
  if constexpr (std::is_same_v<T, double>) return 1;
  if constexpr (std::is_same_v<T, bo_cfloat>) return 2;
  return 3;
}

// Broadcasts v[0..n) from process (0,0) of the grid `ctxt` to all its processes (every one calls it alike); T is an
// element type or the BLACS integer.
template <class T>
void broadcast_from_root(const Blacs& b, const I* ctxt, bool root, T* v, I n) {
  const I one = 1, zero = 0;
  if constexpr (std::is_same_v<T, I>) {
    if (root)
      b.igebs2d(ctxt, "A", " ", &n, &one, v, &n);
    else
      b.igebr2d(ctxt, "A", " ", &n, &one, v, &n, &zero, &zero);
  } else {
    constexpr int t = type_index<T>();
    if (root)
      b.gebs2d[t](ctxt, "A", " ", &n, &one, v, &n);
    else
      b.gebr2d[t](ctxt, "A", " ", &n, &one, v, &n, &zero, &zero);
  }
}

// A ScaLAPACK array descriptor (DESCA(1..9)) and the grid it lives on, with the arithmetic of its block-cyclic
// layout. Only what the takeover needs: square blocks (MB = NB) and a submatrix that starts on a block boundary.
struct Layout {
  I ctxt, m_a, n_a, mb, nb, rsrc, csrc, lld;
  I nprow, npcol, myrow, mycol;

  // Rows among the global rows 0 .. x-1 (0-based) that process row p holds: where a process's local rows of a
  // submatrix starting at global row x begin, as a count of its local rows before it.
  static std::int64_t held_before(std::int64_t x, I b, I procs, I src, I p) {
    const std::int64_t d = (p - src + procs) % procs;  // the first global block p holds
    const std::int64_t full = x / b, rem = x % b;
    std::int64_t n = full > d ? ((full - d - 1) / procs + 1) * b : 0;
    if (rem > 0 && full % procs == d) n += rem;
    return n;
  }
  std::int64_t rows_before(std::int64_t x, I p) const { return held_before(x, mb, nprow, rsrc, p); }
  std::int64_t cols_before(std::int64_t x, I q) const { return held_before(x, nb, npcol, csrc, q); }
  // The global row (0-based) of local row l (0-based) of process row p; the same for columns.
  std::int64_t global_row(std::int64_t l, I p) const {
    return ((l / mb) * nprow + (p - rsrc + nprow) % nprow) * mb + l % mb;
  }
  std::int64_t global_col(std::int64_t l, I q) const {
    return ((l / nb) * npcol + (q - csrc + npcol) % npcol) * nb + l % nb;
  }
  // The process row holding global row g (0-based), and the local row (0-based) it is there.
  I row_owner(std::int64_t g) const { return I((rsrc + g / mb) % nprow); }
  std::int64_t local_row(std::int64_t g) const { return (g / (std::int64_t(mb) * nprow)) * mb + g % mb; }
  I col_owner(std::int64_t g) const { return I((csrc + g / nb) % npcol); }
  std::int64_t local_col(std::int64_t g) const { return (g / (std::int64_t(nb) * npcol)) * nb + g % nb; }
};

}  // namespace blasoffload::scalapack
