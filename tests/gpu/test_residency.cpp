// GPU tests of the residency cache (src/offload/module/residency.h) through the real module: a randomized
// differential test that mixes sgemv / strsv / sgemm calls on a set of host buffers with every kind of host write
// between them, and checks every result against a double-precision reference computed from the host memory as it is
// at the call (so a stale device copy shows as a wrong result), plus the bits of each output buffer outside its
// window. host_resident tells whether a call was served from a device copy; the test asserts that many were, so it
// fails if caching never happens. Without a CUDA device every test reports SKIPPED.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_test_support.h"

using namespace gt;

namespace {

constexpr double kEps = 1.0 / (1 << 24);
constexpr size_t kPage = 4096;

// A buffer of the program: a private anonymous mapping followed by a guard page (so the kernel never merges it with a
// neighbour), or one half of a MAP_SHARED pair (the other half is a second mapping of the same pages).
struct Buffer {
  float* p = nullptr;
  size_t floats = 0;
  float* alias = nullptr;  // shared: the second mapping
  bool pinned = false;     // registered by the program itself (cudaHostRegister)
  size_t bytes() const { return floats * 4; }
};

float* map_private(size_t bytes, void* at = nullptr) {
  void* p = mmap(at, bytes + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  if (p == MAP_FAILED) std::abort();
  mprotect(static_cast<char*>(p) + bytes, kPage, PROT_NONE);
  return static_cast<float*>(p);
}

void fill(float* p, size_t n, float scale) {
  for (size_t i = 0; i < n; ++i) p[i] = uni(-scale, scale);
}

class Residency : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
    ASSERT_NE(module().mod, nullptr) << module().error;
    ASSERT_EQ(module().init_status, BO_CUDA_OK);
  }
  // 1: the call that follows on this thread is served from a device copy of [p...] (state 1 before the call).
  static int resident(const float* p, int64_t rows, int64_t cols, int64_t ld) {
    bo_resident_info info{};
    module().mod->host_resident(p, rows, cols, ld, 1, &info);
    return info.state;
  }
};

