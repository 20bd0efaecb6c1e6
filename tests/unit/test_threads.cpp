// 16 threads calling every entry point at once, on separate and on shared read-only operands: each result
// must equal the same call made alone.
#include <gtest/gtest.h>

#include <thread>

#include "reference.h"

namespace bt {
namespace {

struct Work {
  std::vector<float> a, b, x;  // inputs (may be shared between threads)
  std::vector<float> c, y, t;  // outputs, private to a thread
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
  return w;
}

void expect_same(const Work& got, const Work& want) {
  ASSERT_EQ(std::memcmp(got.c.data(), want.c.data(), 4 * got.c.size()), 0);
  ASSERT_EQ(std::memcmp(got.y.data(), want.y.data(), 4 * got.y.size()), 0);
  ASSERT_EQ(std::memcmp(got.t.data(), want.t.data(), 4 * got.t.size()), 0);
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
