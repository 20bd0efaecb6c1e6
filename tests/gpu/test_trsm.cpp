// GPU tests of trsm in all four element types (typed suites Level3Trsm/float, /double, /cfloat, /cdouble): every
// registry entry of the routine (ours and cuBLAS's; complex: cuBLAS's) on device memory and the module's call() with
// host and with device operands, against references accumulated in a wider type (Real<T>::Acc: double for float, x87
// long double for double, their complex for complex elements), with guard zones, NaN where nothing may be read, and two
// runs that must agree bit for bit. Without a CUDA device they report SKIPPED (except the check of the test's own
// ill-conditioned data, which needs no GPU).
//
// Bounds (u = unit roundoff of the element type's real parts; a = Real<T>::arith: 1 real, 2 complex; |.| a complex
// modulus). trsm is checked per independent system of order t: a column of X for side L (t = m), a row of X for side R
// (t = n); M below is that system's matrix (op(A), or op(A)^T for side R).
//   diagonally dominant triangle (cond ~ 1):  |x - x_ref| <= 32 a t u max|x_ref|
//   ill-conditioned triangle (cond far above 1e4): the normwise backward error
//       ||M x - alpha b||_inf / ((|M| |x|)_inf + |alpha| ||b||_inf) <= 4 a (1000 + t) u
//     1000 is the largest 1-norm condition number of a diagonal block that our inversion path inverts
//     (BLASOFFLOAD_STRSM_INV_MAX_COND's default, both precisions; the rest are solved by substitution); the backward
//     error of the wide reference solution rounded to T (about u) is printed beside it for comparison.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "level3_support.h"

using namespace gt;
using namespace gt::level3;

