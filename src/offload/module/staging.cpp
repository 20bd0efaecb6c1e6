// Element-exact staging of host operands (see staging.h).
#include "offload/module/staging.h"

#include <algorithm>
#include <cstring>

#include "offload/module/staging_pool.h"

namespace bom {
namespace {

// Results of this size and up are unpacked by the staging threads; smaller ones by the caller (a hand-off costs more).
constexpr int64_t kThreadedUnpackBytes = int64_t(4) << 20;

char* at(void* p, int64_t elements, int es) { return static_cast<char*>(p) + elements * es; }
const char* at(const void* p, int64_t elements, int es) { return static_cast<const char*>(p) + elements * es; }

// Rows [r0, r1) of column j of an n x n triangle (diagonal included).
void triangle_rows(int64_t j, int64_t n, bool lower, int64_t* r0, int64_t* r1) {
  *r0 = lower ? j : 0;
  *r1 = lower ? n : j + 1;
}

}  // namespace

int64_t packed_elements(const Operand& o) {
  switch (o.shape) {
    case Operand::kMatrix:
      return o.rows * o.cols;
    case Operand::kLower:
    case Operand::kUpper:
      return o.rows * o.rows;
    case Operand::kVector:
      return o.rows;
  }
  return 0;
}

int64_t packed_ld(const Operand& o) { return o.shape == Operand::kVector ? 1 : std::max<int64_t>(o.rows, 1); }

void pack_matrix(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int es) {
  if (ld == rows) {
    std::memcpy(dst, src, size_t(es) * size_t(rows) * size_t(cols));
    return;
  }
  for (int64_t j = 0; j < cols; ++j) std::memcpy(at(dst, j * rows, es), at(src, j * ld, es), size_t(es) * size_t(rows));
}

void unpack_matrix(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int es) {
  if (int64_t(es) * rows * cols >= kThreadedUnpackBytes) return unpack_block(dst, src, rows, cols, ld, es);
  for (int64_t j = 0; j < cols; ++j) std::memcpy(at(dst, j * ld, es), at(src, j * rows, es), size_t(es) * size_t(rows));
}

void pack_triangle(void* dst, const void* src, int64_t n, int64_t ld, bool lower, int es) {
  for (int64_t j = 0; j < n; ++j) {
    int64_t r0, r1;
    triangle_rows(j, n, lower, &r0, &r1);
    std::memcpy(at(dst, r0 + j * n, es), at(src, r0 + j * ld, es), size_t(es) * size_t(r1 - r0));
  }
}

void unpack_triangle(void* dst, const void* src, int64_t n, int64_t ld, bool lower, int es) {
  for (int64_t j = 0; j < n; ++j) {
    int64_t r0, r1;
    triangle_rows(j, n, lower, &r0, &r1);
    std::memcpy(at(dst, r0 + j * ld, es), at(src, r0 + j * n, es), size_t(es) * size_t(r1 - r0));
  }
}

void pack_vector(void* dst, const void* src, int64_t n, int64_t inc, int es) {
  if (inc == 1) {
    std::memcpy(dst, src, size_t(es) * size_t(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(at(dst, i, es), at(src, vidx(i, n, inc), es), size_t(es));
}

void unpack_vector(void* dst, const void* src, int64_t n, int64_t inc, int es) {
  if (inc == 1) {
    std::memcpy(dst, src, size_t(es) * size_t(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(at(dst, vidx(i, n, inc), es), at(src, i, es), size_t(es));
}

void pack_operand(void* dst, const void* src, const Operand& o, int es) {
  switch (o.shape) {
    case Operand::kMatrix:
      if (int64_t(es) * o.rows * o.cols >= kUploadPieceBytes)
        pack_block(dst, src, o.rows, o.cols, o.ld, es);
      else
        pack_matrix(dst, src, o.rows, o.cols, o.ld, es);
      return;
    case Operand::kLower:
    case Operand::kUpper:
      pack_triangle(dst, src, o.rows, o.ld, o.shape == Operand::kLower, es);
      return;
    case Operand::kVector:
      pack_vector(dst, src, o.rows, o.ld, es);
      return;
  }
}

void unpack_operand(void* dst, const void* src, const Operand& o, int es) {
  switch (o.shape) {
    case Operand::kMatrix:
      unpack_matrix(dst, src, o.rows, o.cols, o.ld, es);
      return;
    case Operand::kLower:
    case Operand::kUpper:
      unpack_triangle(dst, src, o.rows, o.ld, o.shape == Operand::kLower, es);
      return;
    case Operand::kVector:
      unpack_vector(dst, src, o.rows, o.ld, es);
      return;
  }
}

bool upload_operand(const UploadQueue& q, void* pinned, void* dev, const void* src, const Operand& o, int es) {
  const size_t e = size_t(es);
  switch (o.shape) {
    case Operand::kMatrix: {
      const int64_t rows = o.rows, cols = o.cols;
      if (int64_t(es) * rows * cols < kUploadPieceBytes) {
        pack_matrix(pinned, src, rows, cols, o.ld, es);
        return q.copy(q.ctx, dev, 0, pinned, 0, e * size_t(rows) * size_t(cols), 1);
      }
      // Column pieces, packed by the staging threads while the previous piece's DMA runs.
      const int64_t step = std::max<int64_t>(1, kUploadPieceBytes / (int64_t(es) * rows));
      for (int64_t j = 0; j < cols; j += step) {
        const int64_t w = std::min(step, cols - j);
        pack_block(at(pinned, j * rows, es), at(src, j * o.ld, es), rows, w, o.ld, es);
        if (!q.copy(q.ctx, at(dev, j * rows, es), 0, at(pinned, j * rows, es), 0, e * size_t(rows) * size_t(w), 1))
          return false;
      }
      return true;
    }
    case Operand::kLower:
    case Operand::kUpper: {
      // Column blocks as trapezoids: block [j, j + cw) needs rows [j, n) (lower) or [0, j + cw) (upper). Each piece is
      // packed (leading dimension r1 - r0) into the start of its columns' part of the pinned buffer and lands in the
      // device square (leading dimension n) by a 2D copy.
      const int64_t n = o.rows;
      const bool lower = o.shape == Operand::kLower;
      const int64_t w =
          std::max<int64_t>(64, std::min<int64_t>(n, kUploadPieceBytes / std::max<int64_t>(1, int64_t(es) * n)));
      for (int64_t j = 0; j < n; j += w) {
        const int64_t cw = std::min(w, n - j);
        const int64_t r0 = lower ? j : 0, r1 = lower ? n : std::min(n, j + cw);
        pack_block(at(pinned, j * n, es), at(src, r0 + j * o.ld, es), r1 - r0, cw, o.ld, es);
        if (!q.copy(q.ctx, at(dev, r0 + j * n, es), e * size_t(n), at(pinned, j * n, es), e * size_t(r1 - r0),
                    e * size_t(r1 - r0), size_t(cw)))
          return false;
      }
      return true;
    }
    case Operand::kVector:
      pack_vector(pinned, src, o.rows, o.ld, es);
      return q.copy(q.ctx, dev, 0, pinned, 0, e * size_t(o.rows), 1);
  }
  return false;
}

}  // namespace bom
