// ScaLAPACK's p?getrf, p?potrf and p?geqrf taken over whole: where every process of the grid is on this node and the
// factorization pays on the GPU, the matrix is gathered onto process (0,0), factored there by this library's own
// ?getrf/?potrf/?geqrf (the GPU), and scattered back with ScaLAPACK's pivots or TAU; else ScaLAPACK's own routine
// runs, its local BLAS calls intercepted as always. ScaLAPACK's unblocked panels and per-column messages, not its
// local BLAS, take most of a large factorization's time, which no local GPU call can shorten (docs/multi-gpu.md).
#include "scalapack/takeover.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dispatch/log.h"
#include "dispatch/run.h"
#include "scalapack/dense_copy.h"
#include "scalapack/gather.h"

namespace blasoffload::scalapack {

namespace {

enum Kind { kGetrf, kPotrf, kGeqrf, kNumKinds };
const char* const kKindName[kNumKinds] = {"getrf", "potrf", "geqrf"};

struct Counts {
  std::atomic<std::uint64_t> calls{0}, gathered{0}, on_gpu{0}, fell_back{0};
  std::atomic<std::uint64_t> gather_ns{0}, factor_ns{0}, scatter_ns{0};
};
Counts g_counts[kNumKinds];

// ScaLAPACK's own routine: the next definition after ours.
void* real_routine(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p || is_our_address(p)) p = find_cpu_symbol_verbatim(name, true, true);
  if (!p || is_our_address(p)) {
    log_fatal("blasoffload: %s was called but no ScaLAPACK in the process defines it", name);
    std::abort();
  }
  return p;
}

// The host name's hash, the same on every process of one node.
I node_hash() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::uint32_t h = 2166136261u;
  for (const char* c = host; *c; ++c) h = (h ^ std::uint8_t(*c)) * 16777619u;
  return I(h & 0x7fffffff);
}

std::uint64_t mem_available_bytes() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[128];
  std::uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

// The element-wise maximum of v[0..n) over the grid, on every process (the BLACS combine): false when v[0] > 0 after
// it.
bool combine_max(const Blacs& b, const Layout& L, I* v, I n) {
  const I one = 1, minus1 = -1;
  I ra = 0, ca = 0;
  b.igamx2d(&L.ctxt, "A", " ", &n, &one, v, &n, &ra, &ca, &minus1, &minus1, &minus1);
  return v[0] <= 0;
}

// One call's request, from its arguments (the same on every process of the grid, except the local ones).
struct Request {
  Kind kind;
  char precision;
  char uplo = 'L';
  std::int64_t m, n, ia, ja;  // ia, ja 0-based
  I dtype;                    // DESCA(1)
  Layout L;
  I lwork = 0;  // p?geqrf's LWORK
};

// What a call writes besides sub(A): p?getrf's IPIV, p?geqrf's TAU and WORK(1) (local arrays of the caller).
template <class T>
struct Outputs {
  I* ipiv = nullptr;
  T* tau = nullptr;
  T* work = nullptr;
  I* info = nullptr;
};

// Process (0,0)'s LAPACK call on the dense copy: its pivots, or its TAU and a workspace.
template <class T>
struct RootCall {
  std::vector<I> piv;
  std::vector<T> tau, work;
  I info = 0;
};

// p?geqrf's least LWORK on this process, as ScaLAPACK computes it: NB * (MP0 + NQ0 + NB), MP0 and NQ0 this process's
// rows and columns of sub(A) (which starts on a block boundary here).
std::int64_t geqrf_lwmin(const Request& q) {
  const Layout& L = q.L;
  const std::int64_t mp0 = L.rows_before(q.ia + q.m, L.myrow) - L.rows_before(q.ia, L.myrow);
  const std::int64_t nq0 = L.cols_before(q.ja + q.n, L.mycol) - L.cols_before(q.ja, L.mycol);
  return std::int64_t(L.nb) * (mp0 + nq0 + L.nb);
}

