// GPU tests of the module's gemm engine for host operands, continued (test_pipeline.cpp has the schedules), in both
// precisions: 16 threads on blocks of shared arrays, several GPUs, registered host memory (direct DMA, remapped and
// discarded pages), determinism and the staging ring. Without a CUDA device every test reports SKIPPED.
#include <sys/mman.h>

#include <atomic>
#include <thread>

#include "pipeline_support.h"

using namespace gt;
using namespace gt::pipe;

namespace {

GPU_TYPED_SUITE(PipelineStaging);

// ---------------------------------------------------------------- 5. threads on shared operands
// 16 threads, each computing one block of ONE column-major C (ldc = its full height): every column of the array
// holds pieces of four threads' blocks with gap rows between them, and gap columns separate the block columns, so
// a tile written a row or a column too far lands in a neighbour or a gap. A and B are shared read-only arrays whose
// blocks overlap between threads. Transposes, k, alpha, beta and (for four threads) a hybrid CPU share differ per
// thread. Two rounds from the same start must give the same bits.
TYPED_TEST(PipelineStaging, Threads16_BlocksOfSharedArrays_tile16) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  constexpr int kThreads = 16;
  constexpr int64_t kTile = 16, kRows = 61, kCols = 45, kRowStride = 64, kColStride = 48, kAb = 300;
  const int64_t ldc = 4 * kRowStride + 3, c_cols = 4 * kColStride, lda = kAb + 1, ldb = kAb + 2;
  Knobs knobs(kTile);
  Image<T> a(mspan(kAb, kAb, lda)), b(mspan(kAb, kAb, ldb)), c(mspan(ldc, c_cols, ldc));
  fill_random(a, kAb, kAb, lda);
  fill_random(b, kAb, kAb, ldb);
  fill_random(c, ldc, c_cols, ldc);
  struct Job {
    char ta, tb;
    int64_t k;
    double alpha, beta;
    double share;
    size_t a_off, b_off, c_off;
  };
  std::vector<Job> jobs;
  for (int t = 0; t < kThreads; ++t) {
    Job j{t & 1 ? 'T' : 'N',
          t & 2 ? 'T' : 'N',
          50 + 3 * t,
          1.0 + 0.25 * t,
          t % 3 == 0 ? 0.0 : 0.5,
          t % 4 == 3 ? 0.4 : 0.0,
          size_t(7 * t + 5 * t * lda),
          size_t(3 * t + 11 * t * ldb),
          size_t((t % 4) * kRowStride + (t / 4) * kColStride * ldc)};
    if (j.beta == 0.0)
      for (int64_t jj = 0; jj < kCols; ++jj)
        for (int64_t i = 0; i < kRows; ++i) c.p()[j.c_off + i + jj * ldc] = NAN;
    jobs.push_back(j);
  }
  std::vector<Expect> want;
  for (const Job& j : jobs)
    reference(j.ta, j.tb, kRows, kCols, j.k, j.alpha, a.p() + j.a_off, lda, b.p() + j.b_off, ldb, j.beta,
              c.p() + j.c_off, ldc, j.c_off, want);

