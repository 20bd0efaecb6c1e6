// GPU tests of the module's LAPACK path (getrf getrs gesv potrf potrs posv trtrs, typed suites GpuLapack/float,
// /double, /cfloat and /cdouble) through its call(), with host operands built as the core's descriptors build them:
// results within LAPACK's residual bounds (xGET01 / xPOT01 / xGET02: residual / (n ||A|| eps) < 30, against references
// accumulated in a wider type) and nothing but the outputs written (guard zones around A and B, padding rows, the other
// triangle, pivots past min(m, n)); a singular, not positive definite, zero-diagonal or non-finite case answers
// BO_CUDA_CPU_ANSWERS and writes nothing at all (INFO included); two runs of a call agree bit for bit; solves repeated
// on unchanged factors are served from a device copy, and a solve after the program rewrote its factors uses the new
// ones. Complex matrices are Hermitian for the Cholesky routines, and TRANS 'C' is checked against the conjugate
// transpose. Without a CUDA device every test reports SKIPPED.
#include <sys/mman.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "pipeline_support.h"  // Knobs

using namespace gt;

namespace {

constexpr double kThresh = 30;
constexpr int32_t kInfoPoison = -987654, kPivPoison = -424242;
constexpr size_t kPivGuard = 4;
constexpr size_t kZone = 16;  // poisoned elements before and after A (the test's own memory) and B

using bo_gpu::format;

// The reference's accumulator (the complex of the real part's, for complex elements), LAPACK's eps of the parts, and
// moduli in long double.
template <typename T>
using Acc = typename Real<T>::Acc;
template <typename T>
constexpr long double kEps = 2 * Real<T>::u;
template <typename X>
long double mag(const X& x) {
  return (long double)std::abs(x);
}
template <typename X>
X conj_of(const X& x) {
  return conj_if(x, true);
}

enum class K { kGetrf, kGetrs, kGesv, kPotrf, kPotrs, kPosv, kTrtrs };
bo_routine_kind kind_of(K k) {
  static const bo_routine_kind kinds[] = {BO_KIND_GETRF, BO_KIND_GETRS, BO_KIND_GESV, BO_KIND_POTRF,
                                          BO_KIND_POTRS, BO_KIND_POSV,  BO_KIND_TRTRS};
  return kinds[int(k)];
}
bool has_b(K k) { return k != K::kGetrf && k != K::kPotrf; }
bool has_ipiv(K k) { return k == K::kGetrf || k == K::kGetrs || k == K::kGesv; }
bool triangular(K k) { return k == K::kPotrf || k == K::kPotrs || k == K::kPosv || k == K::kTrtrs; }
bool writes_a(K k) { return k == K::kGetrf || k == K::kGesv || k == K::kPotrf || k == K::kPosv; }
bool in_tri(char uplo, int64_t i, int64_t j) { return uplo == 'U' ? i <= j : i >= j; }

// One call's arguments and host operands. `a` may point into memory of the test's own (residency).
template <typename T>
struct Problem {
  K k;
  int64_t m, n, nrhs, lda, ldb;
  char uplo = 'U', trans = 'N', diag = 'N';
  std::vector<T> a_store, b;  // A's storage (with kZone guards) unless `a` is the test's memory; B with guards
  T* a = nullptr;
  std::vector<int32_t> ipiv;
  int32_t info = kInfoPoison;
  int64_t rows() const { return k == K::kGetrf ? m : n; }
  int64_t npiv() const { return k == K::kGetrf ? std::min(m, n) : has_ipiv(k) ? n : 0; }
  size_t a_elems() const { return size_t(lda) * size_t(std::max<int64_t>(n, 1)); }
  size_t bidx(int64_t i, int64_t j) const { return kZone + size_t(i + j * ldb); }
  T& bij(int64_t i, int64_t j) { return b[bidx(i, j)]; }
  std::string str() const {
    return format("kind=%d uplo=%c trans=%c diag=%c m=%lld n=%lld nrhs=%lld lda=%lld ldb=%lld", int(k), uplo, trans,
                  diag, (long long)rows(), (long long)n, (long long)nrhs, (long long)lda, (long long)ldb);
  }
};

// The module's call, built as the descriptors (src/routines/getrf.h ...) build it.
template <typename T>
int run(Problem<T>& p) {
  char ops[4] = {};  // the option letters in the routine's order
  if (p.k == K::kTrtrs) {
    ops[0] = p.uplo;
    ops[1] = p.trans;
    ops[2] = p.diag;
  } else if (p.k == K::kGetrs) {
    ops[0] = p.trans;
  } else if (triangular(p.k)) {
    ops[0] = p.uplo;
  }
  bo_call g = make_call(routine_of<T>(kind_of(p.k)), ops, p.rows(), p.n, has_b(p.k) ? p.nrhs : 0, 0, 0, p.lda, 0,
                        has_b(p.k) ? p.ldb : 0);
  g.a = p.a;
  g.c = has_b(p.k) ? p.b.data() + kZone : nullptr;
  g.ipiv = has_ipiv(p.k) ? p.ipiv.data() : nullptr;
  g.info = &p.info;
  return module().mod->call(&g, 0.0);
}

// Test data: entries uniform in [-1, 1] (general; both parts of a complex one), diagonally dominant Hermitian with a
// real diagonal (SPD / HPD), or a well-conditioned triangle (diagonal e + e / |e|, of modulus in [1, 2);
// off-diagonal / n); padding rows hold the sentinel NaN, as do an unreferenced triangle and a unit diagonal.
template <typename T>
void fill_a(Problem<T>& p, T* a) {
  using R = typename Real<T>::Part;
  const int64_t rows = p.rows(), n = p.n, ld = p.lda;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < ld; ++i) a[i + j * ld] = i < rows ? rand_elem<T>() : sentinel<T>();
  if (p.k == K::kPotrf || p.k == K::kPotrs || p.k == K::kPosv) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < j; ++i) a[j + i * ld] = conj_of(a[i + j * ld]);
    for (int64_t i = 0; i < n; ++i) {
      R s = 1;
      for (int64_t j = 0; j < n; ++j)
        if (j != i) s += std::abs(a[i + j * ld]);
      a[i + i * ld] = T(s);
    }
  } else if (p.k == K::kTrtrs) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        T& e = a[i + j * ld];
        const R m = std::abs(e);
        e = i == j ? (p.diag == 'U' ? sentinel<T>() : m == 0 ? T(1) : e + e / m) : e / R(n);
      }
  }
  if (triangular(p.k))
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i)
        if (!in_tri(p.uplo, i, j)) a[i + j * ld] = sentinel<T>();
}
template <typename T>
Problem<T> make(K k, int64_t m, int64_t n, int64_t nrhs, int64_t lda, int64_t ldb, const char* opts = "UNN",
                T* a_mem = nullptr) {
  Problem<T> p{k, m, n, nrhs, lda, ldb, opts[0], opts[1], opts[2]};
  if (!a_mem) {
    p.a_store.assign(p.a_elems() + 2 * kZone, sentinel<T>());
    a_mem = p.a_store.data() + kZone;
  }
  p.a = a_mem;
  fill_a(p, p.a);
  p.b.assign(size_t(ldb) * size_t(std::max<int64_t>(nrhs, 1)) + 2 * kZone, sentinel<T>());
  for (int64_t j = 0; j < nrhs && has_b(k); ++j)
    for (int64_t i = 0; i < n; ++i) p.bij(i, j) = rand_elem<T>();
  p.ipiv.assign(size_t(p.npiv()) + kPivGuard, kPivPoison);
  return p;
}
// A copy with its own A (a copied Problem's `a` still points into the original's storage).
template <typename T>
Problem<T> clone(const Problem<T>& p) {
  Problem<T> q = p;
  if (q.a_store.empty()) {
    q.a_store.assign(p.a_elems() + 2 * kZone, sentinel<T>());
    std::copy(p.a, p.a + p.a_elems(), q.a_store.begin() + kZone);
  }
  q.a = q.a_store.data() + kZone;
  return q;
}

