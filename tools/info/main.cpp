// blasoffload-info: what the installed library would do here. It leads with the answers a user asks first (is the GPU
// used, and if not why; which CPU BLAS and LAPACK; the problems found; the settings that differ from their defaults),
// then the details: installation and config files, CPU BLAS/LAPACK, GPU, CUDA module and tuned tables, calibration;
// every setting with its value and source only with --all.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/options.h"
#include "config/paths.h"
#include "dispatch/cpu_library_search.h"
#include "offload/cuda_module_api.h"
#include "offload/gpu_diagnose.h"
#include "policy/calibration.h"
#include "policy/config.h"
#include "policy/cpu_blas_probe.h"

#ifndef BLASOFFLOAD_CUDA_MAJOR
#define BLASOFFLOAD_CUDA_MAJOR 0
#endif

namespace {

using namespace blasoffload;

std::vector<std::string> g_problems;
std::vector<std::string> g_module_log;
// The leading answers, found while the details are gathered.
std::string g_gpu_answer = "not examined";
std::string g_cpu_answer = "not examined", g_lapack_answer = "not examined";

const char* source_name(Source s) {
  switch (s) {
    case Source::kEnvironment:
      return "environment";
    case Source::kFile:
      return "file";
    default:
      return "default";
  }
}

std::string object_of(const void* p) {
  Dl_info info{};
  return p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "";
}

bool readable(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

void section(const char* title) { std::printf("\n%s\n", title); }

// The library this tool describes: next to it (build tree) or in the installation's library directory.
std::string find_library(const std::string& exe_dir) {
  for (const char* name : {"libblasoffload.so.0", "libblasoffload.so"}) {
    const std::string p = paths::find_in_lib_dirs(exe_dir, name);
    if (readable(p)) return p;
  }
  return "";
}

// One setting's line: name, value, where the value came from.
void print_setting(const EffectiveValue& v) {
  const std::string value = v.source == Source::kDefault ? v.knob->def : v.value;
  std::printf("  %-34s %-40s %s%s\n", v.knob->name.c_str(), value.c_str(),
              v.source == Source::kFile ? v.where.c_str() : source_name(v.source),
              v.invalid.empty() ? "" : ("  [invalid value '" + v.invalid + "' ignored]").c_str());
}

// The settings given in the environment or a config file (an invalid one included); every setting with `all`. `hint`:
// say how to see them all.
void print_settings(bool all, bool hint) {
  section(all ? "Every setting (value, where it came from):" : "Settings that differ from their defaults:");
  int shown = 0;
  for (const auto& v : effective_values()) {
    if (!all && v.source == Source::kDefault && v.invalid.empty()) continue;
    print_setting(v);
    ++shown;
  }
  if (!shown) std::printf("  none: every setting has its default\n");
  if (hint) std::printf("  (every setting with its value and source: blasoffload-info --all)\n");
}

void print_config_files() {
  for (const auto& f : config_files_considered())
    std::printf("  config file %s: %s\n", f.first.c_str(), f.second.c_str());
  if (config_files_considered().empty()) std::printf("  config file: none\n");
  for (const auto& p : config_problems()) g_problems.push_back(p);
}

void print_cpu_blas() {
  section("CPU BLAS and LAPACK:");
  const Settings& s = settings();
  const std::string name = s.cpu_blas.empty() ? "libblas.so.3" : s.cpu_blas;
  std::printf("  looked up: %s (%s)\n", name.c_str(),
              s.cpu_blas.empty() ? "as the dynamic linker finds it; a program uses the BLAS it links or preloads after "
                                   "libblasoffload"
                                 : "BLASOFFLOAD_CPU_BLAS");
  // What the library loads itself for a program that links none (a relinked one whose -lblas the linker dropped).
  for (const auto kind : {CpuLibraryKind::kBlas, CpuLibraryKind::kLapack}) {
    if (!(kind == CpuLibraryKind::kBlas ? s.cpu_blas : s.cpu_lapack).empty()) continue;  // the setting comes first
    const std::string c = system_choice(kind, find_library(paths::object_dir(reinterpret_cast<const void*>(&section))));
    std::printf("  a program that links no CPU %s: %s\n", kind == CpuLibraryKind::kBlas ? "BLAS" : "LAPACK",
                c.empty() ? "none found, its first call aborts" : ("blasoffload loads " + c).c_str());
  }
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    g_cpu_answer = name + " cannot be loaded";
    std::printf("  not loadable: %s\n", dlerror());
    g_problems.push_back("the CPU BLAS " + name +
                         " cannot be loaded: calls that stay on the CPU need one (install "
                         "libopenblas0 or libblas3, or set BLASOFFLOAD_CPU_BLAS)");
    return;
  }
  void* sgemm = dlsym(h, "sgemm_");
  if (!sgemm) {
    g_cpu_answer = name + " defines no sgemm_";
    g_problems.push_back(name + " defines no sgemm_: not a Fortran BLAS");
    return;
  }
  const std::string lib = object_of(sgemm);
  std::printf("  sgemm_ from: %s\n", lib.c_str());
  const CpuBlasReport r = probe_cpu_blas(sgemm);
  std::printf("  reports: %s\n", r.identity.empty() ? "(nothing: not OpenBLAS)" : r.identity.c_str());
  g_cpu_answer = lib + (r.identity.empty() ? "" : " (" + r.identity + ")");
  if (!r.advice.empty()) {
    std::printf("  note: %s\n", r.advice.c_str());
    if (r.serious) g_problems.push_back(r.advice);
  }
  void* lh = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
  void* getrf = lh ? dlsym(lh, "sgetrf_") : nullptr;
  if (!getrf) {
    g_lapack_answer = "liblapack.so.3 not found";
    std::printf("  LAPACK: liblapack.so.3 not found\n");
    return;
  }
  const std::string lapack = object_of(getrf);
  Dl_info gi{};
  dladdr(getrf, &gi);
  void* own = gi.dli_fname ? dlopen(gi.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
  void* inner = own ? dlsym(own, "sgemm_") : nullptr;
  const bool builtin = inner && object_of(inner) == lapack;
  g_lapack_answer = lapack + (builtin ? " (inside the BLAS library: its own BLAS calls bypass blasoffload)" : "");
  std::printf("  LAPACK (liblapack.so.3): %s%s\n", lapack.c_str(),
              builtin ? " - a LAPACK inside a BLAS library: its BLAS calls stay inside it and bypass blasoffload "
                        "(reference LAPACK, Debian liblapack3, routes them through blasoffload)"
                      : " - reference-style LAPACK: its BLAS calls reach blasoffload");
}

// Host services for the module: the same registry the library uses; log lines are kept to show.
const char* host_config(const char* key) { return config_value(key); }
void host_log(int level, const char* message) {
  g_module_log.push_back(std::string(level <= 0 ? "warning: " : "") + message);
}
const bo_cuda_host_services kHost = {BO_CUDA_API_VERSION, host_config, host_log, nullptr, nullptr, nullptr};

void print_tables(const std::string& module_dir) {
  std::printf("  tuned tables searched (first match by GPU name, then compute capability; else built-in defaults):\n");
  if (const char* t = config_value("BLASOFFLOAD_TUNED_PARAMS")) std::printf("    %s (BLASOFFLOAD_TUNED_PARAMS)\n", t);
  for (const auto& d : paths::tuned_params_dirs(module_dir)) {
    std::string files;
    if (DIR* dir = opendir(d.c_str())) {
      while (dirent* e = readdir(dir)) {
        const std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) files += (files.empty() ? "" : ", ") + n;
      }
      closedir(dir);
      std::printf("    %s: %s\n", d.c_str(), files.empty() ? "no tables" : files.c_str());
    } else {
      std::printf("    %s: not present\n", d.c_str());
    }
  }
}

void print_gpu(const std::string& libdir, bool load_module) {
  section("GPU:");
  const GpuDiagnosis d = diagnose_gpu(BLASOFFLOAD_CUDA_MAJOR);
  g_gpu_answer = "not used: " + d.reason;
  if (d.usable)
    std::printf("  driver: CUDA %d.%d, %d device(s)\n", d.driver_version / 1000, (d.driver_version % 1000) / 10,
                d.devices);
  else
    std::printf("  not usable: %s\n", d.reason.c_str());
  const Settings& s = settings();
  const std::string module = !s.cuda_module.empty() ? s.cuda_module : libdir + "/libblasoffload_cuda.so";
  std::printf("  CUDA module: %s%s\n", module.c_str(), readable(module) ? "" : " (not present)");
  const std::string module_dir = module.substr(0, module.rfind('/') == std::string::npos ? 0 : module.rfind('/'));
  print_tables(module_dir.empty() ? "." : module_dir);
  if (!readable(module)) {
    if (d.usable) {
      g_gpu_answer = "not used: the CUDA module " + module + " is not present";
      g_problems.push_back("a GPU is present but the CUDA module " + module + " is not");
    }
    return;
  }
  if (!d.usable) {
    if (s.mode == Mode::kGpu) g_problems.push_back("BLASOFFLOAD_MODE=gpu but no usable GPU: " + d.reason);
    return;
  }
  const std::string use = s.mode == Mode::kCpu   ? "not used: BLASOFFLOAD_MODE=cpu"
                          : s.mode == Mode::kGpu ? "used for every call it can take (BLASOFFLOAD_MODE=gpu)"
                                                 : "used where the policy predicts a gain (BLASOFFLOAD_MODE=auto)";
  g_gpu_answer = use + "; " + std::to_string(d.devices) + " device(s), driver CUDA " +
                 std::to_string(d.driver_version / 1000) + "." + std::to_string((d.driver_version % 1000) / 10);
  if (!load_module) {
    g_gpu_answer += " (module not loaded: --no-gpu)";
    return;
  }
  void* h = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto entry = h ? reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY)) : nullptr;
  const bo_cuda_module* m = entry ? entry() : nullptr;
  if (!m || m->version != BO_CUDA_API_VERSION) {
    g_gpu_answer = "not used: the CUDA module cannot be loaded";
    g_problems.push_back(
        module + (h ? " is not a compatible blasoffload CUDA module" : std::string(" cannot be loaded: ") + dlerror()));
    return;
  }
  const int st = m->init(&kHost);
  std::printf("  module: %s\n", m->name);
  if (st == BO_CUDA_OK) g_gpu_answer = use + ": " + m->name;
  if (st != BO_CUDA_OK) {
    g_gpu_answer = "not used: the CUDA module could not start the GPU (status " + std::to_string(st) + ")";
    g_problems.push_back("the CUDA module could not start the GPU (status " + std::to_string(st) + ")");
  }
  for (const auto& l : g_module_log) std::printf("  module says: %s\n", l.c_str());
  if (st == BO_CUDA_OK) m->shutdown();
}

