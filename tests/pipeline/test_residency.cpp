// The residency cache (residency): device copies are made only of matrices the program leaves alone, are served
// without uploads while unchanged, and never differ from host memory whatever the program does to it. The device is
// a host stand-in (allocations filled with a pattern no host buffer holds); the kernel's write record and events are
// real, so these run in CI where userfaultfd has write tracking and skip elsewhere.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "offload/module/residency.h"
#include "offload/module/uffd_watch.h"

namespace bom {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMiB = size_t(1) << 20;
using Role = Residency::Role;
using Operand = Residency::Operand;
using Lease = Residency::Lease;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }
uintptr_t PageDown(uintptr_t x) { return x & ~(kPage - 1); }
uintptr_t PageUp(uintptr_t x) { return (x + kPage - 1) & ~(kPage - 1); }

// A pseudo-random pattern, one 64-bit step per 8 bytes (buffers of megabytes are refilled thousands of times).
void Fill(void* p, size_t bytes, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  char* c = static_cast<char*>(p);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(c + i, &x, 8);
  }
  for (; i < bytes; ++i) c[i] = char(x >> (8 * (i & 7)));
}

// One past the operand's last element.
uintptr_t SpanEnd(const Operand& o) { return U(o.p) + size_t(o.elem_size) * size_t((o.cols - 1) * o.ld + o.rows); }

// "" when the device copy holds exactly the host's elements, else where they first differ.
std::string Mismatch(const char* dev, const Operand& o) {
  const char* h = static_cast<const char*>(o.p);
  for (int64_t j = 0; j < o.cols; ++j) {
    const size_t es = size_t(o.elem_size), off = es * size_t(j) * size_t(o.ld), n = es * size_t(o.rows);
    if (std::memcmp(dev + off, h + off, n) == 0) continue;
    size_t i = 0;
    while (dev[off + i] == h[off + i]) ++i;
    char buf[200];
    std::snprintf(buf, sizeof buf, "column %" PRId64 " byte %zu (host page +%zu of the operand): device %02x host %02x",
                  j, i, (PageDown(U(h + off + i)) - PageDown(U(h))) / kPage, unsigned(uint8_t(dev[off + i])),
                  unsigned(uint8_t(h[off + i])));
    return buf;
  }
  return "";
}

// Copies the operand's elements from one layout-identical place to another (the kernel's write-back by CPU stores).
void CopyElements(char* dst, const char* src, const Operand& o) {
  const size_t es = size_t(o.elem_size);
  for (int64_t j = 0; j < o.cols; ++j)
    std::memcpy(dst + es * size_t(j) * size_t(o.ld), src + es * size_t(j) * size_t(o.ld), es * size_t(o.rows));
}
void FillElements(char* dst, const Operand& o, uint64_t seed) {
  const size_t es = size_t(o.elem_size);
  for (int64_t j = 0; j < o.cols; ++j)
    Fill(dst + es * size_t(j) * size_t(o.ld), es * size_t(o.rows), seed + uint64_t(j));
}

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::abort();
}

int64_t MinorFaults() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return r.ru_minflt;
}

// The stand-in device. Allocations are host mappings filled with 0xA5 (a page never uploaded cannot pass for one
// that was); every upload must land inside a live allocation; "pinned by the program" is a set of host ranges.
struct FakeDevice {
  std::mutex mu;
  std::map<uintptr_t, size_t> live;
  int64_t live_bytes = 0, uploaded = 0, bad = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> pinned;

  static void* Alloc(void* ctx, size_t bytes) {
    FakeDevice* d = static_cast<FakeDevice*>(ctx);
    void* p = mmap(nullptr, bytes + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    mprotect(static_cast<char*>(p) + bytes, kPage, PROT_NONE);  // never merged with a host buffer
    std::memset(p, 0xA5, bytes);
    std::lock_guard<std::mutex> g(d->mu);
    d->live[U(p)] = bytes;
    d->live_bytes += int64_t(bytes);
    return p;
  }
  static void Release(void* ctx, void* dev, size_t bytes) {
    FakeDevice* d = static_cast<FakeDevice*>(ctx);
    std::lock_guard<std::mutex> g(d->mu);
    auto it = d->live.find(U(dev));
    if (it == d->live.end() || it->second != bytes) {
      ++d->bad;
      return;
    }
    munmap(dev, bytes + kPage);
    d->live_bytes -= int64_t(bytes);
    d->live.erase(it);
  }
  static bool Upload(void* ctx, void*, const CopyRun* runs, int n) {
    FakeDevice* d = static_cast<FakeDevice*>(ctx);
    std::lock_guard<std::mutex> g(d->mu);
    for (int i = 0; i < n; ++i) {
      const uintptr_t a = U(runs[i].dev), b = a + runs[i].bytes;
      auto it = d->live.upper_bound(a);
      if (it == d->live.begin() || runs[i].bytes == 0 || runs[i].bytes % kPage) {
        ++d->bad;
        continue;
      }
      --it;
      if (b > it->first + it->second) {
        ++d->bad;
        continue;
      }
      std::memcpy(runs[i].dev, runs[i].host, runs[i].bytes);
      d->uploaded += int64_t(runs[i].bytes);
    }
    return true;
  }
  static bool Pinned(void* ctx, const void* p) {
    FakeDevice* d = static_cast<FakeDevice*>(ctx);
    std::lock_guard<std::mutex> g(d->mu);
    for (const auto& r : d->pinned)
      if (r.first <= U(p) && U(p) < r.second) return true;
    return false;
  }
  void Pin(const void* p, size_t len) {
    std::lock_guard<std::mutex> g(mu);
    pinned.emplace_back(U(p), U(p) + len);
  }
  void Unpin(const void* p) {
    std::lock_guard<std::mutex> g(mu);
    pinned.erase(std::remove_if(pinned.begin(), pinned.end(),
                                [&](const std::pair<uintptr_t, uintptr_t>& r) { return r.first == U(p); }),
                 pinned.end());
  }
  int64_t Uploaded() {
    std::lock_guard<std::mutex> g(mu);
    return uploaded;
  }
  ResidencyOps Ops() { return ResidencyOps{this, Alloc, Release, Upload, Pinned}; }
  ~FakeDevice() {
    for (const auto& a : live) munmap(reinterpret_cast<void*>(a.first), a.second + kPage);
  }
};

// A fresh private anonymous mapping followed by an inaccessible page so that the kernel does not merge it with a
// neighbour; at `at` it replaces what is there in one step (MAP_FIXED).
char* MapGuarded(size_t len, void* at = nullptr) {
  void* p = mmap(at, len + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  if (p == MAP_FAILED) Die("mmap");
  if (mprotect(static_cast<char*>(p) + len, kPage, PROT_NONE) != 0) Die("mprotect");
  return static_cast<char*>(p);
}
// The same, filled from `seed`.
char* MapFilled(size_t len, uint64_t seed, void* at = nullptr) {
  char* p = MapGuarded(len, at);
  Fill(p, len, seed);
  return p;
}

Operand Vec(const void* p, size_t bytes) { return Operand{p, int64_t(bytes / 4), 1, int64_t(bytes / 4), 4}; }

class ResidencyTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(int64_t(1) << 30); }
  void TearDown() override {
    if (rc_) {
      EXPECT_EQ(dev_.bad, 0) << "an upload outside a live allocation, or a release of an unknown one";
      const ResidencyStats s = rc_->stats();
      EXPECT_EQ(s.device_bytes, dev_.live_bytes) << "the cache's account of device memory is off";
    }
    delete rc_;
    for (auto& m : maps_) munmap(m.first, m.second);
  }
  // A new cache with this budget (the old one's device memory is freed at the end of the test).
  void Start(int64_t budget) {
    delete rc_;
    rc_ = new Residency(dev_.Ops(), budget);
    std::string why;
    if (!rc_->available(&why)) GTEST_SKIP() << "no write tracking here (" << why << "): residency is off";
  }
  char* Map(size_t len, void* at = nullptr) {
    char* p = MapFilled(len, ++seed_, at);
    if (!at) maps_.emplace_back(p, len + kPage);
    return p;
  }
  // One simulated call using one operand: every lease it gets must mirror the host exactly.
  Lease Call(const Operand& o, Role role = Role::kInput) {
    const Lease l = rc_->acquire(o, role, nullptr, ++use_);
    if (l.dev) {
      EXPECT_EQ(Mismatch(l.dev, o), "") << "call " << use_ << ": the device copy differs from host memory";
    }
    return l;
  }
  bool Use(const Operand& o) {
    const Lease l = Call(o);
    rc_->release(l);
    return l.dev != nullptr;
  }
  // Uses until a lease comes (at most n calls); how many calls that took, or -1.
  int UseUntilLeased(const Operand& o, int n = 16) {
    for (int i = 1; i <= n; ++i)
      if (Use(o)) return i;
    return -1;
  }
  // An output block of a cached matrix computed in its copy and written back by CPU stores: at the next use only the
  // pages its columns cover in part go up again (at most two a column), never the whole span.
  void StridedWriteBack(const Operand& s, uint64_t seed) {
    const Lease l = Call(s, Role::kOutput);
    ASSERT_NE(l.dev, nullptr);
    FillElements(l.dev, s, seed);
    CopyElements(const_cast<char*>(static_cast<const char*>(s.p)), l.dev, s);
    rc_->wrote_back(l, s, false);
    rc_->release(l);
    const int64_t before = rc_->stats().uploaded_bytes;
    EXPECT_TRUE(Use(s));
    const int64_t again = rc_->stats().uploaded_bytes - before;
    const int64_t pages = int64_t(PageUp(SpanEnd(s)) - PageDown(U(s.p))) / int64_t(kPage);
    EXPECT_LE(again, 2 * s.cols * int64_t(kPage)) << "more than the partly covered pages were uploaded";
    EXPECT_LT(again, pages * int64_t(kPage));
  }
  // A copy of o, made by the three clean uses it takes.
  void Cache(const Operand& o) {
    ASSERT_FALSE(Use(o));
    ASSERT_FALSE(Use(o));
    ASSERT_TRUE(Use(o)) << "no copy on the third clean use";
  }