// A snapshot of everything a call may touch.
template <typename T>
struct Snapshot {
  std::vector<T> a, a_store, b;
  std::vector<int32_t> ipiv;
  int32_t info;
  explicit Snapshot(const Problem<T>& p)
      : a(p.a, p.a + p.a_elems()), a_store(p.a_store), b(p.b), ipiv(p.ipiv), info(p.info) {}
};
template <typename T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), sizeof(T) * x.size()) == 0;
}

// Nothing outside the call's outputs changed: the guard zones, padding rows, the other triangle, input operands, B's
// padding, pivots past those the routine writes (all of them for getrs).
template <typename T>
::testing::AssertionResult only_outputs_written(const Problem<T>& p, const Snapshot<T>& before) {
  for (size_t q = 0; q < p.a_store.size(); ++q)
    if ((q < kZone || q >= kZone + p.a_elems()) && bits(p.a_store[q]) != bits(before.a_store[q]))
      return ::testing::AssertionFailure() << "A's guard zone written at " << int64_t(q) - int64_t(kZone);
  for (size_t q = 0; q < p.a_elems(); ++q) {
    const int64_t i = int64_t(q) % p.lda, j = int64_t(q) / p.lda;
    const bool out = writes_a(p.k) && i < p.rows() && (!triangular(p.k) || in_tri(p.uplo, i, j));
    if (!out && bits(p.a[q]) != bits(before.a[q]))
      return ::testing::AssertionFailure() << "A(" << i << ", " << j << ") written";
  }
  for (size_t q = 0; q < p.b.size(); ++q) {
    const int64_t e = int64_t(q) - int64_t(kZone);  // B's element, negative or past ldb * nrhs in the guard zones
    const bool out = has_b(p.k) && e >= 0 && e < p.ldb * p.nrhs && e % p.ldb < p.n;
    if (!out && bits(p.b[q]) != bits(before.b[q]))
      return ::testing::AssertionFailure() << "B element " << e << " written";
  }
  for (size_t q = p.k == K::kGetrs ? 0 : size_t(p.npiv()); q < p.ipiv.size(); ++q)
    if (p.ipiv[q] != before.ipiv[q]) return ::testing::AssertionFailure() << "IPIV(" << q + 1 << ") written";
  return ::testing::AssertionSuccess();
}

