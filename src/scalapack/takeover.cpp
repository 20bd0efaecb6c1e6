// ScaLAPACK's factorizations and solvers (p?getrf, p?potrf, p?geqrf, p?gesv, p?posv, p?gels: request.h) taken over
// whole: where every process of the grid is on this node and the call pays on the GPU, the matrix (and the right-hand
// sides) are gathered onto process (0,0), factored (and solved) there by this library's own LAPACK routine (the GPU),
// and scattered back with ScaLAPACK's pivots or TAU; else ScaLAPACK's own routine runs, its local BLAS calls
// intercepted as always. ScaLAPACK's unblocked panels and per-column messages, not its local BLAS, take most of a large
// factorization's time, which no local GPU call can shorten (docs/scalapack.md).
#include "scalapack/takeover.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dispatch/log.h"
#include "dispatch/run.h"
#include "offload/module_loader.h"
#include "scalapack/dense_copy.h"
#include "scalapack/device_copy.h"
#include "scalapack/gather.h"
#include "scalapack/request.h"

namespace blasoffload::scalapack {

namespace {

struct Counts {
  std::atomic<std::uint64_t> calls{0}, gathered{0}, on_gpu{0}, through_gpu{0}, fell_back{0};
  // setup: from the shared checks to the gather (the vote, the GPUs' start-up where the call waits on it, the copies'
  // memory, an attempt the GPU declined); gather, factor and scatter: the attempt that finished.
  std::atomic<std::uint64_t> setup_ns{0}, gather_ns{0}, factor_ns{0}, scatter_ns{0};
};
Counts g_counts[kNumKinds];

// Set while ScaLAPACK's own driver runs after the driver's gathered call found INFO > 0: its factorization (our
// p?getrf, p?potrf, p?geqrf again) would find the same and is left to ScaLAPACK at once. Every process of the grid
// sets it alike, since all fell back together.
thread_local bool t_driver_failed = false;

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

// What a call writes besides sub(A): IPIV, TAU, WORK(1), sub(B) (local arrays of the caller) and INFO.
template <class T>
struct Outputs {
  I* ipiv = nullptr;
  T* tau = nullptr;
  T* work = nullptr;
  T* b = nullptr;
  I* info = nullptr;
};

// This process's vote: nullptr (yes) or why not. Process (0,0) also asks the policy whether the factorization goes
// to the GPU (unless `forced`), with `g` already mapped so that it asks about the matrix it will factor.
template <class T>
const char* local_refusal(const Request& q, bool forced, T* g, T* gb, RootCall<T>& r) {
  const Layout& L = q.L;
  auto lld_ok = [](const Layout& x) { return x.lld >= std::max<std::int64_t>(1, x.rows_before(x.m_a, x.myrow)); };
  if (!lld_ok(L) || (has_rhs(q.kind) && !lld_ok(q.b.L))) return "invalid local leading dimension";
  if (q.lwork < q.lwmin) return "LWORK below ScaLAPACK's minimum";
  if (L.myrow != 0 || L.mycol != 0) return nullptr;
  if (!g) return "no memory for the gathered matrix";
  if (forced) return nullptr;
  Dims d;
  r.gpu = on_dense_copy(q, d, g, gb, r, [&](auto tag, const auto& args) {
    using D = typename decltype(tag)::type;
    policy::Call pc;
    if (D::prepare(args, &pc.call, &r.info) != bo::routines::Prep::kRun) return false;
    pc.call.family = int(Family::std);
    return decide<D>(settings(), pc).target == Target::kGpu;
  });
  return r.gpu ? nullptr : "the policy keeps the factorization on the CPU";
}

// How the copies go: straight to (0,0)'s GPU where it factors there and every process opens that memory
// (device_copy.h); else through host memory every process maps (dense_copy.h); else by messages through (0,0).
enum class Transport { kDevice, kShared, kMessages };
const char* const kTransportName[] = {"its GPU's memory", "shared memory", "messages"};

// Gathers (into_g) or scatters sub(A) and, for a driver, sub(B) between the local arrays and their dense copies g and
// gb: each process its own part where all map the copies, else by messages through (0,0). False on every process
// when a device copy failed on one of them.
template <class T>
bool move(const Blacs& b, const Request& q, Transport how, const DeviceCopy& dev, Part part, T* a, T* g, T* bl, T* gb,
          bool into_g) {
  const Layout& L = q.L;
  if (how == Transport::kMessages) {
    move_submatrix<T>(b, L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, into_g);
    if (has_rhs(q.kind))
      move_submatrix<T>(b, q.b.L, q.b.i0, q.b.j0, q.b.rows, q.b.cols, bl, gb, q.b.rows, Part::kAll, into_g);
    return true;
  }
  I failed[1] = {0};
  if (how == Transport::kDevice) {
    failed[0] = !copy_own_part_device<T>(dev, L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, into_g) ||
                (has_rhs(q.kind) && !copy_own_part_device<T>(dev, q.b.L, q.b.i0, q.b.j0, q.b.rows, q.b.cols, bl, gb,
                                                             q.b.rows, Part::kAll, into_g));
  } else {
    copy_own_part<T>(L, q.ia, q.ja, q.m, q.n, a, g, q.m, part, into_g);
    if (has_rhs(q.kind))
      copy_own_part<T>(q.b.L, q.b.i0, q.b.j0, q.b.rows, q.b.cols, bl, gb, q.b.rows, Part::kAll, into_g);
  }
  return combine_max(b, L, failed, 1);  // every part is in (out: (0,0) may unmap)
}

// One attempt's copies (Transport): (0,0) says what the others may open (its memfd: pid and descriptor, -1 for
// messages; where it offers its GPU's memory, that copy's handle), every process opens what it can, and one combine
// picks the way all take. `g` becomes this process's view of the copy (nullptr where it has none). False when (0,0)
// has no copy at all (a retry that found no memory for the host copy).
template <class T>
bool open_copies(const Blacs& b, const Layout& L, bool root, bool offer_device, bool messages, std::size_t bytes,
                 DenseCopy& dense, DeviceCopy& dev, T*& g, Transport& how) {
  I where[3 + kHandleInts] = {dense.pid(), messages ? -1 : dense.fd(), 0};
  if (root && offer_device && dev.create(bytes, where + 3)) where[2] = 1;
  broadcast_from_root(b, &L.ctxt, root, where, I(3 + kHandleInts));
  // Another process opens the device copy where its GPU is up already, or where its part is large enough to pay for
  // starting it: about 256 MiB a process went through shared host memory (gather and scatter) in a GPU's start-up
  // time (0.2-0.4 s) on the H200's 4 ranks; below that, the host copy for every process. A call long enough to wait for
  // (0,0)'s start-up waited in the vote, so (0,0)'s GPU is up by now. Starting the others' GPUs before the vote,
  // beside (0,0)'s, gained nothing measurable: CUDA's initialisations in several processes at once each took longer
  // (pdgesv n = 32768 on 2 ranks of two H200s: 0.38-0.60 s each at once, against 0.23-0.27 s one after the other).
  const std::size_t part_bytes = bytes / std::size_t(L.nprow * L.npcol);
  if (!root && where[2] && (gpu_load_state() == GpuLoad::kReady || part_bytes >= (std::size_t(256) << 20)))
    dev.attach(where + 3);
  if (!root && where[1] >= 0 && dense.attach(where[0], where[1], bytes)) g = static_cast<T*>(dense.data());
  I failed[3] = {where[2] && !dev.data() ? 1 : 0, where[1] < 0 || !g ? 1 : 0, root && !g ? 1 : 0};
  combine_max(b, L, failed, 3);
  if (failed[2]) return false;
  how = where[2] && !failed[0] ? Transport::kDevice : !failed[1] ? Transport::kShared : Transport::kMessages;
  // (0,0) frees an unused device copy after the gather, when every other process has closed it.
  if (how != Transport::kDevice && !root) dev.release();
  if (how == Transport::kDevice) dense.release(), g = static_cast<T*>(dev.data());
  if (how == Transport::kMessages && !root) dense.release(), g = nullptr;
  return true;
}

// Process (0,0)'s LAPACK call on the device copy, in place (the module's lapack_in_place): its status, the call
// counted in the summary's table as the library's own entry counts it.
template <class T>
int factor_in_place(const Request& q, const DeviceCopy& dev, T* g, T* gb, RootCall<T>& r) {
  Dims d;
  return on_dense_copy(q, d, g, gb, r, [&](auto tag, const auto& args) {
    using D = typename decltype(tag)::type;
    policy::Call pc;
    if (D::prepare(args, &pc.call, &r.info) != bo::routines::Prep::kRun) return int(BO_CUDA_UNSUPPORTED);
    pc.call.family = int(Family::std);
    const std::uint64_t t0 = now_ns();
    const int st = dev.module()->lapack_in_place(&pc.call);
    if (st == BO_CUDA_OK)
      count_gpu_call(pc.call, now_ns() - t0);
    else if (st != BO_CUDA_CPU_ANSWERS)
      note_gpu_failure(routine_name(Routine(D::kRoutine)), st);
    return st;
  });
}

// Runs one call of a routine of request.h: the takeover where it can, else `real()`. Returns after either.
// `query_lwmin()` answers this process's least LWORK where ScaLAPACK must be asked (?gels); it is called on every
// process alike, once the shared checks passed.
template <class T, class Real, class Query>
void take_over(Request q, T* a, Outputs<T> out, Real&& real, Query&& query_lwmin) {
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
  const char* why = off               ? "BLASOFFLOAD_SCALAPACK=off or BLASOFFLOAD_MODE=cpu"
                    : !b              ? "no BLACS in the process"
                    : t_driver_failed ? "the calling driver's gathered call found INFO > 0"
                                      : nullptr;
  if (!why) {
    b->gridinfo(&q.L.ctxt, &q.L.nprow, &q.L.npcol, &q.L.myrow, &q.L.mycol);
    q.b.L.nprow = q.L.nprow, q.b.L.npcol = q.L.npcol, q.b.L.myrow = q.L.myrow, q.b.L.mycol = q.L.mycol;
    why = shared_refusal(q, bo::routines::kIsComplex<T>, any_size, s.scalapack_min_n);
  }
  if (why) {
    log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (%s)", name, q.m, q.n, why);
    real();
    return;
  }
  if (q.kind == kGeqrf) q.lwmin = geqrf_lwmin(q);
  if (q.kind == kGels) q.lwmin = query_lwmin();
  const Layout& L = q.L;
  const bool root = L.myrow == 0 && L.mycol == 0;
  const std::size_t a_elems = std::size_t(q.m) * std::size_t(q.n);
  const std::size_t b_elems = std::size_t(q.b.rows) * std::size_t(q.b.cols);
  const std::size_t bytes = (a_elems + b_elems) * sizeof(T);
  // The in-place path indexes each matrix by int (cuSOLVER's interface); a larger one takes the host copy, whose call
  // has cuSOLVERMg.
  const bool fits = a_elems <= std::size_t(INT32_MAX) && b_elems <= std::size_t(INT32_MAX);
  const std::size_t k = std::size_t(std::min(q.m, q.n));
  const std::uint64_t ts = now_ns();  // the set-up's start (Counts)
  DenseCopy dense;
  RootCall<T> r;
  if (root && bytes <= mem_available_bytes() / 5 * 4) {
    dense.create(bytes);
    size_root_call(q, r);
  }
  T* g = static_cast<T*>(dense.data());
  // The vote: every process's own reasons, and one node for all (the GPU that factors is this node's, and the
  // copies go through its memory). One combine of three integers.
  const char* mine = local_refusal<T>(q, forced, g, g ? g + a_elems : nullptr, r);
  const I hash = node_hash();
  I v[3] = {mine ? 1 : 0, hash, -hash};
  if (!combine_max(*b, L, v, 3) || v[1] != -v[2]) {
    why = mine ? mine : v[0] ? "another process of the grid declined" : "the grid spans several nodes";
    log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (%s)", name, q.m, q.n, why);
    real();
    return;
  }
  // The copies, the factorization and the copies back: through the GPU's memory where it can, and once more through
  // host memory where the GPU declined its copy.
  const Part part = !is_cholesky(q.kind) ? Part::kAll : q.uplo == 'L' ? Part::kLower : Part::kUpper;
  Transport how = Transport::kShared;
  std::uint64_t t0 = 0, t1 = 0, t2 = 0;
  I status = 0;
  for (bool device_ok = true;; device_ok = false) {
    if (!device_ok) {
      if (root && !dense.data()) dense.create(bytes);
      g = root ? static_cast<T*>(dense.data()) : nullptr;
    }
    DeviceCopy dev;
    const bool offer_device = r.gpu && fits && device_ok && s.scalapack_copy == ScalapackCopy::kAuto;
    if (!open_copies<T>(*b, L, root, offer_device, s.scalapack_copy == ScalapackCopy::kMessages, bytes, dense, dev, g,
                        how)) {
      log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (no memory for the gathered matrix)", name, q.m, q.n);
      c.fell_back.fetch_add(1, std::memory_order_relaxed);
      dense.release();
      real();
      return;
    }
    // The device copy's end: the others close it, then (0,0) frees it.
    auto end_device = [&] {
      if (how != Transport::kDevice) return;
      if (!root) dev.release();
      I done[1] = {0};
      combine_max(*b, L, done, 1);
      dev.release();
    };
    T* gb = g ? g + a_elems : nullptr;
    t0 = now_ns();
    const bool gathered = move<T>(*b, q, how, dev, part, a, g, out.b, gb, true);
    if (how != Transport::kDevice) dev.release();
    t1 = now_ns();
    // Process (0,0) factors (and solves): on the device copy in place, or with this library's own routine on the host
    // copy (its policy, the GPU, a GPU failure's CPU fallback). Then it says whether that succeeded, where it ran (0:
    // not done, 1: the CPU, 2: the GPU), INFO, and the module's status where the GPU did not finish (0: INFO != 0).
    // On the host copy, INFO > 0 (a zero pivot, a minor not positive definite, a rank-deficient triangle) leaves the
    // call to ScaLAPACK, whose INFO and partial results the program then gets exactly, with nothing of ours written.
    I result[3] = {0, 0, 0};
    if (root && gathered) {
      if (how == Transport::kDevice) {
        const int st = factor_in_place(q, dev, g, gb, r);
        result[0] = st == BO_CUDA_OK ? 2 : 0;
        result[1] = r.info;
        result[2] = st;
      } else {
        Dims d;
        // The library's own entry (the policy, the GPU, a GPU failure's CPU fallback; counted in the summary's table).
        const bool gpu = on_dense_copy(q, d, g, gb, r, [](auto tag, const auto& args) {
          using D = typename decltype(tag)::type;
          bool on_gpu = false;
          fortran_entry<D, Family::std, true>(args, &on_gpu);
          return on_gpu;
        });
        result[0] = r.info != 0 ? 0 : gpu ? 2 : 1;
        result[1] = r.info;
      }
    }
    if (gathered) broadcast_from_root(*b, &L.ctxt, root, result, I(3));
    status = result[0];
    t2 = now_ns();
    if (how == Transport::kDevice && !status) {
      // The GPU declined its copy (INFO > 0, non-finite values, a magnitude LAPACK's driver scales), failed on it, or a
      // copy to it failed: the input is intact in every local array, so once more through the host copy, where the
      // library's own routine has the CPU LAPACK answer (its INFO, its scaling) as for one process, a GPU failure's
      // fallback included.
      log_call("%s m=%" PRId64 " n=%" PRId64 ": the GPU declined its copy (%s); gathered again through host memory",
               name, q.m, q.n,
               !gathered                            ? "a copy to it failed"
               : result[2] == BO_CUDA_CPU_ANSWERS   ? "INFO > 0, non-finite values or a scaled magnitude"
               : result[2] == BO_CUDA_OUT_OF_MEMORY ? "out of memory"
                                                    : "a failure");
      end_device();
      continue;
    }
    if (!status) {
      char why[64];
      std::snprintf(why, sizeof why, "the gathered call returned INFO = %d", int(result[1]));
      log_call("%s m=%" PRId64 " n=%" PRId64 ": left to ScaLAPACK (%s)", name, q.m, q.n, why);
      c.fell_back.fetch_add(1, std::memory_order_relaxed);
      end_device();
      dense.release();
      const bool was = t_driver_failed;
      t_driver_failed = has_rhs(q.kind);
      real();
      t_driver_failed = was;
      return;
    }
    if (!move<T>(*b, q, how, dev, part, a, g, out.b, gb, false)) {
      // Some local arrays are partly the factors already: neither they nor ScaLAPACK can finish the call.
      log_fatal("blasoffload: fatal: %s: copying the factors back from the GPU failed; aborting", name);
      std::abort();
    }
    end_device();
    dense.release();
    break;
  }
  const I mn = I(k);
  if (has_pivots(q.kind)) {
    // ScaLAPACK's pivots: IPIV(local row of global row r) = the global row it was swapped with, on every process
    // column, for the rows ia .. ia + min(m, n) - 1.
    r.piv.resize(k);
    broadcast_from_root(*b, &L.ctxt, root, r.piv.data(), mn);
    for (std::int64_t i = 0; i < mn; ++i) {
      const std::int64_t gr = q.ia + i;
      if (L.row_owner(gr) == L.myrow) out.ipiv[L.local_row(gr)] = I(r.piv[std::size_t(i)] + q.ia);
    }
  }
  if (q.kind == kGeqrf) {
    // ScaLAPACK's TAU: TAU(local column of global column c) for the columns ja .. ja + min(m, n) - 1, on every
    // process row.
    r.tau.resize(k);
    broadcast_from_root(*b, &L.ctxt, root, r.tau.data(), mn);
    for (std::int64_t j = 0; j < mn; ++j) {
      const std::int64_t gc = q.ja + j;
      if (L.col_owner(gc) == L.mycol) out.tau[L.local_col(gc)] = r.tau[std::size_t(j)];
    }
  }
  if (out.work) out.work[0] = T(double(q.lwmin));  // WORK(1): the least LWORK, as ScaLAPACK leaves it
  *out.info = 0;
  const std::uint64_t t3 = now_ns();
  c.gathered.fetch_add(1, std::memory_order_relaxed);
  if (status == 2) c.on_gpu.fetch_add(1, std::memory_order_relaxed);
  if (how == Transport::kDevice) c.through_gpu.fetch_add(1, std::memory_order_relaxed);
  c.setup_ns.fetch_add(t0 - ts, std::memory_order_relaxed);
  c.gather_ns.fetch_add(t1 - t0, std::memory_order_relaxed);
  c.factor_ns.fetch_add(t2 - t1, std::memory_order_relaxed);
  c.scatter_ns.fetch_add(t3 - t2, std::memory_order_relaxed);
  log_call("%s m=%" PRId64 " n=%" PRId64
           ": gathered onto process (0,0) of the %dx%d grid (blocks of %d, %s), factored on its %s: "
           "set-up %.3f s, gather %.3f s, factor %.3f s, scatter %.3f s",
           name, q.m, q.n, int(L.nprow), int(L.npcol), int(L.nb), kTransportName[int(how)], status == 2 ? "GPU" : "CPU",
           (t0 - ts) * 1e-9, (t1 - t0) * 1e-9, (t2 - t1) * 1e-9, (t3 - t2) * 1e-9);
}

auto no_query = [] { return std::int64_t(0); };

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
                  " factored on its GPU, %" PRIu64
                  " copied through its memory; set-up %.3f s, gather %.3f s, factor %.3f s, "
                  "scatter %.3f s), %" PRIu64 " left to ScaLAPACK%s\n",
                  kKindName[k], calls, gathered, c.on_gpu.load(), c.through_gpu.load(), c.setup_ns.load() * 1e-9,
                  c.gather_ns.load() * 1e-9, c.factor_ns.load() * 1e-9, c.scatter_ns.load() * 1e-9, calls - gathered,
                  c.fell_back.load() ? " (some after INFO > 0)" : "");
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
    take_over<T>(                                                                                               \
        request(kGetrf, #x[0], m, n, ia, ja, desca), a, Outputs<T>{ipiv, nullptr, nullptr, nullptr, info},      \
        [&] { real(m, n, a, ia, ja, desca, ipiv, info); }, no_query);                                           \
  }
// p?potrf_(UPLO, N, A, IA, JA, DESCA, INFO)
#define BO_SCALAPACK_potrf(x, T)                                                                                      \
  BO_SCALAPACK_EXPORT void p##x##potrf_(const char* uplo, const I* n, T* a, const I* ia, const I* ja, const I* desca, \
                                        I* info, fortran_strlen uplo_len) {                                           \
    using Fn = void(const char*, const I*, T*, const I*, const I*, const I*, I*, fortran_strlen);                     \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "potrf_"));                                           \
    Request q = request(kPotrf, #x[0], n, n, ia, ja, desca);                                                          \
    q.uplo = bo::routines::upper(*uplo);                                                                              \
    take_over<T>(                                                                                                     \
        q, a, Outputs<T>{nullptr, nullptr, nullptr, nullptr, info},                                                   \
        [&] { real(uplo, n, a, ia, ja, desca, info, uplo_len); }, no_query);                                          \
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
    take_over<T>(                                                                                               \
        q, a, Outputs<T>{nullptr, tau, work, nullptr, info},                                                    \
        [&] { real(m, n, a, ia, ja, desca, tau, work, lwork, info); }, no_query);                               \
  }
