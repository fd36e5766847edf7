/*
 * The scheduler of virtual ranks: one kernel thread per core, each pinned to
 * a CPU of the process, running its V ranks as user-level threads. A rank
 * runs until it blocks (or yields); then the next ready rank of its core runs
 * in its place. A core with no ready rank calls the poll function (the real
 * MPI, between processes) and sleeps when nothing can arrive. Ranks never
 * move between cores, so a rank's kernel thread (and its thread-local
 * variables) stay the same for its whole life.
 */
#ifndef TDM_VIRT_SCHED_H
#define TDM_VIRT_SCHED_H

#include <stddef.h>

#include "virt/context.h"
#include "virt/stack.h"

typedef struct tdm_virt_core tdm_virt_core;
struct tdm_virt_sched;

/* No peer or tag to report of a blocking call. */
#define TDM_VIRT_NONE (-2147483647 - 1)

typedef struct tdm_virt_rank {
    int world;                     /* rank in the world of virtual ranks */
    int local;                     /* index among this process's ranks */
    tdm_virt_core *core;           /* the core it runs on, for its life */
    tdm_virt_context context;      /* its registers while it is not running */
    tdm_virt_stack stack;          /* its guarded stack */
    int want_wake;                 /* 1 while it waits for tdm_virt_wake (atomic) */
    int done;                      /* its main returned */
    int exit_code;                 /* what its main returned */
    struct tdm_virt_rank *next;    /* in its core's ready queue */
    const char *blocked_call;      /* the MPI call it waits in, for the deadlock report */
    int blocked_peer, blocked_tag; /* its source/destination and tag (TDM_VIRT_NONE: none) */
    void *data;                    /* the messaging layer's per-rank state */
    struct tdm_virt_sched *coll;   /* its nonblocking collectives in flight (virt/coll) */
    /* the request that the next nonblocking collective it starts completes,
       instead of a new one: a persistent collective's (MPI_Start), or NULL */
    struct tdm_virt_request *coll_adopt;
    /* TANDEM_VIRT_WTIME=rank: seconds it has run, and when it last started */
    double ran, run_start;
} tdm_virt_rank;

/* What each rank runs: its main, with the rank; returns its exit code. */
typedef int (*tdm_virt_rank_main)(tdm_virt_rank *rank);

/* Progress the real MPI between processes; returns nonzero if something
   arrived or completed. Called by idle cores (the poll may be NULL). */
typedef int (*tdm_virt_poll)(void);

/* Called after a deadlock was reported (on stderr); does not return. */
typedef void (*tdm_virt_abort)(int code);

/* What the processes together say of a quiet process (tdm_virt_quiet). */
enum { TDM_VIRT_GOING = 0, TDM_VIRT_DEADLOCK = 1, TDM_VIRT_ALL_DONE = 2 };

/* Called by an idle core while every core of the process is idle and no
   rank of it is ready, with the number of its ranks not finished: whether
   the job as a whole is stuck (TDM_VIRT_DEADLOCK), all finished, or going
   on. NULL in a single process. */
typedef int (*tdm_virt_quiet)(int unfinished);

/* With several processes, this process's part of the deadlock report: the
   first process prints every process's, then all exit with status 1; does
   not return (NULL in a single process). */
typedef void (*tdm_virt_reported)(const char *text);

typedef struct {
    int cores;          /* kernel threads */
    int ranks_per_core; /* user-level threads per kernel thread */
    size_t stack_size;  /* usable bytes of each rank's stack */
    int world_offset;   /* world rank of this process's first rank */
    int world_size;     /* ranks in all processes */
    int single_process; /* 1: no message can come from elsewhere (deadlock detection) */
    tdm_virt_rank_main main;
    tdm_virt_poll poll;
    tdm_virt_abort abort;
    tdm_virt_quiet quiet;
    tdm_virt_reported reported;
    int rank_time; /* keep each rank's time for tdm_virt_rank_wtime */
    /* called on the rank's kernel thread whenever a rank starts or resumes
       running (privatized globals), or NULL */
    void (*enter)(tdm_virt_rank *rank);
} tdm_virt_sched_config;

/* Make the ranks and their stacks. Returns 0, or an errno value with a
   message on stderr. Application thread, before tdm_virt_sched_run. */
int tdm_virt_sched_init(const tdm_virt_sched_config *config);

/* Run every rank to its end: starts cores-1 kernel threads, runs core 0 on
   the calling thread, joins them. Returns the first nonzero exit code of a
   rank, else 0. */
int tdm_virt_sched_run(void);

/* Free the stacks. */
void tdm_virt_sched_finish(void);

/* This process's ranks, by local index, and their number. */
tdm_virt_rank *tdm_virt_rank_at(int local);
int tdm_virt_rank_count(void);

/* The rank running on the calling kernel thread (NULL outside a rank). */
tdm_virt_rank *tdm_virt_self(void);

/* The time as the running rank 'self' sees it (TANDEM_VIRT_WTIME=rank),
   in seconds: the monotonic clock less the time the other ranks of its
   core have run, so that a rank's clock counts its own computation and
   its core's idle waits, as if it had the core alone. Needs rank_time in
   the configuration. */
double tdm_virt_rank_wtime(tdm_virt_rank *self);

/*
 * Blocking, from a rank (user-level thread), in this pattern:
 *
 *     while (!condition) {
 *         tdm_virt_wait_prepare(self, "MPI_Recv", source, tag);
 *         if (condition) { tdm_virt_wait_cancel(self); break; }
 *         tdm_virt_wait_commit(self);
 *     }
 *
 * where whoever makes the condition true calls tdm_virt_wake(rank) after.
 * No wake is lost: a wake between prepare and commit makes the rank ready
 * again, and commit then returns once it is its turn.
 */
void tdm_virt_wait_prepare(tdm_virt_rank *self, const char *call, int peer, int tag);
void tdm_virt_wait_cancel(tdm_virt_rank *self);
void tdm_virt_wait_commit(tdm_virt_rank *self);

/* Make 'rank' ready if it waits (from any rank or core). */
void tdm_virt_wake(tdm_virt_rank *rank);

/* Let the other ready ranks of this core run first (a failed MPI_Test). */
void tdm_virt_yield(tdm_virt_rank *self);

/* A pause in a spin (the CPU's hint), and the spin locks of the queues and
   the scheduler: an int, 0 when free. */
static inline void tdm_virt_cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* 1 while every rank of the process runs on one kernel thread and no other
   thread calls into the runtime (one core, no progress thread): the spin
   locks are then not needed (set by tdm_virt_sched_init, cleared before a
   progress thread starts). */
extern int tdm_virt_one_thread;

static inline void tdm_virt_spin_lock(int *l)
{
    if (tdm_virt_one_thread)
        return;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            tdm_virt_cpu_relax();
}

static inline void tdm_virt_spin_unlock(int *l)
{
    if (tdm_virt_one_thread)
        return;
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif
