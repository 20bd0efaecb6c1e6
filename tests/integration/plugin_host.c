/* Loads the plugin with dlopen(RTLD_LOCAL | RTLD_NOW) and runs it. Not linked to any BLAS. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_LOCAL | RTLD_NOW);
  if (!h) {
    printf("FAIL: dlopen: %s\n", dlerror());
    return 1;
  }
  int (*run)(void) = (int (*)(void))dlsym(h, "plugin_run");
  if (!run) {
    printf("FAIL: dlsym plugin_run: %s\n", dlerror());
    return 1;
  }
  if (run() != 0) {
    printf("FAIL\n");
    return 1;
  }
  printf("PASS\n");
  return 0;
}
