// GPU tests of the residency cache (src/offload/module/residency.h) through the real module's call(), in both
// precisions (typed suites .../float and .../double): a randomized differential test that mixes gemv / trsv / gemm
// calls on a set of host buffers with every kind of host write between them, and checks every result against a
// reference accumulated in Real<T>::Acc computed from the host memory as it is at the call (so a stale device copy
// shows as a wrong result), plus the bits of each output buffer outside its window. host_resident tells whether a call
// was served from a device copy; the test asserts that many were, so it fails if caching never happens. Without a CUDA
// device every test reports SKIPPED.
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

constexpr size_t kPage = 4096;

// A buffer of the program: a private anonymous mapping followed by a guard page (so the kernel never merges it with a
// neighbour), or one half of a MAP_SHARED pair (the other half is a second mapping of the same pages).
template <typename T>
struct Buffer {
  T* p = nullptr;
  size_t elems = 0;
  T* alias = nullptr;   // shared: the second mapping
  bool pinned = false;  // registered by the program itself (cudaHostRegister)
  size_t bytes() const { return elems * sizeof(T); }
};

template <typename T>
T* map_private(size_t bytes, void* at = nullptr) {
  void* p = mmap(at, bytes + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  if (p == MAP_FAILED) std::abort();
  mprotect(static_cast<char*>(p) + bytes, kPage, PROT_NONE);
  return static_cast<T*>(p);
}

template <typename T>
void fill(T* p, size_t n, double scale) {
  for (size_t i = 0; i < n; ++i) p[i] = uni<T>(T(-scale), T(scale));
}

// One call as the core hands it to the module (host pointers): the routine of kind `kind` in T's precision.
template <typename T>
bo_call host_call(bo_routine_kind kind, const char* ops, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
                  int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc, int64_t incx, int64_t incy) {
  return with_operands(make_call(routine_of<T>(kind), ops, m, n, k, alpha, beta, lda, ldb, ldc, incx, incy), a, b, c);
}

template <typename T>
class Residency : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
    ASSERT_NE(module().mod, nullptr) << module().error;
    ASSERT_EQ(module().init_status, BO_CUDA_OK);
  }
  // 1: the call that follows on this thread is served from a device copy of [p...] (state 1 before the call).
  static int resident(const T* p, int64_t rows, int64_t cols, int64_t ld) {
    bo_resident_info info{};
    module().mod->host_resident(p, rows, cols, ld, int(sizeof(T)), 1, &info);
    return info.state;
  }
  static int gemv(char tr, int64_t m, int64_t n, double alpha, const T* a, int64_t lda, const T* x, double beta, T* y) {
    const char ops[2] = {tr, 0};
    const bo_call g = host_call<T>(BO_KIND_GEMV, ops, m, n, 0, alpha, a, lda, x, 0, beta, y, 0, 1, 1);
    return module().mod->call(&g, 0.0);
  }
  static int trsv(char ul, char tr, char diag, int64_t n, const T* a, int64_t lda, T* x) {
    const char ops[4] = {ul, tr, diag, 0};
    const bo_call g = host_call<T>(BO_KIND_TRSV, ops, 0, n, 0, 0, a, lda, nullptr, 0, 0, x, 0, 1, 0);
    return module().mod->call(&g, 0.0);
  }
};
TYPED_TEST_SUITE(Residency, Precisions, PrecisionNames);

