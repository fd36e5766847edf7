/*
 * Execution contexts of user-level threads: a saved stack pointer, switched
 * by hand-written assembly (switch_x86_64.S, switch_aarch64.S) that saves
 * the callee-saved registers only. A switch is a function call: the compiler
 * already saved every caller-saved register it needs.
 */
#ifndef TDM_VIRT_CONTEXT_H
#define TDM_VIRT_CONTEXT_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define TDM_VIRT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TDM_VIRT_ASAN 1
#endif
#endif
#ifndef TDM_VIRT_ASAN
#define TDM_VIRT_ASAN 0
#endif

#if TDM_VIRT_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define TDM_VIRT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TDM_VIRT_TSAN 1
#endif
#endif
#ifndef TDM_VIRT_TSAN
#define TDM_VIRT_TSAN 0
#endif

#if TDM_VIRT_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* Save the current context's registers on its stack and its stack pointer in
   *save_sp, then resume the context whose stack pointer is to_sp. Returns, in
   the resumed context, the 'arg' of the switch that resumed it. Any thread;
   the context resumed must not be running anywhere. */
void *tdm_virt_switch(void **save_sp, void *to_sp, void *arg);

/* The first code of a new context, in the assembly beside the switch: it
   calls the entry that tdm_virt_context_make put in its frame. Never called. */
void tdm_virt_trampoline(void);

/* A new context on the stack whose highest address is 'top': the first
   switch to the returned stack pointer calls entry(arg of that switch).
   entry must never return: it switches away for good instead. */
void *tdm_virt_context_make(void *top, void (*entry)(void *));

/* A stack known to the sanitizers: where a context's stack lies, so that
   switches can be announced to AddressSanitizer
   (__sanitizer_start_switch_fiber), and ThreadSanitizer's fiber of it. */
typedef struct {
    void *sp;           /* the saved stack pointer while the context is not running */
    const void *bottom; /* lowest usable address of its stack */
    size_t size;        /* usable bytes of its stack */
    void *fiber;        /* ThreadSanitizer's fiber (NULL without it) */
} tdm_virt_context;

/* ThreadSanitizer's fiber for a new context, or the calling thread's for
   the context a kernel thread starts in; freed with the context's stack.
   Nothing without ThreadSanitizer. */
static inline void tdm_virt_context_fiber(tdm_virt_context *c, int new_one)
{
#if TDM_VIRT_TSAN
    c->fiber = new_one ? __tsan_create_fiber(0) : __tsan_get_current_fiber();
#else
    (void)new_one;
    c->fiber = NULL;
#endif
}

static inline void tdm_virt_context_fiber_free(tdm_virt_context *c)
{
#if TDM_VIRT_TSAN
    if (c->fiber)
        __tsan_destroy_fiber(c->fiber);
#endif
    c->fiber = NULL;
}

/* Switch from 'from' to 'to', telling the sanitizers where the new stack
   lies (nothing more without them). 'leaving' is 1 when 'from' will never
   run again (its fake stack can go). Returns the arg of the switch back. */
static inline void *tdm_virt_context_switch(tdm_virt_context *from, tdm_virt_context *to, void *arg,
                                            int leaving)
{
#if TDM_VIRT_TSAN
    __tsan_switch_to_fiber(to->fiber, 0);
#endif
#if TDM_VIRT_ASAN
    void *fake_stack = NULL;
    __sanitizer_start_switch_fiber(leaving ? NULL : &fake_stack, to->bottom, to->size);
    void *back = tdm_virt_switch(&from->sp, to->sp, arg);
    __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
    return back;
#else
    (void)leaving;
    return tdm_virt_switch(&from->sp, to->sp, arg);
#endif
}

/* The first thing a new context's entry does (AddressSanitizer's half of the
   switch that started it). */
static inline void tdm_virt_context_started(void)
{
#if TDM_VIRT_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}

#endif