  struct Outcome {
    int status = -1, stats_status = -1;
    bo_gemm_stats st{};
  };
  std::vector<Image<T>> results;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Image<T> ra = a, rb = b, rc = c;
    std::vector<Outcome> out(kThreads);
    std::atomic<int> ready{0};
    const int64_t calls0 = cpu_calls().load(), bad0 = cpu_bad_calls().load();
    std::vector<std::thread> th;
    for (int t = 0; t < kThreads; ++t)
      th.emplace_back([&, t] {
        const Job& j = jobs[t];
        // All start together, so that the calls really overlap.
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        const bo_call call = gemm_call<T>(j.ta, j.tb, kRows, kCols, j.k, j.alpha, ra.p() + j.a_off, lda,
                                          rb.p() + j.b_off, ldb, j.beta, rc.p() + j.c_off, ldc);
        out[t].status = module().mod->call(&call, j.share);
        out[t].stats_status = module().mod->last_gemm_stats(&out[t].st);
      });
    for (auto& x : th) x.join();
    for (int t = 0; t < kThreads; ++t) {
      const Job& j = jobs[t];
      SCOPED_TRACE("thread " + std::to_string(t));
      EXPECT_EQ(out[t].status, BO_CUDA_OK);
      EXPECT_EQ(out[t].stats_status, 0);
      // The stats are the calling thread's own: its k and its share, not another thread's call.
      EXPECT_TRUE(pipeline_ran(out[t].st, kRows, kCols, j.k, j.alpha, j.beta, kTile, sizeof(T)));
      EXPECT_EQ(out[t].st.tiles_cpu, 0) << describe(out[t].st);
      EXPECT_EQ(out[t].st.n_cpu_cols, 0) << describe(out[t].st);
      if (j.share > 0)
        EXPECT_GT(out[t].st.m_cpu_rows, 0) << "tall block: the CPU takes trailing rows " << describe(out[t].st);
      else
        EXPECT_EQ(out[t].st.m_cpu_rows, 0) << describe(out[t].st);
    }
    EXPECT_GE(cpu_calls().load() - calls0, 4) << "four threads had a CPU share";
    EXPECT_EQ(cpu_bad_calls().load() - bad0, 0);
    EXPECT_TRUE(check_image(a, ra, {})) << "A";
    EXPECT_TRUE(check_image(b, rb, {})) << "B";
    EXPECT_TRUE(check_image(c, rc, want)) << "C";
    results.push_back(std::move(rc));
  }
  EXPECT_TRUE(same_bits(results[0], results[1]));
}

// ---------------------------------------------------------------- 6. several GPUs
GPU_TYPED_SUITE(PipelineMultiGpu);

// Two devices: GPUs 0 and 1 where the machine has two, else two shares of GPU 0 (BLASOFFLOAD_DEVICES=0,0: each share
// its own streams, arena and ring, half the GPU's memory; the panels shared between them are copied within the GPU).
inline const char* two_devices() { return device_count() >= 2 ? "0,1" : "0,0"; }

// Tiles spread over two GPUs run the same kernels as on one: the same bits, in core, out of core and in K passes,
// however soon a GPU takes the other's tiles.
TYPED_TEST(PipelineMultiGpu, TwoDevices_BitIdenticalToOne) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  for (const OocCase& c : {OocCase{'N', 'T', 333, 257, 190, 1.0f, 0.5f, false, ""},
                           OocCase{'N', 'N', 640, 640, 512, -1.0f, 0.0f, true, "1M"},
                           OocCase{'T', 'N', 200, 150, 4000, 1.0f, 1.0f, false, "1M"}}) {
    Knobs knobs(64);
    if (*c.limit) knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>(c.limit));
    const Gemm<T> g(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.nan_c);
    SCOPED_TRACE(g.name() + " limit " + scaled_limit<T>(c.limit));
    knobs.set("BLASOFFLOAD_DEVICES", two_devices());
    const Result<T> two = run(g);
    std::printf("  %s limit %s on %s: %s\n", g.name().c_str(), scaled_limit<T>(c.limit).c_str(), two_devices(),
                describe(two.st).c_str());
    // A GPU whose own tiles are all taken takes the other's once its queue is down to this many (default 2): at
    // once (-1) and only once its queue is empty (0), the same bits.
    knobs.set("BLASOFFLOAD_TEST_STEAL_DEPTH", "0");
    const Result<T> patient = run(g);
    knobs.set("BLASOFFLOAD_TEST_STEAL_DEPTH", "-1");
    const Result<T> eager = run(g);
    knobs.unset("BLASOFFLOAD_TEST_STEAL_DEPTH");
    knobs.set("BLASOFFLOAD_DEVICES", "0");
    const Result<T> one = run(g);
    EXPECT_TRUE(same_bits(patient.c, two.c));
    EXPECT_TRUE(same_bits(eager.c, two.c));
    EXPECT_TRUE(pipeline_ran(g, patient, 64, 2));
    EXPECT_TRUE(correct(g, two));
    EXPECT_TRUE(pipeline_ran(g, two, 64, 2));
    EXPECT_TRUE(gpu_only(two));
    EXPECT_TRUE(correct(g, one));
    EXPECT_TRUE(pipeline_ran(g, one, 64, 1));
    EXPECT_EQ(one.st.k_passes, two.st.k_passes) << "one plan for all devices";
    if (c.k > 1000) {
      EXPECT_GT(two.st.k_passes, 1) << "the K-split case did not split " << describe(two.st);
    }
    EXPECT_TRUE(same_bits(one.c, two.c)) << "two GPUs gave other bits than one";
  }
}