namespace {

struct TrsmCase {
  char side, uplo, trans, diag;
  int64_t m, n;
  Scalar alpha;
  bool ill;
  int64_t lda, ldb;
  int64_t t() const { return side == 'L' ? m : n; }
  int64_t systems() const { return side == 'L' ? n : m; }
  // Offset in B (and X) of element r of system s.
  size_t off(int64_t s, int64_t r) const { return side == 'L' ? size_t(r + s * ldb) : size_t(s + r * ldb); }
  std::string str() const {
    std::ostringstream o;
    o << "side=" << side << " uplo=" << uplo << " transa=" << trans << " diag=" << diag << " m=" << m << " n=" << n
      << " lda=" << lda << " ldb=" << ldb << " alpha=" << scalar_str(alpha)
      << (ill ? " ill-conditioned" : " well-conditioned");
    return o.str();
  }
};

bo_call trsm_call(int routine, const TrsmCase& c) {
  const char ops[] = {c.side, c.uplo, c.trans, c.diag, 0};
  return make_call(routine, ops, c.m, c.n, 0, c.alpha, 0, c.lda, 0, c.ldb);
}

// The matrix M of every system of a case, read from A as stored: M(r, q) = A(r, q) when `direct` (side L with
// transa N, side R with T or C), else A(q, r), conjugated for transa C (side L: M = A^H; side R: x^T A^H = b^T, so
// M = conj(A)). Column p of A is column p of M (direct) or row p of M; both ways the loops below walk A by columns.
// Arithmetic in Acc.
template <typename T>
struct Tri {
  using Acc = typename Real<T>::Acc;
  using M = MagOf<Acc>;
  const T* a;
  int64_t lda, t;
  bool direct, upper, unit, conj;
  std::vector<M> mag;  // ill-conditioned complex cases: |A|'s stored entries, which apply() reads once per system
  Tri(const TrsmCase& c, const T* a_)
      : a(a_),
        lda(c.lda),
        t(c.t()),
        direct((c.side == 'L') == (c.trans == 'N')),
        upper(c.uplo == 'U'),
        unit(c.diag == 'U'),
        conj(c.trans == 'C') {
    if (!c.ill || !is_complex_v<T>) return;  // a real modulus costs no more than reading one
    mag.resize(size_t(t * lda));
    parallel_for(t, [&](int64_t p) {
      for (int64_t r = lo(p); r < hi(p); ++r) mag[size_t(r + p * lda)] = absval(Acc(a[r + p * lda]));
      mag[size_t(p + p * lda)] = absval(d(p));
    });
  }
  Acc el(const T& v) const { return conj_if(Acc(v), conj); }
  M mod(int64_t r, int64_t p) const { return mag.empty() ? absval(Acc(a[r + p * lda])) : mag[size_t(r + p * lda)]; }
  Acc d(int64_t p) const { return unit ? Acc(1) : el(a[p + p * lda]); }
  int64_t lo(int64_t p) const { return upper ? 0 : p + 1; }  // stored off-diagonal rows of column p of A
  int64_t hi(int64_t p) const { return upper ? p : t; }
  bool ascending() const { return direct != upper; }  // M lower triangular: solved first to last
  // x := M^-1 x, by substitution, in the reference BLAS's order (a NaN reaches everything after it).
  void solve(Acc* x) const {
    for (int64_t i = 0; i < t; ++i) {
      const int64_t p = ascending() ? i : t - 1 - i;
      const T* col = a + p * lda;
      if (direct) {
        x[p] /= d(p);
        const Acc xp = x[p];
        for (int64_t r = lo(p); r < hi(p); ++r) x[r] -= el(col[r]) * xp;
      } else {
        Acc s = x[p];
        for (int64_t q = lo(p); q < hi(p); ++q) s -= el(col[q]) * x[q];
        x[p] = s / d(p);
      }
    }
  }
  // y := M x, z := |M| |x| (the entries' moduli times the solution's: exactly the products' moduli, without a complex
  // modulus per product).
  void apply(const Acc* x, Acc* y, M* z) const {
    std::vector<M> mx(t);
    for (int64_t p = 0; p < t; ++p) {
      y[p] = d(p) * x[p];
      mx[p] = absval(x[p]);
      z[p] = (unit ? M(1) : mod(p, p)) * mx[p];
    }
    for (int64_t p = 0; p < t; ++p) {
      const T* col = a + p * lda;
      if (direct) {
        for (int64_t r = lo(p); r < hi(p); ++r) {
          y[r] += el(col[r]) * x[p];
          z[r] += mod(r, p) * mx[p];
        }
      } else {
        for (int64_t q = lo(p); q < hi(p); ++q) {
          y[p] += el(col[q]) * x[q];
          z[p] += mod(q, p) * mx[q];
        }
      }
    }
  }
  // ||M x - alpha b||_inf / ((|M| |x|)_inf + |alpha| ||b||_inf) for one system (b already unscaled).
  double backward_error(const Acc* x, const Acc* b, const Scalar& alpha_s) const {
    const Acc alpha = from_scalar<Acc>(alpha_s);
    std::vector<Acc> y(t);
    std::vector<M> z(t);
    apply(x, y.data(), z.data());
    M num = 0, mz = 0, mb = 0;
    for (int64_t r = 0; r < t; ++r) {
      num = std::max(num, absval(y[r] - alpha * b[r]));
      mz = std::max(mz, z[r]);
      mb = std::max(mb, absval(b[r]));
    }
    const M den = mz + absval(alpha) * mb;
    return num == 0 ? 0 : double(num / den);
  }
};

// The triangle of A. Well-conditioned: off-diagonal U(-1,1)/t, diagonal +-U(1.5,2.5) (diagonally dominant both by
// rows and columns, so cond ~ 1 whichever way it is applied). Ill-conditioned: off-diagonal U(-1,1) 3 sqrt(3/t)
// (standard deviation 3/sqrt(t): the growth of a substitution stays bounded independently of t, far from
// overflow), diagonal +-U(1,2) except up to four entries of 1e-4.5, 1e-3, 1e-2.8, 1e-2.5: a block holding the first
// has a condition number far above the inversion limit (1000), the others put blocks near it on either side. With
// a unit diagonal the ill-conditioning comes from larger off-diagonal entries (5 sqrt(3/t)). Complex: each part of an
// off-diagonal entry U(-1,1) times the scale / sqrt(2) (the same mean square modulus, so the same growth), diagonal
// entries of those moduli with a random phase (1e-4.5 ...: the entry's phase kept). The other triangle, and the
// diagonal when diag = U, hold NaN; the padding rows keep the image's sentinel NaN.
template <typename T>
void fill_triangle(Image<T>& im, const TrsmCase& c) {
  using R = typename Real<T>::Part;
  const int64_t t = c.t(), lda = c.lda;
  const bool unit = c.diag == 'U';
  const double s = c.ill ? (unit ? 5.0 : 3.0) * std::sqrt(3.0 / double(t)) : 1.0 / double(t);
  T* a = im.p();
  for (int64_t j = 0; j < t; ++j)
    for (int64_t i = 0; i < t; ++i) {
      const bool stored = c.uplo == 'U' ? i < j : i > j;
      T v = nan_elem<T>();
      if constexpr (is_complex_v<T>) {
        if (stored) {
          const R re = R(double(uni<R>()) * s / std::sqrt(2.0));
          v = T(re, R(double(uni<R>()) * s / std::sqrt(2.0)));
        }
      } else {
        if (stored) v = T(double(uni<T>()) * s);
      }
      if (i == j && !unit) v = with_phase<T>(c.ill ? uni<R>(1, 2) : uni<R>(1.5, 2.5));
      a[i + j * lda] = v;
    }
  if (c.ill && !unit) {
    const double small[] = {-4.5, -3.0, -2.8, -2.5};
    const int64_t count = std::min<int64_t>(t, 4), part = t / count;
    for (int64_t q = 0; q < count; ++q) {
      // One in each quarter, so that they fall into different diagonal blocks where t allows.
      const int64_t p = t < 4 ? q : q * part + int64_t(rng()() % uint64_t(part));
      T& d = a[p + p * lda];
      if constexpr (is_complex_v<T>)
        d *= R(std::pow(10.0, small[q]) / double(std::abs(d)));
      else
        d = T(std::copysign(std::pow(10.0, small[q]), double(d)));
    }
  }
}

// A non-finite value placed into B before the call: element r of system s.
struct Inject {
  int64_t s, r;
  double v;
};

template <typename T>
struct TrsmProblem {
  using Acc = typename Real<T>::Acc;
  TrsmCase c;
  Image<T> a, b;
  std::vector<Acc> xref;       // element r of system s at r + s t
  std::vector<double> be_ref;  // ill-conditioned: backward error of xref rounded to T, per system
  std::vector<char> poisoned;  // per system: 0, 1 (a NaN injected), 2 (an Inf)
};

template <typename T>
TrsmProblem<T> make_trsm(const TrsmCase& c, const std::vector<Inject>& inject = {}) {
  using Acc = typename Real<T>::Acc;
  const int64_t t = c.t(), ns = c.systems();
  TrsmProblem<T> P{c, Image<T>(mspan(t, t, c.lda)), Image<T>(mspan(c.m, c.n, c.ldb)), {}, {}, {}};
  fill_triangle(P.a, c);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) P.b.p()[i + j * c.ldb] = rand_elem<T>();
  P.poisoned.assign(size_t(ns), 0);
  for (const Inject& in : inject) {
    P.b.p()[c.off(in.s, in.r)] = elem<T>(in.v);
    P.poisoned[size_t(in.s)] = std::isnan(in.v) ? 1 : 2;
  }
  P.xref.resize(size_t(t * ns));
  if (c.ill) P.be_ref.resize(size_t(ns));
  const Tri<T> M(c, P.a.p());
  const Acc alpha = from_scalar<Acc>(c.alpha);
  parallel_for(ns, [&](int64_t s) {
    Acc* x = P.xref.data() + s * t;
    std::vector<Acc> b(t);
    for (int64_t r = 0; r < t; ++r) b[r] = Acc(P.b.p()[c.off(s, r)]);
    for (int64_t r = 0; r < t; ++r) x[r] = alpha * b[r];
    M.solve(x);
    if (c.ill) {
      std::vector<Acc> xt(t);
      for (int64_t r = 0; r < t; ++r) xt[r] = Acc(T(x[r]));
      P.be_ref[size_t(s)] = M.backward_error(xt.data(), b.data(), c.alpha);
    }
  });
  return P;
}

