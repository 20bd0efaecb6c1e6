// The residency cache and writes that are not the program's: results written back into a copied matrix by CPU
// stores, and staged or DMA'd results reported through host_written.
#include <cstring>

#include "offload/module/uffd_watch.h"
#include "residency_fixture.h"

namespace bom::residency_test {
namespace {

// Outputs: the kernel computes in the device copy, the call writes the results back by CPU stores; those stores are
// ours, not the program's, so the next use must not upload the pages they covered.
TEST_F(ResidencyTest, OurWriteBackIsNotTheProgramsWrite) {
  char* p = Map(4 * kMiB);
  const Operand c = Vec(p, 4 * kMiB);
  Cache(c);
  for (int call = 0; call < 5; ++call) {
    const Lease l = Call(c, Role::kOutput);
    ASSERT_NE(l.dev, nullptr);
    FillElements(l.dev, c, 77 + uint64_t(call));  // the kernel
    CopyElements(p, l.dev, c);                    // the write-back
    rc_->wrote_back(l, c, false);
    rc_->release(l);
    const int64_t before = rc_->stats().uploaded_bytes;
    EXPECT_TRUE(Use(c));
    EXPECT_EQ(rc_->stats().uploaded_bytes, before) << "call " << call << ": our own write-back was uploaded again";
  }
  // A strided block whose columns start and end inside pages: fully covered pages are kept, the rest re-uploaded.
  StridedWriteBack(Operand{p + 4 * 37, 3000, 300, 3100, 4}, 91);
  EXPECT_TRUE(Use(c));
}

// Doubles (dgemm, dtrsm, ...): the same matrix as 8-byte elements is cached, served from one copy in any part and at
// any leading dimension, and its written pages, and only those, go up again.
TEST_F(ResidencyTest, DoubleMatricesAreCachedAndRevalidatedByTheirBytes) {
  char* p = Map(8 * kMiB);
  const Operand o{p, int64_t(kMiB), 1, int64_t(kMiB), 8};  // 8 MiB of doubles
  Cache(o);
  const ResidencyStats s = rc_->stats();
  EXPECT_EQ(s.uploaded_bytes, int64_t(8 * kMiB));
  EXPECT_EQ(s.device_bytes, int64_t(8 * kMiB));
  // A strided block of it (rows of 500 doubles, ld 1024 doubles: two pages per column) from the same copy.
  const Operand part{p + 8 * 100, 500, 1000, 1024, 8};
  EXPECT_TRUE(Use(part));
  EXPECT_EQ(rc_->stats().uploaded_bytes, s.uploaded_bytes);
  // Writes to the last element of the block (a double, at a byte offset no float layout would reach): one page again.
  double* last = reinterpret_cast<double*>(p) + 100 + 999 * 1024 + 499;
  *last = 2.25;
  EXPECT_TRUE(Use(part));
  EXPECT_EQ(rc_->stats().uploaded_bytes - s.uploaded_bytes, int64_t(kPage));
  // The saved bytes count 8 per element.
  EXPECT_GE(rc_->stats().saved_bytes - s.saved_bytes, int64_t(8 * 500 * 1000) - int64_t(kPage));
  // The policy's view of a double operand: resident, nothing to upload.
  int64_t reuses = 0, bytes = -1;
  EXPECT_EQ(rc_->state(part, ++use_, &reuses, &bytes), 1);
  EXPECT_EQ(bytes, 0);
}

// A double output written back by CPU stores: pages its 8-byte columns cover entirely are ours, not the program's.
TEST_F(ResidencyTest, OurWriteBackOfDoublesIsNotTheProgramsWrite) {
  char* p = Map(8 * kMiB);
  Cache(Operand{p, int64_t(kMiB), 1, int64_t(kMiB), 8});
  // Columns of 5.9 pages start and end inside pages. Taken for 4-byte elements, the write-back would cover under half
  // of each column: about 4 pages a column would go up again, more than StridedWriteBack allows.
  StridedWriteBack(Operand{p + 8 * 37, 3000, 300, 3100, 8}, 93);
  // Staged results (host_written) of doubles drop exactly their span's pages from the copy.
  const Operand tail{p + 7 * kMiB, int64_t(kMiB / 8), 1, int64_t(kMiB / 8), 8};  // the last MiB (256 pages)
  FillElements(const_cast<char*>(static_cast<const char*>(tail.p)), tail, 5);
  rc_->host_written(tail);
  const int64_t b2 = rc_->stats().uploaded_bytes;
  EXPECT_TRUE(Use(tail));
  EXPECT_EQ(rc_->stats().uploaded_bytes - b2, int64_t(kMiB));
}

// Two calls computing the top and bottom rows of one matrix at once share its pages: the pages that the top's
// write-back covers only in part hold the bottom's results too, and must not be taken for ours.
TEST_F(ResidencyTest, WritesNextToAnOutputDuringItsCallAreKept) {
  char* p = Map(4 * kMiB);
  const int64_t ld = 4096;  // a column is 4 pages: the top's rows fill 2.9 of them
  const Operand top{p, 3000, 256, ld, 4}, bottom{p + 4 * 3000, 1096, 256, ld, 4};
  Cache(Vec(p, 4 * kMiB));
  const Lease l = Call(top, Role::kOutput);
  ASSERT_NE(l.dev, nullptr);
  FillElements(p + 4 * 3000, bottom, 5);  // the other call's results, stored meanwhile
  FillElements(l.dev, top, 6);
  CopyElements(p, l.dev, top);
  rc_->wrote_back(l, top, false);
  rc_->release(l);
  EXPECT_TRUE(Use(Vec(p, 4 * kMiB)));
}

TEST_F(ResidencyTest, AProgramRewritingOurResultsIsStillServedCorrectly) {
  char* p = Map(4 * kMiB);
  const Operand c = Vec(p, 4 * kMiB);
  Cache(c);
  for (int call = 0; call < 6; ++call) {
    const Lease l = Call(c, Role::kOutput);
    if (l.dev) {
      FillElements(l.dev, c, 500 + uint64_t(call));
      CopyElements(p, l.dev, c);
      rc_->wrote_back(l, c, false);
    } else {
      FillElements(p, c, 500 + uint64_t(call));
      rc_->host_written(c);
    }
    rc_->release(l);
    Fill(p + kPage * 10 * size_t(call), 20 * kPage, 900 + uint64_t(call));  // the program updates part of it
    Use(c);
  }
}

// Writes the kernel cannot see (DMA into pages registered for it) reach the cache only through host_written. The
// test hides CPU stores from the kernel's record by write-protecting the pages again right after them.
TEST_F(ResidencyTest, HostWrittenDropsPagesTheKernelCannotSee) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  const Operand part{p + 10 * kPage + 8, 100000, 3, 120000, 4};
  FillElements(const_cast<char*>(static_cast<const char*>(part.p)), part, 5);
  ASSERT_TRUE(UffdWatch::get().protect(PageDown(U(part.p)), PageUp(SpanEnd(part)), true));
  rc_->host_written(part);
  EXPECT_TRUE(Use(o));
  EXPECT_TRUE(Use(part));
  // The control: the same hidden write without host_written is not seen (so the check above is meaningful).
  FillElements(const_cast<char*>(static_cast<const char*>(part.p)), part, 6);
  ASSERT_TRUE(UffdWatch::get().protect(PageDown(U(part.p)), PageUp(SpanEnd(part)), true));
  const Lease l = rc_->acquire(o, Role::kInput, nullptr, ++use_);
  ASSERT_NE(l.dev, nullptr);
  EXPECT_NE(Mismatch(l.dev, o), "") << "the hidden write was seen after all: this test proves nothing";
  rc_->release(l);
  rc_->host_written(part);
  EXPECT_TRUE(Use(o));
}

// Results the module staged into a candidate (no copy yet) are its own writes: the sample must not see them.
TEST_F(ResidencyTest, StagedOutputDoesNotBackOffACandidate) {
  char* p = Map(4 * kMiB);
  const Operand c = Vec(p, 4 * kMiB);
  EXPECT_FALSE(Use(c));
  const Lease l = Call(c, Role::kOutput);  // second use: the sample is armed
  EXPECT_EQ(l.dev, nullptr);
  FillElements(p, c, 3);
  rc_->host_written(c);
  rc_->release(l);
  EXPECT_TRUE(Use(c));
  EXPECT_EQ(rc_->stats().backoffs, 0);
}

}  // namespace
}  // namespace bom::residency_test
