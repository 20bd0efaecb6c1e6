// ScaLAPACK's p?getrf and p?potrf taken over whole: where every process of the grid is on this node and the
// factorization pays on the GPU, the matrix is gathered onto process (0,0), factored there by this library's own
// ?getrf/?potrf (the GPU), and scattered back with ScaLAPACK's pivots; else ScaLAPACK's own routine runs, its local
// BLAS calls intercepted as always. ScaLAPACK's unblocked panels and per-column messages, not its local BLAS, take
// most of a large factorization's time, which no local GPU call can shorten (docs/multi-gpu.md).
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

enum Kind { kGetrf, kPotrf, kNumKinds };
const char* const kKindName[kNumKinds] = {"getrf", "potrf"};

struct Counts {
  std::atomic<std::uint64_t> calls{0}, gathered{0}, fell_back{0};
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
};

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
// the ?getrf or ?potrf descriptor and args its Fortran arguments. `d` holds the integers they point to.
struct Dims {
  I m, n, lda;
  char uplo;
};
template <class T, class F>
decltype(auto) on_dense_copy(const Request& q, Dims& d, T* g, I* ipiv, I* info, F&& f) {
  d = Dims{I(q.m), I(q.n), I(q.m), q.uplo};
  if (q.kind == kGetrf) return f(Tag<bo::routines::Getrf<T, I>>{}, std::make_tuple(&d.m, &d.n, g, &d.lda, ipiv, info));
  return f(Tag<bo::routines::Potrf<T, I>>{}, std::make_tuple(&d.uplo, &d.n, g, &d.lda, info, fortran_strlen(1)));
}

// This process's vote: nullptr (yes) or why not. Process (0,0) also asks the policy whether the factorization goes
// to the GPU (unless `forced`), with `g` already mapped so that it asks about the matrix it will factor.
template <class T>
const char* local_refusal(const Request& q, bool forced, T* g, I* ipiv, I* info) {
  const Layout& L = q.L;
  if (L.lld < std::max<std::int64_t>(1, L.rows_before(L.m_a, L.myrow))) return "invalid local leading dimension";
  if (L.myrow != 0 || L.mycol != 0) return nullptr;
  if (!g) return "no memory for the gathered matrix";
  if (forced) return nullptr;
  Dims d;
  const bool gpu = on_dense_copy(q, d, g, ipiv, info, [&](auto tag, const auto& args) {
    using D = typename decltype(tag)::type;
    policy::Call pc;
    if (D::prepare(args, &pc.call, info) != bo::routines::Prep::kRun) return false;
    pc.call.family = int(Family::std);
    return decide<D>(settings(), pc).target == Target::kGpu;
  });
  return gpu ? nullptr : "the policy keeps the factorization on the CPU";
}

// Runs one p?getrf or p?potrf: the takeover where it can, else `real()`. Returns after either.
template <class T, class Real>
void take_over(Request q, T* a, I* ipiv, I* info, Real&& real) {
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
  DenseCopy dense;
  std::vector<I> piv;
  I root_info = 0;
  if (root && bytes <= mem_available_bytes() / 5 * 4) {
    dense.create(bytes);
    piv.resize(std::size_t(std::min(q.m, q.n)));
  }
  T* g = static_cast<T*>(dense.data());
  // The vote: every process's own reasons, and one node for all (the GPU that factors is this node's, and the
  // copies go through its memory). One combine of three integers.
  const char* mine = local_refusal<T>(q, forced, g, piv.data(), &root_info);
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
  const Part part = q.kind == kGetrf ? Part::kAll : q.uplo == 'L' ? Part::kLower : Part::kUpper;
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
  // says whether that succeeded: INFO > 0 (a zero pivot, a minor not positive definite) leaves the call to ScaLAPACK,
  // whose INFO and partial factorization the program then gets exactly, with nothing of ours written.
  I status = 0;
  if (root) {
    Dims d;
    on_dense_copy(q, d, g, piv.data(), &root_info, [](auto tag, const auto& args) {
      using D = typename decltype(tag)::type;
      fortran_entry<D, Family::std>(args);
    });
    status = root_info == 0 ? 1 : 0;
    b->igebs2d(&L.ctxt, "A", " ", &one, &one, &status, &one);
  } else {
    b->igebr2d(&L.ctxt, "A", " ", &one, &one, &status, &one, &zero, &zero);
  }
  const std::uint64_t t2 = now_ns();
  if (!status) {
    log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (the gathered factorization returned INFO = %d)", name,
             q.m, q.n, int(root_info));
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
  if (q.kind == kGetrf) {
    // ScaLAPACK's pivots: IPIV(local row of global row r) = the global row it was swapped with, on every process
    // column, for the rows ia .. ia + min(m, n) - 1.
    const I mn = I(std::min(q.m, q.n));
    piv.resize(std::size_t(mn));
    if (root)
      b->igebs2d(&L.ctxt, "A", " ", &mn, &one, piv.data(), &mn);
    else
      b->igebr2d(&L.ctxt, "A", " ", &mn, &one, piv.data(), &mn, &zero, &zero);
    for (std::int64_t r = 0; r < mn; ++r) {
      const std::int64_t gr = q.ia + r;
      if (L.row_owner(gr) == L.myrow) ipiv[L.local_row(gr)] = I(piv[std::size_t(r)] + q.ia);
    }
  }
  *info = 0;
  const std::uint64_t t3 = now_ns();
  c.gathered.fetch_add(1, std::memory_order_relaxed);
  c.gather_ns.fetch_add(t1 - t0, std::memory_order_relaxed);
  c.factor_ns.fetch_add(t2 - t1, std::memory_order_relaxed);
  c.scatter_ns.fetch_add(t3 - t2, std::memory_order_relaxed);
  log_call("%s m=%" PRId64 " n=%" PRId64
           ": gathered onto process (0,0) of the %dx%d grid (blocks of %d, %s): "
           "gather %.3f s, factor %.3f s, scatter %.3f s",
           name, q.m, q.n, int(L.nprow), int(L.npcol), int(L.nb), shared ? "shared memory" : "messages",
           (t1 - t0) * 1e-9, (t2 - t1) * 1e-9, (t3 - t2) * 1e-9);
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
    char line[320];
    std::snprintf(line, sizeof line,
                  "  ScaLAPACK p?%s: %" PRIu64 " calls, %" PRIu64
                  " gathered onto process (0,0) (gather %.3f s, "
                  "factor %.3f s, scatter %.3f s), %" PRIu64 " left to ScaLAPACK%s\n",
                  kKindName[k], calls, gathered, c.gather_ns.load() * 1e-9, c.factor_ns.load() * 1e-9,
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
    take_over<T>(request(kGetrf, #x[0], m, n, ia, ja, desca), a, ipiv, info,                                    \
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
    take_over<T>(q, a, nullptr, info, [&] { real(uplo, n, a, ia, ja, desca, info, uplo_len); });                      \
  }
#define BO_SCALAPACK_ENTRY(x, name, T) BO_SCALAPACK_##name(x, T)
#include "scalapack/scalapack_list.h"
#undef BO_SCALAPACK_ENTRY
