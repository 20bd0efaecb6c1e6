// GPU tests of syrk in all four element types and herk in the complex ones (typed suites Level3Syrk/float, /double,
// /cfloat, /cdouble and Level3Herk/cfloat, /cdouble): every registry entry of the routine (ours and cuBLAS's; complex:
// cuBLAS's) on device memory and the module's call() with host and with device operands, against references
// accumulated in a wider type (Real<T>::Acc), with guard zones, NaN where nothing may be read (C's triangle when beta =
// 0), the other triangle and the padding bit-identical, and two runs that must agree bit for bit. herk: real alpha and
// beta, and C's diagonal comes out with imaginary parts exactly 0 (the reference BLAS sets them so, and reads only the
// real part of C's diagonal). Without a CUDA device they report SKIPPED.
//
// Bound (u = unit roundoff of the element type's real parts; a = Real<T>::arith: 1 real, 2 complex; |.| a complex
// modulus): |c_ij - ref| <= 4 a (k + 2) u (|alpha| (|op(A)| |op(A)|^T)_ij + |beta c_ij|) + tiny.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "level3_support.h"

using namespace gt;
using namespace gt::level3;

namespace {

struct SyrkCase {
  bo_routine_kind kind;  // BO_KIND_SYRK, or BO_KIND_HERK: C := alpha op(A) op(A)^H + beta C
  char uplo, trans;
  int64_t n, k;
  Scalar alpha, beta;
  int64_t lda, ldc;
  bool herm() const { return kind == BO_KIND_HERK; }
  int64_t arows() const { return trans == 'N' ? n : k; }
  int64_t acols() const { return trans == 'N' ? k : n; }
  bool in_tri(int64_t i, int64_t j) const { return uplo == 'U' ? i <= j : i >= j; }
  std::string str() const {
    std::ostringstream o;
    o << (herm() ? "herk" : "syrk") << " uplo=" << uplo << " trans=" << trans << " n=" << n << " k=" << k
      << " lda=" << lda << " ldc=" << ldc << " alpha=" << scalar_str(alpha) << " beta=" << scalar_str(beta);
    return o.str();
  }
};

bo_call syrk_call(int routine, const SyrkCase& c) {
  const char ops[] = {c.uplo, c.trans, 0};
  return make_call(routine, ops, 0, c.n, c.k, c.alpha, c.beta, c.lda, 0, c.ldc);
}

// The transposes a rank-k update takes: real syrk N, T and C (read as T); complex syrk N and T; herk N and C.
template <typename T>
std::vector<char> rank_k_transposes(bo_routine_kind kind) {
  if (kind == BO_KIND_HERK) return {'N', 'C'};
  if (is_complex_v<T>) return {'N', 'T'};
  return {'N', 'T', 'C'};
}

// A: U(-1,1) in each part (nan_row >= 0: row nan_row of op(A) gets a NaN). C: the uplo triangle U(-1,1), or NaN when
// beta = 0 (it must not be read); the other triangle finite values that any write would change; padding the sentinel.
// herk: C's diagonal has imaginary parts, which the call must ignore and set to 0.
template <typename T>
void check_syrk_case(const SyrkCase& c, const std::vector<Runner>& rs, Tally& tally, int64_t nan_row = -1) {
  using Acc = typename Real<T>::Acc;
  using M = MagOf<Acc>;
  SCOPED_TRACE(std::string(Real<T>::name) + " " + c.str() +
               (nan_row >= 0 ? " NaN in row " + std::to_string(nan_row) + " of op(A)" : ""));
  const int64_t n = c.n, k = c.k, lda = c.lda, ldc = c.ldc;
  const bool herm = c.herm();
  Image<T> a(mspan(c.arows(), c.acols(), lda)), cc(mspan(n, n, ldc));
  for (int64_t j = 0; j < c.acols(); ++j)
    for (int64_t i = 0; i < c.arows(); ++i) a.p()[i + j * lda] = rand_elem<T>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      cc.p()[i + j * ldc] = c.in_tri(i, j) && c.beta == 0.0 ? nan_elem<T>() : rand_elem<T>();
  if (nan_row >= 0) {
    const int64_t l = k / 3;
    a.p()[c.trans == 'N' ? nan_row + l * lda : l + nan_row * lda] = elem<T>(NAN);
  }
  // A and its moduli in Acc (each entry is read about n times below).
  std::vector<Acc> wa(a.size() - 2 * kGuard);
  std::vector<M> ma(wa.size());
  parallel_for(c.acols(), [&](int64_t j) {
    for (int64_t i = 0; i < c.arows(); ++i) {
      wa[size_t(i + j * lda)] = Acc(a.p()[i + j * lda]);
      ma[size_t(i + j * lda)] = absval(wa[size_t(i + j * lda)]);
    }
  });
  // The triangle's reference, column by column (column j's entries start at start[j]). C_ij = sum_l op(A)_il
  // op(A)_jl, the second factor conjugated for herk.
  std::vector<size_t> start(n + 1, 0);
  for (int64_t j = 0; j < n; ++j) start[j + 1] = start[j] + size_t(c.uplo == 'U' ? j + 1 : n - j);
  std::vector<ExpectOf<T>> out(start[n]);
  const long double rel = Real<T>::arith * 4 * (long double)(k + 2) * Real<T>::u;
  const Acc alpha = from_scalar<Acc>(c.alpha), beta = from_scalar<Acc>(c.beta);
  parallel_for(n, [&](int64_t j) {
    const int64_t i0 = c.uplo == 'U' ? 0 : j, i1 = c.uplo == 'U' ? j + 1 : n;
    std::vector<Acc> s(n, Acc(0));
    std::vector<M> sa(n, 0);
    if (c.trans == 'N') {  // walk A by columns
      for (int64_t l = 0; l < k; ++l) {
        const Acc ajl = conj_if(wa[size_t(j + l * lda)], herm);
        const M mjl = ma[size_t(j + l * lda)];
        const Acc* col = wa.data() + l * lda;
        const M* mcol = ma.data() + l * lda;
        for (int64_t i = i0; i < i1; ++i) {
          s[i] += col[i] * ajl;
          sa[i] += mcol[i] * mjl;
        }
      }
    } else {  // rows of op(A) are columns of A (conjugated for herk's C)
      const Acc* cj = wa.data() + j * lda;
      const M* mj = ma.data() + j * lda;
      for (int64_t i = i0; i < i1; ++i) {
        const Acc* ci = wa.data() + i * lda;
        const M* mi = ma.data() + i * lda;
        for (int64_t l = 0; l < k; ++l) {
          s[i] += conj_if(ci[l], herm) * cj[l];
          sa[i] += mi[l] * mj[l];
        }
      }
    }
    for (int64_t i = i0; i < i1; ++i) {
      // herk: the reference reads and writes a real diagonal (NaN or not).
      const bool real_diag = herm && i == j;
      const Acc cij = Acc(cc.p()[i + j * ldc]);
      const Acc c0 = c.beta != 0.0 ? beta * (real_diag ? real_only(cij) : cij) : Acc(0);
      const Acc want = alpha * (real_diag ? real_only(s[i]) : s[i]) + c0;
      out[start[j] + size_t(i - i0)] = {size_t(i + j * ldc), real_diag ? real_only(want) : want,
                                        rel * (absval(alpha) * sa[i] + absval(c0)) + tiny<T>()};
    }
  });
  const bo_call call = syrk_call(routine_of<T>(c.kind), c);
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
    for (const ExpectOf<T>& e : out) {
      const WideOf<T> got = WideOf<T>(c1.v[e.off + kGuard]);
      if (all_finite(e.value) && all_finite(got))
        st.worst = std::max(st.worst, double(absval(got - e.value) / e.bound));
    }
    if constexpr (is_complex_v<T>)
      if (herm) {
        int64_t bad = 0;
        for (int64_t j = 0; j < n; ++j) bad += c1.p()[j + j * ldc].imag() != 0;
        EXPECT_EQ(bad, 0) << "diagonal elements of C with an imaginary part (the reference BLAS sets them to 0)";
      }
    run_call<T>(rn, call, &ah, nullptr, &c2, &da);
    EXPECT_TRUE(same_bits(c1, c2));
  }
  EXPECT_TRUE(unchanged(a, da.back())) << "A on the device";
  EXPECT_TRUE(unchanged(a, ah)) << "A on the host";
}

