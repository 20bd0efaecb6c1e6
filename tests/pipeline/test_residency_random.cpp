// The residency cache's differential test: a random program against the cache, every lease compared with host
// memory.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "residency_fixture.h"

namespace bom::residency_test {
namespace {

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
}  // namespace bom::residency_test
