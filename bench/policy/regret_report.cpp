// blasoffload_regret's output helpers: JSON strings, the mode, and the context line that opens every run.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "regret.h"

namespace bo_bench {

std::string json_escape(const char* s) {
  std::string out;
  for (; s && *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

const char* mode_name() {
  const char* m = std::getenv("BLASOFFLOAD_MODE");
  return m && *m ? m : "none";
}

void print_context(const char* program, const Options& o) {
  using corename_t = char* (*)();
  using threads_t = int (*)();
  auto corename = reinterpret_cast<corename_t>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  auto config = reinterpret_cast<corename_t>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  auto threads = reinterpret_cast<threads_t>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  Dl_info info{};
  const char* sgemm_from = dladdr(reinterpret_cast<void*>(&sgemm_), &info) && info.dli_fname ? info.dli_fname : "";
  const char* dgemm_from = dladdr(reinterpret_cast<void*>(&dgemm_), &info) && info.dli_fname ? info.dli_fname : "";
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const char* preload = std::getenv("LD_PRELOAD");
  std::printf(
      "{\"context\": {\"program\": \"%s\", \"routine\": \"%s\", \"mode\": \"%s\", \"round\": %d, \"host\": \"%s\", "
      "\"sgemm_from\": \"%s\", \"dgemm_from\": \"%s\", \"ld_preload\": \"%s\", \"openblas_corename\": \"%s\", "
      "\"openblas_config\": \"%s\", "
      "\"openblas_threads\": %d, \"warmup_s\": %g, \"min_s\": %g}}\n",
      program, json_escape(o.tiny ? "tiny" : o.routine.c_str()).c_str(), json_escape(mode_name()).c_str(), o.round,
      json_escape(host).c_str(), json_escape(sgemm_from).c_str(), json_escape(dgemm_from).c_str(),
      json_escape(preload ? preload : "").c_str(), json_escape(corename ? corename() : "").c_str(),
      json_escape(config ? config() : "").c_str(), threads ? threads() : 0, o.warmup_s, o.min_s);
  std::fflush(stdout);
}

}  // namespace bo_bench