// ---- LAPACK's ratios, accumulated in Real<T>::Acc (moduli for complex elements), over some columns. ----

// Element (i, j) of op(A) (op: 'N', 'T' or 'C', the conjugate transpose) for the matrix the call factors or solves
// with, from the original stored A (Hermitian for the Cholesky routines: the other triangle is the conjugate).
template <typename T>
Acc<T> elem(const Problem<T>& p, const std::vector<T>& a0, int64_t i, int64_t j, char op = 'N') {
  if (op != 'N') return op == 'C' ? conj_of(elem(p, a0, j, i)) : elem(p, a0, j, i);
  const int64_t ld = p.lda;
  if (p.k == K::kTrtrs) {
    if (!in_tri(p.uplo, i, j)) return Acc<T>(0);
    return i == j && p.diag == 'U' ? Acc<T>(1) : Acc<T>(a0[size_t(i + j * ld)]);
  }
  if (triangular(p.k) && !in_tri(p.uplo, i, j)) return conj_of(Acc<T>(a0[size_t(j + i * ld)]));
  return Acc<T>(a0[size_t(i + j * ld)]);
}
template <typename T>
double norm1(const Problem<T>& p, const std::vector<T>& a0, int64_t rows, int64_t cols, char op) {
  long double worst = 0;
  for (int64_t j = 0; j < cols; ++j) {
    long double s = 0;
    for (int64_t i = 0; i < rows; ++i) s += mag(elem(p, a0, i, j, op));
    worst = std::max(worst, s);
  }
  return double(worst);
}
std::vector<int64_t> some_cols(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t j = 0; j < n; j += std::max<int64_t>(1, n / 24)) v.push_back(j);
  v.push_back(n - 1);
  return v;
}
// xGET01 over some columns: ||P L U e_j - A e_j||_1 / (max(m, n) ||A||_1 eps).
template <typename T>
double lu_ratio(const Problem<T>& p, const std::vector<T>& a0, const T* f, const int32_t* ipiv) {
  const int64_t m = p.rows(), n = p.n, k = std::min(m, n), ld = p.lda;
  long double worst = 0;
  std::vector<Acc<T>> w(static_cast<size_t>(m));
  for (int64_t j : some_cols(n)) {
    std::fill(w.begin(), w.end(), Acc<T>(0));
    for (int64_t l = 0; l <= std::min(j, k - 1); ++l) {  // L times column j of U
      const Acc<T> u = Acc<T>(f[l + j * ld]);
      w[size_t(l)] += u;
      for (int64_t i = l + 1; i < m; ++i) w[size_t(i)] += Acc<T>(f[i + l * ld]) * u;
    }
    for (int64_t s = k - 1; s >= 0; --s) std::swap(w[size_t(s)], w[size_t(ipiv[s] - 1)]);
    long double r = 0;
    for (int64_t i = 0; i < m; ++i) r += mag(w[size_t(i)] - elem(p, a0, i, j));
    worst = std::max(worst, r);
  }
  return double(worst / ((long double)std::max(m, n) * norm1(p, a0, m, n, 'N') * kEps<T>));
}
// xPOT01 over some columns: ||F^H F e_j - A e_j||_1 / (n ||A||_1 eps), F = U or L^H.
template <typename T>
double chol_ratio(const Problem<T>& p, const std::vector<T>& a0, const T* f) {
  const int64_t n = p.n, ld = p.lda;
  auto u = [&](int64_t i, int64_t j) -> Acc<T> {
    if (i > j) return Acc<T>(0);
    return p.uplo == 'U' ? Acc<T>(f[i + j * ld]) : conj_of(Acc<T>(f[j + i * ld]));
  };
  long double worst = 0;
  for (int64_t j : some_cols(n)) {
    long double r = 0;
    for (int64_t i = 0; i < n; ++i) {
      Acc<T> s = 0;
      for (int64_t l = 0; l <= std::min(i, j); ++l) s += conj_of(u(l, i)) * u(l, j);
      r += mag(s - elem(p, a0, i, j));
    }
    worst = std::max(worst, r);
  }
  return double(worst / ((long double)n * norm1(p, a0, n, n, 'N') * kEps<T>));
}
// xGET02 over some columns: ||b_j - op(A) x_j||_1 / (n ||op(A)||_1 ||x_j||_1 eps).
template <typename T>
double solve_ratio(const Problem<T>& p, const std::vector<T>& a0, const std::vector<T>& b0) {
  const int64_t n = p.n;
  const char op = p.k == K::kGetrs || p.k == K::kTrtrs ? p.trans : 'N';  // potrs has no TRANS (A^T is not A^H)
  const double anorm = norm1(p, a0, n, n, op);
  double worst = 0;
  std::vector<Acc<T>> r(static_cast<size_t>(n));
  for (int64_t j : some_cols(p.nrhs)) {
    long double xnorm = 0;
    for (int64_t i = 0; i < n; ++i) r[size_t(i)] = Acc<T>(b0[p.bidx(i, j)]);
    for (int64_t l = 0; l < n; ++l) {
      const Acc<T> x = Acc<T>(p.b[p.bidx(l, j)]);
      xnorm += mag(x);
      for (int64_t i = 0; i < n; ++i) r[size_t(i)] -= elem(p, a0, i, l, op) * x;
    }
    long double rn = 0;
    for (int64_t i = 0; i < n; ++i) rn += mag(r[size_t(i)]);
    worst = std::max(worst, double(rn / ((long double)n * anorm * xnorm * kEps<T>)));
  }
  return worst;
}