// Why the takeover cannot take this call, from the arguments every process shares (and the settings, which every
// process of one job reads alike); nullptr when it can. Checked before any message, so all processes agree whether
// to vote at all. Unusual but valid calls (a submatrix inside a block) are ScaLAPACK's own.
const char* shared_refusal(const Request& q, bool any_size, std::int64_t min_n) {
  const Layout& L = q.L;
  if (L.nprow < 1 || L.myrow < 0 || L.mycol < 0) return "not a process of a valid grid";
  if (q.dtype != 1) return "not a dense matrix descriptor";
  if (q.m <= 0 || q.n <= 0 || q.ia < 0 || q.ja < 0) return "empty or invalid";
  if (L.mb != L.nb || L.mb < 1) return "blocks not square";
  if (q.ia % L.mb || q.ja % L.nb) return "the submatrix does not start on a block boundary";
  if (q.ia + q.m > L.m_a || q.ja + q.n > L.n_a) return "outside the matrix";
  if (L.rsrc < 0 || L.rsrc >= L.nprow || L.csrc < 0 || L.csrc >= L.npcol) return "invalid source process";
  if (q.kind == kPotrf && (q.m != q.n || (q.uplo != 'L' && q.uplo != 'U'))) return "invalid arguments";
  if (!any_size && std::min(q.m, q.n) < min_n) return "below BLASOFFLOAD_SCALAPACK_MIN_N";
  if (L.nprow * L.npcol == 1) return "a grid of one process";
  return nullptr;
}

template <class D>
struct Tag {
  using type = D;
};

// The LAPACK call process (0,0) makes on the dense copy g (m x n, leading dimension m): f(Tag<D>{}, args) with D
// the ?getrf, ?potrf or ?geqrf descriptor and args its Fortran arguments. `d` holds the integers they point to.
struct Dims {
  I m, n, lda, lwork;
  char uplo;
};
template <class T, class F>
decltype(auto) on_dense_copy(const Request& q, Dims& d, T* g, RootCall<T>& r, F&& f) {
  d = Dims{I(q.m), I(q.n), I(q.m), I(r.work.size()), q.uplo};
  if (q.kind == kGetrf)
    return f(Tag<bo::routines::Getrf<T, I>>{}, std::make_tuple(&d.m, &d.n, g, &d.lda, r.piv.data(), &r.info));
  if (q.kind == kGeqrf)
    return f(Tag<bo::routines::Geqrf<T, I>>{},
             std::make_tuple(&d.m, &d.n, g, &d.lda, r.tau.data(), r.work.data(), &d.lwork, &r.info));
  return f(Tag<bo::routines::Potrf<T, I>>{}, std::make_tuple(&d.uplo, &d.n, g, &d.lda, &r.info, fortran_strlen(1)));
}

// This process's vote: nullptr (yes) or why not. Process (0,0) also asks the policy whether the factorization goes
// to the GPU (unless `forced`), with `g` already mapped so that it asks about the matrix it will factor.
template <class T>
const char* local_refusal(const Request& q, bool forced, T* g, RootCall<T>& r) {
  const Layout& L = q.L;
  if (L.lld < std::max<std::int64_t>(1, L.rows_before(L.m_a, L.myrow))) return "invalid local leading dimension";
  if (q.kind == kGeqrf && q.lwork < geqrf_lwmin(q)) return "LWORK below ScaLAPACK's minimum";
  if (L.myrow != 0 || L.mycol != 0) return nullptr;
  if (!g) return "no memory for the gathered matrix";
  if (forced) return nullptr;
  Dims d;
  const bool gpu = on_dense_copy(q, d, g, r, [&](auto tag, const auto& args) {
    using D = typename decltype(tag)::type;
    policy::Call pc;
    if (D::prepare(args, &pc.call, &r.info) != bo::routines::Prep::kRun) return false;
    pc.call.family = int(Family::std);
    return decide<D>(settings(), pc).target == Target::kGpu;
  });
  return gpu ? nullptr : "the policy keeps the factorization on the CPU";
}

// Process (0,0)'s factorization of the dense copy, as the library's own LAPACK entry runs it (the policy, the GPU, a
// GPU failure's CPU fallback; counted in the summary's table like any such call). True when the GPU ran it.
template <class D>
bool factor_on_root(const typename D::Args& args) {
  if (reentered(LayerOf<D>::value)) return forward<D, Family::std>(args), false;
  CallScope scope(LayerOf<D>::value);
  policy::Call pc;
  I info = 0;
  if (D::prepare(args, &pc.call, &info) != bo::routines::Prep::kRun) return forward<D, Family::std>(args), false;
  pc.call.family = int(Family::std);
  return route<D>(pc, [&] { forward<D, Family::std>(args); });
}