// Two GPUs side by side both need every A panel: one stages each and the other copies it from that GPU (panel_share.h),
// so the two stage what one GPU does; the same bits as one GPU and as each staging its own, with and without a
// failure midway.
TYPED_TEST(PipelineMultiGpu, TwoDevices_SharedPanelsStagedOnce) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  int can = 1;
  if (device_count() >= 2 && (cudaDeviceCanAccessPeer(&can, 0, 1) != cudaSuccess || !can))
    GTEST_SKIP() << "GPUs 0 and 1 are not peers";
  Knobs knobs(64);
  knobs.set("BLASOFFLOAD_PIN_HOST", "off");  // staged: registered operands are not shared
  for (int c = 0; c < 2; ++c) {
    const Gemm<T> g = c == 0 ? Gemm<T>('N', 'N', 640, 512, 300, 1.0f, 0.0f, true)
                             : Gemm<T>('T', 'T', 333, 257, 190, -1.0f, 0.5f, false);
    SCOPED_TRACE(g.name());
    knobs.set("BLASOFFLOAD_DEVICES", "0");
    const Result<T> one = run(g);
    knobs.set("BLASOFFLOAD_DEVICES", two_devices());
    const Result<T> shared = run(g);
    knobs.set("BLASOFFLOAD_TEST_PEER_PANELS", "off");
    const Result<T> own = run(g);
    knobs.unset("BLASOFFLOAD_TEST_PEER_PANELS");
    std::printf("  %s shared: %s\n  each its own: %s\n", g.name().c_str(), describe(shared.st).c_str(),
                describe(own.st).c_str());
    for (const Result<T>* r : {&one, &shared, &own}) EXPECT_TRUE(correct(g, *r));
    EXPECT_TRUE(pipeline_ran(g, shared, 64, 2));
    EXPECT_TRUE(gpu_only(shared));
    EXPECT_TRUE(same_bits(one.c, shared.c)) << "shared panels gave other bits than one GPU";
    EXPECT_TRUE(same_bits(own.c, shared.c));
    EXPECT_GT(shared.st.bytes_peer, 0.0) << describe(shared.st);
    EXPECT_EQ(own.st.bytes_peer, 0.0) << describe(own.st);
    // Both GPUs need all of one operand: shared, every panel crosses from the host once, as on one GPU.
    EXPECT_NEAR(shared.st.bytes_h2d, one.st.bytes_h2d, 1.0) << describe(shared.st);
    EXPECT_GT(own.st.bytes_h2d, shared.st.bytes_h2d) << describe(own.st);
    // A GPU failing midway: waiting for the failed GPU's panels ends, and the rest is finished on the CPU.
    knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", "5");
    const Result<T> failed = run(g);
    knobs.unset("BLASOFFLOAD_TEST_FAIL_AFTER_TILES");
    EXPECT_TRUE(correct(g, failed));
    EXPECT_GT(failed.st.tiles_cpu, 0) << describe(failed.st);
  }
}