struct Verdict {
  bool ok = true;
  std::string msg;
  double worst = 0, worst_be_u = 0, worst_be_vs_ref = 0;
};

// Checks X (the B image after a call) system by system against the case's rule (see the file's header). Systems
// holding an injected NaN (Inf): wherever the reference is NaN (non-finite) the result must be NaN (non-finite), and
// elsewhere in that system it may be non-finite (an inverted block multiplies a NaN by its zeros) or else correct.
template <typename T>
Verdict judge_trsm(const TrsmProblem<T>& P, const Image<T>& out) {
  using Acc = typename Real<T>::Acc;
  using Mag = MagOf<Acc>;
  const double u = Real<T>::u;
  const TrsmCase& c = P.c;
  const int64_t t = c.t(), ns = c.systems();
  const Tri<T> M(c, P.a.p());
  const double be_bound = Real<T>::arith * 4.0 * (1000.0 + double(t)) * u;
  std::vector<double> worst(ns, 0), be(ns, 0);
  std::vector<std::string> bad(ns);
  parallel_for(ns, [&](int64_t s) {
    const Acc* xr = P.xref.data() + s * t;
    std::ostringstream o;
    o.precision(std::numeric_limits<typename Real<T>::Part>::max_digits10);
    if (c.ill && !P.poisoned[s]) {
      std::vector<Acc> x(t), b(t);
      bool finite = true;
      for (int64_t r = 0; r < t; ++r) {
        x[r] = Acc(out.p()[c.off(s, r)]);
        b[r] = Acc(P.b.p()[c.off(s, r)]);
        finite &= all_finite(x[r]);
      }
      be[s] = finite ? M.backward_error(x.data(), b.data(), c.alpha) : INFINITY;
      worst[s] = be[s] / be_bound;
      if (!(be[s] <= be_bound))
        o << "system " << s << ": backward error " << be[s] / u << " u > " << be_bound / u
          << " u (rounded reference solution: " << P.be_ref[s] / u << " u)";
      bad[s] = o.str();
      return;
    }
    Mag xmax = 0;
    for (int64_t r = 0; r < t; ++r)
      if (all_finite(xr[r])) xmax = std::max(xmax, absval(xr[r]));
    const Mag bound = Mag(Real<T>::arith) * 32 * Mag(t) * Mag(u) * xmax + tiny<T>();
    int nbad = 0;
    for (int64_t r = 0; r < t; ++r) {
      const Acc got = Acc(out.p()[c.off(s, r)]), want = xr[r];
      bool ok;
      if (P.poisoned[s] && !all_finite(want))
        ok = P.poisoned[s] == 1 ? any_nan(got) : !all_finite(got);
      else if (P.poisoned[s] && !all_finite(got))
        ok = true;
      else {
        ok = all_finite(got) && absval(got - want) <= bound;
        if (all_finite(got)) worst[s] = std::max(worst[s], double(absval(got - want) / bound));
      }
      if (!ok && nbad++ < 3)
        o << " [system " << s << " element " << r << ": got " << got << " want " << want << " +- " << bound << "]";
    }
    if (nbad > 3) o << " ... " << nbad << " wrong in system " << s;
    bad[s] = o.str();
  });
  Verdict v;
  int nbad = 0;
  for (int64_t s = 0; s < ns; ++s) {
    v.worst = std::max(v.worst, worst[s]);
    if (c.ill && !P.poisoned[s]) {
      v.worst_be_u = std::max(v.worst_be_u, be[s] / u);
      v.worst_be_vs_ref = std::max(v.worst_be_vs_ref, be[s] / std::max(P.be_ref[s], u / 64));
    }
    if (!bad[s].empty()) {
      v.ok = false;
      if (nbad++ < 4) v.msg += bad[s] + "\n";
    }
  }
  if (nbad > 4) v.msg += std::to_string(nbad) + " systems wrong in all";
  return v;
}

