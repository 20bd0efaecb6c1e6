// blasoffload-tune: measures this GPU and writes its tuned-parameter table (tuned_params/*.json).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/options.h"
#include "config/paths.h"
#include "grids.h"
#include "kernels/registry.h"
#include "kernels/spaces.h"
#include "tuner.h"

namespace {

std::string slug(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '-';
  while (r.find("--") != std::string::npos) r.erase(r.find("--"), 1);
  return r;
}

std::string exe_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  std::string s = buf;
  return s.substr(0, s.rfind('/'));
}

template <int D, class V>
void list(const bok::space::Space<D>& sp, V verdict) {
  int compiled = 0, pruned = 0, invalid = 0;
  std::printf("%s: %d points\n", sp.family, sp.size());
  for (int i = 0; i < sp.size(); ++i) {
    const auto p = sp.point(i);
    const char* why = "";
    const auto v = verdict(p, &why);
    const std::string name = bok::space::family_name(sp.family, p.data(), D);
    if (v == bok::space::Verdict::kCompiled) ++compiled, std::printf("  compiled  %s\n", name.c_str());
    if (v == bok::space::Verdict::kPruned) ++pruned, std::printf("  pruned    %-28s %s\n", name.c_str(), why);
    if (v == bok::space::Verdict::kInvalid) ++invalid;
  }
  std::printf("  => %d compiled, %d pruned, %d invalid\n", compiled, pruned, invalid);
}

}  // namespace