// alpha/beta pairs: real syrk and herk (real scalars), complex syrk (alpha = i among them).
template <typename T>
std::vector<std::array<Scalar, 2>> rank_k_scalars(bo_routine_kind kind) {
  if (is_complex_v<T> && kind == BO_KIND_SYRK)
    return {{1.0, 0.0},
            {kI, 1.0},
            {1.0, Scalar(0.25, -0.5)},
            {Scalar(-0.5, 0.5), 0.0},
            {kI, Scalar(0, 1)},
            {Scalar(0.5, -1), Scalar(0.25, 0.25)}};
  return {{1.0, 0.0}, {-0.5, 1.0}, {1.0, 0.25}, {-0.5, 0.0}, {1.0, 1.0}, {-0.5, 0.25}};
}

// Every trans and alpha/beta combination of one uplo at every shape; big shapes run one alpha/beta variant per
// trans (rotating).
template <typename T>
void rank_k_uplo(bo_routine_kind kind, char uplo) {
  const std::vector<Runner> rs = runners_for(routine_of<T>(kind));
  ASSERT_GT(rs.size(), 2u) << "the registry has no " << bo_routine_name(routine_of<T>(kind)) << " entry";
  const int64_t shapes[][2] = {{1, 1}, {2, 3}, {31, 33}, {33, 1}, {100, 7}, {257, 64}, {1000, 1000}, {2049, 300}};
  const auto ab = rank_k_scalars<T>(kind);
  Tally tally;
  int ti = 0;
  for (char trans : rank_k_transposes<T>(kind)) {
    ++ti;
    for (size_t si = 0; si < std::size(shapes); ++si) {
      const int64_t n = shapes[si][0], k = shapes[si][1];
      const bool big = double(n) * double(n) * double(k) > kBigWork;
      for (size_t v = 0; v < ab.size(); ++v) {
        if (big && v != (size_t(uplo == 'U' ? 0 : 3) + size_t(ti) + si) % ab.size()) continue;
        const size_t h = size_t(ti) * 17 + si * 5 + v;
        SyrkCase c{kind, uplo, trans, n, k, ab[v][0], ab[v][1], 0, 0};
        c.lda = h % 2 ? c.arows() + 1 + int64_t(h % 3) : round_up(c.arows() + 1, 4);
        c.ldc = h % 3 ? n + 2 : round_up(n + 1, 4);
        check_syrk_case<T>(c, rs, tally);
      }
    }
  }
  report(std::string(Real<T>::name) + " " + bo_routine_name(routine_of<T>(kind)) + ", uplo " + uplo, rs, tally);
}

