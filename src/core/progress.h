/*
 * The progress engine: one thread per process that drives the MPI library
 * while work is counted here, and sleeps otherwise. The modules above it
 * count the work: the request tracker (core/request.h) the application's
 * requests, the proxies (core/proxy.h) what they hand over, the collectives
 * their schedules. The engine includes none of them. Its states, and who
 * moves it between them: docs/DESIGN.md.
 */
#ifndef TDM_PROGRESS_H
#define TDM_PROGRESS_H

#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>

/* Nonzero while the progress thread runs (written by the application thread
   in MPI_Init/MPI_Finalize only). */
extern int tdm_progress_running;

/* The strategy in force (TANDEM_PROGRESS): TDM_PROGRESS_OFF until the thread
   started; written only in MPI_Init and MPI_Finalize. */
enum { TDM_PROGRESS_OFF = 0, TDM_PROGRESS_DRIVE = 1, TDM_PROGRESS_PROXY = 2 };
/* TANDEM_PROGRESS=auto in the configuration: MPI_Init resolves it into one
   of the above before anything reads it (core/init.c). */
enum { TDM_PROGRESS_AUTO = 3 };
extern int tdm_progress_strategy;

/* Operations of at most this many bytes stay with the MPI library alone
   (TANDEM_EAGER_LIMIT, auto resolved for the strategy); set in MPI_Init. */
extern long long tdm_eager_limit;

/* Units of work counted now: the thread polls while there are any. */
extern atomic_long tdm_progress_work;

static inline long tdm_progress_outstanding(void)
{
    return atomic_load_explicit(&tdm_progress_work, memory_order_acquire);
}

/* One unit of work begins (an application request above the eager limit, a
   proxy handed to the thread, a schedule) or ends. Any thread; begin wakes
   the thread if needed. */
void tdm_progress_work_begin(void);
void tdm_progress_work_end(void);

/* tdm_progress_work_begin() without the wake-up: returns whether the caller
   must wake the thread (tdm_progress_wake), which it does once the work can
   be moved; a thread woken before would only contend with the caller for
   the MPI library while it posts. */
int tdm_progress_work_count(void);

/* The caller told to wake the thread did not (the work needs no thread):
   the next tdm_progress_work_count() says to wake it, whatever the count. */
void tdm_progress_work_unwoken(void);

/* Number of application threads now inside a blocking MPI call; the progress
   thread backs off meanwhile, since the MPI library progresses itself then. */
extern atomic_int tdm_progress_blocked;

static inline void tdm_progress_blocking_enter(void)
{
    if (tdm_progress_running)
        atomic_fetch_add_explicit(&tdm_progress_blocked, 1, memory_order_relaxed);
}

static inline void tdm_progress_blocking_leave(void)
{
    if (tdm_progress_running)
        atomic_fetch_sub_explicit(&tdm_progress_blocked, 1, memory_order_relaxed);
}

/* Number of application threads waiting for a proxy (tdm_proxy_wait_any:
   driving it, then asleep). A thread that otherwise sleeps between polls
   (TANDEM_POLL=event) polls and yields meanwhile, as the yield policy does:
   each round it finished after a wake-up would cost the waiter a hand-off
   (64 KiB collectives took 0.20-0.73 ms; docs/PERFORMANCE.md). It notices a
   new waiter when its current wait ends (1 ms at most). */
extern atomic_int tdm_progress_waiters;

/* Number of those asleep (the second part of tdm_proxy_wait_any): their
   cores are idle. */
extern atomic_int tdm_progress_sleepers;

/* Number of application threads moving the collectives' schedules in a wait
   (the first part of tdm_proxy_wait_any). While one does and schedules are
   all that is outstanding, the thread sleeps instead of polling beside it:
   two threads polling one MPI library take turns on its lock and on the
   core. */
extern atomic_int tdm_progress_drivers;

/* Whether the thread runs beside its rank while it computes
   (where tdm_affinity_ranks_apart); set in MPI_Init.
   Only then do posts note their CPU. */