  FakeDevice dev_;
  Residency* rc_ = nullptr;
  uint64_t use_ = 0, seed_ = 1000;
  std::vector<std::pair<char*, size_t>> maps_;
};

TEST_F(ResidencyTest, CopyOnTheThirdCleanUseThenNoUploads) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  EXPECT_FALSE(Use(o));  // first use: a candidate
  EXPECT_FALSE(Use(o));  // second: its sample is armed
  EXPECT_EQ(dev_.live_bytes, 0);
  EXPECT_TRUE(Use(o));
  ResidencyStats s = rc_->stats();
  EXPECT_EQ(s.created, 1);
  EXPECT_EQ(s.uploaded_bytes, int64_t(4 * kMiB));
  EXPECT_EQ(s.reuploaded_bytes, 0);
  EXPECT_EQ(dev_.Uploaded(), int64_t(4 * kMiB));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Use(o));
  // Any part of it, as a matrix with a leading dimension, is served from the same copy.
  EXPECT_TRUE(Use(Operand{p + 4 * 100, 500, 1000, 1024, 4}));
  const ResidencyStats t = rc_->stats();
  EXPECT_EQ(t.uploaded_bytes, s.uploaded_bytes) << "an unchanged matrix was uploaded again";
  EXPECT_EQ(dev_.Uploaded(), int64_t(4 * kMiB));
  EXPECT_EQ(t.hits, s.hits + 4);
  EXPECT_EQ(t.created, 1);
  EXPECT_GE(t.saved_bytes, int64_t(3 * 4 * kMiB));
  EXPECT_EQ(t.device_bytes, int64_t(4 * kMiB));
}

TEST_F(ResidencyTest, WrittenPagesAndOnlyThoseAreUploadedAgain) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  const ResidencyStats s = rc_->stats();
  const int64_t up = dev_.Uploaded();
  reinterpret_cast<float*>(p)[3 * 1024 + 5] = 1.5f;  // page 3
  std::memset(p + 100 * kPage - 6, 0x11, 12);        // pages 99 and 100
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::vector<char> src(kPage, 0x22);
  ASSERT_EQ(write(fds[1], src.data(), kPage), ssize_t(kPage));
  ASSERT_EQ(read(fds[0], p + 500 * kPage, kPage), ssize_t(kPage));  // page 500, written by the kernel
  close(fds[0]);
  close(fds[1]);
  std::thread([&] { p[800 * kPage + 7] = 0x33; }).join();  // page 800, by another thread
  EXPECT_TRUE(Use(o));
  const ResidencyStats t = rc_->stats();
  EXPECT_EQ(t.uploaded_bytes - s.uploaded_bytes, int64_t(5 * kPage));
  EXPECT_EQ(t.reuploaded_bytes - s.reuploaded_bytes, int64_t(5 * kPage));
  EXPECT_EQ(t.written_pages - s.written_pages, 5);
  EXPECT_EQ(dev_.Uploaded() - up, int64_t(5 * kPage));
  EXPECT_TRUE(Use(o));
  EXPECT_EQ(rc_->stats().uploaded_bytes, t.uploaded_bytes);
}

TEST_F(ResidencyTest, StateAndAcquireOfOneCallCountOneUse) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  int64_t reuses = -1, bytes = -1;
  for (int call = 1; call <= 2; ++call) {
    ++use_;
    EXPECT_EQ(rc_->state(o, use_, &reuses, &bytes), 0) << "call " << call;
    const Lease l = rc_->acquire(o, Role::kInput, nullptr, use_);
    EXPECT_EQ(l.dev, nullptr) << "call " << call << " counted twice";
    rc_->release(l);
  }
  ++use_;
  EXPECT_EQ(rc_->state(o, use_, &reuses, &bytes), 2);
  EXPECT_EQ(reuses, 1);
  EXPECT_EQ(bytes, int64_t(4 * kMiB));
  const Lease l = rc_->acquire(o, Role::kInput, nullptr, use_);
  ASSERT_NE(l.dev, nullptr) << "the policy was told 'clean candidate' and the call then got no copy";
  EXPECT_EQ(Mismatch(l.dev, o), "");
  rc_->release(l);
  ++use_;
  EXPECT_EQ(rc_->state(o, use_, &reuses, &bytes), 1);
  EXPECT_EQ(bytes, 0);
}

// The model's queries look at a clean candidate's samples (one system call per sample page) every kScanEvery-th use
// only; writes in between are found at the next look, and a GPU call of the same call looks at once.
TEST_F(ResidencyTest, QueriesLookAtTheSamplesOnlyNowAndThen) {
  char* p = Map(8 * kMiB);
  const Operand o = Vec(p, 8 * kMiB);
  int64_t reuses = -1, bytes = -1;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(rc_->state(o, ++use_, &reuses, &bytes), 0);  // a candidate; its sample armed
  const int64_t before = rc_->stats().sample_scans;
  constexpr int kQueries = 10 * Residency::kScanEvery;
  for (int i = 0; i < kQueries; ++i) ASSERT_EQ(rc_->state(o, ++use_, &reuses, &bytes), 2) << "query " << i;
  EXPECT_EQ(reuses, kQueries);
  EXPECT_LE(rc_->stats().sample_scans - before, kQueries / Residency::kScanEvery);
  EXPECT_GE(rc_->stats().sample_scans - before, kQueries / Residency::kScanEvery - 1);

  // Written now: found within kScanEvery queries.
  reinterpret_cast<float*>(p)[5] = 2.5f;
  int found = -1;
  for (int i = 0; i < Residency::kScanEvery && found < 0; ++i)
    if (rc_->state(o, ++use_, &reuses, &bytes) == 0) found = i;
  EXPECT_GE(found, 0) << "a write to a sample page went unseen past kScanEvery queries";
  EXPECT_EQ(rc_->stats().backoffs, 1);

  // A GPU call looks at once, even when its own query did not.
  char* q = Map(8 * kMiB);
  const Operand r = Vec(q, 8 * kMiB);
  for (int i = 0; i < 3; ++i) EXPECT_NE(rc_->state(r, ++use_, &reuses, &bytes), 1);
  reinterpret_cast<float*>(q)[5] = 2.5f;
  ++use_;
  EXPECT_EQ(rc_->state(r, use_, &reuses, &bytes), 2) << "this query was to count the use without a look";
  const Lease l = rc_->acquire(r, Role::kInput, nullptr, use_);
  EXPECT_EQ(l.dev, nullptr) << "a copy was made of a matrix written since its candidate's last look";
  rc_->release(l);
  EXPECT_EQ(rc_->stats().backoffs, 2);
}

