// GPU tests of syrk in both precisions (typed suites Level3Syrk/float and /double): every registry entry of the routine
// (ours and cuBLAS's) on device memory and the module's call() with host and with device operands, against references
// accumulated in a wider type (Real<T>::Acc), with guard zones, NaN where nothing may be read (C's triangle when beta =
// 0), the other triangle and the padding bit-identical, and two runs that must agree bit for bit. Without a CUDA device
// they report SKIPPED.
//
// Bound (u = unit roundoff of the element type): |c_ij - ref| <= 4 (k + 2) u (|alpha| (|op(A)| |op(A)|^T)_ij +
// |beta c_ij|) + tiny.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "level3_support.h"

using namespace gt;
using namespace gt::level3;

namespace {

struct SyrkCase {
  char uplo, trans;
  int64_t n, k;
  double alpha, beta;
  int64_t lda, ldc;
  int64_t arows() const { return trans == 'N' ? n : k; }
  int64_t acols() const { return trans == 'N' ? k : n; }
  bool in_tri(int64_t i, int64_t j) const { return uplo == 'U' ? i <= j : i >= j; }
  std::string str() const {
    std::ostringstream o;
    o << "uplo=" << uplo << " trans=" << trans << " n=" << n << " k=" << k << " lda=" << lda << " ldc=" << ldc
      << " alpha=" << alpha << " beta=" << beta;
    return o.str();
  }
};

bo_call syrk_call(int routine, const SyrkCase& c) {
  const char ops[] = {c.uplo, c.trans, 0};
  return make_call(routine, ops, 0, c.n, c.k, c.alpha, c.beta, c.lda, 0, c.ldc);
}

// A: U(-1,1) (nan_row >= 0: row nan_row of op(A) gets a NaN). C: the uplo triangle U(-1,1), or NaN when beta = 0
// (it must not be read); the other triangle finite values that any write would change; padding the sentinel.
template <typename T>
void check_syrk_case(const SyrkCase& c, const std::vector<Runner>& rs, Tally& tally, int64_t nan_row = -1) {
  using Acc = typename Real<T>::Acc;
  SCOPED_TRACE(std::string(Real<T>::name) + " syrk " + c.str() +
               (nan_row >= 0 ? " NaN in row " + std::to_string(nan_row) + " of op(A)" : ""));
  const int64_t n = c.n, k = c.k, lda = c.lda, ldc = c.ldc;
  Image<T> a(mspan(c.arows(), c.acols(), lda)), cc(mspan(n, n, ldc));
  for (int64_t j = 0; j < c.acols(); ++j)
    for (int64_t i = 0; i < c.arows(); ++i) a.p()[i + j * lda] = uni<T>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) cc.p()[i + j * ldc] = c.in_tri(i, j) && c.beta == 0.0 ? T(NAN) : uni<T>();
  if (nan_row >= 0) {
    const int64_t l = k / 3;
    a.p()[c.trans == 'N' ? nan_row + l * lda : l + nan_row * lda] = NAN;
  }
  auto opa = [&](int64_t i, int64_t l) -> Acc { return c.trans == 'N' ? a.p()[i + l * lda] : a.p()[l + i * lda]; };
  // The triangle's reference, column by column (column j's entries start at start[j]).
  std::vector<size_t> start(n + 1, 0);
  for (int64_t j = 0; j < n; ++j) start[j + 1] = start[j] + size_t(c.uplo == 'U' ? j + 1 : n - j);
  std::vector<Expect> out(start[n]);
  const long double rel = 4 * Acc(k + 2) * Real<T>::u;
  parallel_for(n, [&](int64_t j) {
    const int64_t i0 = c.uplo == 'U' ? 0 : j, i1 = c.uplo == 'U' ? j + 1 : n;
    std::vector<Acc> s(n, 0), sa(n, 0);
    if (c.trans == 'N') {  // walk A by columns
      for (int64_t l = 0; l < k; ++l) {
        const Acc ajl = opa(j, l);
        const T* col = a.p() + l * lda;
        for (int64_t i = i0; i < i1; ++i) {
          const Acc v = Acc(col[i]) * ajl;
          s[i] += v;
          sa[i] += std::fabs(v);
        }
      }
    } else {  // rows of op(A) are columns of A
      const T* cj = a.p() + j * lda;
      for (int64_t i = i0; i < i1; ++i) {
        const T* ci = a.p() + i * lda;
        for (int64_t l = 0; l < k; ++l) {
          const Acc v = Acc(ci[l]) * Acc(cj[l]);
          s[i] += v;
          sa[i] += std::fabs(v);
        }
      }
    }
    for (int64_t i = i0; i < i1; ++i) {
      const Acc c0 = c.beta != 0.0 ? Acc(c.beta) * Acc(cc.p()[i + j * ldc]) : Acc(0);
      out[start[j] + size_t(i - i0)] = {size_t(i + j * ldc), Acc(c.alpha) * s[i] + c0,
                                        rel * (std::fabs(Acc(c.alpha)) * sa[i] + std::fabs(c0)) + tiny<T>()};
    }
  });
  const bo_call call = syrk_call(routine_of<T>(BO_KIND_SYRK), c);
  expect_select_takes<T>(call);
  DevImage<T> da(a);
  Image<T> ah = a;
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    Stat& st = tally[rn.name()];
    Image<T> c1 = cc, c2 = cc;
    const int status = run_call<T>(rn, call, &ah, nullptr, &c1, &da);
    if (status == -1) {
      ++st.declined;
      continue;
    }
    ++st.ran;
    EXPECT_EQ(status, BO_CUDA_OK) << "the module declined or failed the call";
    if (status != BO_CUDA_OK) {
      EXPECT_TRUE(check_image(cc, c1, {})) << "a call that failed wrote C";
      continue;
    }
    EXPECT_TRUE(check_image(cc, c1, out))
        << "C (the other triangle, the padding and the guard zones must keep their bits)";
    for (const Expect& e : out) {
      const long double got = c1.v[e.off + kGuard];
      if (std::isfinite(e.value) && std::isfinite(got))
        st.worst = std::max(st.worst, double(std::fabs(got - e.value) / e.bound));
    }
    run_call<T>(rn, call, &ah, nullptr, &c2, &da);
    EXPECT_TRUE(same_bits(c1, c2));
  }
  EXPECT_TRUE(unchanged(a, da.back())) << "A on the device";
  EXPECT_TRUE(unchanged(a, ah)) << "A on the host";
}