// A failure on two GPUs (the hook counts the call's tiles over both) and a hybrid share with two GPUs.
TYPED_TEST(PipelineMultiGpu, TwoDevices_FailureAndHybrid) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(37);
  knobs.set("BLASOFFLOAD_DEVICES", two_devices());
  {
    knobs.set("BLASOFFLOAD_TEST_FAIL_AFTER_TILES", "3");
    const Gemm<T> g('N', 'N', 200, 150, 90, 1.0f, 0.75f, false);
    const Result<T> r = run(g);
    EXPECT_TRUE(correct(g, r));
    EXPECT_TRUE(pipeline_ran(g, r, 37, 2));
    EXPECT_GT(r.st.tiles_cpu, 0) << describe(r.st);
    knobs.unset("BLASOFFLOAD_TEST_FAIL_AFTER_TILES");
  }
  const Gemm<T> g('T', 'N', 150, 400, 120, -1.0f, 0.0f, true);
  const Result<T> r = run(g, 0.3);
  EXPECT_TRUE(correct(g, r));
  EXPECT_TRUE(pipeline_ran(g, r, 37, 2));
  EXPECT_GT(r.st.n_cpu_cols, 0) << describe(r.st);
  EXPECT_GE(r.cpu_calls, 1) << describe(r.st);
}

// ---------------------------------------------------------------- 7. registered host memory
// Operands in their own mappings (as malloc gives large arrays) move by DMA without staging once registered (the
// mapping's second use: these are under BLASOFFLOAD_PIN_AFTER_MIN); C replaced by a new mapping at the same address is
// never used through the old registration, and a mapping whose pages were discarded (MADV_DONTNEED: they read as zeros
// afterwards) neither.
template <typename T>
T* map_elems(size_t n, void* at = nullptr) {
  const size_t bytes = (n * sizeof(T) + 4095) / 4096 * 4096;
  // MAP_FIXED at `at` replaces the mapping there in one step (the kernel reports the old one unmapped): no other
  // allocation can take the address in between.
  void* p = mmap(at, bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  if (p == MAP_FAILED) std::abort();
  EXPECT_EQ(mprotect(static_cast<char*>(p) + bytes, 4096, PROT_NONE), 0);  // no merging with a neighbour
  return static_cast<T*>(p);
}
template <typename T>
void unmap_elems(T* p, size_t n) {
  munmap(p, (n * sizeof(T) + 4095) / 4096 * 4096 + 4096);
}

TYPED_TEST(PipelineStaging, Registered_DirectDmaThenRemappedAndDiscardedOperands_tile64) {
  using T = TypeParam;
  using Acc = typename Real<T>::Acc;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64);
  knobs.set("BLASOFFLOAD_PIN_HOST", "on");  // this process uses CUDA itself, so auto would leave registrations off
  const int64_t m = 300, n = 260, k = 270, lda = 301, ldb = 271, ldc = 303;
  const size_t na = size_t(lda * k), nb = size_t(ldb * n), nc = size_t(ldc * n);
  T *a = map_elems<T>(na), *b = map_elems<T>(nb), *c = map_elems<T>(nc);
  std::vector<T> c0(nc);
  for (size_t i = 0; i < na; ++i) a[i] = uni<T>();
  for (size_t i = 0; i < nb; ++i) b[i] = uni<T>();
  for (size_t i = 0; i < nc; ++i) c0[i] = uni<T>();
  const double alpha = 1.25, beta = 0.5;
  const long double rel = (k + 3) * Real<T>::u + (k + 2) * Real<T>::u_acc;
  auto check = [&](const char* what, const std::vector<T>& cin) {
    long double worst = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < ldc; ++i) {
        if (i >= m) {
          ASSERT_EQ(bits(c[i + j * ldc]), bits(cin[size_t(i + j * ldc)])) << what << ": wrote between rows";
          continue;
        }
        Acc s = 0, sa = 0;
        for (int64_t l = 0; l < k; ++l) {
          s += Acc(a[i + l * lda]) * Acc(b[l + j * ldb]);
          sa += std::fabs(Acc(a[i + l * lda]) * Acc(b[l + j * ldb]));
        }
        const Acc c_in = Acc(beta) * Acc(cin[size_t(i + j * ldc)]);
        const Acc want = Acc(alpha) * s + c_in;
        const Acc bound = rel * (std::fabs(Acc(alpha)) * sa + std::fabs(c_in)) + tiny<T>();
        worst = std::max<long double>(worst, std::fabs(Acc(c[i + j * ldc]) - want) / bound);
      }
    EXPECT_LE(double(worst), 1.0) << what;
  };
  auto gemm = [&](T* cc) {
    const bo_call call = gemm_call<T>('N', 'N', m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc);
    return module().mod->call(&call, 0.0);
  };
  bo_gemm_stats st{};
  for (int call = 0; call < 3; ++call) {
    std::copy(c0.begin(), c0.end(), c);
    ASSERT_EQ(gemm(c), BO_CUDA_OK);
    module().mod->last_gemm_stats(&st);
    check("registered", c0);
    EXPECT_EQ(st.path, 1);
  }
  EXPECT_EQ(st.pinned_operands, 3) << "the third call on the same mappings must move them without staging";
  EXPECT_EQ(module().mod->host_pinned(c, int64_t(nc * sizeof(T))), 1);

  // C replaced at the same address: new pages behind the old registration's addresses.
  T* c2 = map_elems<T>(nc, c);
  ASSERT_EQ(c2, c);
  std::copy(c0.begin(), c0.end(), c2);
  EXPECT_NE(module().mod->host_pinned(c2, int64_t(nc * sizeof(T))), 1);
  ASSERT_EQ(gemm(c2), BO_CUDA_OK);
  module().mod->last_gemm_stats(&st);
  check("after C was remapped", c0);
  EXPECT_EQ(st.pinned_operands, 2) << "A and B still registered, the new C staged";

  // A's pages discarded: they read as zeros now, and the product must see zeros.
  ASSERT_EQ(madvise(a, na * sizeof(T) / 4096 * 4096, MADV_DONTNEED), 0);
  std::copy(c0.begin(), c0.end(), c2);
  ASSERT_EQ(gemm(c2), BO_CUDA_OK);
  module().mod->last_gemm_stats(&st);
  check("after A's pages were discarded", c0);
  unmap_elems(a, na);
  unmap_elems(b, nb);
  unmap_elems(c2, nc);
}