// Runs one p?getrf, p?potrf or p?geqrf: the takeover where it can, else `real()`. Returns after either.
template <class T, class Real>
void take_over(Request q, T* a, Outputs<T> out, Real&& real) {
  // A program's first call through the library may be this one: the settings, the policy and the CPU library's table
  // are set up as for any entry point.
  ensure_initialized(Family::std);
  Counts& c = g_counts[q.kind];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  const Settings& s = settings();
  const bool off = s.scalapack == ScalapackTakeover::kOff || s.mode == Mode::kCpu;
  // gather: every call, factored where this library's policy says (tests); gpu mode: every call, on the GPU.
  const bool forced = s.scalapack == ScalapackTakeover::kGather;
  const bool any_size = forced || s.mode == Mode::kGpu;
  const Blacs* b = off ? nullptr : blacs();
  char name[16];
  std::snprintf(name, sizeof name, "p%c%s", q.precision, kKindName[q.kind]);
  const char* why = off  ? "BLASOFFLOAD_SCALAPACK=off or BLASOFFLOAD_MODE=cpu"
                    : !b ? "no BLACS in the process"
                         : nullptr;
  if (!why) {
    b->gridinfo(&q.L.ctxt, &q.L.nprow, &q.L.npcol, &q.L.myrow, &q.L.mycol);
    why = shared_refusal(q, any_size, s.scalapack_min_n);
  }
  if (why) {
    log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (%s)", name, q.m, q.n, why);
    real();
    return;
  }
  const Layout& L = q.L;
  const bool root = L.myrow == 0 && L.mycol == 0;
  const std::size_t bytes = std::size_t(q.m) * std::size_t(q.n) * sizeof(T);
  const std::size_t k = std::size_t(std::min(q.m, q.n));
  DenseCopy dense;
  RootCall<T> r;
  if (root && bytes <= mem_available_bytes() / 5 * 4) {
    dense.create(bytes);
    if (q.kind == kGetrf) r.piv.resize(k);
    if (q.kind == kGeqrf) {
      // LAPACK's blocked QR wants n times its block size (32 in the reference ILAENV; 64 covers the CPU libraries').
      r.tau.resize(k);
      r.work.resize(std::size_t(q.n) * 64);
    }
  }
  T* g = static_cast<T*>(dense.data());
  // The vote: every process's own reasons, and one node for all (the GPU that factors is this node's, and the
  // copies go through its memory). One combine of three integers.
  const char* mine = local_refusal<T>(q, forced, g, r);
  const I hash = node_hash();
  I v[3] = {mine ? 1 : 0, hash, -hash};
  const I one = 1, zero = 0;
  if (!combine_max(*b, L, v, 3) || v[1] != -v[2]) {
    why = mine ? mine : v[0] ? "another process of the grid declined" : "the grid spans several nodes";
    log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (%s)", name, q.m, q.n, why);
    real();
    return;
  }
  // Where every process maps the copy, each copies its own part in and out at once; else messages through (0,0).
  const char* copy = config_value("BLASOFFLOAD_TEST_SCALAPACK_COPY");
  I where[2] = {dense.pid(), copy && std::strcmp(copy, "messages") == 0 ? -1 : dense.fd()};
  const I two = 2;
  if (root)
    b->igebs2d(&L.ctxt, "A", " ", &two, &one, where, &two);
  else
    b->igebr2d(&L.ctxt, "A", " ", &two, &one, where, &two, &zero, &zero);
  if (!root && where[1] >= 0 && dense.attach(where[0], where[1], bytes)) g = static_cast<T*>(dense.data());
  I unmapped[1] = {where[1] < 0 || !g ? 1 : 0};
  const bool shared = combine_max(*b, L, unmapped, 1);
  if (!shared && !root) dense.release();
  const Part part = q.kind != kPotrf ? Part::kAll : q.uplo == 'L' ? Part::kLower : Part::kUpper;
  const std::uint64_t t0 = now_ns();
  if (shared) {
    copy_own_part<T>(L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, true);
    I done[1] = {0};
    combine_max(*b, L, done, 1);  // every part is in
  } else {
    move_submatrix<T>(*b, L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, true);
  }
  const std::uint64_t t1 = now_ns();
  // Process (0,0) factors with this library's own routine (its policy, the GPU, a GPU failure's CPU fallback), then
  // says whether that succeeded and where it ran (0: INFO != 0, 1: the CPU, 2: the GPU): INFO > 0 (a zero pivot, a
  // minor not positive definite) leaves the call to ScaLAPACK, whose INFO and partial factorization the program then
  // gets exactly, with nothing of ours written.
  I status = 0;
  if (root) {
    Dims d;
    const bool gpu = on_dense_copy(q, d, g, r, [](auto tag, const auto& args) {
      using D = typename decltype(tag)::type;
      return factor_on_root<D>(args);
    });
    status = r.info != 0 ? 0 : gpu ? 2 : 1;
    b->igebs2d(&L.ctxt, "A", " ", &one, &one, &status, &one);
  } else {
    b->igebr2d(&L.ctxt, "A", " ", &one, &one, &status, &one, &zero, &zero);
  }
  const std::uint64_t t2 = now_ns();
  if (!status) {
    log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (the gathered factorization returned INFO = %d)", name,
             q.m, q.n, int(r.info));
    c.fell_back.fetch_add(1, std::memory_order_relaxed);
    dense.release();
    real();
    return;
  }
  if (shared) {
    copy_own_part<T>(L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, false);
    I done[1] = {0};
    combine_max(*b, L, done, 1);  // every part is out: (0,0) may unmap
  } else {
    move_submatrix<T>(*b, L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, false);
  }
  dense.release();
  const I mn = I(k);
  if (q.kind == kGetrf) {
    // ScaLAPACK's pivots: IPIV(local row of global row r) = the global row it was swapped with, on every process
    // column, for the rows ia .. ia + min(m, n) - 1.
    r.piv.resize(k);
    if (root)
      b->igebs2d(&L.ctxt, "A", " ", &mn, &one, r.piv.data(), &mn);
    else
      b->igebr2d(&L.ctxt, "A", " ", &mn, &one, r.piv.data(), &mn, &zero, &zero);
    for (std::int64_t i = 0; i < mn; ++i) {
      const std::int64_t gr = q.ia + i;
      if (L.row_owner(gr) == L.myrow) out.ipiv[L.local_row(gr)] = I(r.piv[std::size_t(i)] + q.ia);
    }
  }
  if (q.kind == kGeqrf) {
    // ScaLAPACK's TAU: TAU(local column of global column c) for the columns ja .. ja + min(m, n) - 1, on every
    // process row; WORK(1) the least LWORK, as ScaLAPACK leaves it.
    r.tau.resize(k);
    constexpr int t = type_index<T>();
    if (root)
      b->gebs2d[t](&L.ctxt, "A", " ", &mn, &one, r.tau.data(), &mn);
    else
      b->gebr2d[t](&L.ctxt, "A", " ", &mn, &one, r.tau.data(), &mn, &zero, &zero);
    for (std::int64_t j = 0; j < mn; ++j) {
      const std::int64_t gc = q.ja + j;
      if (L.col_owner(gc) == L.mycol) out.tau[L.local_col(gc)] = r.tau[std::size_t(j)];
    }
    out.work[0] = T(double(geqrf_lwmin(q)));
  }
  *out.info = 0;
  const std::uint64_t t3 = now_ns();
  c.gathered.fetch_add(1, std::memory_order_relaxed);
  if (status == 2) c.on_gpu.fetch_add(1, std::memory_order_relaxed);
  c.gather_ns.fetch_add(t1 - t0, std::memory_order_relaxed);
  c.factor_ns.fetch_add(t2 - t1, std::memory_order_relaxed);
  c.scatter_ns.fetch_add(t3 - t2, std::memory_order_relaxed);
  log_call("%s m=%" PRId64 " n=%" PRId64
           ": gathered onto process (0,0) of the %dx%d grid (blocks of %d, %s), factored on its %s: "
           "gather %.3f s, factor %.3f s, scatter %.3f s",
           name, q.m, q.n, int(L.nprow), int(L.npcol), int(L.nb), shared ? "shared memory" : "messages",
           status == 2 ? "GPU" : "CPU", (t1 - t0) * 1e-9, (t2 - t1) * 1e-9, (t3 - t2) * 1e-9);
}

