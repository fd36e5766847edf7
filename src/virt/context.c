/*
 * The first frame of a new context, in the layout the switch of this
 * architecture pops (switch_x86_64.S, switch_aarch64.S).
 */
#include "virt/context.h"

#include <stdint.h>
#include <string.h>

void *tdm_virt_context_make(void *top, void (*entry)(void *))
{
    uintptr_t sp = (uintptr_t)top & ~(uintptr_t)15;
#if defined(__x86_64__)
    /* MXCSR and x87 control word, r12 (the entry), r13, r14, r15, rbx, rbp,
       and the address the switch returns to. */
    uint64_t *frame = (uint64_t *)(sp - 10 * sizeof(uint64_t));
    memset(frame, 0, 10 * sizeof(uint64_t));
    frame[0] = 0x1F80u | ((uint64_t)0x037Fu << 32); /* the defaults of the ABI */
    frame[1] = (uint64_t)(uintptr_t)entry;
    frame[7] = (uint64_t)(uintptr_t)tdm_virt_trampoline;
    return frame;
#elif defined(__aarch64__)
    /* x19 (the entry) to x28, x29, x30 (the trampoline), d8 to d15, and
       the FPCR (0: round to nearest, the default). */
    uint64_t *frame = (uint64_t *)(sp - 176);
    memset(frame, 0, 176);
    frame[0] = (uint64_t)(uintptr_t)entry;
    frame[11] = (uint64_t)(uintptr_t)tdm_virt_trampoline;
    return frame;
#else
#error "virtual ranks need a context switch for this architecture (src/virt/switch_*.S)"
#endif
}