// Rent or buy (BLASOFFLOAD_PIN_AFTER, default 8, for mappings of BLASOFFLOAD_PIN_AFTER_MIN or more: here all): operands
// stay staged until calls have moved about eight times their mappings' size from them, then move by DMA; the results
// are right either way.
TYPED_TEST(PipelineStaging, Registered_OnlyOnceStagingCostWhatRegisteringWould_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64);
  knobs.set("BLASOFFLOAD_PIN_HOST", "on");  // this process uses CUDA itself
  knobs.set("BLASOFFLOAD_PIN_AFTER_MIN", "0");
  const int64_t m = 300, n = 260, k = 270;
  const size_t na = size_t(m * k), nb = size_t(k * n), nc = size_t(m * n);
  T *a = map_elems<T>(na), *b = map_elems<T>(nb), *c = map_elems<T>(nc);
  for (size_t i = 0; i < na; ++i) a[i] = uni<T>();
  for (size_t i = 0; i < nb; ++i) b[i] = uni<T>();
  bo_gemm_stats st{};
  int first_direct = 0;
  for (int call = 1; call <= 12 && !first_direct; ++call) {
    std::fill(c, c + nc, T(0));
    const bo_call g = gemm_call<T>('N', 'N', m, n, k, 1.0, a, m, b, k, 0.0, c, m);
    ASSERT_EQ(module().mod->call(&g, 0.0), BO_CUDA_OK);
    module().mod->last_gemm_stats(&st);
    ASSERT_EQ(st.path, 1);
    if (st.pinned_operands == 3) first_direct = call;
    long double worst = 0;
    for (int64_t j = 0; j < n; j += 37)
      for (int64_t i = 0; i < m; i += 29) {
        long double s = 0, sa = 0;
        for (int64_t l = 0; l < k; ++l) {
          s += (long double)a[i + l * m] * b[l + j * k];
          sa += std::fabs((long double)a[i + l * m] * b[l + j * k]);
        }
        worst = std::max<long double>(worst, std::fabs(c[i + j * m] - s) / (sa * (k + 2) * Real<T>::u + tiny<T>()));
      }
    EXPECT_LE(double(worst), 1.0) << "call " << call;
  }
  EXPECT_GE(first_direct, 9) << "registered before staging had moved eight times the operands' size";
  EXPECT_LE(first_direct, 11) << "never registered (0) or late";
  unmap_elems(a, na);
  unmap_elems(b, nb);
  unmap_elems(c, nc);
}