// The factors for a solve (getrs: getrf's, potrs: potrf's), computed by the module in place.
template <typename T>
void factor_on_gpu(Problem<T>& p) {
  Problem<T> f = p;
  f.k = p.k == K::kGetrs ? K::kGetrf : K::kPotrf;
  f.m = p.n;
  f.a = p.a;
  f.ipiv.assign(size_t(p.n) + kPivGuard, kPivPoison);
  ASSERT_EQ(run(f), BO_CUDA_OK) << "factoring the test matrix";
  ASSERT_EQ(f.info, 0);
  if (p.k == K::kGetrs) p.ipiv = f.ipiv;
}

// A regular call: BO_CUDA_OK, INFO 0, the ratios below the threshold, only the outputs written.
template <typename T>
void check_regular(Problem<T> p) {
  SCOPED_TRACE(p.str());
  const std::vector<T> a0(p.a, p.a + p.a_elems());
  if (p.k == K::kGetrs || p.k == K::kPotrs) {
    factor_on_gpu(p);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const Snapshot<T> before(p);
  ASSERT_EQ(run(p), BO_CUDA_OK);
  EXPECT_EQ(p.info, 0);
  EXPECT_TRUE(only_outputs_written(p, before));
  if (p.k == K::kGetrf || p.k == K::kGesv || p.k == K::kGetrs) {
    for (int64_t s = 0; s < p.npiv(); ++s)
      ASSERT_TRUE(p.ipiv[size_t(s)] >= 1 && p.ipiv[size_t(s)] <= p.rows()) << "IPIV(" << s + 1 << ")";
    EXPECT_LT(lu_ratio(p, a0, p.a, p.ipiv.data()), kThresh) << "||P L U - A||";
  }
  if (p.k == K::kPotrf || p.k == K::kPosv || p.k == K::kPotrs) EXPECT_LT(chol_ratio(p, a0, p.a), kThresh);
  if (has_b(p.k) && p.nrhs > 0) EXPECT_LT(solve_ratio(p, a0, before.b), kThresh) << "||B - op(A) X||";
}

GPU_TYPED_SUITE_ALL(GpuLapack);

TYPED_TEST(GpuLapack, RegularCallsWithinBounds) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  const int64_t lu[][3] = {{1, 1, 1},       {64, 64, 64},       {300, 200, 303},
                           {200, 300, 201}, {1000, 1000, 1001}, {1500, 700, 1500}};
  for (const auto& s : lu) check_regular(make<T>(K::kGetrf, s[0], s[1], 0, s[2], 1));
  for (const char* t : {"UNN", "UTN", "UCN"})
    for (int64_t n : {50, 700})
      for (int64_t nrhs : {1, 40}) check_regular(make<T>(K::kGetrs, n, n, nrhs, n + 2, n + 1, t));
  for (int64_t n : {1, 100, 900})
    for (int64_t nrhs : {0, 3, 64}) check_regular(make<T>(K::kGesv, n, n, nrhs, n + 1, n + 3));
  for (const char* u : {"UNN", "LNN"}) {
    for (int64_t n : {1, 100, 1000}) check_regular(make<T>(K::kPotrf, n, n, 0, n + 3, 1, u));
    for (int64_t n : {100, 800})
      for (int64_t nrhs : {1, 40}) check_regular(make<T>(K::kPotrs, n, n, nrhs, n, n + 2, u));
    for (int64_t n : {100, 700})
      for (int64_t nrhs : {0, 5}) check_regular(make<T>(K::kPosv, n, n, nrhs, n + 1, n, u));
  }
  for (char u : {'U', 'L'})
    for (char t : {'N', 'T', 'C'})
      for (char d : {'N', 'U'})
        for (int64_t n : {40, 600})
          for (int64_t nrhs : {1, 50}) {
            const char o[] = {u, t, d, 0};
            check_regular(make<T>(K::kTrtrs, n, n, nrhs, n + 1, n + 2, o));
          }
}

