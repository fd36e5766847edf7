/*
 * The cost of a switch between two user-level threads: Tandem's
 * (src/virt/switch_*.S) against glibc's swapcontext, which also saves and
 * restores the signal mask with a system call. Prints one JSON object.
 *
 *   tandem-bench-virt-switch [SWITCHES]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#include "virt/context.h"
#include "virt/stack.h"

static tdm_virt_context main_ctx, peer_ctx;
static ucontext_t main_uc, peer_uc;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void peer_entry(void *arg)
{
    (void)arg;
    for (;;)
        tdm_virt_context_switch(&peer_ctx, &main_ctx, NULL, 0);
}

static void peer_uc_entry(void)
{
    for (;;)
        swapcontext(&peer_uc, &main_uc);
}

/* Nanoseconds per switch (a round trip is two), best of 5 runs. */
static double tandem_switch(long rounds)
{
    double best = 1e9;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        for (long i = 0; i < rounds; i++)
            tdm_virt_context_switch(&main_ctx, &peer_ctx, NULL, 0);
        double ns = (now() - t0) * 1e9 / (2.0 * (double)rounds);
        best = ns < best ? ns : best;
    }
    return best;
}

static double glibc_switch(long rounds)
{
    double best = 1e9;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        for (long i = 0; i < rounds; i++)
            swapcontext(&main_uc, &peer_uc);
        double ns = (now() - t0) * 1e9 / (2.0 * (double)rounds);
        best = ns < best ? ns : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 2000000;
    tdm_virt_stack stack, uc_stack;
    if (tdm_virt_stack_alloc(&stack, 65536, 0) || tdm_virt_stack_alloc(&uc_stack, 65536, 1)) {
        fprintf(stderr, "cannot map the stacks\n");
        return 1;
    }
    peer_ctx.bottom = stack.bottom;
    peer_ctx.size = stack.size;
    peer_ctx.sp = tdm_virt_context_make((char *)stack.bottom + stack.size, peer_entry);
    getcontext(&peer_uc);
    peer_uc.uc_stack.ss_sp = uc_stack.bottom;
    peer_uc.uc_stack.ss_size = uc_stack.size;
    peer_uc.uc_link = NULL;
    makecontext(&peer_uc, peer_uc_entry, 0);
    double tandem = tandem_switch(rounds);
    double glibc = glibc_switch(rounds / 10 > 0 ? rounds / 10 : 1);
    printf("{\"benchmark\": \"virt-switch\", \"switches\": %ld, \"tandem_ns\": %.2f, "
           "\"swapcontext_ns\": %.2f}\n",
           2 * rounds, tandem, glibc);
    return 0;
}