Request request(Kind kind, char precision, const I* m, const I* n, const I* ia, const I* ja, const I* desc) {
  Request q{kind, precision, 'L', *m, *n, std::int64_t(*ia) - 1, std::int64_t(*ja) - 1, desc[0], {}};
  q.L = Layout{desc[1], desc[2], desc[3], desc[4], desc[5], desc[6], desc[7], desc[8], -1, -1, -1, -1};
  return q;
}

}  // namespace

std::string summary() {
  std::string out;
  for (int k = 0; k < kNumKinds; ++k) {
    const Counts& c = g_counts[k];
    const std::uint64_t calls = c.calls.load(), gathered = c.gathered.load();
    if (!calls) continue;
    char line[360];
    std::snprintf(line, sizeof line,
                  "  ScaLAPACK p?%s: %" PRIu64 " calls, %" PRIu64 " gathered onto process (0,0) (%" PRIu64
                  " factored on its GPU; gather %.3f s, factor %.3f s, scatter %.3f s), %" PRIu64
                  " left to ScaLAPACK%s\n",
                  kKindName[k], calls, gathered, c.on_gpu.load(), c.gather_ns.load() * 1e-9, c.factor_ns.load() * 1e-9,
                  c.scatter_ns.load() * 1e-9, calls - gathered, c.fell_back.load() ? " (some after INFO > 0)" : "");
    out += line;
  }
  return out;
}

}  // namespace blasoffload::scalapack