// Runs a case on every runner (each twice: the two results must be bit-identical), checks each result, A left
// unchanged on the device and on the host, and that select() names an entry that takes the case.
template <typename T>
void check_trsm_case(const TrsmCase& c, const std::vector<Runner>& rs, Tally& tally,
                     const std::vector<Inject>& inject = {}) {
  SCOPED_TRACE(std::string(Real<T>::name) + " trsm " + c.str());
  const TrsmProblem<T> P = make_trsm<T>(c, inject);
  if (c.ill) {
    for (size_t s = 0; s < P.be_ref.size(); ++s)
      ASSERT_LE(P.be_ref[s], Real<T>::arith * 4.0 * (1000.0 + double(c.t())) * Real<T>::u)
          << "the test's own reference, system " << s;
  }
  const bo_call call = trsm_call(routine_of<T>(BO_KIND_TRSM), c);
  expect_select_takes<T>(call);
  DevImage<T> da(P.a);
  // The host operand of the module's host-operand calls, checked unchanged afterwards.
  Image<T> ah = has_host_mode(rs) ? P.a : Image<T>(0);
  // Results already judged, so that bit-identical results of several runners (the module and the entry it
  // selects) are judged once: the backward errors of big ill-conditioned cases cost as much as the reference.
  std::vector<std::pair<const Image<T>*, Verdict>> judged;
  std::vector<Image<T>> keep;
  keep.reserve(rs.size());
  for (const Runner& rn : rs) {
    SCOPED_TRACE(rn.name());
    Stat& st = tally[rn.name()];
    Image<T> x1 = P.b, x2 = P.b;
    const int status = run_call<T>(rn, call, &ah, nullptr, &x1, &da);
    if (status == -1) {
      ++st.declined;
      continue;
    }
    ++st.ran;
    EXPECT_EQ(status, BO_CUDA_OK) << "the module declined or failed the call";
    if (status != BO_CUDA_OK) {
      EXPECT_TRUE(check_image(P.b, x1, {})) << "a call that failed wrote B";
      continue;
    }
    EXPECT_TRUE(only_block_written(P.b, x1, c.m, c.n, c.ldb)) << "B's guard zone or padding";
    const Verdict* v = nullptr;
    for (const auto& [img, verdict] : judged)
      if (std::memcmp(img->v.data(), x1.v.data(), sizeof(T) * x1.size()) == 0) v = &verdict;
    if (!v) {
      keep.push_back(x1);
      judged.emplace_back(&keep.back(), judge_trsm(P, x1));
      v = &judged.back().second;
    }
    EXPECT_TRUE(v->ok) << v->msg;
    st.worst = std::max(st.worst, v->worst);
    st.worst_be_u = std::max(st.worst_be_u, v->worst_be_u);
    st.worst_be_vs_ref = std::max(st.worst_be_vs_ref, v->worst_be_vs_ref);
    run_call<T>(rn, call, &ah, nullptr, &x2, &da);
    EXPECT_TRUE(same_bits(x1, x2));
  }
  EXPECT_TRUE(unchanged(P.a, da.back())) << "A on the device";
  if (has_host_mode(rs)) {
    EXPECT_TRUE(unchanged(P.a, ah)) << "A on the host";
  }
}

