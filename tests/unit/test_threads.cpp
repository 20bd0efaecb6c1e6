// 16 threads calling every entry point at once, on separate and on shared read-only operands: each result
// must equal the same call made alone. Both precisions.
#include <thread>

#include "reference.h"

namespace bt {
namespace {

template <class T>
struct Work {
  std::vector<T> a, b, x;        // inputs (may be shared between threads)
  std::vector<T> c, y, t, s, k;  // outputs, private to a thread (s: trsm's B, k: syrk's C)
  T nrm = 0, cnrm = 0;
};

constexpr blas_int kN = 48;

template <class T>
void run_all(Work<T>& w, const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& x) {
  using A = Api<T>;
  const T alpha = 0.5, beta = 0.25, one_ = 1;
  const blas_int n = kN, one = 1;
  ours_as<typename A::gemm>(name<T>("gemm_"))("N", "T", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta,
                                              w.c.data(), &n, 1, 1);
  ours_as<typename A::gemv>(upper_name<T>("gemv"))("T", &n, &n, &alpha, a.data(), &n, x.data(), &one, &beta, w.y.data(),
                                                   &one, 1);
  ours_as<typename A::trsv>(name<T>("trsv"))("L", "N", "U", &n, b.data(), &n, w.t.data(), &one, 1, 1, 1);
  w.nrm = ours_as<typename A::nrm2>(upper_name<T>("nrm2") + "_")(&n, x.data(), &one);
  ours_as<typename A::cblas_gemm>(name<T>("gemm", "cblas_"))(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, one_,
                                                             a.data(), n, b.data(), n, one_, w.c.data(), n);
  ours_as<typename A::cblas_gemv>(name<T>("gemv", "cblas_"))(CblasRowMajor, CblasNoTrans, n, n, one_, a.data(), n,
                                                             x.data(), 1, one_, w.y.data(), 1);
  ours_as<typename A::cblas_trsv>(name<T>("trsv", "cblas_"))(CblasRowMajor, CblasUpper, CblasTrans, CblasUnit, n,
                                                             b.data(), n, w.t.data(), 1);
  w.cnrm = ours_as<typename A::cblas_nrm2>(name<T>("nrm2", "cblas_"))(n, w.y.data(), 1);
  ours_as<typename A::trsm>(upper_name<T>("trsm"))("R", "L", "N", "U", &n, &n, &alpha, b.data(), &n, w.s.data(), &n, 1,
                                                   1, 1, 1);
  ours_as<typename A::syrk>(name<T>("syrk_"))("U", "T", &n, &n, &alpha, a.data(), &n, &beta, w.k.data(), &n, 1, 1);
  ours_as<typename A::cblas_trsm>(name<T>("trsm", "cblas_"))(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans,
                                                             CblasUnit, n, n, one_, b.data(), n, w.s.data(), n);
  ours_as<typename A::cblas_syrk>(name<T>("syrk", "cblas_"))(CblasRowMajor, CblasLower, CblasNoTrans, n, n, one_,
                                                             a.data(), n, one_, w.k.data(), n);
}

template <class T>
Work<T> fresh(std::uint32_t seed) {
  Work<T> w;
  w.a = random_vector<T>(kN * kN, seed);
  w.b = random_vector<T>(kN * kN, seed + 1);
  for (blas_int i = 0; i < kN; ++i) w.b[at(i, i, kN)] = 1;
  w.x = random_vector<T>(kN, seed + 2);
  w.c = random_vector<T>(kN * kN, seed + 3);
  w.y = random_vector<T>(kN, seed + 4);
  w.t = random_vector<T>(kN, seed + 5);
  w.s = random_vector<T>(kN * kN, seed + 6);
  w.k = random_vector<T>(kN * kN, seed + 7);
  return w;
}

template <class T>
void expect_same(const Work<T>& got, const Work<T>& want) {
  ASSERT_TRUE(same_bits(got.c, want.c));
  ASSERT_TRUE(same_bits(got.y, want.y));
  ASSERT_TRUE(same_bits(got.t, want.t));
  ASSERT_TRUE(same_bits(got.s, want.s));
  ASSERT_TRUE(same_bits(got.k, want.k));
  ASSERT_TRUE(same_bits(got.nrm, want.nrm));
  ASSERT_TRUE(same_bits(got.cnrm, want.cnrm));
}

BT_PRECISION_SUITE(Threads);

TYPED_TEST(Threads, SixteenThreadsSeparateAndSharedOperands) {
  using T = TypeParam;
  constexpr int kThreads = 16, kRounds = 20;
  const auto shared = fresh<T>(42);
  std::vector<Work<T>> expected_sep, expected_shared;
  for (int t = 0; t < kThreads; ++t) {
    auto w = fresh<T>(1000 + t);
    run_all(w, w.a, w.b, w.x);
    expected_sep.push_back(w);
    auto s = fresh<T>(1000 + t);
    run_all(s, shared.a, shared.b, shared.x);
    expected_shared.push_back(s);
  }
  std::vector<Work<T>> got_sep(kThreads), got_shared(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        got_sep[t] = fresh<T>(1000 + t);
        run_all(got_sep[t], got_sep[t].a, got_sep[t].b, got_sep[t].x);
        got_shared[t] = fresh<T>(1000 + t);
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

// 16 threads whose outputs are interleaved pieces of one array: thread t owns rows [t*m, (t+1)*m) of a
// shared column-major C (leading dimension 16*m), the same rows of a shared B for trsm, a triangle of an n x n
// block of a shared syrk C (whose other triangle is a neighbour's), and every 16th element (offset t) of shared
// vectors. Each must compute exactly what it computes alone, and no thread may disturb its neighbours' bytes.
TYPED_TEST(Threads, SixteenThreadsInterleavedOutputs) {
  using T = TypeParam;
  using A = Api<T>;
  constexpr int kThreads = 16;
  const blas_int m = 24, n = 20, k = 28, ld = kThreads * m, inc = kThreads;
  const auto a = random_vector<T>(std::size_t(m) * k, 31), b = random_vector<T>(std::size_t(k) * n, 32);
  auto tri = random_vector<T>(std::size_t(n) * n, 33);
  for (blas_int i = 0; i < n; ++i) tri[at(i, i, n)] = 2;
  const auto c0 = random_vector<T>(std::size_t(ld) * n, 34), y0 = random_vector<T>(std::size_t(kThreads) * m, 35),
             x0 = random_vector<T>(std::size_t(kThreads) * n, 36);
  auto* gemm = ours_as<typename A::gemm>(name<T>("gemm_"));
  auto* gemv = ours_as<typename A::gemv>(name<T>("gemv_"));
  auto* trsv = ours_as<typename A::trsv>(name<T>("trsv_"));
  const T alpha = 0.75, beta = -0.5;
  const blas_int one = 1;
  auto* trsm = ours_as<typename A::trsm>(name<T>("trsm_"));
  auto* syrk = ours_as<typename A::syrk>(name<T>("syrk_"));
  // syrk: thread t's n x n block is rows [t*n, (t+1)*n) of a shared array; it writes one triangle of it (alternating),
  // and the other triangle must come back as it was.
  const blas_int ldk = kThreads * n;
  const auto k0 = random_vector<T>(std::size_t(ldk) * n, 37);
  auto work = [&](int t, T* c, T* y, T* x, T* s, T* kk) {
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
        if (t % 2 ? i > j : i < j) {
          ASSERT_TRUE(same_bits(k_seq[at(t * n + i, j, ldk)], k0[at(t * n + i, j, ldk)])) << t;
        }
  // All at once, many rounds from the same start.
  for (int round = 0; round < 5; ++round) {
    auto c = c0, y = y0, x = x0, s = c0, kk = k0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] { work(t, c.data(), y.data(), x.data(), s.data(), kk.data()); });
    for (auto& th : threads) th.join();
    ASSERT_TRUE(same_bits(c, c_seq)) << "round " << round;
    ASSERT_TRUE(same_bits(y, y_seq)) << "round " << round;
    ASSERT_TRUE(same_bits(x, x_seq)) << "round " << round;
    ASSERT_TRUE(same_bits(s, s_seq)) << "round " << round;
    ASSERT_TRUE(same_bits(kk, k_seq)) << "round " << round;
  }
  // And the sequential result is right, not merely repeatable: check thread 3's C block.
  std::vector<T> c3(std::size_t(m) * n);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i) c3[at(i, j, m)] = c0[at(3 * m + i, j, ld)];
  std::vector<Acc<T>> want, mag;
  ref_gemm('N', 'N', m, n, k, alpha, a, m, b, k, beta, c3, m, want, mag);
  for (blas_int j = 0; j < n; ++j)
    for (blas_int i = 0; i < m; ++i)
      ASSERT_TRUE(within(c_seq[at(3 * m + i, j, ld)], want[at(i, j, m)],
                         double(2 * (k + 2) * eps<T>() * mag[at(i, j, m)]) + tiny<T>()));
}

}  // namespace
}  // namespace bt
