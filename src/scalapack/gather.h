// Moves a block-aligned submatrix of a block-cyclic ScaLAPACK matrix between the grid's processes and one dense
// column-major copy on process (0,0): each process copying its own part where all map the copy, else through the
// BLACS of the program's own grid (point to point, so a grid that is part of a larger MPI job needs nothing from the
// other processes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "scalapack/blacs.h"

namespace blasoffload::scalapack {

// Which blocks move: all of them, or (a Cholesky factor) the column blocks' rows from the diagonal block down (lower)
// or up to it (upper); the other triangle's blocks stay where they are, unread and unwritten.
enum class Part { kAll, kLower, kUpper };

// One local block column of one process's part of sub(A): the unit that moves, announced (gather) or acknowledged
// (scatter) by a token, at most two in flight a direction, so that the BLACS's send buffers (it copies every message
// before sending it) hold at most two of them.
struct Chunk {
  I pr, pc;              // the process
  std::int64_t lr, lc;   // its first local row and column (0-based)
  std::int64_t rows, w;  // its extent
  std::int64_t gr, gc;   // sub(A)'s row of its first row, and column of its first column
};

// The chunks of sub(A), in the same order on every process; `part` leaves out the other triangle's blocks.
inline std::vector<Chunk> chunks(const Layout& L, std::int64_t ia, std::int64_t ja, std::int64_t m, std::int64_t n,
                                 Part part) {
  std::vector<Chunk> out;
  for (I pr = 0; pr < L.nprow; ++pr) {
    for (I pc = 0; pc < L.npcol; ++pc) {
      const std::int64_t lr0 = L.rows_before(ia, pr), lm = L.rows_before(ia + m, pr) - lr0;
      const std::int64_t lc0 = L.cols_before(ja, pc), ln = L.cols_before(ja + n, pc) - lc0;
      for (std::int64_t cb = 0; cb < ln; cb += L.nb) {
        const std::int64_t w = std::min<std::int64_t>(L.nb, ln - cb);
        const std::int64_t gc0 = L.global_col(lc0 + cb, pc) - ja;
        std::int64_t r0 = 0, r1 = lm;
        if (part == Part::kLower) r0 = L.rows_before(ia + gc0, pr) - lr0;
        if (part == Part::kUpper) r1 = L.rows_before(std::min(ia + gc0 + L.nb, ia + m), pr) - lr0;
        if (r1 <= r0) continue;
        out.push_back(Chunk{pr, pc, lr0 + r0, lc0 + cb, r1 - r0, w, L.global_row(lr0 + r0, pr) - ia, gc0});
      }
    }
  }
  return out;
}

// Calls f(local_row_offset, g_row, rows) for each run of a chunk's rows that is contiguous in sub(A) (whole blocks;
// all of them at once on a grid of one process row).
template <class F>
void for_each_run(const Layout& L, const Chunk& c, F&& f) {
  const std::int64_t ia = L.global_row(c.lr, c.pr) - c.gr;
  for (std::int64_t r = 0; r < c.rows;) {
    const std::int64_t l = c.lr + r;
    const std::int64_t g0 = L.global_row(l, c.pr);
    std::int64_t run = std::min<std::int64_t>(L.mb - l % L.mb, c.rows - r);
    // Following blocks continue it where the process holds consecutive global blocks (one process row).
    while (r + run < c.rows && L.global_row(l + run, c.pr) == g0 + run)
      run += std::min<std::int64_t>(L.mb, c.rows - r - run);
    f(r, g0 - ia, run);
    r += run;
  }
}

// Copies this process's own chunks of sub(A) between its local array `a` and `g`, sub(A)'s dense copy (m x n,
// leading dimension ldg) in memory every process of the node maps (takeover.cpp): the gather and scatter of a grid
// whose processes share memory, every process copying its part at once.
template <class T>
void copy_own_part(const Layout& L, std::int64_t ia, std::int64_t ja, std::int64_t m, std::int64_t n, T* a, T* g,
                   std::int64_t ldg, Part part, bool into_g) {
  for (const Chunk& c : chunks(L, ia, ja, m, n, part)) {
    if (c.pr != L.myrow || c.pc != L.mycol) continue;
    for_each_run(L, c, [&](std::int64_t r, std::int64_t gr, std::int64_t run) {
      for (std::int64_t j = 0; j < c.w; ++j) {
        T* lp = a + (c.lr + r) + (c.lc + j) * std::int64_t(L.lld);
        T* gp = g + gr + (c.gc + j) * ldg;
        std::memcpy(into_g ? gp : lp, into_g ? lp : gp, sizeof(T) * run);
      }
    });
  }
}

// Gathers (to_root) or scatters sub(A), the m x n submatrix at 0-based global row ia and column ja (both multiples of
// the block size), between the local arrays `a` (leading dimension L.lld) and `g` (m x n, leading dimension ldg) on
// process (0,0). Every process of the grid calls it with the same arguments but its own `a`; `g` is used only on
// (0,0). Each run of rows moves as one message straight between the local array and g (the BLACS describe both
// with their leading dimensions).
template <class T>
void move_submatrix(const Blacs& b, const Layout& L, std::int64_t ia, std::int64_t ja, std::int64_t m, std::int64_t n,
                    T* a, T* g, std::int64_t ldg, Part part, bool to_root) {
  const int t = type_index<T>();
  const bool root = L.myrow == 0 && L.mycol == 0;
  const I zero = 0, one = 1;
  const std::vector<Chunk> all = chunks(L, ia, ja, m, n, part);
  std::vector<const Chunk*> remote;  // on (0,0): the others' chunks; elsewhere: this process's
  if (root) copy_own_part(L, ia, ja, m, n, a, g, ldg, part, to_root);
  for (const Chunk& c : all) {
    const bool mine = c.pr == L.myrow && c.pc == L.mycol;
    if (root != mine) remote.push_back(&c);
  }
  const I lld = L.lld, ldgi = I(ldg);
  auto token_to = [&](const Chunk& c) { b.igesd2d(&L.ctxt, &one, &one, &one, &one, &c.pr, &c.pc); };
  auto token_from = [&](const Chunk& c) {
    I x = 0;
    if (root)
      b.igerv2d(&L.ctxt, &one, &one, &x, &one, &c.pr, &c.pc);
    else
      b.igerv2d(&L.ctxt, &one, &one, &x, &one, &zero, &zero);
  };
  // Sends or receives one chunk, run by run, between this process's memory (g on (0,0), else a) and the other side.
  auto move = [&](const Chunk& c, bool send) {
    for_each_run(L, c, [&](std::int64_t r, std::int64_t gr, std::int64_t run) {
      const I ri = I(run), wi = I(c.w);
      T* p = root ? g + gr + c.gc * ldg : a + (c.lr + r) + c.lc * std::int64_t(L.lld);
      const I* ld = root ? &ldgi : &lld;
      const I* dr = root ? &c.pr : &zero;
      const I* dc = root ? &c.pc : &zero;
      if (send)
        b.gesd2d[t](&L.ctxt, &ri, &wi, p, ld, dr, dc);
      else
        b.gerv2d[t](&L.ctxt, &ri, &wi, p, ld, dr, dc);
    });
  };
  const std::size_t k = remote.size();
  if (to_root && root) {
    for (std::size_t i = 0; i < std::min<std::size_t>(2, k); ++i) token_to(*remote[i]);  // "send it now"
    for (std::size_t i = 0; i < k; ++i) {
      move(*remote[i], false);
      if (i + 2 < k) token_to(*remote[i + 2]);
    }
  } else if (to_root) {
    for (const Chunk* c : remote) {
      token_from(*c);
      move(*c, true);
    }
  } else if (root) {
    for (std::size_t i = 0; i < k; ++i) {
      move(*remote[i], true);
      if (i >= 1) token_from(*remote[i - 1]);  // "received"
    }
    if (k) token_from(*remote[k - 1]);
  } else {
    for (const Chunk* c : remote) {
      move(*c, false);
      b.igesd2d(&L.ctxt, &one, &one, &one, &one, &zero, &zero);
    }
  }
}

}  // namespace blasoffload::scalapack