// p?gesv_(N, NRHS, A, IA, JA, DESCA, IPIV, B, IB, JB, DESCB, INFO)
#define BO_SCALAPACK_gesv(x, T)                                                                                      \
  BO_SCALAPACK_EXPORT void p##x##gesv_(const I* n, const I* nrhs, T* a, const I* ia, const I* ja, const I* desca,    \
                                       I* ipiv, T* b, const I* ib, const I* jb, const I* descb, I* info) {           \
    using Fn = void(const I*, const I*, T*, const I*, const I*, const I*, I*, T*, const I*, const I*, const I*, I*); \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "gesv_"));                                           \
    Request q = request(kGesv, #x[0], n, n, ia, ja, desca);                                                          \
    q.b = sub(*n, *nrhs, ib, jb, descb);                                                                             \
    take_over<T>(                                                                                                    \
        q, a, Outputs<T>{ipiv, nullptr, nullptr, b, info},                                                           \
        [&] { real(n, nrhs, a, ia, ja, desca, ipiv, b, ib, jb, descb, info); }, no_query);                           \
  }
// p?posv_(UPLO, N, NRHS, A, IA, JA, DESCA, B, IB, JB, DESCB, INFO)
#define BO_SCALAPACK_posv(x, T)                                                                                     \
  BO_SCALAPACK_EXPORT void p##x##posv_(const char* uplo, const I* n, const I* nrhs, T* a, const I* ia, const I* ja, \
                                       const I* desca, T* b, const I* ib, const I* jb, const I* descb, I* info,     \
                                       fortran_strlen uplo_len) {                                                   \
    using Fn = void(const char*, const I*, const I*, T*, const I*, const I*, const I*, T*, const I*, const I*,      \
                    const I*, I*, fortran_strlen);                                                                  \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "posv_"));                                          \
    Request q = request(kPosv, #x[0], n, n, ia, ja, desca);                                                         \
    q.uplo = bo::routines::upper(*uplo);                                                                            \
    q.b = sub(*n, *nrhs, ib, jb, descb);                                                                            \
    take_over<T>(                                                                                                   \
        q, a, Outputs<T>{nullptr, nullptr, nullptr, b, info},                                                       \
        [&] { real(uplo, n, nrhs, a, ia, ja, desca, b, ib, jb, descb, info, uplo_len); }, no_query);                \
  }
