// 16 threads calling every entry point at once, on separate and on shared read-only operands: each result
// must equal the same call made alone.
#include <gtest/gtest.h>

#include <thread>

#include "reference.h"

namespace bt {
namespace {

struct Work {
  std::vector<float> a, b, x;  // inputs (may be shared between threads)
  std::vector<float> c, y, t, s, k;  // outputs, private to a thread (s: strsm's B, k: ssyrk's C)
  float nrm = 0, cnrm = 0;
};

constexpr blas_int kN = 48;

void run_all(Work& w, const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& x) {
  const float alpha = 0.5f, beta = 0.25f;
  const blas_int n = kN, one = 1;
  ours_as<blasoffload::sgemm_fortran_t>("sgemm_")("N", "T", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta,
                                                  w.c.data(), &n, 1, 1);
  ours_as<blasoffload::sgemv_fortran_t>("SGEMV")("T", &n, &n, &alpha, a.data(), &n, x.data(), &one, &beta, w.y.data(),
                                                 &one, 1);
  ours_as<blasoffload::strsv_fortran_t>("strsv")("L", "N", "U", &n, b.data(), &n, w.t.data(), &one, 1, 1, 1);
  w.nrm = ours_as<blasoffload::snrm2_fortran_t>("SNRM2_")(&n, x.data(), &one);
  ours_as<blasoffload::sgemm_cblas_t>("cblas_sgemm")(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(),
                                                     n, b.data(), n, 1.0f, w.c.data(), n);
  ours_as<blasoffload::sgemv_cblas_t>("cblas_sgemv")(CblasRowMajor, CblasNoTrans, n, n, 1.0f, a.data(), n, x.data(), 1,
                                                     1.0f, w.y.data(), 1);
  ours_as<blasoffload::strsv_cblas_t>("cblas_strsv")(CblasRowMajor, CblasUpper, CblasTrans, CblasUnit, n, b.data(), n,
                                                     w.t.data(), 1);
  w.cnrm = ours_as<float(const int, const float*, const int)>("cblas_snrm2")(n, w.y.data(), 1);
  ours_as<blasoffload::strsm_fortran_t>("STRSM")("R", "L", "N", "U", &n, &n, &alpha, b.data(), &n, w.s.data(), &n, 1, 1,
                                                 1, 1);
  ours_as<blasoffload::ssyrk_fortran_t>("ssyrk_")("U", "T", &n, &n, &alpha, a.data(), &n, &beta, w.k.data(), &n, 1, 1);
  ours_as<blasoffload::strsm_cblas_t>("cblas_strsm")(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans, CblasUnit, n, n,
                                                     1.0f, b.data(), n, w.s.data(), n);
  ours_as<blasoffload::ssyrk_cblas_t>("cblas_ssyrk")(CblasRowMajor, CblasLower, CblasNoTrans, n, n, 1.0f, a.data(), n,
                                                     1.0f, w.k.data(), n);
}

Work fresh(std::uint32_t seed) {
  Work w;
  w.a = random_vector(kN * kN, seed);
  w.b = random_vector(kN * kN, seed + 1);
  for (blas_int i = 0; i < kN; ++i) w.b[at(i, i, kN)] = 1.0f;
  w.x = random_vector(kN, seed + 2);
  w.c = random_vector(kN * kN, seed + 3);
  w.y = random_vector(kN, seed + 4);
  w.t = random_vector(kN, seed + 5);
  w.s = random_vector(kN * kN, seed + 6);
  w.k = random_vector(kN * kN, seed + 7);
  return w;
}

void expect_same(const Work& got, const Work& want) {
  ASSERT_EQ(std::memcmp(got.c.data(), want.c.data(), 4 * got.c.size()), 0);
  ASSERT_EQ(std::memcmp(got.y.data(), want.y.data(), 4 * got.y.size()), 0);
  ASSERT_EQ(std::memcmp(got.t.data(), want.t.data(), 4 * got.t.size()), 0);
  ASSERT_EQ(std::memcmp(got.s.data(), want.s.data(), 4 * got.s.size()), 0);
  ASSERT_EQ(std::memcmp(got.k.data(), want.k.data(), 4 * got.k.size()), 0);
  ASSERT_EQ(got.nrm, want.nrm);
  ASSERT_EQ(got.cnrm, want.cnrm);
}

TEST(Threads, SixteenThreadsSeparateAndSharedOperands) {
  constexpr int kThreads = 16, kRounds = 20;
  const Work shared = fresh(42);
  std::vector<Work> expected_sep, expected_shared;
  for (int t = 0; t < kThreads; ++t) {
    Work w = fresh(1000 + t);
    run_all(w, w.a, w.b, w.x);
    expected_sep.push_back(w);
    Work s = fresh(1000 + t);
    run_all(s, shared.a, shared.b, shared.x);
    expected_shared.push_back(s);
  }
  std::vector<Work> got_sep(kThreads), got_shared(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        got_sep[t] = fresh(1000 + t);
        run_all(got_sep[t], got_sep[t].a, got_sep[t].b, got_sep[t].x);
        got_shared[t] = fresh(1000 + t);
        run_all(got_shared[t], shared.a, shared.b, shared.x);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE("thread " + std::to_string(t));
    expect_same(got_sep[t], expected_sep[t]);
    expect_same(got_shared[t], expected_shared[t]);
  }
}

}  // namespace
}  // namespace bt