// A NaN in row r of op(A) reaches row r and column r of C (within the triangle) and nothing else.
template <typename T>
void rank_k_nan(bo_routine_kind kind) {
  const std::vector<Runner> rs = runners_for(routine_of<T>(kind));
  const auto ab = rank_k_scalars<T>(kind);
  Tally tally;
  int h = 0;
  for (char uplo : {'U', 'L'})
    for (char trans : rank_k_transposes<T>(kind))
      for (auto [n, k] : {std::pair<int64_t, int64_t>{257, 64}, {33, 1}, {100, 7}, {31, 33}}) {
        ++h;
        SyrkCase c{kind, uplo, trans, n, k, ab[size_t(h) % ab.size()][0], h % 3 ? ab[1][1] : Scalar(0.0), 0, n + 3};
        if (!is_complex_v<T> || kind == BO_KIND_HERK) c.alpha = h % 2 ? 1.0 : -0.5, c.beta = h % 3 ? 0.25 : 0.0;
        c.lda = c.arows() + 1;
        check_syrk_case<T>(c, rs, tally, n / 2);
        check_syrk_case<T>(c, rs, tally, h % 2 ? 0 : n - 1);
      }
  report(std::string(Real<T>::name) + " " + bo_routine_name(routine_of<T>(kind)) + " with NaN in A", rs, tally);
}

