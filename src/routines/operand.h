// What a call reads and writes: the extents of its operands, derived once by the routine's descriptor and used by
// the policy (bytes to move, residency questions) and by the CUDA module's executor (staging, write-back).
#pragma once

#include <cstdint>

namespace bo::routines {

// The most operands a call has (gesvd: A, S, U, VT).
constexpr int kMaxOperands = 4;

struct Operand {
  enum Shape : std::uint8_t {
    kMatrix,  // rows x cols, leading dimension ld
    kLower,   // only the lower triangle (diagonal included) of an n x n matrix is read / written
    kUpper,   // only the upper triangle
    kVector,  // rows elements at increment ld (BLAS order: negative increments start at the end), cols = 1
  };
  enum Access : std::uint8_t {
    kIn,     // read only
    kOut,    // written, never read (beta == 0)
    kInOut,  // read and written
  };
  // Which bo_call field holds ld: a matrix's leading dimension is its slot's (lda, ldb, ldc); a vector says whether
  // its increment is incx or incy (call.h: gemv's y is incy, trsv's x in slot 2 is incx).
  enum Field : std::uint8_t { kSlotLd, kIncx, kIncy };
  int slot;  // which pointer of the bo_call: 0 = a, 1 = b, 2 = c, 3 = d
  Shape shape;
  Access access;
  std::int64_t rows, cols, ld;
  Field field = kSlotLd;
  bool real = false;  // real values of a complex call (eigenvalues, singular values): half the element's size

  bool read() const { return access != kOut; }
  bool written() const { return access != kIn; }
  // Elements the operand consists of (a triangle's, not the square's).
  double elements() const {
    if (shape == kLower || shape == kUpper) return double(rows) * double(rows + 1) / 2;
    return double(rows) * double(cols);
  }
  // Elements of memory it spans, from its first to its last element.
  std::int64_t span() const {
    if (shape == kVector) return rows > 0 ? 1 + (rows - 1) * (ld < 0 ? -ld : ld) : 0;
    return rows > 0 && cols > 0 ? (cols - 1) * ld + rows : 0;
  }
};

// Memory index of element i of a BLAS vector of n elements at increment inc (negative: the last element first).
inline constexpr std::int64_t vidx(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc > 0 ? i * inc : (n - 1 - i) * (-inc);
}

}  // namespace bo::routines