// Every uplo/transa/diag combination of one side at every shape (transa N, T and, for complex elements, C; real
// elements take C as T at two shapes). Shapes whose reference is big run one alpha/conditioning variant per combination
// (the four variants rotate over the combinations). Complex alpha: 1 or i, and -0.75 + 0.5i.
template <typename T>
void trsm_side(char side) {
  const std::vector<Runner> rs = runners_for(routine_of<T>(BO_KIND_TRSM));
  ASSERT_GT(rs.size(), 2u) << "the registry has no trsm entry";
  const int64_t shapes[][2] = {{1, 1},   {2, 3},    {31, 33},  {33, 1},   {1, 40},
                               {100, 7}, {257, 64}, {3000, 5}, {5, 3000}, {1000, 1000}};
  Tally tally;
  int combo = 0;
  for (char uplo : {'U', 'L'})
    for (char trans : transposes<T>())
      for (char diag : {'N', 'U'}) {
        ++combo;
        for (size_t si = 0; si < std::size(shapes); ++si) {
          const int64_t m = shapes[si][0], n = shapes[si][1];
          const int64_t t = side == 'L' ? m : n, ns = side == 'L' ? n : m;
          const bool big = double(t) * double(t) * double(ns) > kBigWork;
          for (int v = 0; v < 4; ++v) {
            if (big && v != combo % 4) continue;
            const size_t h = size_t(combo) * 31 + si * 7 + size_t(v);
            const Scalar alpha = (v & 1) ? sc<T>({-0.75, 0.5}, -0.75) : sc<T>(h % 2 ? kI : Scalar(1.0), 1.0);
            TrsmCase c{side, uplo, trans, diag, m, n, alpha, (v & 2) != 0, 0, 0};
            if (!is_complex_v<T> && trans == 'T' && (si == 1 || si == 5)) c.trans = 'C';  // 'C' means 'T' when real
            // Leading dimensions above the rows, some multiples of 4 (the vector paths), some odd.
            c.lda = h % 2 ? t + 3 : round_up(t + 1, 4);
            c.ldb = h % 3 ? m + 1 : round_up(m + 1, 4);
            check_trsm_case<T>(c, rs, tally);
          }
        }
      }
  report(std::string(Real<T>::name) + " trsm, side " + side, rs, tally);
}

