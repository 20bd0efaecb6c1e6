// Finds the CPU BLAS that every call not run on the GPU is forwarded to.
#include "dispatch/cpu_blas.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/cpu_library_search.h"
#include "dispatch/loaded_objects.h"
#include "dispatch/log.h"
#include "policy/config.h"
#include "routines/all.h"

namespace blasoffload {

CpuBlas g_cpu;

namespace {

void* g_named_handle = nullptr;         // BLASOFFLOAD_CPU_BLAS, when given
void* g_named_lapack_handle = nullptr;  // BLASOFFLOAD_CPU_LAPACK, when given

const void* our_base() {
  static const void* base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<const void*>(&our_base), &info);
    return info.dli_fbase;
  }();
  return base;
}

// The loaded objects' segments, to tell which object holds an address without dladdr: dladdr also searches the
// object's symbol table for the nearest symbol, and over OpenBLAS's (thousands of names) the forwarding table's 2,232
// lookups took 83 ms of a program's first forwarded call on a 2-core machine, the CPU table's 124 several ms of its
// first intercepted one. Built again whenever the loader reports objects added or removed since (dlpi_adds,
// dlpi_subs), so a library closed and another loaded in its place is never taken for the first.
struct Segment {
  std::uintptr_t lo, hi;
  const void* base;  // the object's load address (dlpi_addr)
  std::string name;  // empty for the program itself
};
int collect_segments(struct dl_phdr_info* info, size_t, void* data) {
  auto* v = static_cast<std::vector<Segment>*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
    const std::uintptr_t lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    v->push_back({lo, lo + info->dlpi_phdr[i].p_memsz, reinterpret_cast<const void*>(info->dlpi_addr),
                  info->dlpi_name ? info->dlpi_name : ""});
  }
  return 0;
}
// The address range of this library's loaded segments, found once. is_our_address runs for every symbol the CPU
// table resolves (hundreds at the first call): dladdr there searched each address's symbol table, 7 of the 8 million
// instructions of the first call's set-up against OpenBLAS (3-10 ms on the first call of every program).
struct Range {
  std::uintptr_t lo = UINTPTR_MAX, hi = 0;
};
const Range& our_range() {
  static const Range range = [] {
    std::vector<Segment> all;
    dl_iterate_phdr(collect_segments, &all);
    Range r;
    for (const Segment& seg : all)
      if (seg.base == our_base()) {
        r.lo = std::min(r.lo, seg.lo);
        r.hi = std::max(r.hi, seg.hi);
      }
    return r;
  }();
  return range;
}

int collect_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name && info->dlpi_name[0] && reinterpret_cast<const void*>(info->dlpi_addr) != our_base())
    names->emplace_back(info->dlpi_name);
  return 0;
}

