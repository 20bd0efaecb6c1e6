// LAPACK's order for computed spectra, eigenvalues ascending and singular values descending, with their vectors
// moved alongside, applied to the program's memory after a GPU call (host code; tests/pipeline tests it).
#ifndef BLASOFFLOAD_MODULE_LAPACK_ORDER_H
#define BLASOFFLOAD_MODULE_LAPACK_ORDER_H

#include <algorithm>
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <vector>

#include "routines/call.h"
#include "routines/descriptor.h"
#include "routines/routine_ids.h"

namespace bom {

// Why: cuSOLVER's ssyevd leaves neighbours inside a cluster of equal eigenvalues a rounding error out of order (seen
// at n = 500 on the H200), while LAPACK's drivers end with a sort and programs rely on the order (a binary search
// over W, the largest k by position). The stable order that sorts v; empty when v is in order already (the usual
// case, found in one pass).
template <class T>
std::vector<int64_t> order_of(const T* v, int64_t n, bool ascending) {
  bool sorted = true;
  for (int64_t i = 0; i + 1 < n && sorted; ++i) sorted = ascending ? v[i] <= v[i + 1] : v[i] >= v[i + 1];
  if (sorted) return {};
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t(0));
  std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) { return ascending ? v[a] < v[b] : v[a] > v[b]; });
  return p;
}

// Permutes the n lines of x in place: line i becomes the old line p[i]. A line is `len` elements `step` apart, and
// line i starts at x + i * stride (values: len 1; columns: stride ld, step 1; rows: stride 1, step ld). One line of
// scratch: each cycle of p is walked once, so no copy of the whole matrix is needed.
template <class T>
void permute_lines(T* x, const std::vector<int64_t>& p, int64_t stride, int64_t len, int64_t step) {
  const int64_t n = int64_t(p.size());
  std::vector<char> done(static_cast<size_t>(n), 0);
  std::vector<T> tmp(static_cast<size_t>(len));
  auto line = [&](int64_t i) { return x + i * stride; };
  for (int64_t j = 0; j < n; ++j) {
    if (done[j] || p[j] == j) continue;
    for (int64_t e = 0; e < len; ++e) tmp[e] = line(j)[e * step];
    int64_t k = j;
    while (p[k] != j) {
      for (int64_t e = 0; e < len; ++e) line(k)[e * step] = line(p[k])[e * step];
      done[k] = 1;
      k = p[k];
    }
    for (int64_t e = 0; e < len; ++e) line(k)[e * step] = tmp[e];
    done[k] = 1;
  }
}

// A matrix's leading columns or rows to permute with the values (null: none).
template <class T>
struct Vectors {
  T* at = nullptr;
  int64_t ld = 0, len = 0;  // len: a column's rows, or a row's columns
  bool rows = false;
};

// Puts `count` values in LAPACK's order with each vector set; returns whether anything moved. The values are real
// (a complex call's eigenvalues and singular values too).
template <class T>
bool put_in_order(bo::routines::RealOf<T>* values, int64_t count, bool ascending,
                  std::initializer_list<Vectors<T>> vectors) {
  const std::vector<int64_t> p = order_of(values, count, ascending);
  if (p.empty()) return false;
  permute_lines(values, p, 1, 1, 1);
  for (const Vectors<T>& v : vectors) {
    if (!v.at) continue;
    if (v.rows)
      permute_lines(v.at, p, 1, v.len, v.ld);
    else
      permute_lines(v.at, p, v.ld, v.len, 1);
  }
  return true;
}

// The eigenvalues ascending, the singular values descending, their vectors alongside: a GPU call of syevd, syev,
// syevr (RANGE A), gesvd or gesdd (kind: the complex heevd, heev, heevr as their real counterparts), once its outputs
// reached the program's memory. Returns whether anything moved.
template <class T>
bool put_in_lapack_order(const bo_call& c, bo_routine_kind kind) {
  T* a = static_cast<T*>(const_cast<void*>(c.a));
  auto* w = static_cast<bo::routines::RealOf<T>*>(const_cast<void*>(c.b));
  T* u = static_cast<T*>(c.c);
  T* vt = static_cast<T*>(c.d);
  const int64_t m = c.m, n = c.n, k = std::min(m, n);
  const bool vectors = c.op[0] == 'V';
  switch (kind) {
    case BO_KIND_SYEVD:
    case BO_KIND_SYEV:
      return put_in_order<T>(w, n, true, {{vectors ? a : nullptr, c.lda, n}});
    case BO_KIND_SYEVR:
      return put_in_order<T>(w, n, true, {{vectors ? u : nullptr, c.ldc, n}});
    case BO_KIND_GESVD:
    case BO_KIND_GESDD: {
      // Where U's first k columns and V^T's first k rows are: job O overwrites A with one of them.
      char ju = c.op[0], jv = kind == BO_KIND_GESVD ? c.op[1] : c.op[0];
      if (kind == BO_KIND_GESDD && ju == 'O') (m >= n ? jv : ju) = 'S';
      Vectors<T> left{ju == 'N' ? nullptr : ju == 'O' ? a : u, ju == 'O' ? c.lda : c.ldc, m, false};
      Vectors<T> right{jv == 'N' ? nullptr : jv == 'O' ? a : vt, jv == 'O' ? c.lda : c.ldd, n, true};
      return put_in_order<T>(w, k, false, {left, right});
    }
    default:
      return false;
  }
}

}  // namespace bom

#endif
