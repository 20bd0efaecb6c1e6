/* Loads the extension stand-in (ext.c) RTLD_LOCAL, as Python imports an extension module, and runs its checks. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  int (*run)(void) = (int (*)(void))dlsym(h, "run_checks");
  const int failures = run ? run() : -1;
  printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