// The GPU finds what the CPU LAPACK must answer: BO_CUDA_CPU_ANSWERS, and not one byte written (INFO included).
template <typename T>
void check_cpu_answers(Problem<T>& p, const std::string& what) {
  SCOPED_TRACE(p.str() + " " + what);
  const Snapshot<T> before(p);
  EXPECT_EQ(run(p), BO_CUDA_CPU_ANSWERS);
  EXPECT_EQ(p.info, before.info) << "INFO written";
  EXPECT_TRUE(same_bits(std::vector<T>(p.a, p.a + p.a_elems()), before.a)) << "A written";
  EXPECT_TRUE(same_bits(p.a_store, before.a_store)) << "A's guard zones written";
  EXPECT_TRUE(same_bits(p.b, before.b)) << "B written";
  EXPECT_TRUE(p.ipiv == before.ipiv) << "IPIV written";
}

TYPED_TEST(GpuLapack, CpuAnswersAndNothingIsWritten) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  for (int64_t n : {9, 500}) {
    const int64_t lo = n / 3, hi = n / 2;
    // An exactly zero column: a zero pivot.
    const int64_t zero_cols[][2] = {{n, 1}, {n + 7, hi}, {n - 2, n - 2}};  // rows, the zero column (1-based)
    for (const auto& mk : zero_cols) {
      for (K k : {K::kGetrf, K::kGesv}) {
        if (k == K::kGesv && mk[0] != n) continue;
        auto p = make<T>(k, mk[0], n, 3, mk[0] + 1, n + 1);
        for (int64_t i = 0; i < p.rows(); ++i) p.a[i + (mk[1] - 1) * p.lda] = 0;
        check_cpu_answers(p, "zero column " + std::to_string(mk[1]));
      }
    }
    // a_kk = -1 in a diagonally dominant SPD matrix: not positive definite.
    for (const char* u : {"UNN", "LNN"})
      for (K k : {K::kPotrf, K::kPosv}) {
        auto p = make<T>(k, n, n, 2, n + 2, n, u);
        p.a[hi + hi * p.lda] = -1;
        check_cpu_answers(p, "indefinite");
      }
    // A zero on a non-unit diagonal.
    for (const char* o : {"UNN", "LTN"}) {
      auto p = make<T>(K::kTrtrs, n, n, 4, n, n + 1, o);
      p.a[lo + lo * p.lda] = 0;
      check_cpu_answers(p, "zero diagonal");
    }
    // A NaN or an Inf where the routine reads it (of a complex element, in its real part or its imaginary part alone).
    for (K k : {K::kGetrf, K::kGetrs, K::kGesv, K::kPotrf, K::kPotrs, K::kPosv, K::kTrtrs})
      for (int what = 0; what < 4; ++what) {
        if (what >= 2 && !has_b(k)) continue;
        auto p = make<T>(k, n, n, 3, n + 1, n, what % 2 ? "LTN" : "UNN");
        if (k == K::kGetrs || k == K::kPotrs) {
          factor_on_gpu(p);
          ASSERT_FALSE(::testing::Test::HasFatalFailure());
        }
        const auto nf = what % 2 ? INFINITY : NAN;
        const bool imag = what == 1 || what == 2;
        T bad;
        if constexpr (is_complex_v<T>)
          bad = imag ? T(0.5, nf) : T(nf, 0.5);
        else
          bad = T(nf);
        if (what < 2)
          p.a[p.uplo == 'U' ? lo + hi * p.lda : hi + lo * p.lda] = bad;
        else
          p.bij(n - 2, 1) = bad;
        check_cpu_answers(p, std::string(what % 2 ? "Inf" : "NaN") + (what < 2 ? " in A" : " in B") +
                                 (is_complex_v<T> ? imag ? " (imaginary part)" : " (real part)" : ""));
      }
  }
}