// Every trans and alpha/beta combination of one uplo at every shape; big shapes run one alpha/beta variant per
// trans (rotating).
template <typename T>
void syrk_uplo(char uplo) {
  const std::vector<Runner> rs = runners_for(routine_of<T>(BO_KIND_SYRK));
  ASSERT_GT(rs.size(), 2u) << "the registry has no syrk entry";
  const int64_t shapes[][2] = {{1, 1}, {2, 3}, {31, 33}, {33, 1}, {100, 7}, {257, 64}, {1000, 1000}, {2049, 300}};
  const double ab[][2] = {{1.0, 0.0}, {-0.5, 1.0}, {1.0, 0.25}, {-0.5, 0.0}, {1.0, 1.0}, {-0.5, 0.25}};
  Tally tally;
  int ti = 0;
  for (char trans : {'N', 'T', 'C'}) {
    ++ti;
    for (size_t si = 0; si < std::size(shapes); ++si) {
      const int64_t n = shapes[si][0], k = shapes[si][1];
      const bool big = double(n) * double(n) * double(k) > kBigWork;
      for (size_t v = 0; v < std::size(ab); ++v) {
        if (big && v != (size_t(uplo == 'U' ? 0 : 3) + size_t(ti) + si) % std::size(ab)) continue;
        const size_t h = size_t(ti) * 17 + si * 5 + v;
        SyrkCase c{uplo, trans, n, k, ab[v][0], ab[v][1], 0, 0};
        c.lda = h % 2 ? c.arows() + 1 + int64_t(h % 3) : round_up(c.arows() + 1, 4);
        c.ldc = h % 3 ? n + 2 : round_up(n + 1, 4);
        check_syrk_case<T>(c, rs, tally);
      }
    }
  }
  report(std::string(Real<T>::name) + " syrk, uplo " + uplo, rs, tally);
}

GPU_TYPED_SUITE(Level3Syrk);

TYPED_TEST(Level3Syrk, BothTrianglesAllEntries) {
  GPU_TEST_PREAMBLE();
  for (char uplo : {'U', 'L'}) syrk_uplo<TypeParam>(uplo);
}

// A NaN in row r of op(A) reaches row r and column r of C (within the triangle) and nothing else.
TYPED_TEST(Level3Syrk, NanInAReachesOnlyItsRowAndColumn) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  const std::vector<Runner> rs = runners_for(routine_of<T>(BO_KIND_SYRK));
  Tally tally;
  int h = 0;
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{257, 64}, {33, 1}, {100, 7}, {31, 33}}) {
        ++h;
        SyrkCase c{uplo, trans, n, k, h % 2 ? 1.0 : -0.5, h % 3 ? 0.25 : 0.0, 0, n + 3};
        c.lda = c.arows() + 1;
        check_syrk_case<T>(c, rs, tally, n / 2);
        check_syrk_case<T>(c, rs, tally, h % 2 ? 0 : n - 1);
      }
  report(std::string(Real<T>::name) + " syrk with NaN in A", rs, tally);
}

}  // namespace