// ---------------------------------------------------------------- 8. determinism and staging
// The same call twice gives the same bits (tiles finish in any order; each must still be computed the same way).
TYPED_TEST(PipelineStaging, Determinism_SameCallTwice_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  for (const OocCase& c : {OocCase{'N', 'T', 333, 257, 190, 1.0f, 0.5f, false, ""},
                           OocCase{'T', 'N', 200, 150, 4000, 1.0f, 0.0f, true, "1M"}}) {
    Knobs knobs(64);
    if (*c.limit) knobs.set("BLASOFFLOAD_DEVICE_MEMORY_LIMIT", scaled_limit<T>(c.limit));
    const Gemm<T> g(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.nan_c);
    SCOPED_TRACE(g.name() + " limit " + scaled_limit<T>(c.limit));
    const Result<T> r1 = run(g), r2 = run(g);
    EXPECT_TRUE(correct(g, r1));
    EXPECT_TRUE(pipeline_ran(g, r1, 64));
    EXPECT_TRUE(pipeline_ran(g, r2, 64));
    EXPECT_TRUE(same_bits(r1.c, r2.c));
  }
}

// A small pinned ring (1 MB asked; the engine's smallest chunks) makes operands and results go through many chunk
// reuses; the arithmetic, and so the bits, must not change.
TYPED_TEST(PipelineStaging, Staging_SmallPinnedRingSameBits_tile64) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(64);
  const Gemm<T> g('T', 'T', 333, 257, 190, 1.0f, 0.5f, false);
  const Result<T> base = run(g);
  knobs.set("BLASOFFLOAD_PINNED_MB", "1");
  const Result<T> small = run(g);
  EXPECT_TRUE(correct(g, base));
  EXPECT_TRUE(correct(g, small));
  EXPECT_TRUE(pipeline_ran(g, small, 64));
  EXPECT_TRUE(gpu_only(small));
  EXPECT_TRUE(same_bits(base.c, small.c));
}

// Deep K with transposed A: a panel's columns (K long) are longer than a pinned chunk (1 MiB = 262144 floats or
// 131072 doubles), so each column is staged in pieces. Integer data: a piece lost or staged twice changes the exact
// result.
TYPED_TEST(PipelineStaging, Staging_DeepKColumnsLongerThanAChunk_tile32) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  Knobs knobs(32);
  knobs.set("BLASOFFLOAD_PINNED_MB", "4");
  const Gemm<T> g('T', 'N', 64, 48, 270000, 1.0f, 0.5f, false, Data::kIntegers);
  const Result<T> r = run(g);
  EXPECT_TRUE(correct(g, r));
  EXPECT_TRUE(pipeline_ran(g, r, 32));
  EXPECT_TRUE(gpu_only(r));
  EXPECT_EQ(r.st.k_passes, 1) << describe(r.st);
}

}  // namespace