GPU_TYPED_SUITE_ALL(Level3Trsm);

TYPED_TEST(Level3Trsm, BothSidesAllEntries) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_TRSM));
  for (char side : {'L', 'R'}) trsm_side<TypeParam>(side);
}

// M >> N: 16384 x 16 on each side, on the configuration select() takes (and, when that is cuBLAS, also on the
// first own configuration that takes it: the size is ours to get right; complex elements have none).
TYPED_TEST(Level3Trsm, Large16384x16) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_TRSM));
  const char trans_r = is_complex_v<T> ? 'C' : 'T';
  for (char side : {'L', 'R'}) {
    const TrsmCase c{side,
                     side == 'L' ? 'L' : 'U',
                     side == 'L' ? 'N' : trans_r,
                     'N',
                     16384,
                     16,
                     sc<T>({-0.75, 0.5}, -0.75),
                     false,
                     side == 'L' ? 16387 : 20,
                     16388};
    bo_call g = trsm_call(routine_of<T>(BO_KIND_TRSM), c);
    g.a = g.c = fake_dev_ptr<T>();
    const int idx = module().reg->select(g.routine, &g);
    ASSERT_GE(idx, 0);
    std::vector<Runner> rs{entry_runner(&module().reg->entries[idx])};
    if (rs[0].e->vendor)
      for (const bo_kernel_entry* e : configs(g.routine))
        if (!e->vendor && e->can_implement(&g)) {
          rs.push_back(entry_runner(e));
          break;
        }
    Tally tally;
    check_trsm_case<T>(c, rs, tally);
    print_tally(std::string(Real<T>::name) + " trsm 16384x16, side " + side, tally);
  }
}

