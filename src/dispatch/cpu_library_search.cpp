// Finds and loads the system's CPU BLAS or LAPACK for a process that holds none (cpu_library_search.h).
#include "dispatch/cpu_library_search.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "config/paths.h"
#include "policy/config.h"

namespace blasoffload {
namespace {

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// The same file under two names (a hard link to our library is still us).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa;
  struct stat sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_openblas(const std::string& path) { return path.find("openblas") != std::string::npos; }

// The well-known directories of /usr/lib/<multiarch> holding Debian's BLAS (libblas.so.3) and LAPACK
// (liblapack.so.3) implementations, best first: OpenBLAS (threaded before serial), BLIS (BLAS only), ATLAS, reference;
// and those of the ILP64 ones (libblas64.so.3, liblapack64.so.3), which have no ATLAS.
std::vector<std::string> well_known_dirs(CpuLibraryKind kind) {
  switch (kind) {
    case CpuLibraryKind::kLapack:
      return {"openblas-pthread", "openblas-openmp", "openblas-serial", "atlas", "lapack"};
    case CpuLibraryKind::kBlas64:
      return {"openblas64-pthread",
              "openblas64-openmp",
              "openblas64-serial",
              "blis64-pthread",
              "blis64-openmp",
              "blis64-serial",
              "blas64"};
    case CpuLibraryKind::kLapack64:
      return {"openblas64-pthread", "openblas64-openmp", "openblas64-serial", "lapack64"};
    case CpuLibraryKind::kBlas:
      break;
  }
  return {"openblas-pthread", "openblas-openmp", "openblas-serial", "blis-pthread",
          "blis-openmp",      "blis-serial",     "atlas",           "blas"};
}

const char* soname_of(CpuLibraryKind kind) {
  switch (kind) {
    case CpuLibraryKind::kLapack:
      return "liblapack.so.3";
    case CpuLibraryKind::kBlas64:
      return "libblas64.so.3";
    case CpuLibraryKind::kLapack64:
      return "liblapack64.so.3";
    case CpuLibraryKind::kBlas:
      break;
  }
  return "libblas.so.3";
}

// `n` bytes of the file at `offset`; false if it has fewer.
bool read_at(int fd, void* out, std::size_t n, off_t offset) {
  return n == 0 || pread(fd, out, n, offset) == static_cast<ssize_t>(n);
}

// The SONAME and DT_NEEDED names of a 64-bit little-endian ELF file (empty if it is none, or has no dynamic section):
// its program headers give the dynamic section and the load segment holding the string table.
std::vector<std::string> dynamic_names(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<std::string> out;
  Elf64_Ehdr eh;
  std::vector<Elf64_Phdr> ph;
  if (read_at(fd, &eh, sizeof eh, 0) && std::equal(eh.e_ident, eh.e_ident + SELFMAG, ELFMAG) &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 256) {
    ph.resize(eh.e_phnum);
    if (!read_at(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr), off_t(eh.e_phoff))) ph.clear();
  }
  std::vector<Elf64_Dyn> dyn;
  for (const auto& p : ph)
    if (p.p_type == PT_DYNAMIC && p.p_filesz < (1u << 20)) {
      dyn.resize(p.p_filesz / sizeof(Elf64_Dyn));
      if (!read_at(fd, dyn.data(), dyn.size() * sizeof(Elf64_Dyn), off_t(p.p_offset))) dyn.clear();
    }
  std::uint64_t strtab = 0, strsz = 0;
  for (const auto& d : dyn) {
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
  }
  std::string strings;
  for (const auto& p : ph)  // the string table's address is a virtual one: its load segment gives the file offset
    if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab + strsz <= p.p_vaddr + p.p_filesz && strsz < (1u << 24)) {
      strings.resize(strsz);
      if (!read_at(fd, strings.data(), strsz, off_t(p.p_offset + (strtab - p.p_vaddr)))) strings.clear();
      break;
    }
  for (const auto& d : dyn)
    if ((d.d_tag == DT_NEEDED || d.d_tag == DT_SONAME) && d.d_un.d_val < strings.size())
      out.emplace_back(strings.c_str() + d.d_un.d_val);
  close(fd);
  return out;
}

}  // namespace

std::vector<AlternativeChoice> parse_alternative_record(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // The status, the link, the (name, link) pairs of its followers up to an empty line; then each choice: its path,
  // its priority and one line per follower, up to an empty line.
  if (lines.size() < 3 || (lines[0] != "auto" && lines[0] != "manual")) return {};
  std::size_t i = 2, followers = 0;
  for (; i + 1 < lines.size() && !lines[i].empty(); i += 2) ++followers;
  if (i >= lines.size() || !lines[i].empty()) return {};
  std::vector<AlternativeChoice> out;
  for (++i; i + 1 < lines.size() && !lines[i].empty(); i += 2 + followers) {
    char* end = nullptr;
    errno = 0;
    const long priority = std::strtol(lines[i + 1].c_str(), &end, 10);
    if (lines[i + 1].empty() || *end || errno) return {};
    out.push_back({lines[i], priority});
  }
  return out;
}

