// The residency cache tests' common part (test_residency_*.cpp): a stand-in device, guarded host mappings, and the
// fixture whose simulated calls check every lease against host memory.
//
// The residency cache (residency): device copies are made only of matrices the program leaves alone, are served
// without uploads while unchanged, and never differ from host memory whatever the program does to it. The device is
// a host stand-in (allocations filled with a pattern no host buffer holds); the kernel's write record and events are
// real, so these run in CI where userfaultfd has write tracking and skip elsewhere.
#pragma once
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "offload/module/residency.h"
#include "offload/one_time_cost.h"

// Named, not anonymous: GoogleTest requires the one ResidencyTest fixture type in every file that uses it.
namespace bom::residency_test {

inline constexpr size_t kPage = 4096;
inline constexpr size_t kMiB = size_t(1) << 20;
using Role = Residency::Role;
using Operand = Residency::Operand;
using Lease = Residency::Lease;

inline uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }
inline uintptr_t PageDown(uintptr_t x) { return x & ~(kPage - 1); }
inline uintptr_t PageUp(uintptr_t x) { return (x + kPage - 1) & ~(kPage - 1); }

// A pseudo-random pattern, one 64-bit step per 8 bytes (buffers of megabytes are refilled thousands of times).
inline void Fill(void* p, size_t bytes, uint64_t seed) {
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
inline uintptr_t SpanEnd(const Operand& o) {
  return U(o.p) + size_t(o.elem_size) * size_t((o.cols - 1) * o.ld + o.rows);
}

// "" when the device copy holds exactly the host's elements, else where they first differ.
inline std::string Mismatch(const char* dev, const Operand& o) {
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
inline void CopyElements(char* dst, const char* src, const Operand& o) {
  const size_t es = size_t(o.elem_size);
  for (int64_t j = 0; j < o.cols; ++j)
    std::memcpy(dst + es * size_t(j) * size_t(o.ld), src + es * size_t(j) * size_t(o.ld), es * size_t(o.rows));
}
inline void FillElements(char* dst, const Operand& o, uint64_t seed) {
  const size_t es = size_t(o.elem_size);
  for (int64_t j = 0; j < o.cols; ++j)
    Fill(dst + es * size_t(j) * size_t(o.ld), es * size_t(o.rows), seed + uint64_t(j));
}

[[noreturn]] inline void Die(const char* what) {
  std::perror(what);
  std::abort();
}

// The stand-in device. Allocations are host mappings filled with 0xA5 (a page never uploaded cannot pass for one
// that was); every upload must land inside a live allocation; "pinned by the program" is a set of host ranges.
struct FakeDevice {
  std::mutex mu;
  std::map<uintptr_t, size_t> live;
  int64_t live_bytes = 0, uploaded = 0, bad = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> pinned;
  int once_ms = 0;  // the next upload first spends this long on a one-time cost (the real one's bounce buffer)

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
    if (d->once_ms > 0) {
      bo::one_time::Timer once;
      std::this_thread::sleep_for(std::chrono::milliseconds(d->once_ms));
      d->once_ms = 0;
    }
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
inline char* MapGuarded(size_t len, void* at = nullptr) {
  void* p = mmap(at, len + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  if (p == MAP_FAILED) Die("mmap");
  if (mprotect(static_cast<char*>(p) + len, kPage, PROT_NONE) != 0) Die("mprotect");
  return static_cast<char*>(p);
}
// The same, filled from `seed`.
inline char* MapFilled(size_t len, uint64_t seed, void* at = nullptr) {
  char* p = MapGuarded(len, at);
  Fill(p, len, seed);
  return p;
}

inline Operand Vec(const void* p, size_t bytes) { return Operand{p, int64_t(bytes / 4), 1, int64_t(bytes / 4), 4}; }

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

}  // namespace bom::residency_test