TEST_F(Residency, RandomizedDifferential_HostWritesBetweenCalls) {
  const bo_cuda_module* mod = module().mod;
  const int64_t kRows = 1024, kCols = 1024;  // 4 MiB per buffer: above the cache's 1 MiB minimum
  const size_t kFloats = size_t(kRows) * size_t(kCols);
  const float kScale = 1.0f / float(kRows);  // triangles with unit diagonal stay well conditioned
  const float kBig = 0.05f;                  // sparse writes: large enough that a stale copy shows in every check
  std::vector<Buffer> bufs(5);
  for (int i = 0; i < 4; ++i) {
    bufs[i].floats = kFloats;
    bufs[i].p = map_private(bufs[i].bytes());
    fill(bufs[i].p, kFloats, kScale);
  }
  // A MAP_SHARED pair: writes through the alias must never meet a stale copy (such memory is never cached).
  {
    Buffer& s = bufs[4];
    s.floats = kFloats;
    const int fd = memfd_create("bo-residency-test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(s.bytes())), 0);
    s.p = static_cast<float*>(mmap(nullptr, s.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    s.alias = static_cast<float*>(mmap(nullptr, s.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    ASSERT_NE(s.p, MAP_FAILED);
    fill(s.p, kFloats, kScale);
  }
  // Buffer 3 is registered by the program itself: DMA could change it untracked, so it is never cached either.
  ASSERT_EQ(cudaHostRegister(bufs[3].p, bufs[3].bytes(), cudaHostRegisterDefault), cudaSuccess);
  bufs[3].pinned = true;

  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  std::vector<float> x(kCols), y(kRows), y0(kRows);
  const int iters = 1500;
  int served = 0, calls = 0, writes = 0;
  std::printf("seed %llu\n", static_cast<unsigned long long>(rng()()));
  for (int it = 0; it < iters; ++it) {
    // ---- a host write between calls ----
    Buffer& w = bufs[size_t(rng()() % bufs.size())];
    const size_t at = size_t(rng()() % (w.floats - 2048));
    switch (rng()() % 10) {
      case 0:  // plain stores
        for (int i = 0; i < 8; ++i) w.p[size_t(rng()() % w.floats)] = uni(-kBig, kBig);
        break;
      case 1: {  // memcpy of a block
        std::vector<float> blk(2048);
        fill(blk.data(), blk.size(), kScale);
        std::memcpy(w.p + at, blk.data(), 4 * blk.size());
        break;
      }
      case 2: {  // read(2) into the buffer: the kernel writes it inside the system call
        std::vector<float> blk(1024);
        fill(blk.data(), blk.size(), kScale);
        ASSERT_EQ(write(pipefd[1], blk.data(), 4 * blk.size()), ssize_t(4 * blk.size()));
        ASSERT_EQ(read(pipefd[0], w.p + at, 4 * blk.size()), ssize_t(4 * blk.size()));
        break;
      }
      case 3: {  // another thread
        std::thread t([&] {
          for (int i = 0; i < 64; ++i) w.p[at + size_t(i) * 17] = uni(-kBig, kBig);
        });
        t.join();
        break;
      }
      case 4:  // munmap + a new mapping at the same address with new contents (free + malloc reuse)
        if (!w.alias && !w.pinned) {
          munmap(w.p, w.bytes() + kPage);
          w.p = map_private(w.bytes(), w.p);
          fill(w.p, w.floats, kScale);
        }
        break;
      case 5:  // discarded pages read back as zeros
        if (!w.alias && !w.pinned)
          madvise(reinterpret_cast<char*>(w.p) + (at * 4 & ~(kPage - 1)), 8 * kPage, MADV_DONTNEED);
        break;
      case 6:  // through the shared alias
        if (w.alias)
          for (int i = 0; i < 256; ++i) w.alias[(at + size_t(i) * 31) % w.floats] = uni(-kBig, kBig);
        break;
      case 7: {  // realloc that moves (mremap)
        if (!w.alias && !w.pinned) {
          // Only the read-write part moves (mremap cannot span the guard page's separate mapping); the target is a
          // fresh mapping with its own guard, and the old guard page goes.
          float* to = map_private(w.bytes());
          void* q = mremap(w.p, w.bytes(), w.bytes(), MREMAP_MAYMOVE | MREMAP_FIXED, to);
          ASSERT_NE(q, MAP_FAILED) << std::strerror(errno);
          munmap(reinterpret_cast<char*>(w.p) + w.bytes(), kPage);
          w.p = static_cast<float*>(q);
        }
        break;
      }
      default:  // nothing: the next call should be a hit
        break;
    }
    ++writes;
    // ---- a call ----
    const int which = int(rng()() % 3);
    const size_t bi = size_t(rng()() % bufs.size());
    Buffer& b = bufs[bi];
    const int64_t ld = kRows - int64_t(rng()() % 2) * 64;  // lda = rows, or a window with lda > m
    const int64_t m = ld - int64_t(rng()() % 2) * 32, n = kCols - 64 + int64_t(rng()() % 64);
    const float* a = b.p;
    ++calls;
    if (which == 0) {  // sgemv
      const char tr = rng()() % 2 ? 'N' : 'T';
      const int64_t lx = tr == 'N' ? n : m, ly = tr == 'N' ? m : n;
      fill(x.data(), size_t(lx), 1.0f);
      const float beta = rng()() % 2 ? 0.5f : 0.0f;
      fill(y.data(), size_t(ly), 1.0f);
      y0 = y;
      if (beta == 0.0f)
        for (int64_t i = 0; i < ly; ++i) y[size_t(i)] = gt::sentinel();  // must not be read
      served += resident(a, m, n, ld) == 1;
      ASSERT_EQ(mod->sgemv(tr, m, n, 1.0f, a, ld, x.data(), 1, beta, y.data(), 1), BO_CUDA_OK);
      for (int64_t i = 0; i < ly; ++i) {
        double s = 0, mag = 0;
        for (int64_t l = 0; l < lx; ++l) {
          const double av = tr == 'N' ? a[i + l * ld] : a[l + i * ld];
          s += av * x[size_t(l)];
          mag += std::fabs(av * x[size_t(l)]);
        }
        s += beta * y0[size_t(i)];
        mag += std::fabs(beta * y0[size_t(i)]);
        ASSERT_LE(std::fabs(y[size_t(i)] - s), (lx + 3) * kEps * mag + 1e-30)
            << "sgemv " << tr << " buffer " << bi << " iteration " << it << " row " << i;
      }
    } else if (which == 1) {  // strsv, unit diagonal (well conditioned whatever the writes did)
      const int64_t nn = std::min(m, n);
      const char ul = rng()() % 2 ? 'L' : 'U', tr = rng()() % 2 ? 'N' : 'T';
      fill(x.data(), size_t(nn), 1.0f);
      const std::vector<float> rhs(x.begin(), x.begin() + nn);
      served += resident(a, nn, nn, ld) == 1;
      ASSERT_EQ(mod->strsv(ul, tr, 'U', nn, a, ld, x.data(), 1), BO_CUDA_OK);
      // Backward stability: the residual of the triangle in host memory now is within (2n+3) eps |T| |x|. A solve
      // with an out-of-date copy leaves the residual of the changed elements, orders of magnitude larger.
      for (int64_t i = 0; i < nn; ++i) {
        double r = double(rhs[size_t(i)]) - x[size_t(i)], mag = std::fabs(x[size_t(i)]);
        const int64_t j0 = (ul == 'L') == (tr == 'N') ? 0 : i + 1, j1 = (ul == 'L') == (tr == 'N') ? i : nn;
        for (int64_t j = j0; j < j1; ++j) {
          const double t = tr == 'N' ? a[i + j * ld] : a[j + i * ld];
          r -= t * x[size_t(j)];
          mag += std::fabs(t * x[size_t(j)]);
        }
        ASSERT_LE(std::fabs(r), (2 * nn + 3) * kEps * mag + 1e-30)
            << "strsv " << ul << tr << " buffer " << bi << " iteration " << it << " row " << i;
      }
    } else {  // sgemm: C inside another buffer, computed in its device copy when it has one
      Buffer& cb = bufs[(bi + 1) % bufs.size()];  // never A's or B's buffer: BLAS outputs do not alias inputs
      const int64_t mm = 512, nn = 256 + int64_t(rng()() % 256), kk = 256;
      const int64_t ldc = ld;
      float* c = cb.p + 64;  // a window: the rows and elements around it must not change
      const float beta = rng()() % 3 ? 1.0f : 0.0f;
      const float* bb = bufs[(bi + 2) % bufs.size()].p;
      std::vector<float> before(cb.p, cb.p + cb.floats);
      std::vector<double> ref(size_t(mm * nn)), mag(size_t(mm * nn));
      parallel_for(nn, [&](int64_t j) {
        for (int64_t i = 0; i < mm; ++i) {
          double s = 0, g = 0;
          for (int64_t l = 0; l < kk; ++l) {
            s += double(a[i + l * ld]) * double(bb[l + j * ld]);
            g += std::fabs(double(a[i + l * ld]) * double(bb[l + j * ld]));
          }
          const double c0 = beta != 0.0f ? double(before[size_t(64 + i + j * ldc)]) : 0.0;
          ref[size_t(i + j * mm)] = s + c0;
          mag[size_t(i + j * mm)] = g + std::fabs(c0);
        }
      });
      served += resident(a, mm, kk, ld) == 1;
      ASSERT_EQ(mod->sgemm('N', 'N', mm, nn, kk, 1.0f, a, ld, bb, ld, beta, c, ldc, 0.0), BO_CUDA_OK);
      for (int64_t j = 0; j < nn; ++j)
        for (int64_t i = 0; i < mm; ++i) {
          const double r = ref[size_t(i + j * mm)];
          ASSERT_NEAR(c[i + j * ldc], r, (kk + 3) * kEps * mag[size_t(i + j * mm)] + 1e-30)
              << "sgemm C in buffer " << (&cb - bufs.data()) << " iteration " << it;
        }
      // Nothing outside the window changed.
      for (size_t q = 0; q < cb.floats; ++q) {
        const int64_t off = int64_t(q) - 64;
        const bool inside = off >= 0 && off % ldc < mm && off / ldc < nn;
        if (!inside && gt::bits(cb.p[q]) != gt::bits(before[q]))
          FAIL() << "sgemm wrote outside C at float " << q << " iteration " << it;
      }
    }
  }
  std::printf("%d calls after %d host writes; %d served from device copies\n", calls, writes, served);
  // Unchanged buffers are used again and again: caching that never happens fails here.
  EXPECT_GT(served, calls / 10);
  cudaHostUnregister(bufs[3].p);
  close(pipefd[0]);
  close(pipefd[1]);
}

// The same matrix for many sgemv calls (power iteration): after the first few calls no bytes of A move.
TEST_F(Residency, PowerIteration_SecondUseArmsThirdUploadsThenHits) {
  const int64_t n = 2048;
  float* a = map_private(size_t(n * n) * 4);
  fill(a, size_t(n * n), 1.0f / float(n));
  std::vector<float> x(static_cast<size_t>(n), 1.0f), y(static_cast<size_t>(n));
  int states[8];
  for (int it = 0; it < 8; ++it) {
    states[it] = resident(a, n, n, n);
    ASSERT_EQ(module().mod->sgemv('N', n, n, 1.0f, a, n, x.data(), 1, 0.0f, y.data(), 1), BO_CUDA_OK);
    double s = 0;
    for (float v : y) s += double(v) * v;
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(y[size_t(i)] / std::sqrt(s));
  }
  EXPECT_EQ(states[0], 0) << "first use";
  EXPECT_EQ(states[1], 0) << "second use arms the sample";
  EXPECT_EQ(states[2], 2) << "third use: a clean candidate";
  for (int it = 3; it < 8; ++it) EXPECT_EQ(states[it], 1) << "use " << it + 1 << " should be served from the copy";
  munmap(a, size_t(n * n) * 4 + kPage);
}

}  // namespace

namespace {

// strsv on memory the cache never holds (MAP_SHARED): the staged path, whose triangle goes up in column pieces once
// n passes 1448 (8 MiB pieces). A piece packed with its own leading dimension once went up with the buffer's: every
// piece after the first arrived scrambled (found by bench/residency at n = 8192).
TEST_F(Residency, StagedStrsv_TriangleInPieces_n3000) {
  const int64_t n = 3000, ld = 3001;
  const size_t bytes = size_t(ld * n) * 4;
  float* a = static_cast<float*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(a, MAP_FAILED);
  fill(a, size_t(ld * n), 1.0f / float(n));
  for (int64_t i = 0; i < n; ++i) a[i + i * ld] = 1.0f + uni(0.0f, 1.0f);  // well conditioned
  for (char ul : {'L', 'U'})
    for (char tr : {'N', 'T'}) {
      std::vector<float> x(static_cast<size_t>(n));
      fill(x.data(), x.size(), 1.0f);
      const std::vector<float> rhs = x;
      EXPECT_EQ(resident(a, n, n, ld), 0) << "shared memory is never cached";
      ASSERT_EQ(module().mod->strsv(ul, tr, 'N', n, a, ld, x.data(), 1), BO_CUDA_OK);
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        double r = double(rhs[size_t(i)]) - double(a[i + i * ld]) * x[size_t(i)];
        double mag = std::fabs(double(a[i + i * ld]) * x[size_t(i)]);
        const bool below = (ul == 'L') == (tr == 'N');
        for (int64_t j = below ? 0 : i + 1; j < (below ? i : n); ++j) {
          const double t = tr == 'N' ? a[i + j * ld] : a[j + i * ld];
          r -= t * x[size_t(j)];
          mag += std::fabs(t * x[size_t(j)]);
        }
        worst = std::max(worst, std::fabs(r) / ((2 * n + 3) * kEps * mag + 1e-30));
      }
      EXPECT_LE(worst, 1.0) << ul << tr;
    }
  munmap(a, bytes);
}

}  // namespace