// A look reads the samples' span in one scan (up to kSpanScanPages) or each sample on its own (beyond): either way a
// write between samples is not a sample's, and a write to the last sample is found.
TEST_F(ResidencyTest, ALookTellsSamplesFromThePagesBetweenThem) {
  for (const size_t len : {8 * kMiB, (Residency::kSpanScanPages + 4096) * kPage}) {
    SCOPED_TRACE(len);
    char* p = Map(len);
    const Operand o = Vec(p, len);
    const size_t step = len / kPage / Residency::kSamples;  // the sample's stride in pages (residency.cpp)
    ASSERT_GT(step, 2u);
    int64_t reuses = -1, bytes = -1;
    for (int i = 0; i < 2; ++i) EXPECT_EQ(rc_->state(o, ++use_, &reuses, &bytes), 0);  // its sample armed
    const int64_t backoffs = rc_->stats().backoffs, scans = rc_->stats().sample_scans;
    p[1 * kPage] = 1;                                         // between samples 0 and 1
    p[(Residency::kSamples - 1) * step * kPage - kPage] = 1;  // just before the last sample
    for (int i = 0; i < 2 * Residency::kScanEvery; ++i) ASSERT_EQ(rc_->state(o, ++use_, &reuses, &bytes), 2) << i;
    EXPECT_GE(rc_->stats().sample_scans - scans, 1) << "no look was taken";
    EXPECT_EQ(rc_->stats().backoffs, backoffs) << "a write between samples was taken for a sample's";
    p[(Residency::kSamples - 1) * step * kPage + 8] = 1;  // the last sample
    int found = -1;
    for (int i = 0; i < Residency::kScanEvery && found < 0; ++i)
      if (rc_->state(o, ++use_, &reuses, &bytes) == 0) found = i;
    EXPECT_GE(found, 0) << "a write to the last sample page went unseen";
    EXPECT_EQ(rc_->stats().backoffs, backoffs + 1);
  }
}

// An arena: one mapping, one matrix after another. A query for another range of it counts none of the earlier
// matrix's reuses (its upload is not shared with them), and looks at the samples at once: filling the new matrix over
// the old one's pages writes them.
TEST_F(ResidencyTest, AnotherRangeOfAMappingStartsItsReusesAfresh) {
  char* p = Map(16 * kMiB);
  const Operand x = Vec(p, 8 * kMiB), y = Vec(p + 8 * kMiB, 8 * kMiB), z = Vec(p, 4 * kMiB);
  int64_t reuses = -1, bytes = -1;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(rc_->state(x, ++use_, &reuses, &bytes), 0);  // its sample armed on x
  for (int i = 0; i < 10; ++i) ASSERT_EQ(rc_->state(x, ++use_, &reuses, &bytes), 2);
  EXPECT_EQ(reuses, 10);
  EXPECT_EQ(rc_->state(y, ++use_, &reuses, &bytes), 2);
  EXPECT_EQ(reuses, 1) << "x's clean reuses were credited to y";
  EXPECT_EQ(rc_->state(y, ++use_, &reuses, &bytes), 2);
  EXPECT_EQ(reuses, 2);
  const int64_t backoffs = rc_->stats().backoffs;
  Fill(p, 4 * kMiB, 77);  // z filled over x's first half, where its samples are
  EXPECT_EQ(rc_->state(z, ++use_, &reuses, &bytes), 0) << "z's first query did not look at the written samples";
  EXPECT_EQ(rc_->stats().backoffs, backoffs + 1);
}

// What making a copy takes, for the policy's estimates: the default before any copy, then the last copies weighing
// most (half the old estimate and half what the copy took: no more than the creating call's wall time).
TEST_F(ResidencyTest, MakingACopyIsMeasured) {
  const double def = Residency::kCreateNsPerByte;
  EXPECT_DOUBLE_EQ(rc_->creation_us(int64_t(kMiB)), double(kMiB) * def * 1e-3);
  char* p = Map(8 * kMiB);
  const Operand o = Vec(p, 8 * kMiB);
  ASSERT_FALSE(Use(o));
  ASSERT_FALSE(Use(o));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Use(o)) << "no copy on the third clean use";
  const double wall_ns =
      double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  const double per_byte = rc_->creation_us(int64_t(kMiB)) * 1e3 / double(kMiB);
  EXPECT_NE(per_byte, def) << "the copy's making was not measured";
  EXPECT_GT(per_byte, 0.5 * def);
  EXPECT_LE(per_byte, 0.5 * def + 0.5 * wall_ns / double(8 * kMiB) + 1e-12);
  EXPECT_EQ(rc_->creation_us(0), 0);
}

TEST_F(ResidencyTest, TwoOperandsOfOneCallInOneMappingCountOneUse) {
  char* p = Map(8 * kMiB);
  const Operand a = Vec(p, 4 * kMiB), b = Vec(p + 4 * kMiB, 4 * kMiB);
  for (int call = 1; call <= 3; ++call) {
    ++use_;
    const Lease la = rc_->acquire(a, Role::kInput, nullptr, use_);
    const Lease lb = rc_->acquire(b, Role::kInput, nullptr, use_);
    if (call < 3) {
      EXPECT_EQ(la.dev, nullptr) << "call " << call;
      EXPECT_EQ(lb.dev, nullptr) << "call " << call << ": the mapping's use was counted once per operand";
    } else {
      ASSERT_NE(la.dev, nullptr);
      ASSERT_NE(lb.dev, nullptr);
      EXPECT_EQ(Mismatch(la.dev, a), "");
      EXPECT_EQ(Mismatch(lb.dev, b), "");
    }
    rc_->release(la);
    rc_->release(lb);
  }
  EXPECT_EQ(rc_->stats().created, 1);
}

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

TEST_F(ResidencyTest, DiscardedPagesAreNeverServedStale) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  ASSERT_EQ(madvise(p + kMiB, kMiB, MADV_DONTNEED), 0);  // reads as zeros now
  EXPECT_GT(UseUntilLeased(o), 0);
  EXPECT_GE(rc_->stats().dropped_changed, 1);
  ASSERT_EQ(madvise(p + 3 * kMiB, 16 * kPage, MADV_FREE), 0);
  Fill(p + 3 * kMiB, 16 * kPage, 8);  // written after MADV_FREE: the contents are defined again
  EXPECT_GT(UseUntilLeased(o), 0);
}

// While a call holds a copy, changes to other parts of it cannot drop it: they must mark its pages stale instead.
TEST_F(ResidencyTest, ChangesWhileACallHoldsTheCopyAreSeen) {
  char* p = Map(8 * kMiB);
  char* q = Map(kMiB);
  const Operand a = Vec(p, 4 * kMiB), b = Vec(p + 4 * kMiB, 4 * kMiB);
  Cache(a);
  ASSERT_TRUE(Use(b));
  Cache(Vec(q, kMiB));  // watched, its pages write-protected
  const Lease held = Call(a);
  ASSERT_NE(held.dev, nullptr);
  ASSERT_EQ(madvise(p + 5 * kMiB, kMiB, MADV_DONTNEED), 0);  // b's pages, while a's call runs
  std::thread([&] { Fill(p + 7 * kMiB, kMiB, 4); }).join();
  // Protected, unwritten pages moved over b's last MiB: only the events tell.
  ASSERT_EQ(mremap(q, kMiB, kMiB, MREMAP_MAYMOVE | MREMAP_FIXED, p + 6 * kMiB), p + 6 * kMiB);
  const Lease lb = Call(b);  // another call meanwhile
  rc_->release(lb);
  rc_->release(held);
  EXPECT_GT(UseUntilLeased(b), 0);
  EXPECT_GT(UseUntilLeased(a), 0);
}

TEST_F(ResidencyTest, NewMappingAtTheSameAddressIsNeverServedByTheOldCopy) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  ASSERT_EQ(Map(4 * kMiB, p), p);  // MAP_FIXED: new pages, new contents
  EXPECT_GT(UseUntilLeased(o), 0);
  ASSERT_EQ(munmap(p, 4 * kMiB), 0);  // munmap, then a new mapping in the hole
  void* q = mmap(p, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(q, p);
  Fill(p, 4 * kMiB, 99);
  EXPECT_GT(UseUntilLeased(o), 0);
  EXPECT_GE(rc_->stats().dropped_changed, 2);
}

TEST_F(ResidencyTest, MovedMemoryIsNeverServedByTheOldCopy) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  // realloc of a large block: the guard page forces a move.
  char* q = static_cast<char*>(mremap(p, 4 * kMiB, 6 * kMiB, MREMAP_MAYMOVE));
  ASSERT_NE(q, MAP_FAILED);
  ASSERT_NE(q, p);
  maps_.emplace_back(q, 6 * kMiB);
  Fill(q + 4 * kMiB, 2 * kMiB, 12);
  // Something else at the old address, with other contents.
  void* n = mmap(p, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(n, p);
  Fill(p, 4 * kMiB, 13);
  EXPECT_GT(UseUntilLeased(o), 0);
  EXPECT_GT(UseUntilLeased(Vec(q, 6 * kMiB)), 0);
  EXPECT_TRUE(Use(Vec(q + kMiB, 4 * kMiB)));
}

