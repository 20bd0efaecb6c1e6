// Implements the unit tests' helpers; also defines XERBLA and cblas_xerbla so the library's error reports
// land here, exactly as the reference test programs provide their own.
#include "support.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdarg>
#include <cstring>
#include <ostream>

namespace bt {

std::vector<Names> routine_names() {
  return {
#define BO_ENTRY(p, P, name, NAME, T) {#p #name, #P #NAME},
#include "src/routines/routine_list.h"
#undef BO_ENTRY
  };
}

std::string upper_name(char letter, const std::string& base) {
  std::string s(1, letter);
  for (char c : base) s += char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> exported_fortran_names(const std::string& lower) {
  for (const auto& n : routine_names())
    if (n.lower == lower) return {lower + "_", lower, n.upper, n.upper + "_"};
  ADD_FAILURE() << "no routine " << lower << " in src/routines/routine_list.h";
  return {};
}

void* ours(const std::string& symbol) {
  static void* h = dlopen(BLASOFFLOAD_LIB_PATH, RTLD_NOW | RTLD_NOLOAD);
  void* p = h ? dlsym(h, symbol.c_str()) : nullptr;
  EXPECT_NE(p, nullptr) << symbol << " not exported by " << BLASOFFLOAD_LIB_PATH;
  return p;
}

void* reference(const std::string& symbol) {
  static void* h = dlopen("libblas.so.3", RTLD_NOW | RTLD_NOLOAD);
  void* p = h ? dlsym(h, symbol.c_str()) : nullptr;
  EXPECT_NE(p, nullptr) << symbol << " not in the reference libblas.so.3";
  return p;
}

std::ostream& operator<<(std::ostream& os, const ErrorRecord& r) {
  return os << "{" << r.routine << ", INFO " << r.info << ", passed as \"" << r.raw << "\"}";
}

std::vector<ErrorRecord>& xerbla_log() {
  static std::vector<ErrorRecord> log;
  return log;
}
std::vector<ErrorRecord>& cblas_xerbla_log() {
  static std::vector<ErrorRecord> log;
  return log;
}
void clear_error_logs() {
  xerbla_log().clear();
  cblas_xerbla_log().clear();
}

}  // namespace bt

// The program's own error handlers win over the CPU library's (the test executable exports them).
extern "C" void xerbla_(const char* srname, const int* info, std::size_t len) {
  const std::string raw(srname, strnlen(srname, len < 32 ? len : 32));
  std::string name = raw;
  while (!name.empty() && name.back() == ' ') name.pop_back();
  bt::xerbla_log().push_back({name, *info, raw});
}

extern "C" void cblas_xerbla(int info, const char* rout, const char* form, ...) {
  (void)form;
  bt::cblas_xerbla_log().push_back({rout, info, rout});
}