// Two runs of one call on copies of the same operands leave the same bits (factors, solutions, pivots, INFO).
TYPED_TEST(GpuLapack, TwoRunsAreBitwiseEqual) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  struct Case {
    K k;
    int64_t m, n, nrhs;
    const char* opts;
  };
  const Case cases[] = {
      {K::kGetrf, 2000, 1500, 0, "UNN"}, {K::kGesv, 700, 700, 30, "UNN"},   {K::kGetrs, 700, 700, 30, "UCN"},
      {K::kGetrs, 700, 700, 30, "UTN"},  {K::kPotrf, 1500, 1500, 0, "LNN"}, {K::kPosv, 700, 700, 30, "UNN"},
      {K::kPotrs, 700, 700, 30, "LNN"},  {K::kTrtrs, 700, 700, 30, "UCN"},  {K::kTrtrs, 700, 700, 30, "LTU"}};
  for (const Case& cs : cases) {
    Problem<T> p = make<T>(cs.k, cs.m, cs.n, cs.nrhs, cs.m + 3, cs.n + 1, cs.opts);
    SCOPED_TRACE(p.str());
    if (cs.k == K::kGetrs || cs.k == K::kPotrs) {
      factor_on_gpu(p);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
    Problem<T> q = clone(p);
    ASSERT_EQ(run(p), BO_CUDA_OK);
    ASSERT_EQ(run(q), BO_CUDA_OK);
    EXPECT_TRUE(same_bits(p.a_store, q.a_store)) << "A differs";
    EXPECT_TRUE(same_bits(p.b, q.b)) << "B differs";
    EXPECT_TRUE(p.ipiv == q.ipiv) << "IPIV differs";
    EXPECT_EQ(p.info, q.info);
  }
}

