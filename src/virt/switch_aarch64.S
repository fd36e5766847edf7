/*
 * Switching between user-level threads on AArch64 (AAPCS64): x19-x30,
 * d8-d15 and the FPCR (its rounding mode is the thread's own, as the
 * MXCSR's is on x86-64) are stored on the current stack, the stack pointer is stored through
 * x0, and x1 becomes the stack pointer, from which the same are loaded. x2 is
 * returned on the other side (and handed to a new context's entry as its
 * argument).
 *
 *   void *tdm_virt_switch(void **save_sp, void *to_sp, void *arg);
 */
#if defined(__aarch64__)
    .text
    .globl tdm_virt_switch
    .hidden tdm_virt_switch
    .type tdm_virt_switch, %function
    .align 4
tdm_virt_switch:
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    ldr x9, [sp, #160]
    msr fpcr, x9
    add sp, sp, #176
    mov x0, x2
    ret
    .size tdm_virt_switch, .-tdm_virt_switch

/* The first code of a new context: x30 (where the switch returns) points
   here and x19 holds the entry, called with the switch's argument in x0. */
    .globl tdm_virt_trampoline
    .hidden tdm_virt_trampoline
    .type tdm_virt_trampoline, %function
    .align 4
tdm_virt_trampoline:
    mov x29, #0
    blr x19
    brk #0
    .size tdm_virt_trampoline, .-tdm_virt_trampoline
#endif
    .section .note.GNU-stack,"",%progbits