// p?gels_(TRANS, M, N, NRHS, A, IA, JA, DESCA, B, IB, JB, DESCB, WORK, LWORK, INFO): a workspace query is
// ScaLAPACK's, and so is the least LWORK the takeover checks (ScaLAPACK's formula for it depends on the shape and
// the grid): asked with a query on every process alike.
#define BO_SCALAPACK_gels(x, T)                                                                                     \
  BO_SCALAPACK_EXPORT void p##x##gels_(const char* trans, const I* m, const I* n, const I* nrhs, T* a, const I* ia, \
                                       const I* ja, const I* desca, T* b, const I* ib, const I* jb, const I* descb, \
                                       T* work, const I* lwork, I* info, fortran_strlen trans_len) {                \
    using Fn = void(const char*, const I*, const I*, const I*, T*, const I*, const I*, const I*, T*, const I*,      \
                    const I*, const I*, T*, const I*, I*, fortran_strlen);                                          \
    static Fn* real = reinterpret_cast<Fn*>(real_routine("p" #x "gels_"));                                          \
    auto call = [&](T* w, const I* lw, I* inf) {                                                                    \
      real(trans, m, n, nrhs, a, ia, ja, desca, b, ib, jb, descb, w, lw, inf, trans_len);                           \
    };                                                                                                              \
    if (*lwork == -1) return call(work, lwork, info);                                                               \
    Request q = request(kGels, #x[0], m, n, ia, ja, desca);                                                         \
    q.trans = bo::routines::upper(*trans);                                                                          \
    q.b = sub(std::max(*m, *n), *nrhs, ib, jb, descb);                                                              \
    q.lwork = *lwork;                                                                                               \
    take_over<T>(                                                                                                   \
        q, a, Outputs<T>{nullptr, nullptr, work, b, info}, [&] { call(work, lwork, info); },                        \
        [&] {                                                                                                       \
          T w{};                                                                                                    \
          const I query = -1;                                                                                       \
          I inf = 0;                                                                                                \
          call(&w, &query, &inf);                                                                                   \
          return inf == 0 ? std::int64_t(std::real(w)) : std::int64_t(INT32_MAX) + 1;                               \
        });                                                                                                         \
  }
#define BO_SCALAPACK_ENTRY(x, name, T) BO_SCALAPACK_##name(x, T)
#include "scalapack/scalapack_list.h"
#undef BO_SCALAPACK_ENTRY
