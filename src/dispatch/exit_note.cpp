// Explains an empty summary from the loaded objects' imports: which BLAS and LAPACK names the program (not the
// BLAS/LAPACK libraries) binds, whether blasoffload intercepts them, and where its LAPACK calls its BLAS.
#include "dispatch/exit_note.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <vector>

#include "dispatch/cpu_blas.h"
#include "dispatch/routine.h"

namespace blasoffload {
namespace {

// Standard BLAS names without the precision letters (a pattern for recognising BLAS, not blasoffload's list).
const std::set<std::string>& blas_bases() {
  static const auto* s = new std::set<std::string>{
      "gemm", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm", "gemv", "gbmv",  "symv",
      "sbmv", "spmv", "hemv", "hbmv", "hpmv", "trmv",  "tbmv",  "tpmv", "trsv", "tbsv", "tpsv",  "ger",
      "geru", "gerc", "syr",  "syr2", "spr",  "spr2",  "her",   "her2", "hpr",  "hpr2", "axpy",  "dot",
      "dotu", "dotc", "nrm2", "asum", "scal", "copy",  "swap",  "rot",  "rotg", "rotm", "rotmg", "amax"};
  return *s;
}
// Common LAPACK drivers and factorisations: enough to recognise that a program calls LAPACK.
const std::set<std::string>& lapack_bases() {
  static const auto* s =
      new std::set<std::string>{"getrf", "getrs", "gesv", "potrf", "potrs", "posv",  "geqrf", "gels", "gesvd", "gesdd",
                                "syev",  "syevd", "heev", "trtrs", "getri", "sytrf", "gelsd", "geev", "orgqr", "ormqr"};
  return *s;
}

// "dgemm_" / "cblas_dgemm" / "DGEMM" -> "dgemm"; "" when not a BLAS name.
std::string blas_name(const char* sym, bool* lapack) {
  std::string n = sym;
  if (n.rfind("cblas_", 0) == 0) n = n.substr(6);
  if (!n.empty() && n.back() == '_') n.pop_back();
  for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n.size() < 3 || n.size() > 8) return "";
  std::string rest = n[0] == 'i' ? n.substr(1) : n;  // isamax
  if (rest.empty() || !std::strchr("sdcz", rest[0])) return "";
  std::string base = rest.substr(1);
  if (!base.empty() && std::strchr("sdcz", base[0]) && !blas_bases().count(base)) base = base.substr(1);  // dznrm2
  *lapack = lapack_bases().count(base) > 0;
  return blas_bases().count(base) || *lapack ? n : "";
}

struct ObjectSymbols {
  std::string name;
  std::set<std::string> imports_blas, imports_lapack;
  bool defines_blas = false, defines_lapack = false, ours = false;
};

int scan_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<ObjectSymbols>*>(data);
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  if (name.rfind("linux-vdso", 0) == 0 || name.rfind("linux-gate", 0) == 0) return 0;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 0;
  ElfW(Addr) symtab = 0, strtab = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
  }
  // The dynamic linker relocates these entries in place on most architectures; add the base where it did not.
  if (symtab && symtab < info->dlpi_addr) symtab += info->dlpi_addr;
  if (strtab && strtab < info->dlpi_addr) strtab += info->dlpi_addr;
  // .dynsym directly precedes .dynstr in the objects linkers make: its size is the distance between them.
  if (!symtab || strtab <= symtab) return 0;
  const std::size_t count = std::min<std::size_t>((strtab - symtab) / sizeof(ElfW(Sym)), 1u << 20);
  ObjectSymbols o;
  o.name = name.empty() ? "the program" : name;
  o.ours = is_our_address(reinterpret_cast<const void*>(symtab));
  const auto* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  const char* strs = reinterpret_cast<const char*>(strtab);
  for (std::size_t i = 1; i < count; ++i) {
    const ElfW(Sym)& s = syms[i];
    const int type = ELF64_ST_TYPE(s.st_info);
    if (s.st_name == 0 || (type != STT_FUNC && type != STT_NOTYPE)) continue;
    bool lapack = false;
    const std::string n = blas_name(strs + s.st_name, &lapack);
    if (n.empty()) continue;
    if (s.st_shndx == SHN_UNDEF)
      (lapack ? o.imports_lapack : o.imports_blas).insert(n);
    else
      (lapack ? o.defines_lapack : o.defines_blas) = true;
  }
  out->push_back(std::move(o));
  return 0;
}