bool is_blasoffload_library(const std::string& path) {
  for (const auto& n : dynamic_names(path))
    if (n.rfind("libblasoffload", 0) == 0) return true;
  return false;
}

CpuLibrarySystem configured_system(const std::string& self_file) {
  return {settings().cpu_library_root, paths::multiarch(), real_path(self_file)};
}

std::vector<CpuLibraryCandidate> cpu_library_candidates(CpuLibraryKind kind, const CpuLibrarySystem& system) {
  const std::string soname = soname_of(kind);
  const bool ilp64 = kind == CpuLibraryKind::kBlas64 || kind == CpuLibraryKind::kLapack64;
  const std::string libdir = "/usr/lib" + (system.multiarch.empty() ? "" : "/" + system.multiarch);
  std::vector<CpuLibraryCandidate> out;
  std::set<std::string> seen;
  // Listed once each, by its real path: the alternative's choice is among its choices and the well-known paths.
  auto add = [&](const std::string& path, const std::string& why) {
    const std::string real = real_path(path);
    if (real.empty() || same_file(real, system.self) || !seen.insert(real).second) return;
    if (is_blasoffload_library(real)) return;  // a shim standing for us, or another build of us
    out.push_back({path, why, ilp64});
  };
  // The alternative's current choice, loaded by its real path so that the log and summary name the implementation.
  add(real_path(system.root + libdir + "/" + soname), "the " + soname + " alternative");
  const std::string record =
      system.root + "/var/lib/dpkg/alternatives/" + soname + (system.multiarch.empty() ? "" : "-" + system.multiarch);
  std::vector<AlternativeChoice> choices = parse_alternative_record(read_text(record));
  std::stable_sort(choices.begin(), choices.end(), [](const AlternativeChoice& a, const AlternativeChoice& b) {
    if (is_openblas(a.path) != is_openblas(b.path)) return is_openblas(a.path);
    return a.priority > b.priority;
  });
  for (const auto& c : choices)
    add(system.root + c.path, "a " + soname + " alternative, priority " + std::to_string(c.priority));
  for (const auto& d : well_known_dirs(kind)) add(system.root + libdir + "/" + d + "/" + soname, "a well-known path");
  return out;
}

LoadedCpuLibrary load_cpu_library(const std::vector<CpuLibraryCandidate>& candidates, const char* symbol,
                                  const std::function<bool(const void*)>& is_ours) {
  LoadedCpuLibrary out;
  for (const auto& c : candidates) {
    void* h = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL | (c.deep_bind ? RTLD_DEEPBIND : 0));
    if (!h) {
      const char* e = dlerror();
      out.passed_over.push_back(c.path + ": cannot be loaded: " + (e ? e : "?"));
      continue;
    }
    void* p = dlsym(h, symbol);
    Dl_info where{};
    // The symbol may come from a library the candidate needs: blasoffload, loaded as another file (a build of us).
    const bool blasoffload =
        p &&
        (is_ours(p) || (dladdr(p, &where) && where.dli_fname && is_blasoffload_library(real_path(where.dli_fname))));
    if (!p || blasoffload) {
      out.passed_over.push_back(c.path + (p ? ": its " : ": defines no ") + symbol + (p ? " is blasoffload's" : ""));
      dlclose(h);
      continue;
    }
    out.handle = h;
    out.path = c.path;
    out.why = c.why;
    return out;
  }
  return out;
}

void* lapack_of_blas(void* blas, const char* symbol, const std::function<bool(const void*)>& is_ours) {
  void* p = blas ? dlsym(blas, symbol) : nullptr;
  void* sgemm = blas ? dlsym(blas, "sgemm_") : nullptr;
  Dl_info a{}, b{};
  if (!p || !sgemm || is_ours(p) || !dladdr(p, &a) || !dladdr(sgemm, &b)) return nullptr;
  return a.dli_fbase == b.dli_fbase ? p : nullptr;
}

std::string system_choice(CpuLibraryKind kind, const std::string& self_file) {
  const CpuLibrarySystem system = configured_system(self_file);
  // Not loaded as the library: its definitions are told apart by the file they lie in.
  const auto is_self = [&](const void* p) {
    Dl_info info{};
    return dladdr(p, &info) && info.dli_fname && real_path(info.dli_fname) == system.self;
  };
  const LoadedCpuLibrary blas =
      load_cpu_library(cpu_library_candidates(CpuLibraryKind::kBlas, system), "sgemm_", is_self);
  if (kind == CpuLibraryKind::kBlas) return blas.handle ? blas.path + " (" + blas.why + ")" : "";
  if (lapack_of_blas(blas.handle, "dgetrf_", is_self)) return blas.path + " (the CPU BLAS's own LAPACK)";
  const LoadedCpuLibrary l = load_cpu_library(cpu_library_candidates(kind, system), "dgetrf_", is_self);
  return l.handle ? l.path + " (" + l.why + ")" : "";
}

}  // namespace blasoffload
