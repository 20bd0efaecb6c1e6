// Makes `./libblasoffload.so` a program that prints its version and where to look next, instead of crashing.
// The kernel starts a shared object with an entry point and a .interp section like an executable: the dynamic
// linker relocates it (and loads libc) and jumps to the entry, which must exit itself (there is no caller).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#ifndef BLASOFFLOAD_VERSION
#define BLASOFFLOAD_VERSION "unknown"
#endif

#if defined(__x86_64__)
#define BO_INTERP "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define BO_INTERP "/lib/ld-linux-aarch64.so.1"
#endif

#ifdef BO_INTERP
extern "C" {
// Used only when the file is executed; a library load ignores .interp.
__attribute__((used, section(".interp"))) const char blasoffload_interp[] = BO_INTERP;

// The stack is 16-byte aligned at an entry point, not as after a call: realign for the SSE code printf may use.
__attribute__((used, noreturn, force_align_arg_pointer)) void blasoffload_run_as_program() {
  std::printf(
      "libblasoffload %s: a drop-in BLAS that runs calls on an NVIDIA GPU when that pays, else on the CPU BLAS.\n"
      "This is a library, not a program: preload it (LD_PRELOAD=libblasoffload.so.0 ./program) or link with\n"
      "-lblasoffload. Run blasoffload-info to see its configuration, the CPU BLAS and GPU it finds, and problems.\n",
      BLASOFFLOAD_VERSION);
  std::fflush(stdout);
  _exit(0);
}
}
#endif
