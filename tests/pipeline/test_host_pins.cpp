// Reused host registrations (host_pins): registered on a mapping's second use, found again after that, and never
// handed out once the memory behind them was unmapped, remapped or discarded, whatever thread did it. The pin
// operations are counted stand-ins (no GPU here); the kernel's userfaultfd events are real.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "offload/module/host_pins.h"
#include "thread_names.h"

namespace bom {
namespace {

std::mutex g_mu;
std::multiset<uintptr_t>* g_pinned = new std::multiset<uintptr_t>();
std::atomic<int> g_pins{0}, g_unpins{0}, g_bad_unpins{0};
bool FakePin(void* base, size_t) {
  std::lock_guard<std::mutex> g(g_mu);
  g_pinned->insert(reinterpret_cast<uintptr_t>(base));
  g_pins++;
  return true;
}
void FakeUnpin(void* base, size_t) {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_pinned->find(reinterpret_cast<uintptr_t>(base));
  if (it == g_pinned->end()) {  // counted, not asserted: this runs on the module's background thread
    g_bad_unpins++;
    return;
  }
  g_pinned->erase(it);
  g_unpins++;
}
bool NotPinnedElsewhere(const void*) { return false; }

constexpr size_t kLen = size_t(16) << 20;

class HostPinsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pins_ = new HostPins(PinOps{FakePin, FakeUnpin, NotPinnedElsewhere}, int64_t(1) << 30);
    std::string why;
    if (!pins_->tracking(&why)) GTEST_SKIP() << "no userfaultfd here (" << why << "): registrations are disabled";
    g_pins = 0;
    g_unpins = 0;
    g_bad_unpins = 0;
  }
  void TearDown() override {
    if (pins_) {
      EXPECT_EQ(g_bad_unpins.load(), 0) << "unpin of a range never pinned";
      pins_->shutdown();  // its threads live on (leaked): they must not touch this test's state after it ends
      // An unpinning that began before the shutdown holds the lock to its end: taking it waits for that, so that no
      // unpin of this test's lands in the next test's counts.
      pins_->poll_events();
    }
  }
  // A fresh private anonymous mapping, touched, followed by an inaccessible page so that the kernel does not merge
  // it with a neighbour (merged mappings are registered as one).
  static char* Map(size_t len = kLen, void* at = nullptr) {
    // MAP_FIXED at `at`: the new mapping replaces whatever is there in one step (the kernel reports the old one as
    // unmapped), so no other thread's allocation can take the address in between.
    void* p = mmap(at, len + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    if (p == MAP_FAILED) std::abort();
    EXPECT_EQ(mprotect(static_cast<char*>(p) + len, 4096, PROT_NONE), 0);
    std::memset(p, 1, len);
    return static_cast<char*>(p);
  }
  // Uses a range once, as an engine call does.
  bool Use(const void* p, size_t len) {
    const HostPins::Lease l = pins_->acquire(p, len);
    pins_->release(l);
    return l.direct;
  }
  HostPins* pins_ = nullptr;  // leaked: its threads live on
};

// The event reader and the unpinner name themselves when they start (top and the mix benchmark tell them by it).
TEST_F(HostPinsTest, ItsThreadsCarryOurNames) {
  std::map<std::string, int> names;
  for (int i = 0; i < 200 && !(names.count("bo-uffd") && names.count("bo-unpin")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    names = thread_names();
  }
  EXPECT_EQ(names["bo-uffd"], 1);   // one reader for the process
  EXPECT_GE(names["bo-unpin"], 1);  // one per HostPins (each test makes its own)
}

TEST_F(HostPinsTest, SecondUseRegistersTheWholeMappingOnce) {
  char* p = Map();
  EXPECT_FALSE(Use(p + 4096, 1 << 20));  // first use: staged
  EXPECT_EQ(g_pins.load(), 0);
  EXPECT_TRUE(Use(p + 8192, 1 << 20));  // second: registered
  EXPECT_TRUE(Use(p, kLen));            // any part of the mapping afterwards
  EXPECT_EQ(g_pins.load(), 1);
  EXPECT_EQ(pins_->stats().registrations, 1);
  munmap(p, kLen + 4096);
}

// Rent or buy: with set_pin_after(3) a mapping is registered once calls have staged three times its size from it, so
// the fourth whole use registers it, and state() says so only before that use; half uses count half.
TEST_F(HostPinsTest, RegisteredOnceStagingHasMovedItsSizeThePinAfterTimes) {
  pins_->set_pin_after(3);
  char* p = Map();
  EXPECT_EQ(pins_->state(p, kLen), 0) << "a first use stages";
  for (int use = 1; use <= 3; ++use) {
    EXPECT_FALSE(Use(p, kLen)) << "use " << use;
    EXPECT_EQ(pins_->state(p, kLen), use == 3 ? 2 : 0) << "after use " << use;
  }
  EXPECT_EQ(g_pins.load(), 0);
  EXPECT_TRUE(Use(p, kLen));
  EXPECT_EQ(g_pins.load(), 1);
  EXPECT_EQ(pins_->state(p, kLen), 1);
  char* q = Map();
  for (int half = 1; half <= 6; ++half) EXPECT_FALSE(Use(q, kLen / 2)) << "half use " << half;
  EXPECT_TRUE(Use(q + kLen / 2, kLen / 2));
  EXPECT_EQ(g_pins.load(), 2);
  munmap(p, kLen + 4096);
  munmap(q, kLen + 4096);
}

// Several GPUs stage a panel more than once a call (gemm_pipeline.cu credits what they staged beyond acquire's one
// pass): the credit counts towards the rent; a credit for a mapping never used, or of nothing, changes nothing.
TEST_F(HostPinsTest, StagingCreditedBeyondOnePassCountsTowardsTheRent) {
  pins_->set_pin_after(3);
  char* p = Map();
  EXPECT_FALSE(Use(p, kLen));
  pins_->credit_staged(p + 4096, kLen / 2, 2.0 * double(kLen));  // two more GPUs moved it too: 3 times its size
  EXPECT_EQ(pins_->state(p, kLen), 2);
  EXPECT_TRUE(Use(p, kLen)) << "the second call registers it";
  EXPECT_EQ(g_pins.load(), 1);
  char* q = Map();
  pins_->credit_staged(q, kLen, 10.0 * double(kLen));  // never used yet: no rent to count towards
  EXPECT_FALSE(Use(q, kLen)) << "a first use stages";
  pins_->credit_staged(q, kLen, -5.0 * double(kLen));
  pins_->credit_staged(q, kLen, 0.0);
  EXPECT_FALSE(Use(q, kLen)) << "staged twice its size, not three times";
  pins_->credit_staged(q, kLen, double(kLen));
  EXPECT_TRUE(Use(q, kLen));
  EXPECT_EQ(g_pins.load(), 2);
  munmap(p, kLen + 4096);
  munmap(q, kLen + 4096);
}

// The rent rule applies from a size on (set_pin_after's from_bytes): a smaller mapping is registered at its second use.
TEST_F(HostPinsTest, MappingsUnderTheRentSizeAreRegisteredAtTheirSecondUse) {
  pins_->set_pin_after(3, int64_t(kLen));
  char* small = Map(kLen / 2);
  EXPECT_EQ(pins_->state(small, kLen / 2), 2);
  EXPECT_FALSE(Use(small, kLen / 2));
  EXPECT_TRUE(Use(small, kLen / 2));
  char* large = Map(kLen);
  EXPECT_EQ(pins_->state(large, kLen), 0);
  EXPECT_FALSE(Use(large, kLen));
  EXPECT_FALSE(Use(large, kLen)) << "a mapping of the rent size registered at its second use";
  EXPECT_EQ(g_pins.load(), 1);
  munmap(small, kLen / 2 + 4096);
  munmap(large, kLen + 4096);
}

// A mapping freed and registered again: the new one starts its rent from nothing.
TEST_F(HostPinsTest, ANewMappingAtTheSameAddressPaysItsOwnRent) {
  pins_->set_pin_after(2);
  char* p = Map();
  EXPECT_FALSE(Use(p, kLen));
  EXPECT_FALSE(Use(p, kLen));
  ASSERT_TRUE(Use(p, kLen));
  char* q = Map(kLen, p);
  ASSERT_EQ(q, p);
  EXPECT_FALSE(Use(q, kLen)) << "the new memory's first use must stage";
  EXPECT_FALSE(Use(q, kLen)) << "the old mapping's staging was counted for the new one";
  EXPECT_TRUE(Use(q, kLen));
  EXPECT_EQ(g_unpins.load(), 1);
  EXPECT_EQ(g_pins.load(), 2);
  munmap(q, kLen + 4096);
}

TEST_F(HostPinsTest, StateTellsEligibleRegisteredAndNever) {
  char* p = Map();
  EXPECT_EQ(pins_->state(p, kLen), 2);  // eligible, not registered
  EXPECT_EQ(g_pins.load(), 0) << "state() must not register";
  Use(p, kLen);
  Use(p, kLen);
  EXPECT_EQ(pins_->state(p + 100, 4096), 1);
  float stack[1024] = {};
  EXPECT_EQ(pins_->state(stack, sizeof stack), 0);
  ASSERT_EQ(madvise(p, 4096, MADV_DONTNEED), 0);
  EXPECT_NE(pins_->state(p, kLen), 1) << "a changed mapping must not count as registered";
  munmap(p, kLen + 4096);
}

TEST_F(HostPinsTest, NewMappingAtTheSameAddressIsNeverServedByTheOldRegistration) {
  char* p = Map();
  Use(p, kLen);
  ASSERT_TRUE(Use(p, kLen));
  char* q = Map(kLen, p);  // the same addresses, new pages
  ASSERT_EQ(q, p);
  EXPECT_FALSE(Use(q, kLen)) << "the old registration was handed out for new memory";
  EXPECT_EQ(g_unpins.load(), 1);
  munmap(q, kLen + 4096);
}

TEST_F(HostPinsTest, DiscardedPagesDropTheRegistration) {
  char* p = Map();
  Use(p, kLen);
  ASSERT_TRUE(Use(p, kLen));
  ASSERT_EQ(madvise(p + kLen / 2, 4096, MADV_DONTNEED), 0);
  EXPECT_FALSE(Use(p, kLen));
  EXPECT_EQ(g_unpins.load(), 1);
  munmap(p, kLen + 4096);
}

TEST_F(HostPinsTest, RemappedMemoryDropsTheRegistration) {
  char* p = Map();
  Use(p, kLen);
  ASSERT_TRUE(Use(p, kLen));
  void* q = mremap(p, kLen, 2 * kLen, MREMAP_MAYMOVE);  // the guard page forces a move
  ASSERT_NE(q, MAP_FAILED);
  // Unpinned by the background thread without waiting for a call: the program's own CUDA copies must not meet
  // the old pages either.
  for (int i = 0; i < 1000 && g_unpins.load() == 0; ++i) usleep(1000);
  EXPECT_EQ(g_unpins.load(), 1);
  EXPECT_FALSE(Use(q, kLen));
  munmap(q, 2 * kLen);
  munmap(p + kLen, 4096);
}

TEST_F(HostPinsTest, AnUnmapByAnotherThreadIsSeenBeforeTheNextCall) {
  char* p = Map();
  Use(p, kLen);
  ASSERT_TRUE(Use(p, kLen));
  std::thread([&] { ASSERT_EQ(munmap(p, kLen + 4096), 0); }).join();  // returns only after the event was read
  EXPECT_NE(pins_->state(p, kLen), 1);
  for (int i = 0; i < 1000 && g_unpins.load() == 0; ++i) usleep(1000);
  EXPECT_EQ(g_unpins.load(), 1);
}

// Unpinning runs beside the program: it says so (PinOps::busy, the core's want_core), +1 before the first unpin and -1
// after the last, so that the CPU BLAS lends it a core meanwhile; each unpin falls inside.
std::atomic<int> g_busy{0}, g_busy_calls{0}, g_unpins_while_busy{0}, g_unpins_said{0};
HostPins* g_pins_unpinning = nullptr;  // whose unpinning() the unpins below ask
void CountBusy(int delta) {
  g_busy += delta;
  g_busy_calls++;
}
void UnpinWhileBusy(void* base, size_t len) {
  if (g_busy.load() == 1) g_unpins_while_busy++;
  if (g_pins_unpinning && g_pins_unpinning->unpinning()) g_unpins_said++;
  FakeUnpin(base, len);
}

TEST_F(HostPinsTest, UnpinningSaysItIsBusyAroundItsWork) {
  pins_->shutdown();
  g_busy = 0, g_busy_calls = 0, g_unpins_while_busy = 0, g_unpins_said = 0;  // --gtest_repeat runs it again
  pins_ = new HostPins(PinOps{FakePin, UnpinWhileBusy, NotPinnedElsewhere, CountBusy}, int64_t(1) << 30);
  g_pins_unpinning = pins_;
  ASSERT_TRUE(pins_->tracking(nullptr));
  EXPECT_FALSE(pins_->unpinning());
  char* p = Map();
  char* q = Map();
  for (char* m : {p, q}) {
    Use(m, kLen);
    ASSERT_TRUE(Use(m, kLen));
  }
  ASSERT_EQ(munmap(p, kLen + 4096), 0);
  ASSERT_EQ(munmap(q, kLen + 4096), 0);
  for (int i = 0; i < 1000 && (g_unpins.load() < 2 || g_busy.load() != 0); ++i) usleep(1000);
  EXPECT_EQ(g_unpins.load(), 2);
  EXPECT_EQ(g_unpins_while_busy.load(), 2) << "an unpin ran without saying so";
  EXPECT_EQ(g_busy.load(), 0) << "busy left on";
  // The module's policy queries answer at once while this holds (module.cu: host_pinned, host_resident).
  EXPECT_EQ(g_unpins_said.load(), 2) << "an unpin ran while unpinning() said no";
  EXPECT_FALSE(pins_->unpinning()) << "unpinning() left on";
  EXPECT_GE(g_busy_calls.load(), 2);
  EXPECT_EQ(g_busy_calls.load() % 2, 0);
  const int calls = g_busy_calls.load();
  Use(Map(), kLen);  // nothing to unpin: nothing said
  usleep(20000);
  EXPECT_EQ(g_busy_calls.load(), calls);
  g_pins_unpinning = nullptr;
}

TEST_F(HostPinsTest, ChangedWhileHeldIsNotHandedOutAndUnpinnedAfterRelease) {
  char* p = Map();
  Use(p, kLen);
  const HostPins::Lease held = pins_->acquire(p, kLen);
  ASSERT_TRUE(held.direct);
  ASSERT_EQ(madvise(p, 4096, MADV_DONTNEED), 0);
  EXPECT_FALSE(Use(p, kLen));
  EXPECT_EQ(g_unpins.load(), 0) << "unpinned under a running call";
  pins_->release(held);
  Use(p, 4096);
  EXPECT_EQ(g_unpins.load(), 1);
  munmap(p, kLen + 4096);
}

// Registering may itself unmap registered memory (the driver frees inside cudaHostRegister): the kernel then waits
// until the event is read, which must not need the lock the registering thread holds.
char* g_unmap_inside_pin = nullptr;
bool PinThatUnmaps(void* base, size_t len) {
  if (g_unmap_inside_pin) {
    munmap(g_unmap_inside_pin, kLen + 4096);
    g_unmap_inside_pin = nullptr;
  }
  return FakePin(base, len);
}

TEST_F(HostPinsTest, AnUnmapInsideRegisteringDoesNotDeadlock) {
  pins_->shutdown();
  pins_ = new HostPins(PinOps{PinThatUnmaps, FakeUnpin, NotPinnedElsewhere}, int64_t(1) << 30);
  char* x = Map();
  char* y = Map();
  Use(x, kLen);
  ASSERT_TRUE(Use(x, kLen));
  g_unmap_inside_pin = x;
  Use(y, kLen);
  EXPECT_TRUE(Use(y, kLen));  // registers y, unmapping x on the way
  EXPECT_EQ(g_unmap_inside_pin, nullptr);
  char* x2 = Map(kLen, x);
  EXPECT_FALSE(Use(x2, kLen)) << "x's registration survived its unmapping";
  munmap(x2, kLen + 4096);
  munmap(y, kLen + 4096);
}

TEST_F(HostPinsTest, StackSharedAndFileMemoryAreNeverRegistered) {
  float stack[4096];
  std::memset(stack, 0, sizeof stack);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(Use(stack, sizeof stack));
  void* shared = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(Use(shared, kLen));
  EXPECT_EQ(g_pins.load(), 0);
  munmap(shared, kLen);
  uintptr_t lo, hi;
  EXPECT_FALSE(anonymous_mapping(stack, sizeof stack, &lo, &hi));
}

TEST_F(HostPinsTest, BudgetEvictsTheLeastRecentlyUsed) {
  pins_->shutdown();  // leaked, with its threads
  pins_ = new HostPins(PinOps{FakePin, FakeUnpin, NotPinnedElsewhere}, int64_t(2 * kLen + 3 * 4096));
  char* m[3] = {Map(), Map(), Map()};
  for (char* p : {m[0], m[1]}) {
    Use(p, kLen);
    ASSERT_TRUE(Use(p, kLen));
  }
  Use(m[0], kLen);  // m[1] is now the least recently used
  Use(m[2], kLen);
  EXPECT_TRUE(Use(m[2], kLen));
  EXPECT_EQ(g_unpins.load(), 1);
  EXPECT_TRUE(Use(m[0], kLen));
  EXPECT_EQ(pins_->stats().evicted, 1);
  for (char* p : m) munmap(p, kLen + 4096);
}

TEST_F(HostPinsTest, SixteenThreadsOnOverlappingBlocksRegisterOnce) {
  char* p = Map();
  std::vector<std::thread> ts;
  std::atomic<int> direct{0};
  for (int t = 0; t < 16; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) direct += Use(p + t * 4096, kLen / 2);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(g_pins.load(), 1);
  EXPECT_GE(direct.load(), 16 * 20 - 1);
  munmap(p, kLen + 4096);
}

}  // namespace
}  // namespace bom