TYPED_TEST(Residency, RandomizedDifferential_HostWritesBetweenCalls) {
  using T = TypeParam;
  using Acc = typename Real<T>::Acc;
  const double u = Real<T>::u;
  const bo_cuda_module* mod = module().mod;
  const int64_t kRows = 1024, kCols = 1024;  // 4 or 8 MiB per buffer: above the cache's 1 MiB minimum
  const size_t kElems = size_t(kRows) * size_t(kCols);
  const double kScale = 1.0 / double(kRows);  // triangles with unit diagonal stay well conditioned
  const double kBig = 0.05;                   // sparse writes: large enough that a stale copy shows in every check
  std::vector<Buffer<T>> bufs(5);
  for (int i = 0; i < 4; ++i) {
    bufs[i].elems = kElems;
    bufs[i].p = map_private<T>(bufs[i].bytes());
    fill(bufs[i].p, kElems, kScale);
  }
  // A MAP_SHARED pair: writes through the alias must never meet a stale copy (such memory is never cached).
  {
    Buffer<T>& s = bufs[4];
    s.elems = kElems;
    const int fd = memfd_create("bo-residency-test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(s.bytes())), 0);
    s.p = static_cast<T*>(mmap(nullptr, s.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    s.alias = static_cast<T*>(mmap(nullptr, s.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    ASSERT_NE(s.p, MAP_FAILED);
    fill(s.p, kElems, kScale);
  }
  // Buffer 3 is registered by the program itself: DMA could change it untracked, so it is never cached either.
  ASSERT_EQ(cudaHostRegister(bufs[3].p, bufs[3].bytes(), cudaHostRegisterDefault), cudaSuccess);
  bufs[3].pinned = true;

  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  std::vector<T> x(kCols), y(kRows), y0(kRows);
  const int iters = 1500;
  int served = 0, calls = 0, writes = 0;
  std::printf("seed %llu\n", static_cast<unsigned long long>(rng()()));
  for (int it = 0; it < iters; ++it) {
    // ---- a host write between calls ----
    Buffer<T>& w = bufs[size_t(rng()() % bufs.size())];
    const size_t at = size_t(rng()() % (w.elems - 2048));
    switch (rng()() % 10) {
      case 0:  // plain stores
        for (int i = 0; i < 8; ++i) w.p[size_t(rng()() % w.elems)] = uni<T>(-kBig, kBig);
        break;
      case 1: {  // memcpy of a block
        std::vector<T> blk(2048);
        fill(blk.data(), blk.size(), kScale);
        std::memcpy(w.p + at, blk.data(), sizeof(T) * blk.size());
        break;
      }
      case 2: {  // read(2) into the buffer: the kernel writes it inside the system call
        std::vector<T> blk(1024);
        fill(blk.data(), blk.size(), kScale);
        ASSERT_EQ(write(pipefd[1], blk.data(), sizeof(T) * blk.size()), ssize_t(sizeof(T) * blk.size()));
        ASSERT_EQ(read(pipefd[0], w.p + at, sizeof(T) * blk.size()), ssize_t(sizeof(T) * blk.size()));
        break;
      }
      case 3: {  // another thread
        std::thread t([&] {
          for (int i = 0; i < 64; ++i) w.p[at + size_t(i) * 17] = uni<T>(-kBig, kBig);
        });
        t.join();
        break;
      }
      case 4:  // munmap + a new mapping at the same address with new contents (free + malloc reuse)
        if (!w.alias && !w.pinned) {
          munmap(w.p, w.bytes() + kPage);
          w.p = map_private<T>(w.bytes(), w.p);
          fill(w.p, w.elems, kScale);
        }
        break;
      case 5:  // discarded pages read back as zeros
        if (!w.alias && !w.pinned)
          madvise(reinterpret_cast<char*>(w.p) + (at * sizeof(T) & ~(kPage - 1)), 8 * kPage, MADV_DONTNEED);
        break;
      case 6:  // through the shared alias
        if (w.alias)
          for (int i = 0; i < 256; ++i) w.alias[(at + size_t(i) * 31) % w.elems] = uni<T>(-kBig, kBig);
        break;
      case 7: {  // realloc that moves (mremap)
        if (!w.alias && !w.pinned) {
          // Only the read-write part moves (mremap cannot span the guard page's separate mapping); the target is a
          // fresh mapping with its own guard, and the old guard page goes.
          T* to = map_private<T>(w.bytes());
          void* q = mremap(w.p, w.bytes(), w.bytes(), MREMAP_MAYMOVE | MREMAP_FIXED, to);
          ASSERT_NE(q, MAP_FAILED) << std::strerror(errno);
          munmap(reinterpret_cast<char*>(w.p) + w.bytes(), kPage);
          w.p = static_cast<T*>(q);
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
    Buffer<T>& b = bufs[bi];
    const int64_t ld = kRows - int64_t(rng()() % 2) * 64;  // lda = rows, or a window with lda > m
    const int64_t m = ld - int64_t(rng()() % 2) * 32, n = kCols - 64 + int64_t(rng()() % 64);
    const T* a = b.p;
    ++calls;
    if (which == 0) {  // gemv
      const char tr = rng()() % 2 ? 'N' : 'T';
      const int64_t lx = tr == 'N' ? n : m, ly = tr == 'N' ? m : n;
      fill(x.data(), size_t(lx), 1.0);
      const double beta = rng()() % 2 ? 0.5 : 0.0;
      fill(y.data(), size_t(ly), 1.0);
      y0 = y;
      if (beta == 0.0)
        for (int64_t i = 0; i < ly; ++i) y[size_t(i)] = gt::sentinel<T>();  // must not be read
      served += this->resident(a, m, n, ld) == 1;
      ASSERT_EQ(this->gemv(tr, m, n, 1.0, a, ld, x.data(), beta, y.data()), BO_CUDA_OK);
      for (int64_t i = 0; i < ly; ++i) {
        Acc s = 0, mag = 0;
        for (int64_t l = 0; l < lx; ++l) {
          const Acc av = tr == 'N' ? a[i + l * ld] : a[l + i * ld];
          s += av * Acc(x[size_t(l)]);
          mag += std::fabs(av * Acc(x[size_t(l)]));
        }
        s += Acc(beta) * Acc(y0[size_t(i)]);
        mag += std::fabs(Acc(beta) * Acc(y0[size_t(i)]));
        ASSERT_LE(std::fabs(Acc(y[size_t(i)]) - s), ((lx + 3) * u + (lx + 2) * Real<T>::u_acc) * mag + tiny<T>())
            << "gemv " << tr << " buffer " << bi << " iteration " << it << " row " << i;
      }
    } else if (which == 1) {  // trsv, unit diagonal (well conditioned whatever the writes did)
      const int64_t nn = std::min(m, n);
      const char ul = rng()() % 2 ? 'L' : 'U', tr = rng()() % 2 ? 'N' : 'T';
      fill(x.data(), size_t(nn), 1.0);
      const std::vector<T> rhs(x.begin(), x.begin() + nn);
      served += this->resident(a, nn, nn, ld) == 1;
      ASSERT_EQ(this->trsv(ul, tr, 'U', nn, a, ld, x.data()), BO_CUDA_OK);
      // Backward stability: the residual of the triangle in host memory now is within (2n+3) u |T| |x|. A solve
      // with an out-of-date copy leaves the residual of the changed elements, orders of magnitude larger.
      for (int64_t i = 0; i < nn; ++i) {
        Acc r = Acc(rhs[size_t(i)]) - Acc(x[size_t(i)]), mag = std::fabs(Acc(x[size_t(i)]));
        const int64_t j0 = (ul == 'L') == (tr == 'N') ? 0 : i + 1, j1 = (ul == 'L') == (tr == 'N') ? i : nn;
        for (int64_t j = j0; j < j1; ++j) {
          const Acc t = tr == 'N' ? a[i + j * ld] : a[j + i * ld];
          r -= t * Acc(x[size_t(j)]);
          mag += std::fabs(t * Acc(x[size_t(j)]));
        }
        ASSERT_LE(std::fabs(r), (2 * nn + 3) * u * mag + tiny<T>())
            << "trsv " << ul << tr << " buffer " << bi << " iteration " << it << " row " << i;
      }
    } else {  // gemm: C inside another buffer, computed in its device copy when it has one
      Buffer<T>& cb = bufs[(bi + 1) % bufs.size()];  // never A's or B's buffer: BLAS outputs do not alias inputs
      const int64_t mm = 512, nn = 256 + int64_t(rng()() % 256), kk = 256;
      const int64_t ldc = ld;
      T* c = cb.p + 64;  // a window: the rows and elements around it must not change
      const double beta = rng()() % 3 ? 1.0 : 0.0;
      const T* bb = bufs[(bi + 2) % bufs.size()].p;
      std::vector<T> before(cb.p, cb.p + cb.elems);
      std::vector<Acc> ref(size_t(mm * nn)), mag(size_t(mm * nn));
      parallel_for(nn, [&](int64_t j) {
        for (int64_t i = 0; i < mm; ++i) {
          Acc s = 0, g = 0;
          for (int64_t l = 0; l < kk; ++l) {
            s += Acc(a[i + l * ld]) * Acc(bb[l + j * ld]);
            g += std::fabs(Acc(a[i + l * ld]) * Acc(bb[l + j * ld]));
          }
          const Acc c0 = beta != 0.0 ? Acc(before[size_t(64 + i + j * ldc)]) : Acc(0);
          ref[size_t(i + j * mm)] = s + c0;
          mag[size_t(i + j * mm)] = g + std::fabs(c0);
        }
      });
      served += this->resident(a, mm, kk, ld) == 1;
      const bo_call g = host_call<T>(BO_KIND_GEMM, "NN", mm, nn, kk, 1.0, a, ld, bb, ld, beta, c, ldc, 0, 0);
      ASSERT_EQ(mod->call(&g, 0.0), BO_CUDA_OK);
      const long double rel = (kk + 3) * u + (kk + 2) * Real<T>::u_acc;
      for (int64_t j = 0; j < nn; ++j)
        for (int64_t i = 0; i < mm; ++i)
          ASSERT_LE(std::fabs(Acc(c[i + j * ldc]) - ref[size_t(i + j * mm)]), rel * mag[size_t(i + j * mm)] + tiny<T>())
              << "gemm C in buffer " << (&cb - bufs.data()) << " iteration " << it;
      // Nothing outside the window changed.
      for (size_t q = 0; q < cb.elems; ++q) {
        const int64_t off = int64_t(q) - 64;
        const bool inside = off >= 0 && off % ldc < mm && off / ldc < nn;
        if (!inside && gt::bits(cb.p[q]) != gt::bits(before[q]))
          FAIL() << "gemm wrote outside C at element " << q << " iteration " << it;
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

// The same matrix for many gemv calls (power iteration): after the first few calls no bytes of A move.
TYPED_TEST(Residency, PowerIteration_SecondUseArmsThirdUploadsThenHits) {
  using T = TypeParam;
  const int64_t n = 2048;
  T* a = map_private<T>(size_t(n * n) * sizeof(T));
  fill(a, size_t(n * n), 1.0 / double(n));
  std::vector<T> x(static_cast<size_t>(n), T(1)), y(static_cast<size_t>(n));
  int states[8];
  for (int it = 0; it < 8; ++it) {
    states[it] = this->resident(a, n, n, n);
    ASSERT_EQ(this->gemv('N', n, n, 1.0, a, n, x.data(), 0.0, y.data()), BO_CUDA_OK);
    double s = 0;
    for (T v : y) s += double(v) * v;
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = T(y[size_t(i)] / std::sqrt(s));
  }
  EXPECT_EQ(states[0], 0) << "first use";
  EXPECT_EQ(states[1], 0) << "second use arms the sample";
  EXPECT_EQ(states[2], 2) << "third use: a clean candidate";
  for (int it = 3; it < 8; ++it) EXPECT_EQ(states[it], 1) << "use " << it + 1 << " should be served from the copy";
  munmap(a, size_t(n * n) * sizeof(T) + kPage);
}

// trsv on memory the cache never holds (MAP_SHARED): the staged path, whose triangle goes up in column pieces once
// n passes 1448 (8 MiB pieces). A piece packed with its own leading dimension once went up with the buffer's: every
// piece after the first arrived scrambled (found by bench/residency at n = 8192).
TYPED_TEST(Residency, StagedTrsv_TriangleInPieces_n3000) {
  using T = TypeParam;
  using Acc = typename Real<T>::Acc;
  const int64_t n = 3000, ld = 3001;
  const size_t bytes = size_t(ld * n) * sizeof(T);
  T* a = static_cast<T*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(a, MAP_FAILED);
  fill(a, size_t(ld * n), 1.0 / double(n));
  for (int64_t i = 0; i < n; ++i) a[i + i * ld] = 1 + uni<T>(0, 1);  // well conditioned
  for (char ul : {'L', 'U'})
    for (char tr : {'N', 'T'}) {
      std::vector<T> x(static_cast<size_t>(n));
      fill(x.data(), x.size(), 1.0);
      const std::vector<T> rhs = x;
      EXPECT_EQ(this->resident(a, n, n, ld), 0) << "shared memory is never cached";
      ASSERT_EQ(this->trsv(ul, tr, 'N', n, a, ld, x.data()), BO_CUDA_OK);
      long double worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        Acc r = Acc(rhs[size_t(i)]) - Acc(a[i + i * ld]) * Acc(x[size_t(i)]);
        Acc mag = std::fabs(Acc(a[i + i * ld]) * Acc(x[size_t(i)]));
        const bool below = (ul == 'L') == (tr == 'N');
        for (int64_t j = below ? 0 : i + 1; j < (below ? i : n); ++j) {
          const Acc t = tr == 'N' ? a[i + j * ld] : a[j + i * ld];
          r -= t * Acc(x[size_t(j)]);
          mag += std::fabs(t * Acc(x[size_t(j)]));
        }
        worst = std::max<long double>(worst, std::fabs(r) / ((2 * n + 3) * Real<T>::u * mag + tiny<T>()));
      }
      EXPECT_LE(double(worst), 1.0) << ul << tr;
    }
  munmap(a, bytes);
}

}  // namespace
