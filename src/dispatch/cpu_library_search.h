// Finds and loads the system's CPU BLAS or LAPACK for a process that holds none (a program relinked with
// -lblasoffload, whose -lblas and -llapack the linker dropped as not needed).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace blasoffload {

// The LP64 libraries (libblas.so.3, liblapack.so.3) and the ILP64 ones with the same names (Debian's libblas64.so.3,
// liblapack64.so.3: dgemm_ with 64-bit integers), which the ILP64 families' 64_-suffixed names forward to.
enum class CpuLibraryKind { kBlas, kLapack, kBlas64, kLapack64 };

// One library worth trying, and why it is on the list (said in the log and the summary).
struct CpuLibraryCandidate {
  std::string path;  // as it is loaded
  std::string why;   // "the libblas.so.3 alternative"
  // Loaded with RTLD_DEEPBIND (the ILP64 kinds): its calls to its own routines (liblapack64's dgetrf calling dgemm_)
  // must bind to itself, not to our LP64 exports of the same names, which come first in the global scope. The price:
  // such calls are not intercepted, and the library's own calls to the C library skip a program's interposers.
  bool deep_bind = false;
};

// One choice in dpkg's record of an alternative.
struct AlternativeChoice {
  std::string path;
  long priority = 0;
};

// The choices in the text of dpkg's record of an alternative (/var/lib/dpkg/alternatives/NAME), in file order;
// none when the text is not such a record.
std::vector<AlternativeChoice> parse_alternative_record(const std::string& text);

// Whether the ELF shared library at `path` is blasoffload or stands for it: its SONAME, or one of the libraries it
// needs, starts with "libblasoffload". Read from the file, without loading it; false for anything else (not ELF).
bool is_blasoffload_library(const std::string& path);

// Where the system's libraries are looked for.
struct CpuLibrarySystem {
  std::string root;       // prefixed to every path: "" is the real file system, tests give a fake one
  std::string multiarch;  // the library directory is /usr/lib/<multiarch> ("x86_64-linux-gnu")
  std::string self;       // our own file (symlinks resolved): never a candidate, even as the alternative's choice
};

// The system as the configuration describes it (BLASOFFLOAD_TEST_CPU_LIBRARY_ROOT), for the build's multiarch
// directory; `self_file` is the library's own file.
CpuLibrarySystem configured_system(const std::string& self_file);

// The candidates, best first, each an existing file listed once (by its real path): the alternative's current
// choice (libblas.so.3 or liblapack.so.3: what the program asked the linker for; libblas64.so.3 or liblapack64.so.3
// for the ILP64 kinds), then the alternative's other choices, OpenBLAS before the rest and then by priority, then
// well-known multiarch paths (OpenBLAS, BLIS, ATLAS, reference). Never blasoffload: our own file, nor another library
// that is blasoffload (SONAME libblasoffload*) or a shim standing for it (one that needs libblasoffload*, as the
// shims installed in <libdir>/blasoffload/ to make blasoffload the system's alternative do).
std::vector<CpuLibraryCandidate> cpu_library_candidates(CpuLibraryKind kind, const CpuLibrarySystem& system);

// What load_cpu_library kept, and what it passed over.
struct LoadedCpuLibrary {
  void* handle = nullptr;  // nullptr: no candidate would do
  std::string path;
  std::string why;
  std::vector<std::string> passed_over;  // "PATH: reason", for the debug log
};

// Loads the candidates in order, RTLD_NOW | RTLD_LOCAL (the library's symbols must not take the place of the
// program's or ours), and keeps the first that defines `symbol` other than at an address `is_ours` claims or in a
// library that is blasoffload (SONAME libblasoffload*); the others are closed again.
LoadedCpuLibrary load_cpu_library(const std::vector<CpuLibraryCandidate>& candidates, const char* symbol,
                                  const std::function<bool(const void*)>& is_ours);

// A LAPACK routine of a BLAS library loaded from the candidates, where it defines LAPACK itself (libopenblas.so.0
// does; Debian's OpenBLAS libblas.so.3 only through the library it depends on, where the liblapack.so.3 alternative
// comes first, as the program's -llapack would have found it); nullptr otherwise.
void* lapack_of_blas(void* blas, const char* symbol, const std::function<bool(const void*)>& is_ours);

// For blasoffload-info: where a process that links no CPU BLAS would find `kind`, "PATH (WHY)" (the BLAS's own
// LAPACK first, as lapack_of_blas), or "" if nowhere; `self_file` is the libblasoffload described. Loads the
// libraries into this process.
std::string system_choice(CpuLibraryKind kind, const std::string& self_file);

}  // namespace blasoffload
