/*
 * Stacks of user-level threads: mmap'ed, with a guard page below, and a
 * SIGSEGV handler (on an alternate signal stack) that tells a stack overflow
 * into a guard page from any other fault and names the virtual rank.
 */
#ifndef TDM_VIRT_STACK_H
#define TDM_VIRT_STACK_H

#include <stddef.h>

typedef struct {
    void *map;       /* the whole mapping, guard page first */
    size_t map_size; /* bytes mapped */
    void *bottom;    /* lowest usable address, just above the guard page */
    size_t size;     /* usable bytes */
} tdm_virt_stack;

/* Map a stack of at least 'size' usable bytes (rounded up to pages) with a
   guard page below, and remember it as rank 'rank''s for the overflow
   message. Returns 0, or an errno value. Before the kernel threads start. */
int tdm_virt_stack_alloc(tdm_virt_stack *stack, size_t size, int rank);

void tdm_virt_stack_free(tdm_virt_stack *stack);

/* Install the SIGSEGV handler (once per process) and an alternate signal
   stack for the calling kernel thread (each one calls it). Returns 0 or an
   errno value. */
int tdm_virt_stack_watch(void);

/* Remove the calling thread's alternate signal stack, if
   tdm_virt_stack_watch made it (before the thread ends). */
void tdm_virt_stack_unwatch(void);

/* The message of an overflow of rank 'rank''s stack of 'size' bytes, into
   buf (the handler writes the same); for the tests. */
void tdm_virt_stack_overflow_message(char *buf, size_t bufsize, int rank, size_t size);

#endif
