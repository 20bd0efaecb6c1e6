// See gpu_module.h: locating, loading and version-checking the CUDA module for tests and benchmarks.
#include "gpu_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace bo_gpu {

std::string format(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string exe_dir() {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  self[len > 0 ? len : 0] = '\0';
  const std::string s(self);
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? "." : s.substr(0, slash);
}

std::string module_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  for (const char* var : {"BO_CUDA_MODULE", "BO_GPU_TEST_MODULE"})
    if (const char* e = std::getenv(var); e && *e) return e;
  const std::string dir = exe_dir();
  for (const char* rel : {"/../../libblasoffload_cuda.so", "/../lib/libblasoffload_cuda.so", "/libblasoffload_cuda.so"})
    if (access((dir + rel).c_str(), R_OK) == 0) return dir + rel;
  return dir + "/../../libblasoffload_cuda.so";  // missing: dlopen's message names it
}

Loaded load(const std::string& path) {
  Loaded r;
  r.path = path;
  r.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!r.handle) {
    r.error = format("cannot load the CUDA module (give --module=PATH or BO_CUDA_MODULE): %s", dlerror());
    return r;
  }
  auto module_fn = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(r.handle, BO_CUDA_MODULE_ENTRY));
  auto registry_fn = reinterpret_cast<bo_kernel_registry_fn>(dlsym(r.handle, BO_KERNEL_REGISTRY_ENTRY));
  if (!module_fn || !registry_fn) {
    r.error = format("%s does not export %s: a module of another version?", path.c_str(),
                     !module_fn ? BO_CUDA_MODULE_ENTRY : BO_KERNEL_REGISTRY_ENTRY);
    return r;
  }
  const bo_cuda_module* mod = module_fn();
  const bo_kernel_registry* reg = registry_fn();
  if (!mod || mod->version != BO_CUDA_API_VERSION) {
    r.error =
        format("%s: module API version %u, expected %u", path.c_str(), mod ? mod->version : 0, BO_CUDA_API_VERSION);
    return r;
  }
  if (!reg || reg->version != 5 || !reg->select || !reg->select_ex) {
    r.error = format("%s: kernel registry version %u, expected 4", path.c_str(), reg ? reg->version : 0);
    return r;
  }
  r.mod = mod;
  r.reg = reg;
  return r;
}

int load_and_init(const std::string& explicit_path, void (*log)(int, const char*), Loaded* out) {
  *out = load(module_path(explicit_path));
  if (!out->mod) return -1;
  // One host-services table per process is enough: the benchmarks load one module once.
  static bo_cuda_host_services host{};
  host = {BO_CUDA_API_VERSION, &env_config, log, nullptr, nullptr, nullptr};
  const int st = out->mod->init(&host);
  if (st != BO_CUDA_OK)
    out->error =
        format("the CUDA module's init() returned %d (%s)", st, st == BO_CUDA_NO_DEVICE ? "no usable device" : "error");
  return st;
}

const char* env_config(const char* key) { return std::getenv(key); }

int module_device() {
  const char* d = env_config("BLASOFFLOAD_DEVICE");
  return d && *d ? std::atoi(d) : 0;
}

std::vector<int> entries_of(const bo_kernel_registry* reg, int routine) {
  std::vector<int> v;
  for (size_t i = 0; reg && i < reg->count; ++i)
    if (reg->entries[i].routine == routine) v.push_back(int(i));
  return v;
}

}  // namespace bo_gpu