// A private anonymous mapping with a guard page after it: memory the residency cache may hold.
template <typename T>
T* map_private(size_t elems) {
  void* p = mmap(nullptr, elems * sizeof(T) + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  return static_cast<T*>(p);
}

// A program solving again and again with the same factors (getrs, potrs) or triangle (trtrs), in memory the residency
// cache may hold (n = 1024: 4 to 16 MiB): later solves find the factors' device copy (the module's host_resident says
// so before the call), and all stay within bounds; then the program writes new factors (another matrix's) into the
// same memory, and the next solves must use them.
TYPED_TEST(GpuLapack, RepeatedSolvesOnUnchangedFactorsThenNewOnes) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  const int64_t n = 1024, ld = 1024, nrhs = 2;
  for (K k : {K::kGetrs, K::kPotrs, K::kTrtrs})
    for (const char* o : {"UNN", "LTN"}) {
      T* mem = map_private<T>(size_t(ld * n));
      Problem<T> p = make<T>(k, n, n, nrhs, ld, n, o, mem);
      SCOPED_TRACE(p.str());
      std::vector<T> a0(mem, mem + p.a_elems());
      if (k != K::kTrtrs) {
        factor_on_gpu(p);
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
      }
      int served = 0;
      for (int round = 0; round < 2; ++round) {
        for (int rep = 0; rep < 6; ++rep) {
          for (int64_t j = 0; j < nrhs; ++j)
            for (int64_t i = 0; i < n; ++i) p.bij(i, j) = rand_elem<T>();
          const std::vector<T> b0 = p.b;
          bo_resident_info info{};
          module().mod->host_resident(p.a, n, n, ld, int(sizeof(T)), 1, &info);
          served += info.state == 1;
          p.info = kInfoPoison;
          ASSERT_EQ(run(p), BO_CUDA_OK) << "round " << round << " repetition " << rep;
          EXPECT_EQ(p.info, 0);
          EXPECT_LT(solve_ratio(p, a0, b0), kThresh) << "round " << round << " repetition " << rep;
        }
        if (round == 1) break;
        // The program replaces the matrix in place: another one, factored by the module on a copy, then copied in.
        Problem<T> q = make<T>(k, n, n, nrhs, ld, n, o);
        a0.assign(q.a, q.a + q.a_elems());
        if (k != K::kTrtrs) {
          factor_on_gpu(q);
          ASSERT_FALSE(::testing::Test::HasFatalFailure());
          p.ipiv = q.ipiv;
        }
        std::memcpy(mem, q.a, sizeof(T) * q.a_elems());
      }
      EXPECT_GE(served, 3) << "unchanged factors were never served from a device copy";
      munmap(mem, sizeof(T) * size_t(ld * n) + 4096);
    }
}