TEST_F(ResidencyTest, MallocReallocAndFreeOfLargeBlocks) {
  // Above glibc's largest mmap threshold (32 MiB): each block is a mapping of its own, moved by mremap on realloc.
  const size_t len = 40 * kMiB;
  char* a = static_cast<char*>(std::malloc(len));
  ASSERT_NE(a, nullptr);
  Fill(a, len, 1);
  Cache(Vec(a, len));
  char* b = static_cast<char*>(std::realloc(a, len + 8 * kMiB));
  ASSERT_NE(b, nullptr);
  Fill(b + len, 8 * kMiB, 2);
  EXPECT_GT(UseUntilLeased(Vec(b, len + 8 * kMiB)), 0);
  std::free(b);
  char* c = static_cast<char*>(std::malloc(len));  // most likely where a or b was
  ASSERT_NE(c, nullptr);
  Fill(c, len, 3);
  EXPECT_GT(UseUntilLeased(Vec(c, len)), 0);
  std::free(c);
}

// Moved pages keep their write protection: a watched mapping moved onto a copied range looks unwritten there, and
// only the change events tell the cache that the range holds other memory now.
TEST_F(ResidencyTest, AWatchedMappingMovedOntoACopyIsNotTakenForIt) {
  char* p = Map(4 * kMiB);
  char* q = Map(4 * kMiB);
  Cache(Vec(p, 4 * kMiB));
  Cache(Vec(q, 4 * kMiB));
  ASSERT_EQ(mremap(q, 4 * kMiB, 4 * kMiB, MREMAP_MAYMOVE | MREMAP_FIXED, p), p);
  EXPECT_GT(UseUntilLeased(Vec(p, 4 * kMiB)), 0);
}

// More changes between two calls than the event ring holds: what was lost must count as everything changed.
TEST_F(ResidencyTest, LostEventsDropEveryCopy) {
  char* p = Map(4 * kMiB);
  char* q = Map(4 * kMiB);
  char* r = Map(64 * kPage);
  Cache(Vec(p, 4 * kMiB));
  Cache(Vec(q, 4 * kMiB));
  ASSERT_TRUE(UffdWatch::get().watch(U(r), U(r) + 64 * kPage));
  ASSERT_EQ(mremap(q, 4 * kMiB, 4 * kMiB, MREMAP_MAYMOVE | MREMAP_FIXED, p), p);  // seen only as events
  for (int i = 0; i < UffdWatch::kRing + 16; ++i)
    ASSERT_EQ(madvise(r + size_t(i % 64) * kPage, kPage, MADV_DONTNEED), 0);
  EXPECT_GT(UseUntilLeased(Vec(p, 4 * kMiB)), 0);
  EXPECT_GE(rc_->stats().dropped_changed, 1);
}

TEST_F(ResidencyTest, AForkedChildsWritesAreItsOwn) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the child's pages become its own on write; the parent's stay as they were
    Fill(p, 4 * kMiB, 4321);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const int64_t before = rc_->stats().uploaded_bytes;
  EXPECT_TRUE(Use(o));
  EXPECT_EQ(rc_->stats().uploaded_bytes, before);
  p[5 * kPage] = 1;  // the parent's write to a page shared copy-on-write with the child
  EXPECT_TRUE(Use(o));
  EXPECT_EQ(rc_->stats().uploaded_bytes, before + int64_t(kPage));
}

// Write protection survives mprotect: a page made read-only and writable again must still report its next write.
TEST_F(ResidencyTest, WritesAfterMprotectAreSeen) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  ASSERT_EQ(mprotect(p + kMiB, kMiB, PROT_READ), 0);
  ASSERT_EQ(mprotect(p + kMiB, kMiB, PROT_READ | PROT_WRITE), 0);
  Fill(p + kMiB + 3 * kPage, kPage, 6);
  EXPECT_TRUE(Use(o));
  EXPECT_TRUE(Use(Operand{p + 4 * 7, 1000, 1000, 1040, 4}));
}

