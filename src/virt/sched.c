/*
 * Cores, ready queues, blocking and waking, and the deadlock report.
 *
 * Invariants: a rank is in at most one ready queue, that of its own core; it
 * is put there by tdm_virt_wake only when it moved want_wake from 1 to 0,
 * and by tdm_virt_yield for itself. A core's scheduler context runs only
 * when no rank of that core runs. A deadlock is every core idle with every
 * ready queue empty (checked under idle_mutex by the last core to go idle);
 * with several processes, also every other process so and no message on
 * its way between them, which config.quiet finds out (virt/net).
 */
#include "virt/sched.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tdm_virt_core {
    int index;
    pthread_t thread;
    tdm_virt_context scheduler; /* the kernel thread's own context */
    tdm_virt_rank *current;     /* the rank running, or NULL in the scheduler */
    int lock;                   /* spin lock of the ready queue */
    tdm_virt_rank *head, *tail; /* the ready queue */
    int sleeping;               /* the scheduler waits on 'wakeup' (atomic) */
    pthread_mutex_t mutex;
    pthread_cond_t wakeup;
    int cpu;         /* the CPU it is pinned to, or -1 */
    int empty_polls; /* polls of other processes in a row that found nothing */
    int quiet;       /* it sleeps between polls, no rank to run (atomic) */
    double ran;      /* TANDEM_VIRT_WTIME=rank: seconds its ranks have run */
} __attribute__((aligned(64)));

/* Empty polls of the real MPI an idle core makes (yielding the CPU in
   between) before it sleeps 20 us between polls. */
#define IDLE_POLLS_BEFORE_SLEEP 10000

/* How long an idle core of a single process watches its ready queue before
   it sleeps on its condition variable: a rank of another core that wakes
   one of its ranks within that time costs a store, not a futex wake-up and
   the sleeper's return to its CPU. */
#define IDLE_SPIN_NS 50000

#if TDM_VIRT_TSAN
/* ThreadSanitizer does not model fences (GCC says so with -Wtsan); the
   sequentially consistent accesses beside each fence here are what it sees. */
#pragma GCC diagnostic ignored "-Wtsan"
#endif

int tdm_virt_one_thread;

static tdm_virt_sched_config config;
static tdm_virt_core *cores;
static tdm_virt_rank *ranks;
static int rank_count;
static int finished;   /* ranks done (atomic) */
static int idle_cores; /* cores in the idle path, under idle_mutex */
static pthread_mutex_t idle_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Initial-exec: the library is loaded with the program, never by dlopen,
   and each rank reads this on every MPI call. */
static __thread tdm_virt_core *this_core __attribute__((tls_model("initial-exec")));

static tdm_virt_rank *pop_ready(tdm_virt_core *core)
{
    if (!__atomic_load_n(&core->head, __ATOMIC_ACQUIRE))
        return NULL;
    tdm_virt_spin_lock(&core->lock);
    tdm_virt_rank *r = core->head;
    if (r) {
        core->head = r->next;
        if (!core->head)
            core->tail = NULL;
        r->next = NULL;
    }
    tdm_virt_spin_unlock(&core->lock);
    return r;
}

static void push_ready(tdm_virt_rank *r)
{
    tdm_virt_core *core = r->core;
    tdm_virt_spin_lock(&core->lock);
    r->next = NULL;
    if (core->tail)
        core->tail->next = r;
    else
        __atomic_store_n(&core->head, r, __ATOMIC_RELEASE);
    core->tail = r;
    tdm_virt_spin_unlock(&core->lock);
    if (core == this_core)
        return; /* its scheduler is not sleeping: this rank runs on it */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&core->sleeping, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&core->mutex);
        pthread_cond_signal(&core->wakeup);
        pthread_mutex_unlock(&core->mutex);
    }
}

tdm_virt_rank *tdm_virt_rank_at(int local)
{
    return local >= 0 && local < rank_count ? &ranks[local] : NULL;
}

int tdm_virt_rank_count(void)
{
    return rank_count;
}

tdm_virt_rank *tdm_virt_self(void)
{
    return this_core ? this_core->current : NULL;
}