// The one-system entries (?trsm_trsv) solve through whichever trsv entry select() takes for the call's own A, lda and
// increment, so their workspace must cover every trsv entry at that order, not only the one a query with lda = n picks.
// Under the built-in defaults (a GPU without a tuned table) a solve of order 33 at lda 36 took the wavefront kernel,
// which the query (lda 33, unaligned) had not sized for, and failed. Checked on the entries' sizes, whatever the table.
TYPED_TEST(Level3Trsm, OneSystemWorkspaceCoversEveryTrsv) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_TRSM));
  if constexpr (is_complex_v<T>) {
    GTEST_SKIP() << "complex trsm has no own one-system entry";
  } else {
    std::vector<const bo_kernel_entry*> one;
    for (const bo_kernel_entry* e : configs(routine_of<T>(BO_KIND_TRSM))) {
      const std::string name = e->name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, "_trsv") == 0) one.push_back(e);
    }
    const std::vector<const bo_kernel_entry*> trsv = configs(routine_of<T>(BO_KIND_TRSV));
    ASSERT_FALSE(one.empty()) << "no ?trsm_trsv entry";
    ASSERT_FALSE(trsv.empty()) << "no trsv entry";
    for (const bo_kernel_entry* e : one)
      for (int64_t t : {1, 2, 33, 63, 100, 257, 3001})
        for (char side : {'L', 'R'})
          for (char uplo : {'U', 'L'})
            for (char trans : {'N', 'T'}) {
              const TrsmCase c{side,
                               uplo,
                               trans,
                               'N',
                               side == 'L' ? t : 1,
                               side == 'L' ? 1 : t,
                               sc<T>(1.0, 1.0),
                               false,
                               round_up(t + 1, 4),
                               side == 'L' ? round_up(t + 1, 4) : 4};
              const bo_call call = trsm_call(routine_of<T>(BO_KIND_TRSM), c);
              if (!e->can_implement(&call)) continue;
              const size_t have = e->workspace_bytes(&call);
              for (const bo_kernel_entry* k : trsv) {
                bo_call v{};
                v.routine = routine_of<T>(BO_KIND_TRSV);
                v.op[0] = uplo;
                v.op[1] = (side == 'L') == (trans == 'N') ? 'N' : 'T';
                v.op[2] = 'N';
                v.n = t;
                EXPECT_LE(k->workspace_bytes(&v), have)
                    << e->name << " " << c.str() << ": its workspace does not cover " << k->name;
              }
            }
  }
}

// Shared among GPU lanes (level3_mg.h), on one GPU: BLASOFFLOAD_DEVICES=0,0 gives two lanes (the several-GPU split,
// each lane a range of B's systems; BLASOFFLOAD_MULTI_GPU_MIN_N lowered to 64 so that these sizes take it), and
// BLASOFFLOAD_PINNED_MAX_MB=1 one lane (operands too large for whole-operand staging go through rings). Every uplo,
// transa and diag on both sides, within the same bounds, B's padding and guards untouched, A unchanged, two runs bit
// for bit; every call must have taken the path (counted from the module's log lines).
template <typename T>
void trsm_lanes(int lanes) {
  gt::pipe::Knobs knobs(0, nullptr);
  set_lane_knobs(knobs, lanes);
  const std::vector<Runner> rs = host_runner(routine_of<T>(BO_KIND_TRSM));
  ASSERT_EQ(rs.size(), 1u);
  // (order t, systems): two lanes need 512 systems (lanes take 256 at the least); one lane more than 1 MiB of operands.
  const int64_t shapes[][2] = {{300, 777}, {513, 520}, {40, 600}};
  const int64_t before = split_calls(lanes).load(), shared_before = a_shared_calls().load();
  int64_t calls = 0, combo = 0;
  Tally tally;
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char trans : transposes<T>())
        for (char diag : {'N', 'U'})
          for (const auto& sh : shapes) {
            if (lanes == 1 && sh[0] == 40) continue;  // its operands fit the whole-operand staging
            ++combo;
            const int64_t t = sh[0], ns = sh[1], m = side == 'L' ? t : ns, n = side == 'L' ? ns : t;
            const Scalar alpha = combo % 2 ? sc<T>({-0.75, 0.5}, -0.75) : sc<T>(combo % 3 ? kI : Scalar(1.0), 1.0);
            TrsmCase c{side,
                       uplo,
                       trans,
                       diag,
                       m,
                       n,
                       alpha,
                       combo % 4 == 1,
                       combo % 2 ? t + 3 : round_up(t + 1, 4),
                       combo % 3 ? m + 1 : round_up(m + 1, 4)};
            check_trsm_case<T>(c, rs, tally);
            calls += 2;  // the case runs twice (the bits must agree)
          }
  EXPECT_EQ(split_calls(lanes).load() - before, calls) << "calls split over " << lanes << " lane(s)";
  // Two lanes stage A's triangle once between them, each a part, and copy the other's part.
  EXPECT_EQ(a_shared_calls().load() - shared_before, lanes == 2 ? calls : 0) << "calls with A staged once";
  print_tally(std::string(Real<T>::name) + " trsm over " + std::to_string(lanes) + " lane(s)", tally);
}