// What the CPU table needs to know of a library that defines a symbol, read once per library (the forwarding table
// asks for each of its 2,232 names at a family's first call): whether it is an ILP64 build by its file name
// (libblas64.so.3, libopenblas64_.so, NumPy's libscipy_openblas64_-<hash>.so, MKL's ilp64), and whether it itself
// forwards BLAS to a backend (FlexiBLAS, libblastrampoline, by their API symbols): where blasoffload is its backend,
// taking its routines for the CPU library's would send each call back to us, for ever.
struct LibraryTraits {
  const void* base = nullptr;  // with the path, the key: a candidate passed over is closed, another may load there
  std::string path;
  bool ilp64 = false;
  bool forwarder = false;
};
LibraryTraits read_traits(const Dl_info& info) {
  LibraryTraits t;
  t.base = info.dli_fbase;
  t.path = info.dli_fname;
  std::string name = t.path;
  name = name.substr(name.rfind('/') + 1);
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* kind : {"blas", "lapack"}) {
    const std::size_t at = name.find(kind);
    t.ilp64 = t.ilp64 || (at != std::string::npos && name.find("64", at) != std::string::npos);
  }
  t.ilp64 = t.ilp64 || name.find("ilp64") != std::string::npos;
  if (void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
    for (const char* api : {"flexiblas_current_backend", "flexiblas_switch", "lbt_forward", "lbt_get_config"})
      t.forwarder = t.forwarder || dlsym(h, api) != nullptr;
    dlclose(h);
  }
  return t;
}
// The object holding `p`: false when none does; an object without a name is the program. The loader's lock is never
// taken under ours (a library's constructor, run under the loader's lock, may call BLAS and so come here).
bool object_at(const void* p, std::string* name, const void** base) {
  // Never destroyed: the summary of a process no call reached asks at unload, after the static destructors.
  static std::mutex& mutex = *new std::mutex;
  struct Snapshot {
    LoaderCounts counts{~0ull, ~0ull};  // the loader's when the segments were read
    std::vector<Segment> segments;
  };
  static Snapshot& cached = *new Snapshot;
  const LoaderCounts counts = loader_counts();
  bool current;
  {
    std::lock_guard<std::mutex> lock(mutex);
    current = counts.first != ~0ull && counts == cached.counts;  // without the counters, read them every time
  }
  std::vector<Segment> fresh;
  if (!current) dl_iterate_phdr(collect_segments, &fresh);
  std::lock_guard<std::mutex> lock(mutex);
  if (!current) cached = {counts, std::move(fresh)};
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const Segment& s : cached.segments)
    if (a >= s.lo && a < s.hi) {
      *name = s.name;
      *base = s.base;
      return true;
    }
  return false;
}

// object_at, with the program's own file named too (the segment list leaves it unnamed): through dladdr, once.
bool object_file_at(const void* p, std::string* name, const void** base) {
  if (!p || !object_at(p, name, base)) return false;
  if (!name->empty()) return true;
  Dl_info info{};
  if (!dladdr(p, &info) || !info.dli_fname) return false;
  *name = info.dli_fname;
  return true;
}

LibraryTraits traits_of(const void* p) {
  std::string name;
  const void* base = nullptr;
  if (!object_file_at(p, &name, &base)) return {};
  Dl_info info{};
  // Never destroyed: the summary of a process no call reached asks at unload, after the static destructors.
  static std::mutex& mutex = *new std::mutex;
  static std::vector<LibraryTraits>& known = *new std::vector<LibraryTraits>;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& t : known)
    if (t.base == base && t.path == name) return t;
  info.dli_fname = name.c_str();
  info.dli_fbase = const_cast<void*>(base);
  known.push_back(read_traits(info));
  return known.back();
}

// Whether a definition of a reference name at `p` may serve this LP64 build. Wheels leave some routines unrenamed
// (scipy-openblas's sroundup_lwork_) and call them through their PLT, so that one unprefixed name is defined by
// NumPy's ILP64 wheel and SciPy's LP64 one in the same process: the forwarding of a reference name must not land in a
// library of the other width (it would read twice as much of each integer). Names with the 64_ suffix say their width
// themselves, and the ILP64 build cannot tell an ILP64 library by its name: no filter there.
bool width_matches(const LibraryTraits& t, const char* symbol) {
  const std::size_t n = std::strlen(symbol);
  if (n > 3 && std::strcmp(symbol + n - 3, "64_") == 0) return true;
  if (family_info(Family::std).int_bytes == 8) return true;
  return !t.ilp64;
}

// A definition the CPU table may take: not ours, of the name's integer width, not a forwarder's.
bool usable_definition(const void* p, const char* symbol) {
  if (!p || is_our_address(p)) return false;
  const LibraryTraits t = traits_of(p);
  return width_matches(t, symbol) && !t.forwarder;
}

// Libraries loaded in a local scope (dlopen RTLD_LOCAL) are invisible to RTLD_NEXT and RTLD_DEFAULT;
// ask each loaded object directly, in load order.
void* find_in_loaded_objects(const char* symbol) {
  std::vector<std::string> names;
  dl_iterate_phdr(collect_object, &names);
  for (const auto& name : names) {
    void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    void* p = dlsym(h, symbol);
    dlclose(h);  // RTLD_NOLOAD only took a reference; the object stays loaded by its owner
    if (usable_definition(p, symbol)) return p;
  }
  return nullptr;
}