static double monotonic_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double tdm_virt_rank_wtime(tdm_virt_rank *self)
{
    return monotonic_s() - (self->core->ran - self->ran);
}

/* Leave the running rank 'self' for the next ready rank of its core, or for
   the scheduler when none is ready. */
static void switch_away(tdm_virt_rank *self, int leaving)
{
    tdm_virt_core *core = self->core;
    tdm_virt_rank *next = pop_ready(core);
    if (next == self) {
        /* Woken (or yielded) with nobody ahead of it: go on running. */
        return;
    }
    if (config.rank_time) {
        double turn = monotonic_s() - self->run_start;
        self->ran += turn;
        core->ran += turn;
    }
    core->current = next;
    /* A rank that has not run yet takes its rank from this argument. */
    tdm_virt_context_switch(&self->context, next ? &next->context : &core->scheduler, next,
                            leaving);
    /* Running again, on the same core. */
    core->current = self;
    if (config.rank_time)
        self->run_start = monotonic_s();
    if (config.enter)
        config.enter(self);
}

void tdm_virt_wait_prepare(tdm_virt_rank *self, const char *call, int peer, int tag)
{
    self->blocked_call = call;
    self->blocked_peer = peer;
    self->blocked_tag = tag;
    if (tdm_virt_one_thread) /* only this thread reads it */
        self->want_wake = 1;
    else
        __atomic_store_n(&self->want_wake, 1, __ATOMIC_SEQ_CST);
}

void tdm_virt_wait_cancel(tdm_virt_rank *self)
{
    if (__atomic_exchange_n(&self->want_wake, 0, __ATOMIC_SEQ_CST)) {
        self->blocked_call = NULL;
        return;
    }
    /* A wake came first and queued this rank: take that turn. */
    switch_away(self, 0);
    self->blocked_call = NULL;
}

void tdm_virt_wait_commit(tdm_virt_rank *self)
{
    switch_away(self, 0);
    self->blocked_call = NULL;
}

void tdm_virt_wake(tdm_virt_rank *rank)
{
    /* The caller's store that makes the rank's condition true must be seen
       before this load of want_wake, as the rank's store of want_wake is
       before its load of the condition (tdm_virt_wait_prepare): x86 lets a
       load pass an earlier store to another address, a sequentially
       consistent load included, and then both sides missed each other: the
       rank slept on a condition already true (a c2v4 test hung in 1 of some
       20 runs). A rank of this core is not running now, so needs none. */
    if (tdm_virt_one_thread) {
        if (rank->want_wake) {
            rank->want_wake = 0;
            push_ready(rank);
        }
        return;
    }
    if (rank->core != this_core)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&rank->want_wake, __ATOMIC_SEQ_CST))
        return;
    if (__atomic_exchange_n(&rank->want_wake, 0, __ATOMIC_SEQ_CST)) {
        push_ready(rank);
    }
}

void tdm_virt_yield(tdm_virt_rank *self)
{
    if (config.poll)
        config.poll(); /* what other processes sent may be what the rank waits for */
    if (!__atomic_load_n(&self->core->head, __ATOMIC_ACQUIRE))
        return;
    push_ready(self);
    switch_away(self, 0);
}

/* The first code of every rank, on its own stack. */
static void rank_entry(void *arg)
{
    tdm_virt_context_started();
    tdm_virt_rank *self = arg;
    if (config.rank_time)
        self->run_start = monotonic_s();
    if (config.enter)
        config.enter(self);
    self->exit_code = config.main(self);
    self->done = 1;
    self->blocked_call = NULL;
    if (__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST) == rank_count) {
        for (int c = 0; c < config.cores; c++) {
            pthread_mutex_lock(&cores[c].mutex);
            pthread_cond_signal(&cores[c].wakeup);
            pthread_mutex_unlock(&cores[c].mutex);
        }
    }
    switch_away(self, 1);
    abort(); /* a finished rank is never resumed */
}

