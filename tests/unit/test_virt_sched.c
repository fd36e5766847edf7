/*
 * The parts of the virtual ranks that need no MPI: the context switch
 * (values live across switches, a new context's argument, the floating-point
 * control state kept per context), guarded stacks (the guard page faults),
 * and the scheduler (ranks of two cores passing a token by wait and wake,
 * every wake taken exactly once).
 */
#include <fenv.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "virt/context.h"
#include "virt/sched.h"
#include "virt/stack.h"

/* ------------------------------------------------------------- switch */

static tdm_virt_context main_ctx, other_ctx;
static volatile long other_sum;
static void *first_arg;

static void other_entry(void *arg)
{
    tdm_virt_context_started();
    first_arg = arg;
    /* A rounding mode of this context's own: the switch keeps it apart. */
    fesetround(FE_UPWARD);
    long sum = 0;
    for (long i = 1;; i++) {
        sum += i;
        other_sum = sum;
        void *back = tdm_virt_context_switch(&other_ctx, &main_ctx, (void *)(intptr_t)i, 0);
        if (back == NULL)
            break;
    }
    EXPECT(fegetround() == FE_UPWARD);
    tdm_virt_context_switch(&other_ctx, &main_ctx, (void *)(intptr_t)-1, 1);
}

static void test_switch(void)
{
    tdm_virt_stack stack;
    EXPECT(tdm_virt_stack_alloc(&stack, 64 * 1024, 0) == 0);
    other_ctx.bottom = stack.bottom;
    other_ctx.size = stack.size;
    other_ctx.sp = tdm_virt_context_make((char *)stack.bottom + stack.size, other_entry);
    int marker = 0x5eed;
    double x = 1.0;
    long expected = 0;
    for (long i = 1; i <= 1000; i++) {
        void *got = tdm_virt_context_switch(&main_ctx, &other_ctx, (void *)&marker, 0);
        expected += i;
        EXPECT((intptr_t)got == i);
        x = x * 1.0000001 + 1e-9;
        if ((intptr_t)got != i)
            break;
    }
    EXPECT(first_arg == &marker);
    EXPECT(other_sum == expected);
    EXPECT(marker == 0x5eed);
    EXPECT(x > 1.0);
    EXPECT(fegetround() == FE_TONEAREST);
    void *last = tdm_virt_context_switch(&main_ctx, &other_ctx, NULL, 0);
    EXPECT((intptr_t)last == -1);
    tdm_virt_stack_free(&stack);
}

/* ------------------------------------------------------------- stacks */

static void test_guard_page(void)
{
    tdm_virt_stack stack;
    EXPECT(tdm_virt_stack_alloc(&stack, 20000, 7) == 0);
    EXPECT(stack.size >= 20000);
    EXPECT((char *)stack.bottom > (char *)stack.map);
    memset(stack.bottom, 1, stack.size); /* the usable part is usable */
    pid_t child = fork();
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL);                /* not AddressSanitizer's report */
        ((volatile char *)stack.bottom)[-1] = 1; /* into the guard page */
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
    char line[256];
    tdm_virt_stack_overflow_message(line, sizeof line, 7, stack.size);
    EXPECT(strstr(line, "stack overflow in virtual rank 7") != NULL);
    EXPECT(strstr(line, "TANDEM_VIRT_STACK") != NULL);
    tdm_virt_stack_free(&stack);
}

/* ---------------------------------------------------------- scheduler */

#define RANKS 6
#define ROUNDS 2000
static int token;        /* whose turn it is (atomic) */
static int turns[RANKS]; /* turns each rank took */

/* Each rank waits for its turn, takes it, and wakes the next: the token
   goes round the ranks of both cores ROUNDS times. */
static int pass_token(tdm_virt_rank *self)
{
    int me = self->local;
    for (int round = 0; round < ROUNDS; round++) {
        while (__atomic_load_n(&token, __ATOMIC_ACQUIRE) != me) {
            tdm_virt_wait_prepare(self, "pass_token", TDM_VIRT_NONE, TDM_VIRT_NONE);
            if (__atomic_load_n(&token, __ATOMIC_ACQUIRE) == me) {
                tdm_virt_wait_cancel(self);
                break;
            }
            tdm_virt_wait_commit(self);
        }
        turns[me]++;
        int next = (me + 1) % RANKS;
        __atomic_store_n(&token, next, __ATOMIC_RELEASE);
        tdm_virt_wake(tdm_virt_rank_at(next));
        if (round % 7 == 0)
            tdm_virt_yield(self);
    }
    return me == 3 ? 5 : 0;
}

static void test_scheduler(int cores)
{
    token = 0;
    memset(turns, 0, sizeof turns);
    tdm_virt_sched_config config = {
        .cores = cores,
        .ranks_per_core = RANKS / cores,
        .stack_size = 64 * 1024,
        .world_offset = 0,
        .world_size = RANKS,
        .single_process = 1,
        .main = pass_token,
    };
    EXPECT(tdm_virt_sched_init(&config) == 0);
    EXPECT(tdm_virt_rank_count() == RANKS);
    EXPECT(tdm_virt_rank_at(RANKS - 1)->core != tdm_virt_rank_at(0)->core || cores == 1);
    int code = tdm_virt_sched_run(); /* rank 3's exit code is the process's */
    EXPECT(code == 5);
    for (int r = 0; r < RANKS; r++)
        EXPECT(turns[r] == ROUNDS);
    tdm_virt_sched_finish();
}

int main(void)
{
    test_switch();
    test_guard_page();
    test_scheduler(1);
    test_scheduler(2);
    test_scheduler(3);
    UNIT_REPORT();
    return failures != 0;
}
