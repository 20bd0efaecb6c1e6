// Element-exact staging of host operands for the direct (whole-operand) path: packing a matrix, a triangle or a
// strided vector of any element size into the contiguous form a kernel sees, unpacking results back, and queuing an
// operand's upload in pieces. No CUDA here (copies are queued through a callback), so CI tests it.
//
// The packed form of an operand (routines/operand.h): a matrix is rows x cols with leading dimension rows; a
// triangle (kLower/kUpper) is n x n with leading dimension n of which only the triangle (diagonal included) is
// meaningful; a vector is its n elements in BLAS order (element i of x at vidx(i, n, inc) in host memory, so a
// negative increment starts at the end). Host memory outside what the operand covers (bytes between rows and ld,
// the other triangle, bytes between strided elements) is never read by unpack, nor written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "routines/operand.h"

namespace bom {

using bo::routines::Operand;

// Element i of a BLAS vector of n elements with increment inc (negative: the vector starts at the end).
using bo::routines::vidx;

// Elements of the packed form: rows * cols (matrix), n * n (triangle), n (vector).
int64_t packed_elements(const Operand& o);
// Leading dimension (or increment, for a vector) of the packed form: rows (at least 1), or 1.
int64_t packed_ld(const Operand& o);

// Host operand -> packed form (dst holds packed_elements(o) elements of es bytes; for a triangle only the triangle of
// dst is written). Small operands are copied by the caller's thread, large ones by the staging threads.
void pack_operand(void* dst, const void* src, const Operand& o, int es);
// Packed form -> host operand: exactly the elements the operand covers.
void unpack_operand(void* dst, const void* src, const Operand& o, int es);

// The pieces, for callers that stage one shape directly.
void pack_matrix(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int es);
void unpack_matrix(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int es);
void pack_triangle(void* dst, const void* src, int64_t n, int64_t ld, bool lower, int es);
void unpack_triangle(void* dst, const void* src, int64_t n, int64_t ld, bool lower, int es);
void pack_vector(void* dst, const void* src, int64_t n, int64_t inc, int es);
void unpack_vector(void* dst, const void* src, int64_t n, int64_t inc, int es);

// Queues a copy of `height` rows of `width` bytes from pinned host memory (pitch spitch) to device memory (pitch
// dpitch); false when it could not be queued. height 1 is a plain contiguous copy.
struct UploadQueue {
  void* ctx;
  bool (*copy)(void* ctx, void* dev, size_t dpitch, const void* pinned, size_t spitch, size_t width, size_t height);
};

// Large operands go in pieces of about this many bytes: the staging threads pack piece p+1 while the DMA of piece p
// runs.
constexpr int64_t kUploadPieceBytes = int64_t(8) << 20;

// Stages the host operand `src` into `pinned` (packed_elements(o) elements) and queues its copy to `dev` (the packed
// form, in device memory). A triangle goes up as column blocks of its trapezoids, about half the square's bytes; the
// rest of the device square is never written nor read. False when a copy could not be queued.
bool upload_operand(const UploadQueue& q, void* pinned, void* dev, const void* src, const Operand& o, int es);

}  // namespace bom