static void report_deadlock(void)
{
    /* the report as one text: with several processes the first prints every
       process's, so that none is lost when the job stops */
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        out = stderr;
    if (config.single_process)
        fprintf(out, "tandem virt: deadlock: every virtual rank of the process is blocked and no "
                     "message can arrive\n");
    else
        fprintf(out,
                "tandem virt: deadlock: every virtual rank of the job is blocked or finished and "
                "no message is on its way (ranks %d-%d, in this process)\n",
                config.world_offset, config.world_offset + rank_count - 1);
    for (int i = 0; i < rank_count; i++) {
        tdm_virt_rank *r = &ranks[i];
        if (r->done)
            fprintf(out, "  virtual rank %d: finished\n", r->world);
        else if (r->blocked_call && r->blocked_peer != TDM_VIRT_NONE)
            fprintf(out, "  virtual rank %d: blocked in %s (peer %d, tag %d)\n", r->world,
                    r->blocked_call, r->blocked_peer, r->blocked_tag);
        else
            fprintf(out, "  virtual rank %d: blocked in %s\n", r->world,
                    r->blocked_call ? r->blocked_call : "?");
    }
    if (out != stderr) {
        fclose(out);
        if (config.reported)
            config.reported(text); /* the job's report; ends the process */
        else
            fputs(text, stderr);
        free(text);
    }
    fflush(stderr);
    if (config.abort)
        config.abort(1);
    abort();
}

/* Every core of this process sleeps between its polls and no rank is ready
   (several processes). */
static int process_quiet(void)
{
    /* the queue before the flag: a core clears its flag before it takes a
       rank from its queue (run_core) */
    for (int c = 0; c < config.cores; c++)
        if (__atomic_load_n(&cores[c].head, __ATOMIC_SEQ_CST) ||
            !__atomic_load_n(&cores[c].quiet, __ATOMIC_SEQ_CST))
            return 0;
    return 1;
}

/* Nothing is ready on 'core': poll the other processes, detect a deadlock,
   or sleep until a rank of this core is woken. */
static void idle(tdm_virt_core *core)
{
    if (config.poll && config.poll()) {
        core->empty_polls = 0;
        __atomic_store_n(&core->quiet, 0, __ATOMIC_SEQ_CST);
        return;
    }
    if (!config.single_process) {
        /* A message from another process may come at any time: poll, giving
           the CPU to others between polls, and sleep only after a while
           without any (an MPI rank would spin all along). */
        if (++core->empty_polls < IDLE_POLLS_BEFORE_SLEEP) {
            sched_yield();
            return;
        }
        __atomic_store_n(&core->quiet, 1, __ATOMIC_SEQ_CST);
        if (config.quiet && process_quiet()) {
            int unfinished = rank_count - __atomic_load_n(&finished, __ATOMIC_SEQ_CST);
            if (config.quiet(unfinished) == TDM_VIRT_DEADLOCK)
                report_deadlock();
        }
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
        return;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long spins = 0;; spins++) {
        if (__atomic_load_n(&core->head, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&finished, __ATOMIC_ACQUIRE) >= rank_count)
            return;
        tdm_virt_cpu_relax();
        if (spins % 64 == 63) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > IDLE_SPIN_NS)
                break;
        }
    }
    pthread_mutex_lock(&idle_mutex);
    idle_cores++;
    int deadlock = 0;
    if (idle_cores == config.cores && __atomic_load_n(&finished, __ATOMIC_SEQ_CST) < rank_count) {
        deadlock = 1;
        for (int c = 0; c < config.cores; c++)
            if (__atomic_load_n(&cores[c].head, __ATOMIC_SEQ_CST))
                deadlock = 0;
    }
    pthread_mutex_unlock(&idle_mutex);
    if (deadlock)
        report_deadlock();

    pthread_mutex_lock(&core->mutex);
    __atomic_store_n(&core->sleeping, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&core->head, __ATOMIC_SEQ_CST) &&
        __atomic_load_n(&finished, __ATOMIC_SEQ_CST) < rank_count)
        pthread_cond_wait(&core->wakeup, &core->mutex);
    __atomic_store_n(&core->sleeping, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&core->mutex);

    pthread_mutex_lock(&idle_mutex);
    idle_cores--;
    pthread_mutex_unlock(&idle_mutex);
}

