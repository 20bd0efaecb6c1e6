// The process's userfaultfd (uffd_watch): the kernel's record of CPU writes must name exactly the pages written, by
// any path (stores, memcpy, read(2), /proc/self/mem, other threads, huge pages), and the change events of watched
// mappings (discard, unmap, move) must reach changes_since; the residency cache's correctness rests on both.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "offload/module/uffd_watch.h"

namespace bom {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kLen = 64 * kPage;

using Ranges = std::vector<std::pair<uintptr_t, uintptr_t>>;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }

class UffdWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!w().write_tracking(&why)) GTEST_SKIP() << "no write tracking here (" << why << ")";
  }
  void TearDown() override {
    for (auto& m : maps_) munmap(m.first, m.second);
  }
  static UffdWatch& w() { return UffdWatch::get(); }
  // A fresh private anonymous mapping, populated, followed by an inaccessible page so that the kernel does not merge
  // it with a neighbour (a watched range must be one whole mapping).
  char* Map(size_t len = kLen, size_t align = kPage) {
    const size_t span = len + align + kPage;
    char* raw = static_cast<char*>(mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) std::abort();
    char* p = reinterpret_cast<char*>((U(raw) + align - 1) & ~(align - 1));
    if (p > raw) munmap(raw, size_t(p - raw));
    const size_t tail = size_t(raw + span - (p + len + kPage));
    if (tail) munmap(p + len + kPage, tail);
    EXPECT_EQ(mprotect(p + len, kPage, PROT_NONE), 0);
    std::memset(p, 1, len);
    maps_.emplace_back(p, len + kPage);
    return p;
  }
  // A watched mapping whose pages are all write-protected (unwritten).
  char* Watched(size_t len = kLen, size_t align = kPage) {
    char* p = Map(len, align);
    EXPECT_TRUE(w().watch(U(p), U(p) + len));
    EXPECT_GE(w().scan_written(U(p), U(p) + len, true, [](uintptr_t, uintptr_t) {}), 0);
    return p;
  }
  // The page indices (from p) that a scan reports written; *n: what scan_written returned.
  static std::vector<size_t> Written(const char* p, size_t len, bool protect, int64_t* n = nullptr) {
    std::vector<size_t> pages;
    const int64_t r = w().scan_written(U(p), U(p) + len, protect, [&](uintptr_t lo, uintptr_t hi) {
      EXPECT_EQ(lo % kPage, 0u);
      EXPECT_EQ(hi % kPage, 0u);
      EXPECT_LT(lo, hi);
      EXPECT_GE(lo, U(p));
      EXPECT_LE(hi, U(p) + len);
      for (uintptr_t x = lo; x < hi; x += kPage) pages.push_back((x - U(p)) / kPage);
    });
    if (n) *n = r;
    if (r >= 0) {
      EXPECT_EQ(size_t(r), pages.size()) << "the count differs from the runs reported";
    }
    return pages;
  }
  static Ranges Changes(uint64_t* seq) {
    Ranges got;
    w().changes_since(seq, [&](uintptr_t lo, uintptr_t hi) { got.emplace_back(lo, hi); });
    return got;
  }
  // Forgets a mapping that the test unmapped or moved itself.
  void Forget(const char* p) {
    maps_.erase(
        std::remove_if(maps_.begin(), maps_.end(), [&](const std::pair<char*, size_t>& m) { return m.first == p; }),
        maps_.end());
  }
  std::vector<std::pair<char*, size_t>> maps_;
};

TEST_F(UffdWatchTest, ArmedMappingReportsNothingUntilWritten) {
  char* p = Map();
  ASSERT_TRUE(w().watch(U(p), U(p) + kLen));
  ASSERT_TRUE(w().watch(U(p), U(p) + kLen)) << "watch must be idempotent";
  int64_t n = -2;
  // Populated pages that were never protected count as written.
  EXPECT_EQ(Written(p, kLen, true, &n).size(), kLen / kPage);
  EXPECT_EQ(n, int64_t(kLen / kPage));
  EXPECT_TRUE(Written(p, kLen, true, &n).empty());
  EXPECT_EQ(n, 0);
}