extern atomic_int tdm_progress_follows_app;

/* The CPU an application thread last counted work on (sched_getcpu), or -1:
   where the thread follows its application, it runs there. */
extern atomic_int tdm_progress_app_cpu;

/* Note the calling application thread's CPU where the thread follows it;
   written only when it changed, so that a loop of posts on one CPU does not
   write a line the progress thread reads. */
static inline void tdm_progress_note_app_cpu(void)
{
    if (!atomic_load_explicit(&tdm_progress_follows_app, memory_order_relaxed))
        return;
    int cpu = sched_getcpu();
    if (atomic_load_explicit(&tdm_progress_app_cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&tdm_progress_app_cpu, cpu, memory_order_relaxed);
}

/* An application thread stopped driving: wake the thread if work is left. */
void tdm_progress_driver_leaves(void);

/* Work appeared (the count left zero): wake the thread. Any thread. */
void tdm_progress_wake(void);

/* A component's own poll, run by the progress thread on each pass before it
   drives the MPI library (the collectives' schedules); NULL when none. Set
   in MPI_Init before any work is counted. */
extern int (*tdm_progress_extra_poll)(void);

/* Run by the thread's probe of the MPI library while one-sided windows exist
   (tdm_impl_drive_windows, set in MPI_Init): what else the library needs
   called to move one-sided traffic; returns whether it did anything. NULL:
   nothing. */
extern int (*tdm_progress_windows_poll)(void);

/* Where the MPI library starts a request-based one-sided operation and
   sets the callback that completes its request only after that call
   returned (tdm_impl_rma_requests_race: Open MPI 4.1's osc/ucx), a poll of
   its worker by another thread in between runs the callback unset, and the
   request never completes. Then the application's threads start such
   operations between tdm_progress_issue_begin and _end, and the thread
   skips a poll that would fall in between while windows exist. Set in
   MPI_Init. */
extern int tdm_progress_issue_guard;
void tdm_progress_issue_begin(void);
void tdm_progress_issue_end(void);
/* Polls the thread skipped for such a start (TANDEM_VERBOSE=2). */
long tdm_progress_issue_skips(void);

/* Number of the thread's probes after which tdm_progress_windows_poll did
   something (for tests and TANDEM_VERBOSE=2). */
long tdm_progress_window_polls(void);

/* Work in flight that only that poll moves: the MPI library posts a
   schedule's next round only when Tandem starts it, even inside a blocking
   call. While it is nonzero the thread does not back off, and every MPI call
   the application makes through Tandem polls once (tdm_progress_touch). */
extern atomic_int tdm_progress_own_work;

static inline void tdm_progress_touch(void)
{
    if (__builtin_expect(atomic_load_explicit(&tdm_progress_own_work, memory_order_relaxed) > 0,
                         0)) {
        int (*poll)(void) = tdm_progress_extra_poll;
        if (poll)
            poll();
    }
}

/* Sleep 'us' microseconds, resumed after signals (the caller keeps its timer
   slack small when the pause must stay short). Any thread. */
void tdm_pause_us(int us);

/* The longest pause between two polls, in microseconds: of the sleep policy
   (TANDEM_POLL), of the thread while an application thread is inside a
   blocking call, and of a lending wait (TANDEM_WAIT). No other value was
   measured better; with a 1 us cap, 64 KiB iscatters of 2 ranks took 3-5 ms,
   their threads polling beside them on 2 cores (docs/PERFORMANCE.md,
   "Waiting on sockets"). */
enum { TDM_PAUSE_MAX_US = 50 };

/* One poll of the MPI library; returns nothing useful, it only moves data. */
typedef void (*tdm_progress_drive_fn)(void *context);

/* How the thread waits between two polls, in TANDEM_POLL's order. */
typedef enum { TDM_POLL_YIELD, TDM_POLL_SLEEP, TDM_POLL_EVENT } tdm_poll_policy;

/* Start the thread with a given drive function (the MPI-free core, used by the
   unit tests): 'cpu' >= 0 pins it there. Application thread. Returns 0. */
int tdm_progress_engine_start(tdm_progress_drive_fn drive, void *context, tdm_poll_policy policy,
                              int max_pause_us, int cpu);

/* Stop and join the thread. Application thread. */
void tdm_progress_engine_stop(void);

/* The CPU time the last thread used and how long it lived, in seconds; valid
   after tdm_progress_engine_stop(). */
void tdm_progress_times(double *cpu, double *wall);

/* Whether the calling thread is the progress thread. */
int tdm_progress_on_thread(void);

/* Number of polls made so far (for tests and TANDEM_VERBOSE=2). */
long tdm_progress_polls(void);

/* Number of the polls made while serving windows only (for tests and
   TANDEM_VERBOSE=2). */
long tdm_progress_serve_polls(void);

/* Number of the event policy's waits ended by news on a socket rather than
   by the timer (for tests and TANDEM_VERBOSE=2). */
long tdm_progress_socket_wakes(void);

/* Start Tandem's progress engine as the configuration says: a private
   communicator to poll on, the pinning, the thread. With the proxy strategy
   the thread calls 'test_proxies' (tdm_proxy_poll: the proxies sit above the
   engine) on each pass, and drives the MPI library itself when it returns 0.
   Collective over MPI_COMM_WORLD; application thread, in MPI_Init. Returns
   an MPI code. */
int tdm_progress_start(int (*test_proxies)(void));

/* Stop it before PMPI_Finalize, and forget the work counted. Application
   thread. */
void tdm_progress_stop(void);

/* The CPU the progress thread was pinned to, or -1 (shared / unpinned). */
int tdm_progress_cpu(void);

/* Let a thread without a CPU of its own run on any CPU of the node's ranks,
   and move to a CPU that a rank blocked in a lending wait leaves idle
   (TANDEM_WAIT) while it has work. 'mates_over_network': the MPI library
   moves messages between the node's ranks through its network module (they
   lend in every blocking call then). Application thread. */
void tdm_progress_share_node(int mates_over_network);

/* Whether the thread moves to lent CPUs (after tdm_progress_share_node: it
   shares the node's CPUs). Any thread. */
int tdm_progress_follows_lent_cpus(void);

/* How many times the thread moved to a lent CPU (TANDEM_VERBOSE=2, tests). */
long tdm_progress_moves(void);

/* Whether the thread follows lent CPUs (tdm_progress_follows_lent_cpus) and
   the node's ranks talk through the network: they lend in every blocking
   call above the eager limit, and the thread may wait for a turn on a CPU
   that a rank took back. Any thread. */
int tdm_progress_near_lenders(void);

/* The progress thread's CPU time so far, in seconds, or -1. Any thread. */
double tdm_progress_thread_seconds(void);

/* Called by an application thread asleep in a proxy wait that found the
   progress thread without a turn (tdm_progress_thread_seconds hardly moved):
   keep the thread off the CPU where it polled last until no application
   thread sleeps so. The kernel moves it at once, to the CPU the sleeper
   leaves idle; left to the scheduler, a thread queued behind a rank that
   took back the CPU it had lent waited for the next tick (4 ms here). Where
   the thread follows lent CPUs only; nothing if it last polled on the
   caller's CPU. Application thread. */
void tdm_progress_unstick(void);

/* The CPU where the thread polled last, or -1 (tests). */
int tdm_progress_polled_cpu(void);

/* How many times tdm_progress_unstick moved the thread (TANDEM_VERBOSE=2,
   tests). */
long tdm_progress_unstuck(void);

/* The time slice the thread obtained from the scheduler, in microseconds
   (100), or 0 if it kept the kernel's (TANDEM_VERBOSE=2,
   tests). Valid once the thread has started. */
int tdm_progress_slice_us(void);

#endif