std::string join(const std::set<std::string>& s, std::size_t max) {
  std::string r;
  std::size_t i = 0;
  for (const auto& n : s) {
    if (i == max) return r + " and " + std::to_string(s.size() - max) + " more";
    r += (i++ ? ", " : "") + n;
  }
  return r;
}

}  // namespace

std::string nothing_intercepted_note() {
  std::string note = "no BLAS call reached blasoffload.";
  std::vector<ObjectSymbols> objects;
  dl_iterate_phdr(scan_object, &objects);
  std::set<std::string> intercepted, precisions;
  for (std::size_t i = 0; i < kNumRoutines; ++i) {
    intercepted.insert(routine_name(static_cast<Routine>(i)));
    precisions.insert(std::string(1, routine_name(static_cast<Routine>(i))[0]));
  }
  // The program's own objects: neither blasoffload nor a BLAS or LAPACK library (their imports say nothing of what
  // the program calls).
  std::set<std::string> uncaught, lapack_calls, lapack_other_precision;
  bool imports_any = false;
  for (const auto& o : objects) {
    if (o.ours || o.defines_blas || o.defines_lapack) continue;
    for (const auto& n : o.imports_blas) {
      imports_any = true;
      if (!intercepted.count(n)) uncaught.insert(n);
    }
    for (const auto& n : o.imports_lapack) {
      imports_any = true;
      lapack_calls.insert(n);
      if (!precisions.count(std::string(1, n[0]))) lapack_other_precision.insert(n);
    }
  }
  std::string said;
  // The program calls LAPACK in a precision we intercept, yet nothing arrived: that LAPACK calls its BLAS inside
  // the BLAS library (OpenBLAS's and MKL's reimplement the factorisations), not through the exported BLAS symbols.
  for (const auto& n : lapack_calls) {
    if (lapack_other_precision.count(n)) continue;
    void* p = find_foreign_symbol((n + "_").c_str());  // the CPU LAPACK's, not ours (we intercept some routines)
    Dl_info info{};
    if (!p || !dladdr(p, &info) || !info.dli_fname) continue;
    said = std::string(" LAPACK here comes from ") + info.dli_fname +
           "; a LAPACK built into the BLAS library (e.g. OpenBLAS's own) calls its BLAS internally, bypassing "
           "blasoffload. Use reference LAPACK (Debian: liblapack3) to route its BLAS calls through blasoffload.";
    break;
  }
  std::string ours;
  for (const auto& n : intercepted) ours += (ours.empty() ? "" : ", ") + n;
  if (!uncaught.empty())
    said += " The program calls " + join(uncaught, 6) +
            ", which blasoffload does not intercept (they go to the CPU BLAS directly); it intercepts " + ours + ".";
  if (!lapack_other_precision.empty() && said.find("LAPACK here") == std::string::npos)
    said += " The program calls LAPACK's " + join(lapack_other_precision, 4) +
            ", whose BLAS calls are in a precision blasoffload does not intercept (it intercepts " + ours + ").";
  if (said.empty() && !imports_any)
    said =
        " The program imports no BLAS or LAPACK routine itself: if a library it loads calls BLAS, it does so "
        "inside the BLAS library (e.g. OpenBLAS's own LAPACK), bypassing blasoffload.";
  if (said.empty()) said = " Calls made inside a BLAS library (e.g. OpenBLAS's own LAPACK) bypass blasoffload.";
  return note + said;
}

}  // namespace blasoffload
