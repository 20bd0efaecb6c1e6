/* The x86-64 trampolines of the forwarded routines: one exported function per forwarded name of every complete family
 * (made by cmake/forward_list.cmake), each one indirect jump through its slot, and the lazy resolver stub the slots
 * start at (src/dispatch/forwarding.cpp explains the table).
 *
 * A trampoline is `lea slot(%rip), %r11; jmp *(%r11)`: no register but r11 (the ABI's scratch register, not an argument
 * register) is touched, the stack is left as the caller made it and the routine returns straight to the caller, so
 * every argument and return convention passes through unchanged (a float in xmm0, a complex in xmm0:xmm1 or through a
 * hidden pointer, an integer in rax). r11 carries the slot's address to the resolver stub. */

#define BO_TRAMPOLINE(symbol, slot) \
  .globl symbol;                    \
  .type symbol, @function;          \
  .p2align 4;                       \
  symbol:;                          \
  .cfi_startproc;                   \
  lea bo_fwd_slots + 8 * (slot)(%rip), %r11; \
  jmp *(%r11);                      \
  .cfi_endproc;                     \
  .size symbol, .- symbol;

#define BO_FWD_FAMILY(id, row)
#include "forward_families.h"

  .text
#include "forward_trampolines.inc"

/* The lazy resolver: a slot's first call lands here with the slot's address in r11 and the caller's arguments in
 * place. It saves every register that may carry an argument (rdi, rsi, rdx, rcx, r8, r9; rax, the vector-register
 * count of a variadic call; r10, the static chain; xmm0-xmm7), calls bo_fwd_resolve(slot) on a 16-byte aligned stack,
 * restores them and jumps to the definition it returned, as if the caller had called it: the return address on the
 * stack is still the caller's. */
  .globl bo_fwd_lazy
  .hidden bo_fwd_lazy
  .type bo_fwd_lazy, @function
  .p2align 4
bo_fwd_lazy:
  .cfi_startproc
  /* On entry rsp = 8 (mod 16): the caller's call pushed the return address. */
  push %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  mov %rsp, %rbp
  .cfi_def_cfa_register %rbp
  push %rdi
  push %rsi
  push %rdx
  push %rcx
  push %r8
  push %r9
  push %rax
  push %r10
  /* 8 pushes after rbp: rsp = 0 (mod 16) again; 128 bytes for the vector registers keep it so. */
  sub $128, %rsp
  movdqa %xmm0, 0(%rsp)
  movdqa %xmm1, 16(%rsp)
  movdqa %xmm2, 32(%rsp)
  movdqa %xmm3, 48(%rsp)
  movdqa %xmm4, 64(%rsp)
  movdqa %xmm5, 80(%rsp)
  movdqa %xmm6, 96(%rsp)
  movdqa %xmm7, 112(%rsp)
  mov %r11, %rdi
  call bo_fwd_resolve@PLT
  mov %rax, %r11
  movdqa 0(%rsp), %xmm0
  movdqa 16(%rsp), %xmm1
  movdqa 32(%rsp), %xmm2
  movdqa 48(%rsp), %xmm3
  movdqa 64(%rsp), %xmm4
  movdqa 80(%rsp), %xmm5
  movdqa 96(%rsp), %xmm6
  movdqa 112(%rsp), %xmm7
  add $128, %rsp
  pop %r10
  pop %rax
  pop %r9
  pop %r8
  pop %rcx
  pop %rdx
  pop %rsi
  pop %rdi
  pop %rbp
  .cfi_def_cfa %rsp, 8
  jmp *%r11
  .cfi_endproc
  .size bo_fwd_lazy, .- bo_fwd_lazy

/* The slots, one row per complete family in forward_families.h's order, each row in forward_list.h's order: written
 * by forwarding.cpp at run time, so in .data (not RELRO). Each starts at the resolver stub. */
  .data
  .globl bo_fwd_slots
  .hidden bo_fwd_slots
  .type bo_fwd_slots, @object
  .p2align 6
bo_fwd_slots:
#define BO_FWD_BLAS(name) .quad bo_fwd_lazy;
#define BO_FWD_CBLAS(name) .quad bo_fwd_lazy;
#define BO_FWD_LAPACK(name) .quad bo_fwd_lazy;
#define BO_FWD_VERBATIM(symbol) .quad bo_fwd_lazy;
  .rept BO_FWD_ROWS
#include "forward_list.h"
  .endr
  .size bo_fwd_slots, .- bo_fwd_slots

  .section .note.GNU-stack, "", @progbits