// The identity a program's library would key the policy file by: the object defining sgemm_ and its self-report.
bool cpu_identity(policy::CpuIdentity* id) {
  const Settings& s = settings();
  void* h = dlopen(s.cpu_blas.empty() ? "libblas.so.3" : s.cpu_blas.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* sgemm = h ? dlsym(h, "sgemm_") : nullptr;
  if (!sgemm) return false;
  *id = {object_of(sgemm), probe_cpu_blas(sgemm).identity};
  return true;
}

// The calibration a program would use, chosen and checked as the library does (policy::choose_calibration): the file,
// how old it is, what of it was rejected as inconsistent and why; or why the built-in rates apply.
void print_calibration() {
  section("Calibration (the offload policy's rates):");
  const Settings& s = settings();
  policy::CpuIdentity cpu;
  if (!cpu_identity(&cpu)) {
    std::printf("  no CPU BLAS to compare a policy file with: built-in rates\n");
    return;
  }
  const policy::CalibrationChoice ch = policy::choose_calibration(s.policy_file, s.policy_file_explicit, cpu);
  if (!ch.from_file) {
    std::printf("  built-in rates: %s\n", ch.message.substr(ch.message.find("defaults") + 8).c_str());
  } else {
    const policy::Calibration& c = ch.calibration;
    std::printf("  in use: %s\n  measured %s (%.0f days ago) by %s\n  for %s%s%s\n  GPU side: %s\n",
                s.policy_file.c_str(), c.created.c_str(), ch.age_days, c.tool.c_str(), c.cpu.library.c_str(),
                c.cpu.report.empty() ? "" : " ", c.cpu.report.c_str(),
                c.gpu.empty() ? "not measured, or rejected: the built-in GPU numbers (and the link as the GPU's "
                                "start-up measures it)"
                              : c.gpu.c_str());
  }
  for (const std::string& r : ch.rejected) std::printf("  rejected as inconsistent: %s\n", r.c_str());
  for (const std::string& w : ch.warnings) g_problems.push_back(w);
  std::printf(
      "  (remove the file to go back to the built-in rates; blasoffload-calibrate on an idle machine measures "
      "this one)\n");
}

// Every setting as a Markdown table: docs/settings.md is this table (tests/install/check_settings_doc.sh).
void print_knob_table() {
  std::printf("| variable | values | default | meaning |\n|---|---|---|---|\n");
  for (const auto& k : knobs()) {
    std::string values;
    if (k.kind == KnobKind::kWords) {
      for (const auto& c : k.choices)
        if (!(c.size() == 1 && std::isdigit(static_cast<unsigned char>(c[0]))))
          values += (values.empty() ? "`" : ", `") + c + "`";
    } else {
      for (char c : k.allowed) values += c == '|' ? std::string("\\|") : std::string(1, c);
    }
    const char* owner = k.owner == KnobOwner::kModule ? " (CUDA module)"
                        : k.owner == KnobOwner::kTest ? " (tests)"
                                                      : "";
    std::printf("| `%s` | %s | %s | %s%s |\n", k.name.c_str(), values.c_str(), k.def.c_str(), k.doc.c_str(), owner);
  }
}

std::string exe_dir() { return paths::object_dir(reinterpret_cast<const void*>(&exe_dir)); }

// What `f` prints, as text: the details are gathered first, so that the answers they find (the GPU, the CPU BLAS, the
// problems) can be printed before them.
std::string printed_by(const std::function<void()>& f) {
  std::fflush(stdout);
  std::FILE* t = std::tmpfile();
  const int saved = t ? dup(1) : -1;
  if (saved < 0) {
    f();
    return "";
  }
  dup2(fileno(t), 1);
  f();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string text;
  std::rewind(t);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, t)) > 0;) text.append(buf, n);
  std::fclose(t);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  bool all = false, no_gpu = false;
  std::string library;
  tools::OptionParser opts("blasoffload-info",
                           "Shows what libblasoffload would do here: whether it uses the GPU (and if not, why), the "
                           "CPU BLAS and LAPACK, the problems found and the settings that differ from their defaults; "
                           "then the installation, GPU, CUDA module, tuned tables and calibration.",
                           BLASOFFLOAD_VERSION);
  bool knob_table = false;
  opts.flag("all", &all, "list every setting with its value and where it came from (test hooks included)");
  opts.flag("knobs", &knob_table,
            "print every setting (name, values, default, meaning) as a Markdown table and exit (docs/settings.md)");
  opts.flag("no-gpu", &no_gpu, "do not load the CUDA module (the driver is still asked)");
  opts.text("library", &library, "PATH",
            "describe this libblasoffload.so (default: the installed one next to this tool)");
  opts.epilogue(
      "Exit status: 0 no problems found, 1 problems found (listed under Problems), 2 usage error.\n"
      "Settings come from the environment (BLASOFFLOAD_*) and the config file; see docs/settings.md.");
  if (const int rc = opts.parse(argc, argv); rc >= 0) return rc;
  if (knob_table) {
    print_knob_table();
    return 0;
  }

  if (library.empty()) library = find_library(exe_dir());
  std::string libdir = library.empty() ? exe_dir() : paths::normalise(library.substr(0, library.rfind('/')));
  if (library.empty())
    g_problems.push_back("libblasoffload.so not found next to " + exe_dir() + " or in its library directory");
  // The library's directory decides which installed config file applies (src/config/paths.h).
  config_set_library_dir(libdir);
  {
    // The library warns on stderr about what it reads; here the problems are listed below instead.
    std::fflush(stderr);
    const int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0) dup2(null, 2);
    settings();
    if (saved >= 0 && null >= 0) dup2(saved, 2);
    if (null >= 0) close(null);
    if (saved >= 0) close(saved);
  }
  const std::string details = printed_by([&] {
    section("Installation:");
    std::printf("  library: %s\n", library.empty() ? "(not found)" : library.c_str());
    const std::string prefix = paths::prefix_of(libdir);
    std::printf("  installation prefix: %s\n", prefix.empty() ? "(none: a build tree)" : prefix.c_str());
    std::string data;
    for (const auto& d : paths::data_dirs(libdir)) data += (data.empty() ? "" : ", ") + d;
    std::printf("  data directories: %s\n", data.c_str());
    print_config_files();
    print_cpu_blas();
    print_gpu(libdir, !no_gpu);
    print_calibration();
  });

  std::printf("blasoffload-info %s\n", BLASOFFLOAD_VERSION);
  std::printf("  GPU: %s\n", g_gpu_answer.c_str());
  std::printf("  CPU BLAS: %s\n", g_cpu_answer.c_str());
  std::printf("  CPU LAPACK: %s\n", g_lapack_answer.c_str());
  section("Problems:");
  if (g_problems.empty()) std::printf("  none\n");
  for (const auto& p : g_problems) std::printf("  - %s\n", p.c_str());
  print_settings(false, !all);
  std::fputs(details.c_str(), stdout);
  if (all) print_settings(true, false);
  return g_problems.empty() ? 0 : 1;
}