using namespace blasoffload;
using namespace blasoffload::scalapack;

#define BO_SCALAPACK_EXPORT extern "C" __attribute__((visibility("default")))

// p?getrf_(M, N, A, IA, JA, DESCA, IPIV, INFO)
#define BO_SCALAPACK_getrf(x, T)                                                                                \
  BO_SCALAPACK_EXPORT void p##x##getrf_(const I* m, const I* n, T* a, const I* ia, const I* ja, const I* desca, \
                                        I* ipiv, I* info) {                                                     \
    using Fn = void(const I*, const I*, T*, const I*, const I*, const I*, I*, I*);                              \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "getrf_"));                                     \
    take_over<T>(request(kGetrf, #x[0], m, n, ia, ja, desca), a, Outputs<T>{ipiv, nullptr, nullptr, info},      \
                 [&] { real(m, n, a, ia, ja, desca, ipiv, info); });                                            \
  }
// p?potrf_(UPLO, N, A, IA, JA, DESCA, INFO)
#define BO_SCALAPACK_potrf(x, T)                                                                                      \
  BO_SCALAPACK_EXPORT void p##x##potrf_(const char* uplo, const I* n, T* a, const I* ia, const I* ja, const I* desca, \
                                        I* info, fortran_strlen uplo_len) {                                           \
    using Fn = void(const char*, const I*, T*, const I*, const I*, const I*, I*, fortran_strlen);                     \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "potrf_"));                                           \
    Request q = request(kPotrf, #x[0], n, n, ia, ja, desca);                                                          \
    q.uplo = char(*uplo == 'l' ? 'L' : *uplo == 'u' ? 'U' : *uplo);                                                   \
    take_over<T>(q, a, Outputs<T>{nullptr, nullptr, nullptr, info},                                                   \
                 [&] { real(uplo, n, a, ia, ja, desca, info, uplo_len); });                                           \
  }
// p?geqrf_(M, N, A, IA, JA, DESCA, TAU, WORK, LWORK, INFO): a workspace query (LWORK = -1) is ScaLAPACK's.
#define BO_SCALAPACK_geqrf(x, T)                                                                                \
  BO_SCALAPACK_EXPORT void p##x##geqrf_(const I* m, const I* n, T* a, const I* ia, const I* ja, const I* desca, \
                                        T* tau, T* work, const I* lwork, I* info) {                             \
    using Fn = void(const I*, const I*, T*, const I*, const I*, const I*, T*, T*, const I*, I*);                \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "geqrf_"));                                     \
    if (*lwork == -1) return real(m, n, a, ia, ja, desca, tau, work, lwork, info);                              \
    Request q = request(kGeqrf, #x[0], m, n, ia, ja, desca);                                                    \
    q.lwork = *lwork;                                                                                           \
    take_over<T>(q, a, Outputs<T>{nullptr, tau, work, info},                                                    \
                 [&] { real(m, n, a, ia, ja, desca, tau, work, lwork, info); });                                \
  }
#define BO_SCALAPACK_ENTRY(x, name, T) BO_SCALAPACK_##name(x, T)
#include "scalapack/scalapack_list.h"
#undef BO_SCALAPACK_ENTRY
