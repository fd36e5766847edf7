/*
 * Guarded stacks and the stack-overflow report. The handler runs on an
 * alternate signal stack (the faulting stack is full); it only reads the
 * table of guard pages, written before any rank starts, and writes with
 * write(2), both async-signal-safe.
 */
#include "virt/stack.h"

#include "virt/context.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if TDM_VIRT_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define MAX_WATCHED 65536

typedef struct {
    uintptr_t guard_lo, guard_hi; /* the guard page(s) */
    size_t size;                  /* usable bytes of the stack */
    int rank;                     /* virtual rank in the world */
} watched_stack;

static watched_stack watched[MAX_WATCHED];
static int watched_count; /* written before the threads start */

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

int tdm_virt_stack_alloc(tdm_virt_stack *stack, size_t size, int rank)
{
    size_t page = page_size();
    size_t usable = (size + page - 1) / page * page;
    size_t total = usable + page;
    void *map =
        mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return errno;
    if (mprotect(map, page, PROT_NONE) != 0) {
        int err = errno;
        munmap(map, total);
        return err;
    }
#if TDM_VIRT_ASAN
    /* The stack of a context that ended elsewhere in this address space may
       have left its frames poisoned in the shadow of these pages. */
    __asan_unpoison_memory_region(map, total);
#endif
    stack->map = map;
    stack->map_size = total;
    stack->bottom = (char *)map + page;
    stack->size = usable;
    if (watched_count < MAX_WATCHED)
        watched[watched_count++] =
            (watched_stack){(uintptr_t)map, (uintptr_t)map + page, usable, rank};
    return 0;
}

void tdm_virt_stack_free(tdm_virt_stack *stack)
{
    if (stack->map)
        munmap(stack->map, stack->map_size);
    stack->map = NULL;
}

void tdm_virt_stack_overflow_message(char *buf, size_t bufsize, int rank, size_t size)
{
    snprintf(buf, bufsize,
             "tandem virt: stack overflow in virtual rank %d: its stack of %zu bytes is full "
             "(set a larger TANDEM_VIRT_STACK)\n",
             rank, size);
}

static void on_segv(int sig, siginfo_t *info, void *unused)
{
    (void)unused;
    uintptr_t addr = (uintptr_t)info->si_addr;
    for (int i = 0; i < watched_count; i++) {
        if (addr >= watched[i].guard_lo && addr < watched[i].guard_hi) {
            /* snprintf of integers does not allocate in glibc; the stack is
               the alternate one. */
            char line[256];
            tdm_virt_stack_overflow_message(line, sizeof line, watched[i].rank, watched[i].size);
            ssize_t ignored = write(STDERR_FILENO, line, strlen(line));
            (void)ignored;
            break;
        }
    }
    /* Fault again with the default action: the process dies of SIGSEGV as
       it would have, and a core file or the launcher says so. */
    signal(sig, SIG_DFL);
}

static __thread void *own_alt_stack; /* the alternate stack this thread installed */
#define ALT_STACK_SIZE (64 * 1024)

int tdm_virt_stack_watch(void)
{
    static int installed;
    stack_t current;
    /* A thread that has an alternate stack (AddressSanitizer gives each
       thread one, and unmaps it itself at the thread's end) keeps it. */
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE) &&
        current.ss_size >= (size_t)MINSIGSTKSZ) {
        own_alt_stack = NULL;
    } else {
        void *mem =
            mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            return errno;
        stack_t alt = {.ss_sp = mem, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
        if (sigaltstack(&alt, NULL) != 0) {
            int err = errno;
            munmap(mem, ALT_STACK_SIZE);
            return err;
        }
        own_alt_stack = mem;
    }
    if (!__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, NULL) != 0)
            return errno;
    }
    return 0;
}

void tdm_virt_stack_unwatch(void)
{
    if (!own_alt_stack)
        return;
    stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    munmap(own_alt_stack, ALT_STACK_SIZE);
    own_alt_stack = NULL;
}