void* find_default(const char* symbol, bool loaded_objects) {
  void* p = dlsym(RTLD_NEXT, symbol);
  if (usable_definition(p, symbol)) return p;
  return loaded_objects ? find_in_loaded_objects(symbol) : nullptr;
}

// Opens BLASOFFLOAD_CPU_BLAS and BLASOFFLOAD_CPU_LAPACK, once: resolve_cpu_blas (the first intercepted call) and the
// forwarding table (the first forwarded call, which may come first, or on another thread) both need them.
void open_named_libraries() {
  static std::once_flag once;
  std::call_once(once, [] {
    const Settings& s = settings();
    if (!s.cpu_blas.empty()) {
      g_named_handle = dlopen(s.cpu_blas.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!g_named_handle) {
        log_fatal("BLASOFFLOAD_CPU_BLAS=%s cannot be loaded: %s. Aborting.", s.cpu_blas.c_str(), dlerror());
        std::abort();
      }
    }
    if (!s.cpu_lapack.empty()) {
      g_named_lapack_handle = dlopen(s.cpu_lapack.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!g_named_lapack_handle) {
        log_fatal("BLASOFFLOAD_CPU_LAPACK=%s cannot be loaded: %s. Aborting.", s.cpu_lapack.c_str(), dlerror());
        std::abort();
      }
    }
  });
}

// `loaded_objects`: also the objects loaded in a local scope (false where those are the ones we loaded).
void* find_cpu_symbol(const char* symbol, bool lapack = false, bool loaded_objects = true) {
  if (lapack && g_named_lapack_handle) {
    if (void* p = dlsym(g_named_lapack_handle, symbol); p && !is_our_address(p)) return p;
    log_debug("%s not in BLASOFFLOAD_CPU_LAPACK; looking it up in BLASOFFLOAD_CPU_BLAS and the process", symbol);
  }
  if (g_named_handle) {
    if (void* p = dlsym(g_named_handle, symbol); p && !is_our_address(p)) return p;
    log_debug("%s not in BLASOFFLOAD_CPU_BLAS; looking it up in the process", symbol);
  }
  return find_default(symbol, loaded_objects);
}

// The file of the object holding `p`, from the segment list (dladdr would search its symbol table too: 20-40 us over
// OpenBLAS, at every process's first call).
std::string object_of(const void* p) {
  std::string name;
  const void* base = nullptr;
  return object_file_at(p, &name, &base) ? name : "(not found)";
}

// A CPU library blasoffload loads itself where the process holds none: looked for once, at the first need.
struct SystemLibrary {
  std::once_flag once;
  std::atomic<void*> handle{nullptr};
  std::string why;  // written before `handle` is published
};
SystemLibrary g_system_blas, g_system_lapack;
// The system's ILP64 libraries (libblas64.so.3, liblapack64.so.3), for the ILP64 families' names.
SystemLibrary g_system_blas64, g_system_lapack64;

void* symbol_in(void* handle, const char* symbol) {
  void* p = handle ? dlsym(handle, symbol) : nullptr;
  return p && !is_our_address(p) ? p : nullptr;
}