namespace bt {
namespace {

// 16 threads whose outputs are interleaved pieces of one array: thread t owns rows [t*m, (t+1)*m) of a
// shared column-major C (leading dimension 16*m), the same rows of a shared B for strsm, a triangle of an n x n
// block of a shared ssyrk C (whose other triangle is a neighbour's), and every 16th element (offset t) of shared
// vectors. Each must compute exactly what it computes alone, and no thread may disturb its neighbours' bytes.
TEST(Threads, SixteenThreadsInterleavedOutputs) {
  constexpr int kThreads = 16;
  const blas_int m = 24, n = 20, k = 28, ld = kThreads * m, inc = kThreads;
  const auto a = random_vector(std::size_t(m) * k, 31), b = random_vector(std::size_t(k) * n, 32);
  auto tri = random_vector(std::size_t(n) * n, 33);
  for (blas_int i = 0; i < n; ++i) tri[at(i, i, n)] = 2.0f;
  const auto c0 = random_vector(std::size_t(ld) * n, 34), y0 = random_vector(std::size_t(kThreads) * m, 35),
             x0 = random_vector(std::size_t(kThreads) * n, 36);
  auto* gemm = ours_as<blasoffload::sgemm_fortran_t>("sgemm_");
  auto* gemv = ours_as<blasoffload::sgemv_fortran_t>("sgemv_");
  auto* trsv = ours_as<blasoffload::strsv_fortran_t>("strsv_");
  const float alpha = 0.75f, beta = -0.5f;
  const blas_int one = 1;
  auto* trsm = ours_as<blasoffload::strsm_fortran_t>("strsm_");
  auto* syrk = ours_as<blasoffload::ssyrk_fortran_t>("ssyrk_");
  // ssyrk: thread t's n x n block is rows [t*n, (t+1)*n) of a shared array; it writes one triangle of it (alternating),
  // and the other triangle must come back as it was.
  const blas_int ldk = kThreads * n;
  const auto k0 = random_vector(std::size_t(ldk) * n, 37);
  auto work = [&](int t, float* c, float* y, float* x, float* s, float* kk) {
    gemm("N", "N", &m, &n, &k, &alpha, a.data(), &m, b.data(), &k, &beta, c + t * m, &ld, 1, 1);
    gemv("N", &m, &k, &alpha, a.data(), &m, b.data(), &one, &beta, y + t, &inc, 1);
    trsv("U", "T", "N", &n, tri.data(), &n, x + t, &inc, 1, 1, 1);
    trsm("R", "U", "N", "N", &m, &n, &alpha, tri.data(), &n, s + t * m, &ld, 1, 1, 1, 1);
    syrk(t % 2 ? "U" : "L", "T", &n, &k, &alpha, b.data(), &k, &beta, kk + t * n, &ldk, 1, 1);
  };
  // Alone, one thread after another.
  auto c_seq = c0, y_seq = y0, x_seq = x0, s_seq = c0, k_seq = k0;
  for (int t = 0; t < kThreads; ++t) work(t, c_seq.data(), y_seq.data(), x_seq.data(), s_seq.data(), k_seq.data());
  for (int t = 0; t < kThreads; ++t)
    for (blas_int j = 0; j < n; ++j)
      for (blas_int i = 0; i < n; ++i)
        if (t % 2 ? i > j : i < j) ASSERT_EQ(k_seq[at(t * n + i, j, ldk)], k0[at(t * n + i, j, ldk)]) << t;
  // All at once, many rounds from the same start.
  for (int round = 0; round < 5; ++round) {
    auto c = c0, y = y0, x = x0, s = c0, kk = k0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] { work(t, c.data(), y.data(), x.data(), s.data(), kk.data()); });
    for (auto& th : threads) th.join();
    ASSERT_EQ(std::memcmp(c.data(), c_seq.data(), 4 * c.size()), 0) << "round " << round;
    ASSERT_EQ(std::memcmp(y.data(), y_seq.data(), 4 * y.size()), 0) << "round " << round;
    ASSERT_EQ(std::memcmp(x.data(), x_seq.data(), 4 * x.size()), 0) << "round " << round;
    ASSERT_EQ(std::memcmp(s.data(), s_seq.data(), 4 * s.size()), 0) << "round " << round;
    ASSERT_EQ(std::memcmp(kk.data(), k_seq.data(), 4 * kk.size()), 0) << "round " << round;
  }
  // And the sequential result is right, not merely repeatable: check thread 3's C block.
  std::vector<float> c3(std::size_t(m) * n);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i) c3[at(i, j, m)] = c0[at(3 * m + i, j, ld)];
  std::vector<double> want, mag;
  ref_gemm('N', 'N', m, n, k, alpha, a, m, b, k, beta, c3, m, want, mag);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i)
      ASSERT_LE(std::fabs(c_seq[at(3 * m + i, j, ld)] - want[at(i, j, m)]),
                2 * (k + 2) * kEps * mag[at(i, j, m)] + 1e-30);
}

}  // namespace
}  // namespace bt
