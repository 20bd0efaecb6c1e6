// Where blasoffload's data, config file and CUDA module are, found from where the library (or tool) itself lies.
#pragma once

#include <string>
#include <vector>

namespace blasoffload::paths {

// The directory of the object (library, module or executable) containing `addr`, symlinks resolved; "" if unknown.
std::string object_dir(const void* addr);

// The installation prefix a library or tool directory belongs to: <dir>/.. for lib, lib64 and bin, <dir>/../..
// for a Debian multiarch directory (<prefix>/lib/x86_64-linux-gnu); "" when `dir` looks like neither.
std::string prefix_of(const std::string& dir);

// The data directories (.../share/blasoffload), best first: the one of the prefix `dir` belongs to, then the
// prefix configured at build time. Duplicates removed.
std::vector<std::string> data_dirs(const std::string& dir);

// The system config files (.../etc/blasoffload.conf) in the same order; /etc when the prefix is /usr.
std::vector<std::string> system_config_files(const std::string& dir);

// The user's blasoffload directory: $XDG_CONFIG_HOME/blasoffload, else ~/.config/blasoffload; "" if neither is set.
std::string user_dir();

// Where tuned tables are looked for, in order: the user's (blasoffload-tune's default output), next to the
// module (build tree, carried copies), then each data directory's tuned_params. `module_dir` is the CUDA module's
// directory (object_dir of a function inside it). The CUDA module calls this from its tuned-table lookup.
std::vector<std::string> tuned_params_dirs(const std::string& module_dir);

// Where a tool in `exe_dir` looks for a file that lives in the library directory (libblasoffload.so,
// libblasoffload_cuda.so): exe_dir itself (build tree), then <prefix>/<configured libdir>, <prefix>/lib,
// <prefix>/lib64 and <prefix>/lib/<multiarch>. Returns the first that exists, else exe_dir/name.
std::string find_in_lib_dirs(const std::string& exe_dir, const std::string& name);

// The Debian multiarch triplet this build is for ("x86_64-linux-gnu"): the system's libraries are in
// /usr/lib/<multiarch>.
std::string multiarch();

// Lexically normalised path ("a/b/../c" -> "a/c"); no file system access.
std::string normalise(const std::string& path);

}  // namespace blasoffload::paths