// The system's library of `kind`, loaded the first time nothing in the process defines a needed `symbol` (`reason`
// says why, for the log and the summary); nullptr when none would do, so that the call aborts naming the settings.
void* system_library(SystemLibrary& lib, CpuLibraryKind kind, const char* symbol, const std::string& reason) {
  std::call_once(lib.once, [&] {
    const char* what = kind == CpuLibraryKind::kBlas     ? "BLAS"
                       : kind == CpuLibraryKind::kLapack ? "LAPACK"
                       : kind == CpuLibraryKind::kBlas64 ? "ILP64 BLAS"
                                                         : "ILP64 LAPACK";
    const CpuLibrarySystem system = configured_system(object_of(reinterpret_cast<const void*>(&symbol_in)));
    std::vector<CpuLibraryCandidate> candidates = cpu_library_candidates(kind, system);
    // In the ILP64 build our reference names are ILP64 themselves: the ILP64 library's calls to its own routines and
    // to XERBLA bind to the program's and ours as a program's calls do (the program's own XERBLA wins), not deeply.
    if (family_info(Family::std).int_bytes == 8)
      for (auto& c : candidates) c.deep_bind = false;
    const LoadedCpuLibrary l =
        load_cpu_library(candidates, symbol, [](const void* p) { return is_our_address(p) || traits_of(p).forwarder; });
    for (const auto& p : l.passed_over) log_debug("CPU %s candidate passed over: %s", what, p.c_str());
    if (!l.handle) {
      log_debug("%s: nothing in the process defines it, nor any of the system's CPU %s libraries", symbol, what);
      return;
    }
    lib.why = "loaded by blasoffload: " + reason + "; " + l.why;
    log_debug("%s: %s (%s)", symbol, l.path.c_str(), lib.why.c_str());
    if ((kind == CpuLibraryKind::kLapack || kind == CpuLibraryKind::kLapack64) && g_cpu.lapack_library.empty()) {
      g_cpu.lapack_library = object_of(symbol_in(l.handle, symbol));
      g_cpu.lapack_why = lib.why;
    }
    lib.handle.store(l.handle, std::memory_order_release);
  });
  return lib.handle.load(std::memory_order_acquire);
}

// The system's LAPACK for a process that links none: the BLAS we loaded where it defines LAPACK itself, else the
// system's LAPACK library.
void* find_system_lapack(const char* symbol) {
  if (void* p = lapack_of_blas(g_system_blas.handle.load(std::memory_order_acquire), symbol, is_our_address)) return p;
  return symbol_in(system_library(g_system_lapack, CpuLibraryKind::kLapack, symbol, "the program links none"), symbol);
}

// A routine the table lacks, looked up again at its call: a library loaded since, else the system's.
void* find_late(const char* symbol, bool lapack) {
  // Where we loaded the system's BLAS, the process held no LAPACK either, and one that BLAS pulled in (Debian's
  // OpenBLAS libblas.so.3 needs libopenblas.so.0) is not what the program's -llapack chose: the system's LAPACK first.
  if (lapack && g_system_blas.handle.load(std::memory_order_acquire)) {
    if (void* p = find_cpu_symbol(symbol, true, false)) return p;
    if (void* p = find_system_lapack(symbol)) return p;
    return find_in_loaded_objects(symbol);
  }
  if (void* p = find_cpu_symbol(symbol, lapack)) return p;
  if (lapack) return find_system_lapack(symbol);
  const std::string reason = g_cpu.fortran[0][index(Routine::sgemm)]
                                 ? std::string("the process's CPU BLAS lacks ") + symbol
                                 : std::string("the program links none");
  return symbol_in(system_library(g_system_blas, CpuLibraryKind::kBlas, symbol, reason), symbol);
}

// `symbol` (a standard name) in the system's ILP64 libraries, loaded the first time an ILP64 name (`wanted`) is
// defined by nothing in the process: a LAPACK routine in the ILP64 BLAS where it defines LAPACK itself, else in the
// ILP64 LAPACK. They are loaded with RTLD_DEEPBIND (cpu_library_search.h), so that their calls to each other bind to
// each other and not to our LP64 exports of the same names.
void* find_system_ilp64(const char* symbol, bool lapack, const std::string& wanted) {
  const std::string reason = "nothing in the process defines " + wanted;
  if (!lapack) return symbol_in(system_library(g_system_blas64, CpuLibraryKind::kBlas64, symbol, reason), symbol);
  if (void* p = lapack_of_blas(g_system_blas64.handle.load(std::memory_order_acquire), symbol, is_our_address))
    return p;
  return symbol_in(system_library(g_system_lapack64, CpuLibraryKind::kLapack64, symbol, reason), symbol);
}

