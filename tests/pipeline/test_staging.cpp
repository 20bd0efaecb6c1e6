// The direct path's staging (staging.h) for 4- and 8-byte elements: packing reads exactly the operand's elements,
// unpacking writes exactly those (never bytes between rows, the other triangle, or between strided elements), vectors
// keep BLAS order for negative increments, and an upload in pieces (a host stand-in for the DMA) lands every element
// where the kernel expects it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "offload/module/staging.h"

namespace bom {
namespace {

// A distinct, nonzero byte pattern per element index and byte (any element size).
uint8_t Pattern(int64_t element, int byte) { return uint8_t(element * 37 + byte * 11 + 1) | 1; }
constexpr uint8_t kSentinel = 0;  // Pattern never produces it (bit 0 set)

void FillPattern(std::vector<uint8_t>& buf, int es) {
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = Pattern(int64_t(i) / es, int(i % size_t(es)));
}

// Whether host element (i, j) of the operand (column-major, ld) is covered by it.
bool Covered(const Operand& o, int64_t i, int64_t j) {
  switch (o.shape) {
    case Operand::kMatrix:
      return i < o.rows && j < o.cols;
    case Operand::kLower:
      return i < o.rows && j < o.rows && i >= j;
    case Operand::kUpper:
      return i < o.rows && j < o.rows && i <= j;
    case Operand::kVector:
      return false;
  }
  return false;
}

Operand Mat(Operand::Shape shape, int64_t rows, int64_t cols, int64_t ld, Operand::Access access = Operand::kInOut) {
  Operand o{};
  o.slot = 2;
  o.shape = shape;
  o.access = access;
  o.rows = rows;
  o.cols = cols;
  o.ld = ld;
  return o;
}
Operand Vec(int64_t n, int64_t inc) {
  Operand o{};
  o.slot = 1;
  o.shape = Operand::kVector;
  o.access = Operand::kInOut;
  o.rows = n;
  o.cols = 1;
  o.ld = inc;
  return o;
}

// Packs a host matrix/triangle, checks the packed form, unpacks into a sentinel-filled host buffer, checks that only
// covered elements were written, with their values.
void CheckMatrixRoundTrip(const Operand& o, int es) {
  SCOPED_TRACE(::testing::Message() << "shape " << int(o.shape) << " " << o.rows << "x" << o.cols << " ld " << o.ld
                                    << " es " << es);
  const int64_t cols = o.shape == Operand::kMatrix ? o.cols : o.rows;
  const size_t host_bytes = size_t(es) * size_t((cols - 1) * o.ld + o.rows);
  std::vector<uint8_t> host(host_bytes);
  FillPattern(host, es);
  const int64_t n_packed = packed_elements(o);
  ASSERT_EQ(n_packed, o.rows * cols);
  ASSERT_EQ(packed_ld(o), o.rows);
  std::vector<uint8_t> packed(size_t(n_packed) * size_t(es), kSentinel);
  pack_operand(packed.data(), host.data(), o, es);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < o.rows; ++i) {
      const uint8_t* p = &packed[size_t(es) * size_t(i + j * o.rows)];
      for (int b = 0; b < es; ++b) {
        if (Covered(o, i, j)) {
          ASSERT_EQ(p[b], Pattern(i + j * o.ld, b)) << "packed element (" << i << ", " << j << ")";
        } else {
          ASSERT_EQ(p[b], kSentinel) << "packed outside the triangle at (" << i << ", " << j << ")";
        }
      }
    }
  // Results: a new pattern in the packed form, unpacked into a host buffer of sentinels.
  for (size_t q = 0; q < packed.size(); ++q) packed[q] = uint8_t(Pattern(int64_t(q), 3) ^ 0x80) | 1;
  std::vector<uint8_t> out(host_bytes, kSentinel);
  unpack_operand(out.data(), packed.data(), o, es);
  for (int64_t e = 0; e < int64_t(host_bytes) / es; ++e) {
    const int64_t i = e % o.ld, j = e / o.ld;
    for (int b = 0; b < es; ++b) {
      const uint8_t got = out[size_t(e) * size_t(es) + size_t(b)];
      if (Covered(o, i, j)) {
        ASSERT_EQ(got, packed[size_t(es) * size_t(i + j * o.rows) + size_t(b)]) << "element (" << i << ", " << j << ")";
      } else {
        ASSERT_EQ(got, kSentinel) << "unpack wrote outside the operand at (" << i << ", " << j << ")";
      }
    }
  }
}

TEST(Staging, MatricesAndTrianglesAreElementExactForFloatsAndDoubles) {
  for (int es : {4, 8})
    for (auto shape : {Operand::kMatrix, Operand::kLower, Operand::kUpper})
      for (int64_t rows : {1, 2, 7, 64, 301})
        for (int64_t pad : {0, 3}) {
          const int64_t cols = shape == Operand::kMatrix ? rows / 2 + 1 : rows;
          CheckMatrixRoundTrip(Mat(shape, rows, cols, rows + pad), es);
        }
}

// Large enough for the threaded pack and unpack paths.
TEST(Staging, LargeMatricesGoThroughTheStagingThreads) {
  for (int es : {4, 8}) CheckMatrixRoundTrip(Mat(Operand::kMatrix, 1500, 1500, 1507), es);
}

TEST(Staging, VectorsKeepBlasOrderForEveryIncrement) {
  for (int es : {4, 8})
    for (int64_t inc : {1, 2, 3, -1, -2, -5})
      for (int64_t n : {1, 2, 9, 1000}) {
        SCOPED_TRACE(::testing::Message() << "n " << n << " inc " << inc << " es " << es);
        const Operand o = Vec(n, inc);
        ASSERT_EQ(packed_elements(o), n);
        ASSERT_EQ(packed_ld(o), 1);
        const int64_t span = (n - 1) * (inc < 0 ? -inc : inc) + 1;
        std::vector<uint8_t> host(size_t(span) * size_t(es));
        FillPattern(host, es);
        std::vector<uint8_t> packed(size_t(n) * size_t(es), kSentinel);
        pack_operand(packed.data(), host.data(), o, es);
        for (int64_t i = 0; i < n; ++i) {
          // BLAS: element i of x is x[i * inc] for inc > 0, x[(n - 1 - i) * |inc|] for inc < 0.
          const int64_t at = inc > 0 ? i * inc : (n - 1 - i) * -inc;
          ASSERT_EQ(vidx(i, n, inc), at);
          for (int b = 0; b < es; ++b) ASSERT_EQ(packed[size_t(i) * size_t(es) + size_t(b)], Pattern(at, b));
        }
        for (size_t q = 0; q < packed.size(); ++q) packed[q] = uint8_t(q * 5 + 2) | 1;
        std::vector<uint8_t> out(host.size(), kSentinel);
        unpack_operand(out.data(), packed.data(), o, es);
        for (int64_t e = 0; e < span; ++e) {
          const int64_t stride = inc < 0 ? -inc : inc;
          const bool covered = e % stride == 0;
          const int64_t i = inc > 0 ? e / stride : n - 1 - e / stride;
          for (int b = 0; b < es; ++b) {
            const uint8_t got = out[size_t(e) * size_t(es) + size_t(b)];
            if (covered)
              ASSERT_EQ(got, packed[size_t(i) * size_t(es) + size_t(b)]) << "element " << i;
            else
              ASSERT_EQ(got, kSentinel) << "wrote between strided elements at " << e;
          }
        }
      }
}

// The device stand-in: a byte array the queued copies write into (2D copies with pitches, as cudaMemcpy2DAsync).
struct FakeDma {
  std::vector<uint8_t>* dev;
  int copies = 0;
  bool fail_after_first = false;
  static bool Copy(void* ctx, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
    FakeDma* d = static_cast<FakeDma*>(ctx);
    if (d->fail_after_first && d->copies > 0) return false;
    uint8_t* base = d->dev->data();
    uint8_t* to = static_cast<uint8_t*>(dst);
    EXPECT_GE(to, base);
    EXPECT_LE(to + (height - 1) * dpitch + width, base + d->dev->size()) << "a copy past the device buffer";
    if (height > 1) {
      EXPECT_GE(dpitch, width);
    }
    for (size_t r = 0; r < height; ++r)
      std::memcpy(to + r * dpitch, static_cast<const uint8_t*>(src) + r * spitch, width);
    ++d->copies;
    return true;
  }
};

void CheckUpload(const Operand& o, int es, int min_copies) {
  SCOPED_TRACE(::testing::Message() << "upload shape " << int(o.shape) << " " << o.rows << "x" << o.cols << " ld "
                                    << o.ld << " es " << es);
  const bool vec = o.shape == Operand::kVector;
  const int64_t cols = o.shape == Operand::kMatrix ? o.cols : vec ? 1 : o.rows;
  const int64_t span = vec ? (o.rows - 1) * (o.ld < 0 ? -o.ld : o.ld) + 1 : (cols - 1) * o.ld + o.rows;
  std::vector<uint8_t> host(size_t(span) * size_t(es));
  FillPattern(host, es);
  const size_t bytes = size_t(packed_elements(o)) * size_t(es);
  std::vector<uint8_t> pinned(bytes), dev(bytes, kSentinel);
  FakeDma dma{&dev};
  ASSERT_TRUE(upload_operand(UploadQueue{&dma, FakeDma::Copy}, pinned.data(), dev.data(), host.data(), o, es));
  EXPECT_GE(dma.copies, min_copies);
  if (vec) {
    for (int64_t i = 0; i < o.rows; ++i)
      for (int b = 0; b < es; ++b)
        ASSERT_EQ(dev[size_t(i) * size_t(es) + size_t(b)], Pattern(vidx(i, o.rows, o.ld), b));
    return;
  }
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < o.rows; ++i)
      if (Covered(o, i, j)) {
        for (int b = 0; b < es; ++b)
          ASSERT_EQ(dev[size_t(es) * size_t(i + j * o.rows) + size_t(b)], Pattern(i + j * o.ld, b))
              << "device element (" << i << ", " << j << ")";
      }
  // A failed copy is reported.
  FakeDma broken{&dev, 0, true};
  if (dma.copies > 1) {
    EXPECT_FALSE(upload_operand(UploadQueue{&broken, FakeDma::Copy}, pinned.data(), dev.data(), host.data(), o, es));
  }
}

TEST(Staging, UploadsLandEveryElementWhereTheKernelReadsIt) {
  for (int es : {4, 8}) {
    CheckUpload(Mat(Operand::kMatrix, 33, 17, 40, Operand::kIn), es, 1);
    CheckUpload(Mat(Operand::kLower, 100, 100, 103, Operand::kIn), es, 1);
    CheckUpload(Mat(Operand::kUpper, 100, 100, 100, Operand::kIn), es, 1);
    CheckUpload(Vec(77, -3), es, 1);
    CheckUpload(Vec(5, 1), es, 1);
    // Large: several column pieces (8 MiB each) and several trapezoid blocks.
    CheckUpload(Mat(Operand::kMatrix, 1200, 2000, 1201, Operand::kIn), es, 2);
    CheckUpload(Mat(Operand::kLower, 2100, 2100, 2105, Operand::kIn), es, 2);
    CheckUpload(Mat(Operand::kUpper, 2100, 2100, 2100, Operand::kIn), es, 2);
  }
}

}  // namespace
}  // namespace bom
