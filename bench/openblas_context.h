/* The CPU BLAS a C benchmark program ran with, for its JSON context line (bench/mix, bench/firstrun): where a symbol
 * came from (the runner's stack chooses the libraries at run time) and OpenBLAS's own report of its core,
 * configuration and threads. Each program includes it once, after defining _GNU_SOURCE (dladdr); everything is
 * static. */
#ifndef BLASOFFLOAD_BENCH_OPENBLAS_CONTEXT_H
#define BLASOFFLOAD_BENCH_OPENBLAS_CONTEXT_H

#include <dlfcn.h>
#include <stdio.h>

/* The file of the object that defines symbol in this process, "" when none does. */
static const char* symbol_from(const char* symbol) {
  Dl_info info = {0};
  void* p = dlsym(RTLD_DEFAULT, symbol);
  return p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "";
}

/* "openblas_corename": "...", "openblas_config": "...", "openblas_threads": N (empty and 0 without OpenBLAS). */
static void openblas_fields(char* buf, size_t size) {
  typedef char* (*str_fn)(void);
  typedef int (*int_fn)(void);
  str_fn corename = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_corename");
  str_fn config = (str_fn)dlsym(RTLD_DEFAULT, "openblas_get_config");
  int_fn threads = (int_fn)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  snprintf(buf, size, "\"openblas_corename\": \"%s\", \"openblas_config\": \"%s\", \"openblas_threads\": %d",
           corename ? corename() : "", config ? config() : "", threads ? threads() : 0);
}

#endif