// A process that links no CPU BLAS (a relinked program whose -lblas the linker dropped as not needed, the library as
// the system's alternative): the system's, loaded now since the first call needs it; in the ILP64 build the system's
// ILP64 BLAS (an LP64 library would read half of each integer). Its LAPACK serves the LAPACK routines where it
// defines them itself.
void fill_from_system_blas() {
  const bool ilp64 = family_info(Family::std).int_bytes == 8;
  SystemLibrary& lib = ilp64 ? g_system_blas64 : g_system_blas;
  void* h =
      system_library(lib, ilp64 ? CpuLibraryKind::kBlas64 : CpuLibraryKind::kBlas, "sgemm_", "the program links none");
  if (!h) return;
  for (std::size_t r = 0; r < kNumRoutines; ++r) {
    const std::string name = routine_name(Routine(r));
    const bool lapack = bo::routines::is_lapack(int(r));
    if (!g_cpu.fortran[0][r])
      g_cpu.fortran[0][r] =
          lapack ? lapack_of_blas(h, (name + "_").c_str(), is_our_address) : symbol_in(h, (name + "_").c_str());
    if (!g_cpu.cblas[0][r] && !lapack) g_cpu.cblas[0][r] = symbol_in(h, ("cblas_" + name).c_str());
  }
  g_cpu.library_why = lib.why;
  if (g_cpu.fortran[0][index(Routine::dgetrf)]) g_cpu.lapack_why = lib.why;
}

}  // namespace

bool is_our_address(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return a >= our_range().lo && a < our_range().hi;
}

void* find_foreign_symbol(const char* symbol) {
  void* p = dlsym(RTLD_DEFAULT, symbol);
  if (p && !is_our_address(p)) return p;
  return find_cpu_symbol(symbol);
}

void resolve_cpu_blas(Family first) {
  open_named_libraries();
  // Where nothing in the process defines sgemm_ (a pip wheel's: its OpenBLAS renames every name), the other reference
  // names are not looked for in each loaded object either: those 250 searches over a Python process's objects took
  // 5-7 ms of NumPy's first call on the H200. A routine left out is looked up again at its first call (resolve_late).
  const bool std_blas = find_cpu_symbol("sgemm_") != nullptr;
  for (std::size_t r = 0; r < kNumRoutines; ++r) {
    const std::string name = routine_name(Routine(r));
    const bool lapack = bo::routines::is_lapack(int(r));
    g_cpu.fortran[0][r] = find_cpu_symbol((name + "_").c_str(), lapack, std_blas);
    if (!lapack) g_cpu.cblas[0][r] = find_cpu_symbol(("cblas_" + name).c_str(), false, std_blas);
  }
  // A process whose first call came through another family (a pip wheel's scipy_dgemm_64_) describes that family's
  // library; the system's BLAS is loaded only where the process holds no library of the first call's family either
  // (a second OpenBLAS beside the wheel's would only add threads).
  g_cpu.probe_family = Family::std;
  if constexpr (kNumFamilies > 1) {  // the ILP64 build has the std family alone
    if (!g_cpu.fortran[0][index(Routine::sgemm)] && first != Family::std) {
      if (void* p = find_cpu_definition(first, "sgemm", false, false)) {
        __atomic_store_n(&g_cpu.fortran[int(first)][index(Routine::sgemm)], p, __ATOMIC_RELEASE);
        g_cpu.probe_family = first;
      }
    }
  }
  if (!g_cpu.fortran[int(g_cpu.probe_family)][index(Routine::sgemm)]) fill_from_system_blas();
  if (void* getrf = g_cpu.fortran[0][index(Routine::dgetrf)]) g_cpu.lapack_library = object_of(getrf);
  const void* sgemm = g_cpu.fortran[int(g_cpu.probe_family)][index(Routine::sgemm)];
  g_cpu.library = object_of(sgemm);
  g_cpu.report = probe_cpu_blas(sgemm, family_info(g_cpu.probe_family).fortran_prefix,
                                family_info(g_cpu.probe_family).cblas_suffix);
  log_debug("CPU BLAS: %s %s%s", g_cpu.library.c_str(), g_cpu.report.identity.c_str(),
            g_cpu.library_why.empty() ? "" : (" (" + g_cpu.library_why + ")").c_str());
  // The advice goes into the summary (once): a user problem we can see, not a failure of ours, so it is not a
  // warning (a program must stay silent unless asked).
  if (!g_cpu.report.advice.empty()) log_debug("%s", g_cpu.report.advice.c_str());
}