int main(int argc, char** argv) {
  bo::tune::Options o;
  bool list_space = false;
  blasoffload::tools::OptionParser opts("blasoffload-tune", "Measures this GPU and writes its tuned-parameter table.",
                                        BLASOFFLOAD_VERSION);
  opts.flag("quick", &o.quick, "a smoke run (a few tiles per kernel, about a minute)");
  opts.list("kernels", &o.kernels, "a,b",
            "only these table keys (snrm2 sgemv_n sgemv_t strsv_n strsv_t sgemm strsm ssyrk; dnrm2 ... dsyrk; scnrm2 "
            "cgemv_n ... csyrk cherk; dznrm2 ... zherk), or a precision letter for all its keys (--kernels=d,c,z); "
            "the table's other keys are kept");
  opts.text("out", &o.out, "PATH",
            "the table to write (default: $XDG_CONFIG_HOME/blasoffload/tuned_params/<gpu>.json, where the library "
            "looks first)");
  opts.text("cache", &o.cache, "PATH",
            "measurement cache (default: <out>.cache.jsonl); an interrupted run resumes from it");
  opts.flag("fresh", &o.fresh, "ignore the cache");
  opts.number("max-seconds", &o.max_seconds, 0, 1e9, "S",
              "stop after S seconds with a partial table (exit 3); run again to resume");
  opts.number("target-ms", &o.target_ms, 0.001, 1e6, "MS", "timed work per candidate and tile (default 25)");
  opts.text("module", &o.module, "PATH",
            "the CUDA module to tune (default: libblasoffload_cuda.so next to this program or in the library "
            "directory)");
  opts.flag("list-space", &list_space,
            "print every kernel family's parameter space with each point's verdict and exit");
  if (const int rc = opts.parse(argc, argv); rc >= 0) return rc;
  // A mistyped key would otherwise tune nothing and keep the old table, silently.
  if (const std::string bad = bo::tune::unknown_selection(o.kernels); !bad.empty()) {
    std::fprintf(stderr,
                 "blasoffload-tune: --kernels: \"%s\" is neither a table key nor a precision letter "
                 "(--list-space prints the keys)\n",
                 bad.c_str());
    return 2;
  }
  if (list_space) {
    list(bok::space::kSnrm2, [](const auto& p, const char** w) { return bok::space::snrm2_verdict(p, w); });
    list(bok::space::kSgemvN, [](const auto& p, const char** w) { return bok::space::sgemv_n_verdict(p, w); });
    list(bok::space::kSgemvT, [](const auto& p, const char** w) { return bok::space::sgemv_t_verdict(p, w); });
    list(bok::space::kStrsv, [](const auto& p, const char** w) { return bok::space::strsv_verdict(p, w); });
    list(bok::space::kSgemmWarp, [](const auto& p, const char** w) { return bok::space::sgemm_warp_verdict(p, w); });
    list(bok::space::kDnrm2, [](const auto& p, const char** w) { return bok::space::dnrm2_verdict(p, w); });
    list(bok::space::kDgemvN, [](const auto& p, const char** w) { return bok::space::dgemv_n_verdict(p, w); });
    list(bok::space::kDgemvT, [](const auto& p, const char** w) { return bok::space::dgemv_t_verdict(p, w); });
    list(bok::space::kDtrsv, [](const auto& p, const char** w) { return bok::space::dtrsv_verdict(p, w); });
    list(bok::space::kDgemmWarp, [](const auto& p, const char** w) { return bok::space::dgemm_warp_verdict(p, w); });
    for (const auto& g : bo::tune::grid_specs(o.quick)) {
      std::printf("grid %s (%s):", g.key.c_str(), g.unit.c_str());
      for (size_t d = 0; d < g.axes.size(); ++d) {
        std::printf(" %s = {", g.axes[d].c_str());
        for (size_t i = 0; i < g.points[d].size(); ++i) std::printf("%s%lld", i ? ", " : "", (long long)g.points[d][i]);
        std::printf("}");
      }
      std::printf(" -> %lld tiles\n", (long long)bo::tune::tile_count(g));
    }
    return 0;
  }
  if (o.module.empty()) {
    for (const std::string& c : {blasoffload::paths::find_in_lib_dirs(exe_dir(), "libblasoffload_cuda.so"),
                                 exe_dir() + "/../libblasoffload_cuda.so"})
      if (access(c.c_str(), R_OK) == 0) {
        o.module = c;
        break;
      }
  }
  void* h = o.module.empty() ? nullptr : dlopen(o.module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "blasoffload-tune: cannot open the CUDA module %s: %s\n", o.module.c_str(),
                 o.module.empty() ? "not found (use --module=PATH)" : dlerror());
    return 1;
  }
  auto fn = reinterpret_cast<bo_kernel_registry_fn>(dlsym(h, BO_KERNEL_REGISTRY_ENTRY));
  if (!fn || fn()->version != 5) {
    std::fprintf(stderr, "blasoffload-tune: %s has no kernel registry v5\n", o.module.c_str());
    return 1;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "blasoffload-tune: no CUDA device: nothing to tune\n");
    return 1;
  }
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  if (o.out.empty()) {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    const char* home = std::getenv("HOME");
    std::string dir = xdg && *xdg ? std::string(xdg) + "/blasoffload/tuned_params"
                                  : std::string(home ? home : ".") + "/.config/blasoffload/tuned_params";
    o.out = dir + "/" + slug(p.name) + ".json";
  }
  // The module's identity keys the cache: its kernels' names and the build (a rebuilt module with the same
  // names but different code must not reuse old timings: the file size and mtime go in too).
  const bo_kernel_registry* reg = fn();
  unsigned long long hsh = 1469598103934665603ull;
  for (size_t i = 0; i < reg->count; ++i)
    for (const char* c = reg->entries[i].name; *c; ++c) hsh = (hsh ^ (unsigned char)*c) * 1099511628211ull;
  struct stat st {};
  if (stat(o.module.c_str(), &st) == 0) {
    hsh = (hsh ^ (unsigned long long)st.st_size) * 1099511628211ull;
    hsh = (hsh ^ (unsigned long long)st.st_mtime) * 1099511628211ull;
  }
  char id[128];
  std::snprintf(id, sizeof id, "%zu kernels, id %016llx", reg->count, hsh);
  bo::tune::Tuner t(o, reg, id);
  return t.run();
}