static void pin(tdm_virt_core *core)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int n = CPU_COUNT(&allowed);
    if (n <= 0)
        return;
    int want = core->index % n, seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed))
            continue;
        if (seen++ == want) {
            core->cpu = cpu;
            break;
        }
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core->cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/* The scheduler loop of one core, on its kernel thread. */
static void *run_core(void *arg)
{
    tdm_virt_core *core = arg;
    this_core = core;
    core->cpu = -1;
    if (config.cores > 1)
        pin(core);
    tdm_virt_stack_watch();
    tdm_virt_context_fiber(&core->scheduler, 0);
#if TDM_VIRT_ASAN
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr;
        size_t size;
        pthread_attr_getstack(&attr, &addr, &size);
        core->scheduler.bottom = addr;
        core->scheduler.size = size;
        pthread_attr_destroy(&attr);
    }
#endif
    while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < rank_count) {
        /* no longer quiet before a rank leaves the queue (process_quiet
           reads the queue first) */
        if (__atomic_load_n(&core->quiet, __ATOMIC_RELAXED) &&
            __atomic_load_n(&core->head, __ATOMIC_SEQ_CST)) {
            core->empty_polls = 0;
            __atomic_store_n(&core->quiet, 0, __ATOMIC_SEQ_CST);
        }
        tdm_virt_rank *next = pop_ready(core);
        if (!next) {
            idle(core);
            continue;
        }
        core->current = next;
        tdm_virt_context_switch(&core->scheduler, &next->context, next, 0);
        core->current = NULL;
    }
    this_core = NULL;
    tdm_virt_stack_unwatch();
    return NULL;
}

int tdm_virt_sched_init(const tdm_virt_sched_config *c)
{
    config = *c;
    rank_count = c->cores * c->ranks_per_core;
    tdm_virt_one_thread = c->cores == 1;
    cores = calloc((size_t)c->cores, sizeof *cores);
    ranks = calloc((size_t)rank_count, sizeof *ranks);
    if (!cores || !ranks)
        return ENOMEM;
    for (int i = 0; i < c->cores; i++) {
        cores[i].index = i;
        pthread_mutex_init(&cores[i].mutex, NULL);
        pthread_cond_init(&cores[i].wakeup, NULL);
    }
    for (int i = 0; i < rank_count; i++) {
        tdm_virt_rank *r = &ranks[i];
        r->local = i;
        r->world = c->world_offset + i;
        r->core = &cores[i / c->ranks_per_core];
        r->blocked_peer = r->blocked_tag = TDM_VIRT_NONE;
        int err = tdm_virt_stack_alloc(&r->stack, c->stack_size, r->world);
        if (err) {
            fprintf(stderr,
                    "tandem virt: cannot map the stack of virtual rank %d (%zu bytes): %s\n",
                    r->world, c->stack_size, strerror(err));
            return err;
        }
        r->context.bottom = r->stack.bottom;
        r->context.size = r->stack.size;
        r->context.sp = tdm_virt_context_make((char *)r->stack.bottom + r->stack.size, rank_entry);
        tdm_virt_context_fiber(&r->context, 1);
    }
    finished = 0;
    /* Every rank starts ready, in order, on its core. */
    for (int i = 0; i < rank_count; i++)
        push_ready(&ranks[i]);
    return 0;
}

int tdm_virt_sched_run(void)
{
    for (int i = 1; i < config.cores; i++) {
        int err = pthread_create(&cores[i].thread, NULL, run_core, &cores[i]);
        if (err) {
            fprintf(stderr, "tandem virt: cannot start the kernel thread of core %d: %s\n", i,
                    strerror(err));
            abort();
        }
    }
    run_core(&cores[0]);
    for (int i = 1; i < config.cores; i++)
        pthread_join(cores[i].thread, NULL);
    for (int i = 0; i < rank_count; i++)
        if (ranks[i].exit_code != 0)
            return ranks[i].exit_code;
    return 0;
}

void tdm_virt_sched_finish(void)
{
    for (int i = 0; i < rank_count; i++) {
        tdm_virt_context_fiber_free(&ranks[i].context);
        tdm_virt_stack_free(&ranks[i].stack);
    }
    free(ranks);
    free(cores);
    ranks = NULL;
    cores = NULL;
    rank_count = 0;
}