std::string cpu_library_function_name(Family f, const char* name) {
  // OpenBLAS renames its own functions as its BLAS: SYMBOLPREFIX before, SYMBOLSUFFIX after (scipy_..64_), which for
  // the families are the Fortran prefix and the CBLAS suffix.
  return std::string(family_info(f).fortran_prefix) + name + family_info(f).cblas_suffix;
}

void* resolve_late(Routine r, Family f) {
  // A LAPACK (or BLAS) loaded after the first call, e.g. by a plugin, else the system's: looked up again, once per
  // missing routine call.
  void* p = find_cpu_definition(f, routine_name(r), false, bo::routines::is_lapack(int(r)));
  if (p) __atomic_store_n(&g_cpu.fortran[int(f)][index(r)], p, __ATOMIC_RELEASE);
  return p;
}

void* resolve_late_cblas(Routine r, Family f) {
  void* p = find_cpu_definition(f, routine_name(r), true, false);
  if (p) __atomic_store_n(&g_cpu.cblas[int(f)][index(r)], p, __ATOMIC_RELEASE);
  return p;
}

void* find_cpu_definition(Family f, const char* base, bool cblas, bool lapack, bool in_process_only) {
  open_named_libraries();
  const std::string name = cblas ? cblas_name(f, base) : fortran_name(f, base);
  if (in_process_only) return find_cpu_symbol(name.c_str(), lapack, false);
  const bool ilp64 = family_info(f).int_bytes == 8;
  if (f == Family::std && !ilp64) return find_late(name.c_str(), lapack);
  if (void* p = find_cpu_symbol(name.c_str(), lapack)) return p;  // a library with the family's names (libopenblas64_)
  if (!ilp64) return nullptr;
  // The standard name, in the system's ILP64 library only: an LP64 library's dgemm_ would read half of each integer.
  const std::string std_name = cblas ? cblas_name(Family::std, base) : fortran_name(Family::std, base);
  return find_system_ilp64(std_name.c_str(), lapack, name);
}

void* find_cpu_symbol_verbatim(const char* symbol, bool lapack, bool in_process_only) {
  open_named_libraries();
  return in_process_only ? find_cpu_symbol(symbol, lapack, false) : find_late(symbol, lapack);
}

void cpu_blas_missing(const char* symbol) {
  log_fatal(
      "no CPU BLAS defines %s, so this call cannot be forwarded. Set BLASOFFLOAD_CPU_BLAS to a BLAS library "
      "(e.g. BLASOFFLOAD_CPU_BLAS=/usr/lib/x86_64-linux-gnu/blas/libblas.so.3), or link/load one after "
      "libblasoffload.so. Aborting.",
      symbol);
  std::abort();
}

}  // namespace blasoffload

namespace blasoffload {
void cpu_blas_missing_routine(Routine r, Family f) {
  const std::string symbol = fortran_name(f, routine_name(r));
  if (!bo::routines::is_lapack(int(r))) cpu_blas_missing(symbol.c_str());
  log_fatal(
      "no CPU LAPACK defines %s, so this call cannot be forwarded. Set BLASOFFLOAD_CPU_LAPACK to a LAPACK library "
      "(e.g. BLASOFFLOAD_CPU_LAPACK=/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3), or link/load one after "
      "libblasoffload.so. Aborting.",
      symbol.c_str());
  std::abort();
}
}  // namespace blasoffload