// The program's staged uploads of full matrices of 64 MiB or more are timed (offload/module/staged_seen.h), smaller
// ones and triangles not, and their rate lands near blasoffload-calibrate's staged rate (where the start-up's 64 MiB
// beside a busy CPU BLAS read half of it): the core prices staged copies at it where no calibration of the GPU exists.
// Printed.
TEST(GpuLapackLink, LargeStagedUploadsAreTimed) {
  GPU_TEST_PREAMBLE();
  int64_t before = 0, after = 0;
  module().mod->staged_gbs_seen(&before);
  Problem<double> small = make<double>(K::kGetrf, 1024, 1024, 0, 1024, 1024);  // 8 MiB
  ASSERT_EQ(run(small), BO_CUDA_OK);
  module().mod->staged_gbs_seen(&after);
  EXPECT_EQ(after, before) << "an 8 MiB upload was timed";
  Problem<double> tri = make<double>(K::kPotrf, 6144, 6144, 0, 6144, 6144, "LNN");  // a triangle of 144 MiB
  ASSERT_EQ(run(tri), BO_CUDA_OK);
  module().mod->staged_gbs_seen(&after);
  EXPECT_EQ(after, before) << "a triangle's upload was timed";
  for (int i = 0; i < 3; ++i) {
    Problem<double> big = make<double>(K::kGetrf, 4096, 4096, 0, 4096, 4096);  // 128 MiB
    ASSERT_EQ(run(big), BO_CUDA_OK);
    EXPECT_EQ(big.info, 0);
  }
  const double gbs = module().mod->staged_gbs_seen(&after);
  EXPECT_EQ(after, before + 3);
  bo_cuda_rates full{};
  ASSERT_EQ(module().mod->measure(&full), BO_CUDA_OK);
  std::printf("staged uploads of 128 MiB: %.1f GB/s (median of the last ones); measure: %.1f staged\n", gbs,
              full.pageable_gbs);
  EXPECT_GT(gbs, 0.7 * full.pageable_gbs);
  EXPECT_LT(gbs, 2.0 * full.pageable_gbs);
}

}  // namespace

// Several GPUs (lapack_mg.h): square getrf and potrf of every type spread over two GPUs (BLASOFFLOAD_MULTI_GPU_MIN_N
// lowered to 64 for the test: getrf from 64, potrf from 128), within the same bounds, with padding and guard zones
// untouched, and INFO > 0 or a NaN answered by the CPU with nothing written. On a machine of one GPU, over two shares
// of it (BLASOFFLOAD_DEVICES=0,0).
TYPED_TEST(GpuLapack, SeveralGpusFactorWithinBounds) {
  using T = TypeParam;
  GPU_TEST_PREAMBLE();
  gt::pipe::Knobs knobs(0, nullptr);  // every engine knob cleared, restored at the end
  knobs.set("BLASOFFLOAD_MULTI_GPU_MIN_N", "64");
  knobs.set("BLASOFFLOAD_DEVICES", device_count() >= 2 ? "0,1" : "0,0");
  const int64_t before = gt::multi_gpu_calls().load();
  for (int64_t n : {64, 333, 1000}) check_regular(make<T>(K::kGetrf, n, n, 0, n + 5, 1));
  for (const char* u : {"UNN", "LNN"})
    for (int64_t n : {128, 777}) check_regular(make<T>(K::kPotrf, n, n, 0, n + 3, 1, u));  // potrf: from 2 * 64
  EXPECT_EQ(gt::multi_gpu_calls().load() - before, 7) << "factorizations that ran on two GPUs";
  const int64_t n = 500;
  auto z = make<T>(K::kGetrf, n, n, 0, n + 1, 1);
  for (int64_t i = 0; i < n; ++i) z.a[i + 200 * z.lda] = 0;
  check_cpu_answers(z, "zero column, two GPUs");
  for (const char* u : {"UNN", "LNN"}) {
    auto p = make<T>(K::kPotrf, n, n, 0, n + 2, 1, u);
    p.a[250 + 250 * p.lda] = -1;
    check_cpu_answers(p, "indefinite, two GPUs");
    auto q = make<T>(K::kPotrf, n, n, 0, n + 2, 1, u);
    q.a[u[0] == 'U' ? 10 + 400 * q.lda : 400 + 10 * q.lda] = T(NAN);
    check_cpu_answers(q, "NaN, two GPUs");
  }
}