// Shared among GPU lanes (level3_mg.h), on one GPU: BLASOFFLOAD_DEVICES=0,0 gives two lanes (C's triangle cut into
// two column ranges of equal area, each a diagonal block by syrk/herk and a rectangle by gemm;
// BLASOFFLOAD_MULTI_GPU_MIN_N lowered to 64 so that these sizes take it), and BLASOFFLOAD_PINNED_MAX_MB=1 one lane
// (operands too large for whole-operand staging go through rings). Both triangles, every trans, beta = 0 with NaN in
// C among the scalars, a NaN row in A; the same checks as above, and every call must have taken the path.
template <typename T>
void rank_k_lanes(bo_routine_kind kind, int lanes) {
  gt::pipe::Knobs knobs(0, nullptr);
  set_lane_knobs(knobs, lanes);
  const std::vector<Runner> rs = host_runner(routine_of<T>(kind));
  ASSERT_EQ(rs.size(), 1u);
  // (n, k): two lanes need n >= 512 (lanes take 256 columns at the least); each case moves more than 1 MiB.
  const int64_t shapes[][2] = {{777, 300}, {600, 40}, {1030, 64}};
  const auto ab = rank_k_scalars<T>(kind);
  const int64_t before = split_calls(lanes).load(), shared_before = a_shared_calls().load();
  int64_t calls = 0, h = 0;
  Tally tally;
  for (char uplo : {'U', 'L'})
    for (char trans : rank_k_transposes<T>(kind))
      for (const auto& sh : shapes) {
        ++h;
        const auto& s = ab[size_t(h) % ab.size()];
        SyrkCase c{kind, uplo, trans, sh[0], sh[1], s[0], s[1], 0, 0};
        c.lda = h % 2 ? c.arows() + 1 : round_up(c.arows() + 1, 4);
        c.ldc = h % 3 ? c.n + 2 : round_up(c.n + 1, 4);
        check_syrk_case<T>(c, rs, tally, h % 4 == 0 ? c.n / 3 : -1);
        calls += 2;  // the case runs twice (the bits must agree)
      }
  EXPECT_EQ(split_calls(lanes).load() - before, calls) << "calls split over " << lanes << " lane(s)";
  // Two lanes stage op(A)'s rows once between them, each its own range's, and copy the rows of the other's they need.
  EXPECT_EQ(a_shared_calls().load() - shared_before, lanes == 2 ? calls : 0) << "calls with A staged once";
  report(std::string(Real<T>::name) + " " + bo_routine_name(routine_of<T>(kind)) + " over " + std::to_string(lanes) +
             " lane(s)",
         rs, tally);
}

GPU_TYPED_SUITE_ALL(Level3Syrk);

TYPED_TEST(Level3Syrk, BothTrianglesAllEntries) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_SYRK));
  for (char uplo : {'U', 'L'}) rank_k_uplo<TypeParam>(BO_KIND_SYRK, uplo);
}
TYPED_TEST(Level3Syrk, NanInAReachesOnlyItsRowAndColumn) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_SYRK));
  rank_k_nan<TypeParam>(BO_KIND_SYRK);
}
TYPED_TEST(Level3Syrk, SharedOverTwoLanes) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_SYRK));
  rank_k_lanes<TypeParam>(BO_KIND_SYRK, 2);
}
TYPED_TEST(Level3Syrk, BeyondWholeOperandStagingThroughRings) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_SYRK));
  rank_k_lanes<TypeParam>(BO_KIND_SYRK, 1);
}

GPU_TYPED_SUITE_COMPLEX(Level3Herk);

TYPED_TEST(Level3Herk, BothTrianglesAllEntries) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_HERK));
  for (char uplo : {'U', 'L'}) rank_k_uplo<TypeParam>(BO_KIND_HERK, uplo);
}
TYPED_TEST(Level3Herk, NanInAReachesOnlyItsRowAndColumn) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_HERK));
  rank_k_nan<TypeParam>(BO_KIND_HERK);
}
TYPED_TEST(Level3Herk, SharedOverTwoLanes) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_HERK));
  rank_k_lanes<TypeParam>(BO_KIND_HERK, 2);
}
TYPED_TEST(Level3Herk, BeyondWholeOperandStagingThroughRings) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_HERK));
  rank_k_lanes<TypeParam>(BO_KIND_HERK, 1);
}

}  // namespace
