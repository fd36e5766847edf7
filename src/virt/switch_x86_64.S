/*
 * Switching between user-level threads on x86-64 (System V): the callee-saved
 * registers, the MXCSR and the x87 control word are pushed on the current
 * stack, the stack pointer is stored through the first argument, and the
 * second becomes the stack pointer, from which the same are popped. The third
 * argument is returned on the other side (and handed to a new context's entry
 * as its argument). As Boost.Context's fcontext does, without its transfer
 * structure.
 *
 *   void *tdm_virt_switch(void **save_sp, void *to_sp, void *arg);
 */
#if defined(__x86_64__)
    .text
    .globl tdm_virt_switch
    .hidden tdm_virt_switch
    .type tdm_virt_switch, @function
    .align 16
tdm_virt_switch:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r15
    pushq %r14
    pushq %r13
    pushq %r12
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r12
    popq %r13
    popq %r14
    popq %r15
    popq %rbx
    popq %rbp
    movq %rdx, %rax
    movq %rdx, %rdi
    ret
    .cfi_endproc
    .size tdm_virt_switch, .-tdm_virt_switch

/* The first code of a new context (tdm_virt_context_make puts its address
   where tdm_virt_switch returns): calls the entry kept in r12 with the
   argument of the switch, on a 16-byte aligned stack. The entry never
   returns. */
    .globl tdm_virt_trampoline
    .hidden tdm_virt_trampoline
    .type tdm_virt_trampoline, @function
    .align 16
tdm_virt_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    andq $-16, %rsp
    callq *%r12
    ud2
    .cfi_endproc
    .size tdm_virt_trampoline, .-tdm_virt_trampoline
#endif
    .section .note.GNU-stack,"",%progbits