TYPED_TEST(Level3Trsm, SharedOverTwoLanes) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_TRSM));
  trsm_lanes<TypeParam>(2);
}
TYPED_TEST(Level3Trsm, BeyondWholeOperandStagingThroughRings) {
  GPU_ROUTINE_PREAMBLE(routine_of<TypeParam>(BO_KIND_TRSM));
  trsm_lanes<TypeParam>(1);
}

// A NaN and an Inf in B, in different systems: they stay in their system (column for side L, row for side R), the
// NaN gives NaN (the Inf a non-finite value) wherever the substitution carries it, every other system is correct.
TYPED_TEST(Level3Trsm, NanAndInfInBStayInTheirSystem) {
  using T = TypeParam;
  GPU_ROUTINE_PREAMBLE(routine_of<T>(BO_KIND_TRSM));
  const std::vector<Runner> rs = runners_for(routine_of<T>(BO_KIND_TRSM));
  Tally tally;
  int h = 0;
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char trans : transposes<T>())
        for (char diag : {'N', 'U'})
          for (auto [m, n] : {std::pair<int64_t, int64_t>{257, 64}, {31, 33}, {100, 7}, {120, 1}, {1, 120}}) {
            ++h;
            const Scalar alpha = h % 2 ? sc<T>({-0.75, 0.5}, -0.75) : Scalar(1.0);
            TrsmCase c{side, uplo, trans, diag, m, n, alpha, false, 0, m + 2};
            c.lda = c.t() + 1;
            const int64_t t = c.t(), ns = c.systems();
            check_trsm_case<T>(c, rs, tally, {{0, t / 2, NAN}, {ns - 1, t / 3, h % 4 < 2 ? INFINITY : -INFINITY}});
          }
  report(std::string(Real<T>::name) + " trsm with NaN/Inf in B", rs, tally);
}

// The ill-conditioned data must really be: a 1-norm condition number far above 1e4 (computed from the exact inverse
// in Acc), and solutions far from overflow at the largest orders. No GPU needed.
TYPED_TEST(Level3Trsm, IllConditionedTestDataIsIllConditioned) {
  using T = TypeParam;
  using Acc = typename Real<T>::Acc;
  using Mag = MagOf<Acc>;
  for (char diag : {'N', 'U'})
    for (char uplo : {'L', 'U'})
      for (int64_t t : {64, 257, 1000}) {
        SCOPED_TRACE(std::string("diag=") + diag + " uplo=" + uplo + " t=" + std::to_string(t));
        const TrsmCase c{'L', uplo, 'N', diag, t, 1, 1.0, true, t, t};
        Image<T> a(mspan(t, t, t));
        fill_triangle(a, c);
        const Tri<T> M(c, a.p());
        Mag norm = 0, inv_norm = 0;
        for (int64_t j = 0; j < t; ++j) {
          Mag s = absval(M.d(j));
          for (int64_t i = M.lo(j); i < M.hi(j); ++i) s += absval(Acc(a.p()[i + j * t]));
          norm = std::max(norm, s);
        }
        std::vector<Mag> sums(t);
        parallel_for(t, [&](int64_t j) {
          std::vector<Acc> e(t, Acc(0));
          e[j] = 1;
          M.solve(e.data());
          Mag s = 0;
          for (const Acc& v : e) s += absval(v);
          sums[j] = s;
        });
        for (Mag s : sums) inv_norm = std::max(inv_norm, s);
        const double cond = double(norm * inv_norm);
        std::printf("  %s ill-conditioned %c%c t=%lld: cond_1 = %.3g, max ||A^-1 e_j||_1 = %.3g\n", Real<T>::name, uplo,
                    diag, (long long)t, cond, double(inv_norm));
        EXPECT_GT(cond, 1e4);
        EXPECT_LT(double(inv_norm), 1e25) << "solutions could overflow float";
      }
}

}  // namespace