TEST_F(UffdWatchTest, EveryWritePathIsReportedExactly) {
  char* p = Watched();
  p[3 * kPage + 17] = 42;                  // a plain store
  std::memset(p + 10 * kPage - 8, 7, 16);  // across a page boundary: pages 9 and 10
  std::vector<char> src(2 * kPage, 5);
  std::memcpy(p + 12 * kPage, src.data(), kPage);  // exactly page 12
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], src.data(), 2 * kPage - 100), ssize_t(2 * kPage - 100));
  // read(2): the kernel writes the buffer (a fault from kernel mode, resolved asynchronously all the same).
  ASSERT_EQ(read(fds[0], p + 20 * kPage + 50, 2 * kPage - 100), ssize_t(2 * kPage - 100));  // pages 20, 21
  close(fds[0]);
  close(fds[1]);
  std::thread([&] { p[30 * kPage] = 9; }).join();  // another thread
  const int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  if (mem >= 0) {  // a debugger's write (get_user_pages with FOLL_FORCE)
    const char c = 3;
    EXPECT_EQ(pwrite(mem, &c, 1, off_t(U(p + 40 * kPage + 5))), 1);
    close(mem);
  }
  std::vector<size_t> want = {3, 9, 10, 12, 20, 21, 30};
  if (mem >= 0) want.push_back(40);
  // Without protect, a scan leaves the record as it is.
  EXPECT_EQ(Written(p, kLen, false), want);
  EXPECT_EQ(Written(p, kLen, false), want);
  EXPECT_EQ(Written(p, kLen, true), want);
  EXPECT_TRUE(Written(p, kLen, true).empty()) << "a scan with protect must re-arm what it reported";
  // Written again after re-arming: only that page.
  p[9 * kPage] = 1;
  EXPECT_EQ(Written(p, kLen, true), std::vector<size_t>{9});
}

TEST_F(UffdWatchTest, ScanOfPartOfTheMappingReportsOnlyThatPart) {
  char* p = Watched();
  p[2 * kPage] = 1;
  p[8 * kPage] = 1;
  p[50 * kPage] = 1;
  EXPECT_EQ(Written(p + 4 * kPage, 16 * kPage, true), std::vector<size_t>{4});  // page 8, counted from p + 4 pages
  EXPECT_EQ(Written(p, kLen, true), (std::vector<size_t>{2, 50}));
}

