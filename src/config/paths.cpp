// Finds blasoffload's installed files relative to the library, so a relocated or multiarch install works.
#include "config/paths.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

// Set by CMake (src/config/CMakeLists.txt): the prefix and directories configured at build time, the fallback.
#ifndef BLASOFFLOAD_INSTALL_PREFIX
#define BLASOFFLOAD_INSTALL_PREFIX "/usr/local"
#endif
#ifndef BLASOFFLOAD_INSTALL_LIBDIR
#define BLASOFFLOAD_INSTALL_LIBDIR "lib"
#endif
#ifndef BLASOFFLOAD_INSTALL_FULL_DATADIR
#define BLASOFFLOAD_INSTALL_FULL_DATADIR "/usr/local/share"
#endif
#ifndef BLASOFFLOAD_INSTALL_FULL_SYSCONFDIR
#define BLASOFFLOAD_INSTALL_FULL_SYSCONFDIR "/usr/local/etc"
#endif
#ifndef BLASOFFLOAD_MULTIARCH
#define BLASOFFLOAD_MULTIARCH "x86_64-linux-gnu"
#endif

namespace blasoffload::paths {
namespace {

std::string dirname(const std::string& p) {
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string basename(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

void add_unique(std::vector<std::string>& v, const std::string& p) {
  if (!p.empty() && std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
}

// A Debian multiarch triplet such as x86_64-linux-gnu or aarch64-linux-gnu.
bool is_multiarch(const std::string& name) { return name.find("-linux-") != std::string::npos; }

std::string sysconf_of(const std::string& prefix) { return prefix == "/usr" ? "/etc" : prefix + "/etc"; }

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

}  // namespace

std::string normalise(const std::string& path) {
  if (path.empty()) return path;
  const bool absolute = path[0] == '/';
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    const std::size_t j = std::min(path.find('/', i), path.size());
    const std::string part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(part);
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t k = 0; k < parts.size(); ++k) out += (k ? "/" : "") + parts[k];
  return out.empty() ? "." : out;
}

std::string object_dir(const void* addr) {
  Dl_info info{};
  if (!dladdr(addr, &info) || !info.dli_fname || !*info.dli_fname) return "";
  std::string file = info.dli_fname;
  // An executable's own dli_fname may be its argv[0]: ask the kernel instead.
  if (file.find('/') == std::string::npos) {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    file.assign(buf, std::size_t(n));
  }
  // The directory with symlinks resolved (/lib -> /usr/lib on merged-/usr systems), the file name kept.
  char real[PATH_MAX];
  const std::string dir = dirname(file);
  if (realpath(dir.c_str(), real)) return real;
  return normalise(dir);
}

std::string prefix_of(const std::string& dir) {
  if (dir.empty()) return "";
  const std::string d = normalise(dir);
  const std::string base = basename(d), parent = dirname(d);
  if (is_multiarch(base) && basename(parent) == "lib") return dirname(parent);
  if (base == "lib" || base == "lib64" || base == "lib32" || base == "bin") return parent;
  return "";
}

std::vector<std::string> data_dirs(const std::string& dir) {
  std::vector<std::string> v;
  const std::string prefix = prefix_of(dir);
  if (!prefix.empty()) add_unique(v, normalise(prefix + "/share/blasoffload"));
  add_unique(v, normalise(std::string(BLASOFFLOAD_INSTALL_FULL_DATADIR) + "/blasoffload"));
  return v;
}

std::vector<std::string> system_config_files(const std::string& dir) {
  std::vector<std::string> v;
  const std::string prefix = prefix_of(dir);
  if (!prefix.empty()) add_unique(v, normalise(sysconf_of(prefix) + "/blasoffload.conf"));
  add_unique(v, normalise(std::string(BLASOFFLOAD_INSTALL_FULL_SYSCONFDIR) + "/blasoffload.conf"));
  return v;
}

std::string user_dir() {
  // Not a BLASOFFLOAD_* setting: the XDG convention, read as the environment has it (secure_getenv semantics).
  if (const char* x = secure_getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/blasoffload";
  if (const char* h = secure_getenv("HOME"); h && *h) return std::string(h) + "/.config/blasoffload";
  return "";
}

std::vector<std::string> tuned_params_dirs(const std::string& module_dir) {
  std::vector<std::string> v;
  if (const std::string u = user_dir(); !u.empty()) add_unique(v, u + "/tuned_params");
  if (!module_dir.empty()) add_unique(v, module_dir + "/tuned_params");
  for (const auto& d : data_dirs(module_dir)) add_unique(v, d + "/tuned_params");
  return v;
}

std::string multiarch() { return BLASOFFLOAD_MULTIARCH; }

std::string find_in_lib_dirs(const std::string& exe_dir, const std::string& name) {
  std::vector<std::string> dirs;
  add_unique(dirs, exe_dir);
  const std::string prefix = prefix_of(exe_dir);
  if (!prefix.empty()) {
    const std::string libdir = BLASOFFLOAD_INSTALL_LIBDIR;
    add_unique(dirs, libdir.empty() || libdir[0] == '/' ? libdir : prefix + "/" + libdir);
    for (const char* d : {"/lib", "/lib64", "/lib/" BLASOFFLOAD_MULTIARCH}) add_unique(dirs, prefix + d);
  }
  for (const auto& d : dirs)
    if (exists(d + "/" + name)) return d + "/" + name;
  return exe_dir + "/" + name;
}

}  // namespace blasoffload::paths