// Calls on several threads at once: each writes and remaps its own buffer between its calls and computes an output in
// it, all read one shared matrix that nobody writes (copies held by several calls at once).
TEST_F(ResidencyTest, CallsFromSeveralThreadsAtOnce) {
  char* shared = Map(4 * kMiB);
  std::atomic<uint64_t> use{use_};
  std::atomic<int64_t> leases{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(uint64_t(t) + 1);
      const size_t len = 4 * kMiB;
      char* own = MapFilled(len, rng());
      for (int i = 0; i < 150; ++i) {
        switch (rng() % 6) {
          case 0:
            Fill(own + (rng() % (len / kPage - 8)) * kPage + rng() % kPage, rng() % (4 * kPage), rng());
            break;
          case 1:
            madvise(own + (rng() % (len / kPage - 8)) * kPage, 8 * kPage, MADV_DONTNEED);
            break;
          case 2:
            MapFilled(len, rng(), own);
            break;
          default:
            break;
        }
        const uint64_t u = ++use;
        const Operand in = rng() % 2 ? Vec(shared + 4 * (rng() % 1000), 2 * kMiB) : Vec(own, len / 2);
        const Operand out{own + len / 2 + 4 * (rng() % 100), 600, 800, 640, 4};
        const Lease li = rc_->acquire(in, Role::kInput, nullptr, u);
        const Lease lo = rc_->acquire(out, Role::kOutput, nullptr, u);
        if (li.dev) {
          EXPECT_EQ(Mismatch(li.dev, in), "") << "thread " << t << " call " << i << " input";
        }
        if (lo.dev) {
          EXPECT_EQ(Mismatch(lo.dev, out), "") << "thread " << t << " call " << i << " output";
          FillElements(lo.dev, out, rng());
          CopyElements(const_cast<char*>(static_cast<const char*>(out.p)), lo.dev, out);
          rc_->wrote_back(lo, out, false);
        } else {
          FillElements(const_cast<char*>(static_cast<const char*>(out.p)), out, rng());
          rc_->host_written(out);
        }
        leases += (li.dev != nullptr) + (lo.dev != nullptr);
        rc_->release(li);
        rc_->release(lo);
      }
      munmap(own, len + kPage);
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_GT(leases.load(), 4 * 150 / 2);
}

TEST_F(ResidencyTest, SharedMemoryAndFilesAreNeverCached) {
  const int fd = memfd_create("residency-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t(4 * kMiB)), 0);
  char* v = static_cast<char*>(mmap(nullptr, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  char* alias = static_cast<char*>(mmap(nullptr, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  char* priv = static_cast<char*>(mmap(nullptr, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  char* anon = static_cast<char*>(mmap(nullptr, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(v, MAP_FAILED);
  ASSERT_NE(alias, MAP_FAILED);
  ASSERT_NE(priv, MAP_FAILED);
  ASSERT_NE(anon, MAP_FAILED);
  for (int call = 0; call < 6; ++call) {
    Fill(alias + size_t(call) * kMiB / 2, 4 * kPage, uint64_t(call));  // a write the kernel's record of v cannot see
    EXPECT_FALSE(Use(Vec(v, 4 * kMiB))) << "call " << call;
    EXPECT_FALSE(Use(Vec(priv, 4 * kMiB))) << "call " << call;
    EXPECT_FALSE(Use(Vec(anon, 4 * kMiB))) << "call " << call;
  }
  EXPECT_EQ(rc_->stats().created, 0);
  EXPECT_EQ(dev_.live_bytes, 0);
  for (char* m : {v, alias, priv, anon}) munmap(m, 4 * kMiB);
  close(fd);
}

TEST_F(ResidencyTest, MemoryPinnedByTheProgramIsNeverCached) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  dev_.Pin(p, 4 * kMiB);
  for (int call = 0; call < 6; ++call) EXPECT_FALSE(Use(o)) << "call " << call;
  dev_.Unpin(p);
  EXPECT_GT(UseUntilLeased(o), 0) << "asked every call: unregistered memory may be cached";
  dev_.Pin(p, 4 * kMiB);  // registered by the program after the copy was made
  EXPECT_FALSE(Use(o));
  EXPECT_GE(rc_->stats().dropped_changed, 1);
  EXPECT_EQ(dev_.live_bytes, 0);
}

// The program registered only a part inside the operand (cudaHostRegister of a slice): DMA can write that part with
// no trace in the page tables, so the operand must not be cached either.
TEST_F(ResidencyTest, MemoryPinnedByTheProgramInsideAnOperandIsNeverCached) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  dev_.Pin(p + kMiB, kMiB);
  for (int call = 0; call < 6; ++call) EXPECT_FALSE(Use(o)) << "call " << call;
}

// KNOWN LIMITATION (README, Residency: "What it never caches"), disabled until ResidencyOps can answer for a whole
// range: memory registered by the program inside an operand is looked for when the copy is made at one address per
// MiB, and on each hit at the operand's first and last byte only. A smaller registered slice between those addresses,
// or a slice registered after the copy was made, goes unseen, and DMA into it would leave the copy stale. CUDA offers
// no list of a process's registrations, and asking per page costs ~1 us each (0.25 s per GiB at every use).
TEST_F(ResidencyTest, DISABLED_ASmallPinnedSliceInsideAnOperandIsNeverCached) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  dev_.Pin(p + kMiB + 256 * 1024, 256 * 1024);
  for (int call = 0; call < 6; ++call) EXPECT_FALSE(Use(o)) << "call " << call;
}

TEST_F(ResidencyTest, DISABLED_MemoryPinnedInsideACopyAfterItWasMadeIsNotServed) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  dev_.Pin(p + kMiB, kMiB);  // the program registers a slice for its own transfers
  EXPECT_FALSE(Use(o));
}

struct StackProbe {
  Residency* rc;
  std::atomic<uint64_t>* use;
  int leases = 0;
  const void* array = nullptr;
  std::atomic<int> step{0};
};

void* UseOwnStack(void* arg) {
  StackProbe* s = static_cast<StackProbe*>(arg);
  float a[1 << 20];  // 4 MiB on this thread's 16 MiB stack
  std::memset(a, 1, sizeof a);
  const Operand o = Vec(a, sizeof a);
  for (int call = 0; call < 5; ++call) {
    const Lease l = s->rc->acquire(o, Role::kInput, nullptr, ++*s->use);
    s->leases += l.dev != nullptr;
    s->rc->release(l);
  }
  s->array = a;
  s->step = 1;
  while (s->step.load() != 2) usleep(1000);  // the main thread tries the array meanwhile
  return nullptr;
}

TEST_F(ResidencyTest, StacksAreNeverCached) {
  std::atomic<uint64_t> use{use_};
  StackProbe s{rc_, &use};
  pthread_attr_t at;
  pthread_attr_init(&at);
  ASSERT_EQ(pthread_attr_setstacksize(&at, 16 * kMiB), 0);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, &at, UseOwnStack, &s), 0);
  pthread_attr_destroy(&at);
  while (s.step.load() != 1) usleep(1000);
  // Another thread's stack: not this thread's, known by its mapping's flags.
  int theirs = 0;
  for (int call = 0; call < 5; ++call) {
    const Lease l = rc_->acquire(Vec(s.array, 4 * kMiB), Role::kInput, nullptr, ++use);
    theirs += l.dev != nullptr;
    rc_->release(l);
  }
  s.step = 2;
  pthread_join(t, nullptr);
  EXPECT_EQ(s.leases, 0) << "a thread's own stack was cached";
  EXPECT_EQ(theirs, 0) << "another thread's stack was cached";
  EXPECT_EQ(rc_->stats().created, 0);
}

TEST_F(ResidencyTest, TheBrkHeapIsNeverCached) {
  const size_t len = 4 * kMiB + kPage;
  char* h = static_cast<char*>(sbrk(intptr_t(len)));
  if (h == reinterpret_cast<char*>(-1)) GTEST_SKIP() << "no brk heap here";
  char* p = reinterpret_cast<char*>(PageUp(U(h)));
  Fill(p, 4 * kMiB, 5);
  for (int call = 0; call < 6; ++call) EXPECT_FALSE(Use(Vec(p, 4 * kMiB))) << "call " << call;
  EXPECT_EQ(rc_->stats().created, 0);
  if (sbrk(0) == h + len) sbrk(-intptr_t(len));  // unless malloc grew the heap past it meanwhile
}

// A program that rewrites its matrix before every call: the cache costs it one write fault per sampled page per
// round (rounds spaced out exponentially), never one per page, and makes no copy.
TEST_F(ResidencyTest, AMatrixRewrittenBeforeEveryCallCostsOnlySampleFaults) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  int64_t faults = 0, leased = 0;
  const int calls = 40;
  for (int call = 0; call < calls; ++call) {
    const int64_t f0 = MinorFaults();
    Fill(p, 4 * kMiB, 200 + uint64_t(call));
    faults += MinorFaults() - f0;
    leased += Use(o);
  }
  const ResidencyStats s = rc_->stats();
  EXPECT_EQ(leased, 0);
  EXPECT_EQ(s.created, 0);
  EXPECT_GE(s.backoffs, 3);
  EXPECT_LE(s.backoffs, 8) << "back-off must space the rounds out exponentially";
  EXPECT_LE(faults, (s.backoffs + 1) * Residency::kSamples + 64)
      << "the program paid " << faults << " write faults for " << calls * 1024 << " page writes";
}

TEST_F(ResidencyTest, ACopyOfAMatrixThatStartsBeingRewrittenIsDropped) {
  char* p = Map(4 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  Cache(o);
  int64_t late_leases = 0, faults = 0;
  const int calls = 30;
  for (int call = 0; call < calls; ++call) {
    const int64_t f0 = MinorFaults();
    Fill(p, 4 * kMiB, 300 + uint64_t(call));
    if (call >= 3) faults += MinorFaults() - f0;
    const bool leased = Use(o);
    if (call >= 3) late_leases += leased;
  }
  const ResidencyStats s = rc_->stats();
  EXPECT_EQ(s.dropped_rewritten, 1);
  EXPECT_EQ(late_leases, 0) << "a matrix found rewritten was cached again";
  EXPECT_EQ(s.device_bytes, 0);
  EXPECT_LE(faults, (s.backoffs + 1) * Residency::kSamples + 64);
}

// Arming a candidate's sample write-protects its pages, which erases the kernel's record of the program's writes to
// them: a sample page inside a copy of another part of the same mapping would hide a write from that copy's next
// scan, and the copy would serve the page's old contents. A mapping gets a candidate next to a copy when an operand
// is not inside the copy: a part of a mapping larger than half the budget (blocked algorithms on one huge matrix), or
// a mapping grown in place (realloc).
TEST_F(ResidencyTest, ArmingASampleNextToACopyDoesNotHideTheProgramsWrites) {
  Start(int64_t(8 * kMiB));  // an 8 MiB mapping is copied in parts
  // An 8 MiB mapping across a 64 MiB boundary: its halves are different parts.
  const size_t align = 64 * kMiB;
  char* raw = static_cast<char*>(mmap(nullptr, 2 * align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(raw, MAP_FAILED);
  maps_.emplace_back(raw, 2 * align);
  char* mid = reinterpret_cast<char*>((U(raw) + align - 1) & ~(align - 1));
  char* p = mid - 4 * kMiB;
  ASSERT_EQ(MapFilled(8 * kMiB, 21, p), p);
  const Operand upper = Vec(mid, 4 * kMiB), across = Vec(mid - 2 * kMiB, 4 * kMiB);
  Cache(upper);
  EXPECT_FALSE(Use(across));  // a candidate of the same mapping: first use
  // The program writes a page of the upper copy that is also one of across's sample pages (every 16th page of its
  // 1024, counted from its start: mid is its page 512).
  Fill(mid, kPage, 22);
  EXPECT_FALSE(Use(across));  // second use: its sample is armed
  EXPECT_TRUE(Use(upper));
}

// The same through a block that grew in place: the copy covers the old block, the grown one is a new candidate.
TEST_F(ResidencyTest, ArmingASampleInABlockGrownInPlaceDoesNotHideTheProgramsWrites) {
  char* p = Map(8 * kMiB);
  ASSERT_EQ(mprotect(p + 4 * kMiB, 4 * kMiB, PROT_NONE), 0);  // kept free until the block grows into it
  const Operand old_block = Vec(p, 4 * kMiB);
  Cache(old_block);
  ASSERT_EQ(munmap(p + 4 * kMiB, 4 * kMiB), 0);
  ASSERT_EQ(mremap(p, 4 * kMiB, 8 * kMiB, 0), p) << "could not grow in place";
  Fill(p + 4 * kMiB, 4 * kMiB, 32);
  const Operand grown = Vec(p, 8 * kMiB);
  EXPECT_FALSE(Use(grown));
  Fill(p + 32 * kPage, kPage, 33);  // one of grown's sample pages (every 32nd of its 2048), inside the old copy
  EXPECT_FALSE(Use(grown));
  EXPECT_TRUE(Use(old_block));
}

// A watched candidate is found by the bounds it was armed with, but its copy is made only when a fresh read of the
// mapping gives the same bounds: a mapping that grew in place (realloc) or was split (mprotect of a part) must start
// a new candidate, not fail that check at every use and never be cached.
TEST_F(ResidencyTest, ACandidateWhoseMappingGrewInPlaceIsCachedAfterAll) {
  char* p = Map(8 * kMiB);
  ASSERT_EQ(mprotect(p + 4 * kMiB, 4 * kMiB, PROT_NONE), 0);  // kept free until the block grows into it
  const Operand o = Vec(p, 4 * kMiB);
  EXPECT_FALSE(Use(o));
  EXPECT_FALSE(Use(o));  // armed: the mapping is watched
  ASSERT_EQ(munmap(p + 4 * kMiB, 4 * kMiB), 0);
  ASSERT_EQ(mremap(p, 4 * kMiB, 6 * kMiB, 0), p) << "could not grow in place";
  EXPECT_GT(UseUntilLeased(o, 8), 0);
}

TEST_F(ResidencyTest, ACandidateWhoseMappingWasSplitIsCachedAfterAll) {
  char* p = Map(8 * kMiB);
  const Operand o = Vec(p, 4 * kMiB);
  EXPECT_FALSE(Use(o));
  EXPECT_FALSE(Use(o));
  ASSERT_EQ(mprotect(p + 7 * kMiB, kPage, PROT_READ), 0);  // a guard page of the program's own, away from o
  EXPECT_GT(UseUntilLeased(o, 8), 0);
}

TEST_F(ResidencyTest, BudgetEvictsTheLeastRecentlyUsed) {
  Start(int64_t(5 * kMiB));  // two 2 MiB copies fit, three do not
  char* m[3] = {Map(2 * kMiB), Map(2 * kMiB), Map(2 * kMiB)};
  Cache(Vec(m[0], 2 * kMiB));
  Cache(Vec(m[1], 2 * kMiB));
  EXPECT_TRUE(Use(Vec(m[0], 2 * kMiB)));  // m[1] is now the least recently used
  Cache(Vec(m[2], 2 * kMiB));
  ResidencyStats s = rc_->stats();
  EXPECT_EQ(s.evicted, 1);
  EXPECT_EQ(s.device_bytes, int64_t(4 * kMiB));
  EXPECT_TRUE(Use(Vec(m[0], 2 * kMiB)));
  EXPECT_TRUE(Use(Vec(m[2], 2 * kMiB)));
  EXPECT_FALSE(Use(Vec(m[1], 2 * kMiB))) << "m[1] was evicted: it starts over as a candidate";
  EXPECT_LE(rc_->stats().device_bytes, int64_t(5 * kMiB));
}

// A mapping larger than half the budget is copied in 64 MiB aligned parts: the device address of each operand must
// still be its own.
TEST_F(ResidencyTest, PartsOfAHugeMapping) {
  Start(int64_t(100 * kMiB));
  const size_t len = 136 * kMiB, align = 64 * kMiB;  // aligned as the parts are: each operand's part is known
  char* raw = static_cast<char*>(mmap(nullptr, len + 2 * align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(raw, MAP_FAILED);
  maps_.emplace_back(raw, len + 2 * align);
  char* p = reinterpret_cast<char*>((U(raw) + align - 1) & ~(align - 1));
  ASSERT_EQ(MapFilled(len, 7, p), p);
  const Operand a = Vec(p + 70 * kMiB + 4 * 3, 2 * kMiB);
  Cache(a);
  EXPECT_EQ(rc_->stats().device_bytes, int64_t(64 * kMiB));
  EXPECT_TRUE(Use(Operand{p + 100 * kMiB + 4 * 5, 1000, 1000, 1100, 4}));
  EXPECT_GT(UseUntilLeased(Vec(p + 10 * kMiB, 2 * kMiB)), 0);
  EXPECT_GT(UseUntilLeased(Vec(p + 130 * kMiB, 6 * kMiB)), 0);
  EXPECT_LE(rc_->stats().device_bytes, int64_t(100 * kMiB));
  UseUntilLeased(Vec(p + 60 * kMiB, 8 * kMiB));  // across two parts: served or not, never wrong
}

// ---- The differential test: a random program against the cache, every lease compared with host memory. ----

struct Buf {
  enum Kind { kPlain, kShared, kPinned } kind = kPlain;
  char* p = nullptr;  // the data, followed by a guard page when guarded
  size_t len = 0;
  bool guarded = true;
  bool split = false;     // another buffer was moved onto part of it: several mappings, which mremap cannot move
  char* alias = nullptr;  // kShared: another view of the same pages
  int fd = -1;
};

class RandomProgram {
 public:
  RandomProgram(Residency* rc, FakeDevice* dev, uint64_t seed) : rc_(rc), dev_(dev), rng_(seed) {
    if (pipe(pipe_) != 0) Die("pipe");
    for (size_t len : {1 * kMiB, 3 * kMiB, 5 * kMiB}) bufs_.push_back(Plain(len));
    // Larger than half the budget and across a 64 MiB boundary: copied in parts, with candidates next to copies.
    bufs_.push_back(Plain(8 * kMiB, true));
    Buf sh;
    sh.kind = Buf::kShared;
    sh.len = 4 * kMiB;
    sh.fd = memfd_create("residency-random", MFD_CLOEXEC);
    if (sh.fd < 0 || ftruncate(sh.fd, off_t(sh.len)) != 0) Die("memfd");
    sh.p = static_cast<char*>(mmap(nullptr, sh.len, PROT_READ | PROT_WRITE, MAP_SHARED, sh.fd, 0));
    sh.alias = static_cast<char*>(mmap(nullptr, sh.len, PROT_READ | PROT_WRITE, MAP_SHARED, sh.fd, 0));
    if (sh.p == MAP_FAILED || sh.alias == MAP_FAILED) Die("mmap shared");
    Fill(sh.p, sh.len, Next());
    bufs_.push_back(sh);
    Buf pinned = Plain(2 * kMiB);
    pinned.kind = Buf::kPinned;
    dev_->Pin(pinned.p, pinned.len);
    bufs_.push_back(pinned);
  }
  ~RandomProgram() {
    for (Buf& b : bufs_) {
      if (b.kind == Buf::kShared) {
        munmap(b.p, b.len);
        munmap(b.alias, b.len);
        close(b.fd);
      } else {
        munmap(b.p, b.len);
        DropGuard(b);
      }
    }
    close(pipe_[0]);
    close(pipe_[1]);
  }

  // One step: maybe a change by the program, then a call. False on the first wrong lease (reported).
  bool Step(int iteration) {
    iteration_ = iteration;
    if (Below(100) < 60) Change(-1, nullptr);
    if (broken_) return false;
    for (size_t i = 0; i < bufs_.size(); ++i)  // the test's own bookkeeping: every buffer stays mapped
      if (msync(bufs_[i].p, bufs_[i].len, MS_ASYNC) != 0) {
        ADD_FAILURE() << "the test lost track of buffer " << i << "'s memory\n" << History(int(i));
        return false;
      }
    return SimulatedCall();
  }
  int64_t leases() const { return leases_; }
  int64_t output_leases() const { return output_leases_; }

 private:
  uint64_t Next() { return rng_(); }
  size_t Below(size_t n) { return size_t(rng_() % n); }
  // What happened, by buffer (-1: none), for the report of a failure.
  void Log(int buf, const std::string& s) {
    history_.emplace_back(buf, "#" + std::to_string(iteration_) + " buffer " + std::to_string(buf) + ": " + s);
    if (history_.size() > 2000) history_.pop_front();
  }
  std::string History(int buf) const {
    std::string h = "last steps of buffer " + std::to_string(buf) + ":\n";
    std::vector<std::string> mine;
    for (const auto& e : history_)
      if (e.first == buf) mine.push_back(e.second);
    for (size_t i = mine.size() > 40 ? mine.size() - 40 : 0; i < mine.size(); ++i) h += "  " + mine[i] + "\n";
    h += "last steps of all:\n";
    for (size_t i = history_.size() > 12 ? history_.size() - 12 : 0; i < history_.size(); ++i)
      h += "  " + history_[i].second + "\n";
    return h;
  }
  static std::string Hex(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
  }
  Buf Plain(size_t len, bool across = false) {
    Buf b;
    b.len = len;
    b.p = MapWithRoom(len, across);
    Fill(b.p, len, Next());
    return b;
  }
  // A mapping with its guard page and, after that, kRoom of free addresses (for growing in place); across: its middle
  // on a 64 MiB boundary.
  static char* MapWithRoom(size_t len, bool across = false) {
    const size_t align = 64 * kMiB, span = len + kPage + kRoom + (across ? 2 * align : 0);
    char* raw = static_cast<char*>(mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) Die("mmap");
    const size_t half = PageDown(len / 2);
    char* p = across ? reinterpret_cast<char*>(((U(raw) + half + align - 1) & ~(align - 1)) - half) : raw;
    MapGuarded(len, p);
    if (p > raw) munmap(raw, size_t(p - raw));
    munmap(p + len + kPage, size_t(raw + span - (p + len + kPage)));
    return p;
  }
  static void DropGuard(Buf& b) {
    if (b.guarded) munmap(b.p + b.len, kPage);
    b.guarded = false;
  }
  static void PutGuard(Buf& b) {
    b.guarded =
        mmap(b.p + b.len, kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == b.p + b.len;
  }
  void Repin(Buf& b, const char* old) {
    if (b.kind != Buf::kPinned) return;
    dev_->Unpin(old);
    dev_->Pin(b.p, b.len);
  }

  // A system call that works on any one mapping failed: the memory is not what the test thinks (or the library split
  // the program's mapping, which it must not: the program's own mremap would fail).
  void Broken(int bi, const std::string& what) {
    ADD_FAILURE() << "iteration " << iteration_ << ", buffer " << bi << ": " << what << "\n" << History(bi);
    broken_ = true;
  }

  // A change by the program to buffer `which` (-1: any), kept off the page range `keep` of a held lease; `kind`: one
  // of the kinds below (0..99), or -1 for a random one.
  void Change(int which, const std::pair<uintptr_t, uintptr_t>* keep, int kind_wanted = -1) {
    const int bi = which >= 0 ? which : int(Below(bufs_.size()));
    Buf& b = bufs_[size_t(bi)];
    const size_t pages = b.len / kPage;
    // A page range [first, first + n) of b outside `keep`.
    auto pick_pages = [&](size_t max_n, size_t* first, size_t* n) {
      for (int tries = 0; tries < 8; ++tries) {
        *n = 1 + Below(std::min(max_n, pages));
        *first = Below(pages - *n + 1);
        const uintptr_t lo = U(b.p) + *first * kPage, hi = lo + *n * kPage;
        if (!keep || hi <= keep->first || keep->second <= lo) return true;
      }
      return false;
    };
    const size_t kind = kind_wanted >= 0 ? size_t(kind_wanted) : Below(100);
    size_t first = 0, n = 0;
    const bool remap_ok = !keep && b.kind != Buf::kShared;
    if (kind < 22) {  // stores of random elements
      const int count = 1 + int(Below(30));
      std::string where;
      for (int i = 0; i < count; ++i) {
        if (!pick_pages(1, &first, &n)) return;
        const size_t at = first * kPage + 4 * Below(kPage / 4);
        const uint32_t v = uint32_t(Next());
        std::memcpy(b.p + at, &v, 4);
      }
      Log(bi, "stores x" + std::to_string(count) + " into " + Hex(b.p));
    } else if (kind < 34) {  // memcpy of a block
      if (!pick_pages(64, &first, &n)) return;
      const size_t off = Below(kPage), bytes = 1 + Below(n * kPage - off);
      std::vector<char> src(bytes);
      Fill(src.data(), bytes, Next());
      std::memcpy(b.p + first * kPage + off, src.data(), bytes);
      Log(bi, "memcpy " + std::to_string(bytes) + " B at page " + std::to_string(first) + " of " + Hex(b.p));
    } else if (kind < 44) {  // read(2) from a pipe
      if (!pick_pages(16, &first, &n)) return;
      const size_t off = Below(kPage), bytes = 1 + Below(n * kPage - off);
      std::vector<char> src(bytes);
      Fill(src.data(), bytes, Next());
      if (write(pipe_[1], src.data(), bytes) != ssize_t(bytes)) Die("write to the pipe");
      for (size_t got = 0; got < bytes;) {
        const ssize_t r = read(pipe_[0], b.p + first * kPage + off + got, bytes - got);
        if (r <= 0) Die("read(2)");
        got += size_t(r);
      }
      Log(bi, "read(2) " + std::to_string(bytes) + " B at page " + std::to_string(first) + " of " + Hex(b.p));
    } else if (kind < 54) {  // another thread's stores, joined
      if (!pick_pages(8, &first, &n)) return;
      const uint64_t s = Next();
      char* at = b.p + first * kPage;
      std::thread([=] {
        for (size_t i = 0; i < n; ++i) Fill(at + i * kPage + 4 * (s % 1000), 4 * (1 + s % 24), s + i);
      }).join();
      Log(bi, "thread stores on pages " + std::to_string(first) + "+" + std::to_string(n) + " of " + Hex(b.p));
    } else if (kind < 62) {  // discard
      if (!pick_pages(256, &first, &n)) return;
      const bool free_ = b.kind != Buf::kShared && Below(4) == 0;  // MADV_FREE: private anonymous memory only
      if (madvise(b.p + first * kPage, n * kPage, free_ ? MADV_FREE : MADV_DONTNEED) != 0) Die("madvise");
      // MADV_FREE leaves the contents undefined until written (the kernel may or may not have taken the pages):
      // the program writes them before it uses them again, as any program must.
      if (free_) Fill(b.p + first * kPage, n * kPage, Next());
      Log(bi, std::string(free_ ? "MADV_FREE" : "MADV_DONTNEED") + " pages " + std::to_string(first) + "+" +
                  std::to_string(n) + " of " + Hex(b.p));
    } else if (kind < 69 && b.kind == Buf::kShared) {  // through the other view of shared pages
      if (!pick_pages(32, &first, &n)) return;
      Fill(b.alias + first * kPage, n * kPage, Next());
      Log(bi, "alias write pages " + std::to_string(first) + "+" + std::to_string(n));
    } else if (kind < 74 && remap_ok) {  // a new mapping at the same address
      const char* old = b.p;
      const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (Below(2) ? MAP_FIXED : MAP_FIXED_NOREPLACE);
      if ((flags & MAP_FIXED_NOREPLACE) && munmap(b.p, b.len) != 0) Die("munmap");
      if (mmap(b.p, b.len, PROT_READ | PROT_WRITE, flags, -1, 0) != b.p) Die("mmap at the same address");
      Fill(b.p, b.len, Next());
      b.split = false;
      Log(bi, std::string(flags & MAP_FIXED ? "MAP_FIXED over " : "munmap + mmap at ") + Hex(b.p));
      Repin(b, old);
    } else if (kind < 82 && remap_ok && !b.split) {  // move to a new place and size
      const size_t len = kPage * (256 + Below(kMaxLen / kPage - 256 + 1));
      char* to = MapWithRoom(len, Below(4) == 0);
      char* q = static_cast<char*>(mremap(b.p, b.len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to));
      if (q != to) return Broken(bi, "mremap of one mapping failed: " + std::string(std::strerror(errno)));
      DropGuard(b);
      if (len > b.len && Below(2)) Fill(q + b.len, len - b.len, Next());
      Log(bi,
          "mremap " + Hex(b.p) + " (" + std::to_string(b.len) + ") -> " + Hex(q) + " (" + std::to_string(len) + ")");
      const char* old = b.p;
      b.p = q;
      b.len = len;
      b.guarded = true;
      Repin(b, old);
    } else if (kind < 90 && remap_ok && !b.split && b.len + kPage <= kMaxLen) {  // grow in place, where there is room
      const size_t len = std::min(kMaxLen, b.len + kPage * (1 + Below(kRoom / kPage)));
      DropGuard(b);
      if (mremap(b.p, b.len, len, 0) == MAP_FAILED) {
        PutGuard(b);
        Log(bi, "no room to grow " + Hex(b.p));
        return;
      }
      if (Below(2)) Fill(b.p + b.len, len - b.len, Next());
      Log(bi, "grow in place " + Hex(b.p) + " " + std::to_string(b.len) + " -> " + std::to_string(len));
      b.len = len;
      PutGuard(b);  // where the addresses after it are taken, none: a merge with a neighbour is the program's right
      Repin(b, b.p);
    } else if (kind < 94 && remap_ok && b.len > 2 * kMiB) {  // shrink in place: the tail is unmapped
      const size_t len = kPage * (256 + Below(b.len / kPage - 256));
      if (mremap(b.p, b.len, len, 0) != b.p) return Broken(bi, "mremap shrink: " + std::string(std::strerror(errno)));
      DropGuard(b);
      Log(bi, "shrink " + Hex(b.p) + " " + std::to_string(b.len) + " -> " + std::to_string(len));
      b.len = len;
      PutGuard(b);
      Repin(b, b.p);
    } else if (kind < 98 && b.kind != Buf::kShared) {
      // Another buffer moved onto part of this one (outside `keep`): the moved pages keep their write protection, so
      // only the events tell that these addresses hold other memory now.
      const int xi = int(Below(bufs_.size()));
      Buf& x = bufs_[size_t(xi)];
      if (xi == bi || xi == held_ || x.kind == Buf::kShared || x.split || x.len > b.len) return;
      // Anywhere in b, or before or after `keep`.
      size_t first = 0, last = b.len - x.len;
      if (keep) {
        const size_t k0 = keep->first - U(b.p), k1 = keep->second - U(b.p);
        if (k0 >= x.len && (Below(2) || k1 + x.len > b.len))
          last = k0 - x.len;
        else if (k1 + x.len <= b.len)
          first = k1;
        else
          return;
      }
      const size_t off = first + kPage * Below((last - first) / kPage + 1);
      if (mremap(x.p, x.len, x.len, MREMAP_MAYMOVE | MREMAP_FIXED, b.p + off) != b.p + off)
        return Broken(xi, "mremap of one mapping failed: " + std::string(std::strerror(errno)));
      Log(bi, "buffer " + std::to_string(xi) + " " + Hex(x.p) + " (" + std::to_string(x.len) + ") moved onto " +
                  Hex(b.p) + " + " + std::to_string(off));
      Log(xi, "moved onto buffer " + std::to_string(bi) + "; replaced by a new mapping");
      b.split = true;
      DropGuard(x);
      const char* old = x.p;
      x.len = kPage * (256 + Below(kMaxLen / kPage - 256 + 1));
      x.p = MapWithRoom(x.len, Below(4) == 0);
      x.guarded = true;
      Fill(x.p, x.len, Next());
      Repin(x, old);
    } else {
      Log(bi, "no change");
    }
  }

  // A random operand inside buffer b, of floats or doubles: a whole vector, a vector at an offset, or a strided
  // matrix.
  Operand Shape(const Buf& b) {
    const int es = Below(2) ? 8 : 4;
    const int64_t n = int64_t(b.len) / es;
    const size_t kind = Below(4);
    if (kind == 0) return Operand{b.p, n, 1, n, es};
    if (kind == 1) {
      const int64_t off = int64_t(Below(size_t(n / 4))), rows = n - off - int64_t(Below(size_t(n / 4)));
      return Operand{b.p + es * off, rows, 1, rows, es};
    }
    const int64_t ld = 256 + int64_t(Below(1793)), rows = ld / 2 + int64_t(Below(size_t(ld - ld / 2 + 1)));
    const int64_t off = int64_t(Below(size_t(ld)));
    const int64_t max_cols = (n - off - rows) / ld + 1;
    const int64_t cols = max_cols / 2 + int64_t(Below(size_t(max_cols - max_cols / 2))) + (max_cols == 1);
    return Operand{b.p + es * off, rows, std::max<int64_t>(1, std::min(cols, max_cols)), ld, es};
  }
  // Stores of random bytes in the output's pages that are not its elements; how many.
  int StoreBetweenElements(const Operand& c) {
    const uintptr_t lo = PageDown(U(c.p)), hi = PageUp(SpanEnd(c));
    int n = 0;
    for (int i = 0; i < 32; ++i) {
      const uintptr_t x = lo + Below(hi - lo);
      if (x >= U(c.p) && x < SpanEnd(c) && int64_t((x - U(c.p)) / uint64_t(c.elem_size) % uint64_t(c.ld)) < c.rows)
        continue;
      *reinterpret_cast<char*>(x) = char(Next());
      ++n;
    }
    return n;
  }
  static std::string Describe(const Operand& o) {
    return Hex(o.p) + " " + std::to_string(o.rows) + "x" + std::to_string(o.cols) + " ld " + std::to_string(o.ld) +
           (o.elem_size == 8 ? " (doubles)" : " (floats)");
  }
  bool Check(const Lease& l, const Operand& o, int bi, const char* what) {
    if (!l.dev) return true;
    const Buf& b = bufs_[size_t(bi)];
    ++leases_;
    std::string bad;
    if (b.kind != Buf::kPlain) bad = b.kind == Buf::kShared ? "shared memory was cached" : "pinned memory was cached";
    if (bad.empty()) bad = Mismatch(l.dev, o);
    if (bad.empty()) return true;
    ADD_FAILURE() << "iteration " << iteration_ << ", " << what << " " << Describe(o) << ": " << bad << "\n"
                  << History(bi);
    return false;
  }

  bool SimulatedCall() {
    const uint64_t use = ++use_;
    const int n_ops = 1 + int(Below(2));
    size_t which[2] = {Below(bufs_.size()), Below(bufs_.size())};
    const bool output = Below(3) == 0;
    if (output && n_ops == 2)
      while (which[1] == which[0]) which[1] = Below(bufs_.size());  // BLAS outputs never overlap inputs
    else if (Below(3) == 0)
      which[1] = which[0];  // two operands in one mapping
    Operand ops[2] = {};
    Lease ls[2];
    bool ok = true;
    for (int k = 0; k < n_ops && ok; ++k) {
      if (k == 1 && Below(4) == 0) {
        // A change by the program (another thread) while the call holds its first operand: never its pages.
        const std::pair<uintptr_t, uintptr_t> keep{PageDown(U(ops[0].p)), PageUp(SpanEnd(ops[0]))};
        held_ = int(which[0]);
        Change(int(which[0]), &keep, Below(2) ? kOnto : -1);
        if (Below(2)) Change(int(which[1]), which[1] == which[0] ? &keep : nullptr);
        held_ = -1;
        if (broken_) return false;
      }
      const Buf& b = bufs_[which[k]];
      ops[k] = Shape(b);
      const Role role = k == 0 && output ? Role::kOutput : Role::kInput;
      if (Below(4) == 0) {  // the policy asks first, with the same use number
        int64_t reuses = 0, bytes = 0;
        rc_->state(ops[k], use, &reuses, &bytes);
      }
      ls[k] = rc_->acquire(ops[k], role, nullptr, use);
      Log(int(which[k]), std::string(role == Role::kOutput ? "output " : "input ") + Describe(ops[k]) +
                             (ls[k].dev ? " leased" : " staged"));
    }
    for (int k = 0; k < n_ops && ok; ++k) ok = Check(ls[k], ops[k], int(which[k]), k ? "operand 2" : "operand 1");
    if (ok && output) {
      const Operand& c = ops[0];
      char* host = const_cast<char*>(static_cast<const char*>(c.p));
      const size_t mode = Below(4);
      if (ls[0].dev && mode < 3) {  // the kernel computes in the copy; the call writes the results back
        ++output_leases_;
        FillElements(ls[0].dev, c, Next());
        CopyElements(host, ls[0].dev, c);
        if (Below(3) == 0) {  // another thread stores next to the results, in the pages they share
          const int n = StoreBetweenElements(c);
          Log(int(which[0]), std::to_string(n) + " stores between its elements");
        }
        rc_->wrote_back(ls[0], c, mode == 2);
        Log(int(which[0]), mode == 2 ? "kernel + write-back (dma flag)" : "kernel + write-back");
      } else {  // staged: the module stores the results itself
        FillElements(host, c, Next());
        rc_->host_written(c);
        Log(int(which[0]), "staged results");
      }
    }
    for (int k = 0; k < n_ops; ++k) rc_->release(ls[k]);
    const ResidencyStats s = rc_->stats();
    if (ok && (s.device_bytes != dev_->live_bytes || dev_->bad != 0)) {
      ADD_FAILURE() << "iteration " << iteration_ << ": device memory account " << s.device_bytes << " vs "
                    << dev_->live_bytes << " live, " << dev_->bad << " bad uploads/releases\n"
                    << History(-1);
      ok = false;
    }
    return ok;
  }

  static constexpr size_t kRoom = 4 * kMiB, kMaxLen = 12 * kMiB;
  static constexpr int kOnto = 95;  // Change's kind: another buffer moved onto part of this one
  Residency* rc_;
  FakeDevice* dev_;
  std::mt19937_64 rng_;
  std::vector<Buf> bufs_;
  int pipe_[2] = {-1, -1};
  uint64_t use_ = 0;
  int iteration_ = 0, held_ = -1;
  bool broken_ = false;
  int64_t leases_ = 0, output_leases_ = 0;
  std::deque<std::pair<int, std::string>> history_;
};

TEST_F(ResidencyTest, RandomProgramNeverSeesAStaleCopy) {
  Start(int64_t(14 * kMiB));  // room for some buffers, not all: evictions, and the largest are copied in parts
  uint64_t seed = 20240611;
  if (const char* s = std::getenv("BLASOFFLOAD_TEST_SEED")) seed = std::strtoull(s, nullptr, 0);
  const int iterations = 2500;
  std::printf("RandomProgramNeverSeesAStaleCopy: seed %" PRIu64 " (BLASOFFLOAD_TEST_SEED), %d iterations\n", seed,
              iterations);
  const auto t0 = std::chrono::steady_clock::now();
  RandomProgram prog(rc_, &dev_, seed);
  for (int i = 0; i < iterations; ++i)
    if (!prog.Step(i)) break;
  const ResidencyStats s = rc_->stats();
  std::printf("  %.1f s: %" PRId64 " leases (%" PRId64 " written back), %" PRId64 " copies made, %" PRId64
              " hits, %" PRId64 " evicted, %" PRId64 " dropped on change, %" PRId64 " dropped rewritten, %" PRId64
              " back-offs, %.1f MiB uploaded\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), prog.leases(),
              prog.output_leases(), s.created, s.hits, s.evicted, s.dropped_changed, s.dropped_rewritten, s.backoffs,
              double(s.uploaded_bytes) / double(kMiB));
  EXPECT_GT(prog.leases(), iterations / 5) << "the cache hardly ever served a copy: this test checks little";
  EXPECT_GT(prog.output_leases(), iterations / 50);
  EXPECT_GT(s.evicted, 0);
  EXPECT_GT(s.dropped_changed, 0);
}

}  // namespace
}  // namespace bom