TEST_F(UffdWatchTest, UnpopulatedPagesShowOnlyOnceWritten) {
  char* p = static_cast<char*>(mmap(nullptr, kLen + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  maps_.emplace_back(p, kLen + kPage);
  ASSERT_EQ(mprotect(p + kLen, kPage, PROT_NONE), 0);
  ASSERT_TRUE(w().watch(U(p), U(p) + kLen));
  int64_t n = -1;
  Written(p, kLen, true, &n);  // never-protected holes may count as written: unknown is the safe side
  EXPECT_GE(n, 0);
  EXPECT_TRUE(Written(p, kLen, true).empty());
  volatile char c = p[6 * kPage];  // a read maps the zero page: nothing changed
  (void)c;
  EXPECT_TRUE(Written(p, kLen, true).empty());
  p[5 * kPage] = 1;
  p[6 * kPage] = 1;
  EXPECT_EQ(Written(p, kLen, true), (std::vector<size_t>{5, 6}));
}

TEST_F(UffdWatchTest, ProtectOffMakesPagesShowAsWritten) {
  char* p = Watched();
  ASSERT_TRUE(w().protect(U(p) + 4 * kPage, U(p) + 7 * kPage, false));
  EXPECT_EQ(Written(p, kLen, false), (std::vector<size_t>{4, 5, 6}));
  ASSERT_TRUE(w().protect(U(p) + 4 * kPage, U(p) + 7 * kPage, true));
  EXPECT_TRUE(Written(p, kLen, false).empty()) << "protect(on) must re-arm";
  p[5 * kPage] = 2;
  EXPECT_EQ(Written(p, kLen, true), std::vector<size_t>{5});
}

TEST_F(UffdWatchTest, HugePagesAreTrackedPerSmallPage) {
  // 2 MiB aligned: with transparent huge pages on, the fill maps huge pages; write-protecting and writing single
  // small pages of them must still be exact (the kernel splits them).
  const size_t len = size_t(8) << 20;
  char* p = Watched(len, size_t(2) << 20);
  const std::vector<size_t> want = {0, 1, 511, 512, 700, 1500, 2047};
  for (size_t i : want) p[i * kPage + 100] = 3;
  EXPECT_EQ(Written(p, len, true), want);
  EXPECT_TRUE(Written(p, len, true).empty());
  std::memset(p + (size_t(2) << 20), 4, size_t(2) << 20);  // a whole huge page's worth
  EXPECT_EQ(Written(p, len, true).size(), 512u);
}

// mprotect keeps the write protection: pages made read-only and writable again still fault on their next write.
TEST_F(UffdWatchTest, WritesAfterMprotectAreReported) {
  char* p = Watched();
  ASSERT_EQ(mprotect(p + 4 * kPage, 8 * kPage, PROT_READ), 0);
  ASSERT_EQ(mprotect(p + 4 * kPage, 8 * kPage, PROT_READ | PROT_WRITE), 0);
  EXPECT_TRUE(Written(p, kLen, false).empty());
  p[6 * kPage] = 1;
  EXPECT_EQ(Written(p, kLen, true), std::vector<size_t>{6});
}

// After fork the pages are shared copy-on-write: the child's writes are its own, the parent's are reported.
TEST_F(UffdWatchTest, ForkedChildsWritesAreNotTheParents) {
  char* p = Watched();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::memset(p, 2, kLen);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(Written(p, kLen, false).empty());
  p[7 * kPage] = 1;
  EXPECT_EQ(Written(p, kLen, true), std::vector<size_t>{7});
}

TEST_F(UffdWatchTest, UnwatchedRangeIsRefused) {
  char* p = Map();
  int64_t n = 0;
  Written(p, kLen, true, &n);
  EXPECT_EQ(n, -1) << "a range without asynchronous write-protect must read as unknown";
}

TEST_F(UffdWatchTest, DiscardIsAnEvent) {
  char* p = Watched();
  uint64_t seq = w().sequence();
  Changes(&seq);
  // Blocks until the reader thread has read the event: it never needs anything this thread holds.
  ASSERT_EQ(madvise(p + 5 * kPage, 2 * kPage, MADV_DONTNEED), 0);
  const Ranges got = Changes(&seq);
  EXPECT_NE(std::find(got.begin(), got.end(), std::make_pair(U(p) + 5 * kPage, U(p) + 7 * kPage)), got.end())
      << "no REMOVE event for the discarded pages";
  EXPECT_TRUE(Changes(&seq).empty()) << "an event was reported twice";
  // A discarded page reads as zeros: its old contents are gone without any write.
  EXPECT_EQ(p[5 * kPage], 0);
  ASSERT_EQ(madvise(p + 9 * kPage, kPage, MADV_FREE), 0);
  const Ranges freed = Changes(&seq);
  EXPECT_NE(std::find(freed.begin(), freed.end(), std::make_pair(U(p) + 9 * kPage, U(p) + 10 * kPage)), freed.end())
      << "no REMOVE event for MADV_FREE";
}

TEST_F(UffdWatchTest, UnmapIsAnEventAndUnwatchedMemoryIsSilent) {
  char* p = Watched();
  char* q = Map();  // not watched
  uint64_t seq = w().sequence();
  Changes(&seq);
  ASSERT_EQ(munmap(q, kLen + kPage), 0);
  Forget(q);
  for (const auto& r : Changes(&seq)) EXPECT_FALSE(r.first < U(q) + kLen && U(q) < r.second) << "unwatched memory";
  std::thread([&] { ASSERT_EQ(munmap(p, kLen + kPage), 0); }).join();  // returns only once the event was read
  Forget(p);
  const Ranges got = Changes(&seq);
  bool seen = false;
  for (const auto& r : got) seen |= r.first <= U(p) && U(p) + kLen <= r.second && r.second <= U(p) + kLen + kPage;
  EXPECT_TRUE(seen) << "no UNMAP event covering the watched mapping";
}

TEST_F(UffdWatchTest, MapFixedOverAWatchedMappingIsAnUnmap) {
  char* p = Watched();
  uint64_t seq = w().sequence();
  Changes(&seq);
  void* q = mmap(p, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(q, p);
  bool seen = false;
  for (const auto& r : Changes(&seq)) seen |= r.first <= U(p) && U(p) + kLen <= r.second;
  EXPECT_TRUE(seen);
  int64_t n = 0;
  Written(p, kLen, true, &n);
  EXPECT_EQ(n, -1) << "the new mapping is not watched";
}

TEST_F(UffdWatchTest, MoveIsAnEventAndTrackingMovesAlong) {
  char* p = Watched();
  uint64_t seq = w().sequence();
  Changes(&seq);
  // The guard page makes growing in place impossible: the mapping moves.
  char* q = static_cast<char*>(mremap(p, kLen, 2 * kLen, MREMAP_MAYMOVE));
  ASSERT_NE(q, MAP_FAILED);
  ASSERT_NE(q, p);
  Forget(p);
  maps_.emplace_back(q, 2 * kLen);
  maps_.emplace_back(p + kLen, kPage);  // the guard stays behind
  const Ranges got = Changes(&seq);
  EXPECT_NE(std::find(got.begin(), got.end(), std::make_pair(U(p), U(p) + kLen)), got.end())
      << "no REMAP event for the moved range";
  // The registration goes with the mapping (UFFD_FEATURE_EVENT_REMAP): still tracked where it went.
  q[3 * kPage] = 1;
  int64_t n = 0;
  const std::vector<size_t> written = Written(q, kLen, true, &n);
  EXPECT_GE(n, 0);
  EXPECT_NE(std::find(written.begin(), written.end(), 3u), written.end());
}

TEST_F(UffdWatchTest, ShrinkingIsAnUnmapOfTheTail) {
  char* p = Watched();
  uint64_t seq = w().sequence();
  Changes(&seq);
  ASSERT_EQ(mremap(p, kLen, kLen / 2, 0), p);
  const Ranges got = Changes(&seq);
  EXPECT_NE(std::find(got.begin(), got.end(), std::make_pair(U(p) + kLen / 2, U(p) + kLen)), got.end());
}

}  // namespace
}  // namespace bom
