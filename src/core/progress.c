/*
 * The progress thread. It sleeps on a condition variable while no work is
 * counted (tdm_progress_work), so it costs no CPU while the application
 * computes with nothing in flight. While work is outstanding it calls the drive
 * function (a PMPI_Iprobe on a private communicator, which runs the MPI
 * library's progress engine) and then waits as TANDEM_POLL says: yield,
 * sleep with a pause that doubles from 1 us up to 50 us (TDM_PAUSE_MAX_US) and
 * falls back to 1 us when new work arrives, or wait on the process's sockets
 * (event: netwait.h) with the same doubling up to 1 ms (EVENT_PAUSE_MAX_US), so
 * that it runs when the network has news instead of on a timer. Yield is the
 * default: on a core shared with the computation, each wake-up from a short
 * sleep preempts the computation, which the overlap benchmark measured as a
 * 57-88% slowdown.
 * While an application thread is inside a blocking MPI call the MPI library
 * progresses on its own, so the thread only sleeps, unless work that only
 * Tandem moves (a collective's schedule) is in flight.
 */
#include "core/progress.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "core/affinity.h"
#include "core/config.h"
#include "core/log.h"
#include "core/netwait.h"
#include "core/node.h"
#include "core/runtime.h"

int tdm_progress_running;
int tdm_progress_strategy;
long long tdm_eager_limit;
atomic_long tdm_progress_work;
atomic_int tdm_progress_blocked;
atomic_int tdm_progress_own_work;
atomic_int tdm_progress_waiters;
atomic_int tdm_progress_sleepers;
atomic_int tdm_progress_drivers;
atomic_int tdm_progress_follows_app;
atomic_int tdm_progress_app_cpu = -1;

/* Where the thread runs while it has work (follow_lent_cpu): on any CPU of
   the node's ranks, on a lent CPU, off one, or beside its rank
   (docs/DESIGN.md draws the moves between them). */
typedef enum { PLACED_SHARED, PLACED_LENT, PLACED_OFF, PLACED_BESIDE } placement;

static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;           /* under lock */
    atomic_int waiting; /* written under lock: the thread sleeps, or is about to, on 'wake' */
    tdm_progress_drive_fn drive;
    void *context;
    tdm_poll_policy policy;
    int max_pause_us;
    int serve_max_us; /* the longest pause while serving windows only */
    int cpu;
    atomic_long polls;
    atomic_long serve_polls;  /* of them, while serving windows only */
    atomic_long socket_wakes; /* event policy: waits that socket news ended */
    atomic_long moves;        /* moves to a CPU a blocked rank lent */
    atomic_long unstuck;      /* moves by a waiter that found it without a turn */
    atomic_int on_cpu;        /* where it polled last */
    pthread_mutex_t place_lock;
    placement placed;       /* under place_lock: see follow_lent_cpu */
    int placed_cpu;         /* under place_lock: the CPU it names, or -1 */
    int mates_over_network; /* the node's ranks talk through the network */
    atomic_int may_move;    /* runs on the node's CPUs: may move to a lent one */
    atomic_int slice_us;    /* the slice it obtained (SLICE_US), or 0 */
    double started;         /* wall clock at start, seconds */
    double cpu_spent;       /* the thread's CPU time, seconds, written when it ends */
    double wall_spent;      /* its life time, seconds, written by the stopping thread */
} engine = {.lock = PTHREAD_MUTEX_INITIALIZER,
            .wake = PTHREAD_COND_INITIALIZER,
            .place_lock = PTHREAD_MUTEX_INITIALIZER,
            .cpu = -1};

static MPI_Comm private_comm = MPI_COMM_NULL;

void tdm_pause_us(int us)
{
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Thread_local int on_thread; /* set in the progress thread only */

enum { SLICE_US = 100 }; /* the time slice the thread asks for (progress_main) */

/* The next pause of the sleep and event policies: twice this one, at most
   the policy's longest. */
static int doubled(int pause)
{
    return pause * 2 > engine.max_pause_us ? engine.max_pause_us : pause * 2;
}

/* Follow the CPUs that ranks of the node lend. While the application
   computes, run on a lent one (the idle core of a rank blocked in a lending
   wait): left to itself, the scheduler keeps a thread that just ran beside
   the computation where it is (cache-hot), and a transfer of a millisecond
   is over before its balancing would move it. Once the application has
   slept a while in a proxy wait (work_beside), run anywhere but on the lent
   CPU: the application's own core is idle. Left there, the thread took
   turns with the lender's own polls while the waiting application's core
   idled, and a loopback TCP Irecv + Wait of 1 or 4 MiB against a lending
   MPI_Send took 3-8 ms instead of 0.3-1.3 (docs/PERFORMANCE.md, "Off a lent
   core while the application waits"). A thread that does not get to run
   cannot move itself: a sleeping waiter moves it (tdm_progress_unstick).
   With no CPU lent, where a thread on another rank's CPU would take half of
   it (tdm_affinity_ranks_apart: MPICH's ranks, each in a session of its
   own), run beside the computation on its own rank's CPU: left to the
   scheduler, an unbound MPICH ghost-cell step took 1.3-2.0 times its
   computation in 8 of 10 launches (docs/PERFORMANCE.md, "Ghost cells over
   the shaped network"). Where the ranks share a session (Open MPI's), the
   other rank's CPU is often the better place (a rank waiting in a yielding
   spin gives it up), and pinning the thread beside its own rank lowered
   the share hidden of a 1 MiB shaped receive from 92-98% to 64-88%.
   Otherwise run on any CPU of the node's ranks. */
typedef enum { NO_WORK, WORK_BESIDE_COMPUTATION, WORK_FOR_SLEEPER } thread_work;

/* Pin the thread to the lent CPU or its rank's CPU 'cpu', keep it off
   'cpu', or let it share the node's CPUs ('cpu' unused). Under place_lock. Returns 0, or -1
   if the OS refused (it stays where it is). */
static int place(placement where, int cpu)
{
    int refused = where == PLACED_LENT || where == PLACED_BESIDE
                      ? tdm_affinity_pin(engine.thread, cpu)
                  : where == PLACED_OFF ? tdm_affinity_share_node_except(engine.thread, cpu)
                                        : tdm_affinity_share_node(engine.thread);
    if (refused)
        return -1;
    if (where == PLACED_LENT)
        atomic_fetch_add_explicit(&engine.moves, 1, memory_order_relaxed);
    if (where == PLACED_LENT || engine.placed == PLACED_LENT)
        tdm_node_guest(where == PLACED_LENT ? cpu : -1); /* its lender sleeps while it is there */
    engine.placed = where;
    engine.placed_cpu = where == PLACED_SHARED ? -1 : cpu;
    return 0;
}

/* 'long_asleep': with WORK_FOR_SLEEPER, an application thread has slept
   AWAY_AFTER_US or longer. */
static void follow_lent_cpu(thread_work work, int long_asleep)
{
    if (!atomic_load_explicit(&engine.may_move, memory_order_relaxed))
        return;
    pthread_mutex_lock(&engine.place_lock);
    placement now = engine.placed, next = PLACED_SHARED;
    int cpu = -1;
    if (work == WORK_BESIDE_COMPUTATION) {
        int lent = tdm_node_lent_cpu(now == PLACED_LENT ? engine.placed_cpu : -1);
        int own = atomic_load_explicit(&tdm_progress_follows_app, memory_order_relaxed)
                      ? atomic_load_explicit(&tdm_progress_app_cpu, memory_order_relaxed)
                      : -1;
        next = lent >= 0 ? PLACED_LENT : own >= 0 ? PLACED_BESIDE : PLACED_SHARED;
        cpu = lent >= 0 ? lent : own;
    } else if (work == WORK_FOR_SLEEPER) {
        cpu = now == PLACED_LENT || now == PLACED_OFF ? engine.placed_cpu : tdm_node_lent_cpu(-1);
        next = now == PLACED_OFF || (long_asleep && cpu >= 0) ? PLACED_OFF : PLACED_SHARED;
    }
    if (next != now || (next != PLACED_SHARED && cpu != engine.placed_cpu))
        place(next, cpu);
    pthread_mutex_unlock(&engine.place_lock);
}

int tdm_progress_near_lenders(void)
{
    if (!tdm_progress_running || !atomic_load_explicit(&engine.may_move, memory_order_relaxed))
        return 0;
    return engine.mates_over_network;
}

double tdm_progress_thread_seconds(void)
{
    clockid_t clock;
    struct timespec t;
    if (!tdm_progress_running || pthread_getcpuclockid(engine.thread, &clock) != 0 ||
        clock_gettime(clock, &t) != 0)
        return -1;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void tdm_progress_unstick(void)
{
    if (!tdm_progress_running || on_thread ||
        !atomic_load_explicit(&engine.may_move, memory_order_relaxed))
        return;
    int cpu = atomic_load_explicit(&engine.on_cpu, memory_order_relaxed);
    if (cpu < 0 || cpu == sched_getcpu())
        return; /* it waits for the caller's CPU, which the caller leaves idle */
    pthread_mutex_lock(&engine.place_lock);
    if ((engine.placed != PLACED_OFF || engine.placed_cpu != cpu) && place(PLACED_OFF, cpu) == 0)
        atomic_fetch_add_explicit(&engine.unstuck, 1, memory_order_relaxed);
    pthread_mutex_unlock(&engine.place_lock);
}

/* What the application does while the thread has work; with an application
   thread asleep in a proxy wait, whether one has slept a while
   ('*asleep_since', the first time seen, in seconds; 0: not seen): over
   shared memory, where a 1 MiB transfer takes tens of microseconds, moving
   off at once cost more than it spared (docs/PERFORMANCE.md, "Off a lent
   core while the application waits"). */
enum { AWAY_AFTER_US = 100 };
#define AWAY_AFTER_S (AWAY_AFTER_US * 1e-6)

static thread_work work_beside(double *asleep_since, int *long_asleep)
{
    *long_asleep = 0;
    if (atomic_load_explicit(&tdm_progress_sleepers, memory_order_relaxed) > 0) {
        double now = seconds(CLOCK_MONOTONIC);
        if (*asleep_since == 0)
            *asleep_since = now;
        *long_asleep = now - *asleep_since >= AWAY_AFTER_S;
        return WORK_FOR_SLEEPER;
    }
    *asleep_since = 0;
    return atomic_load_explicit(&tdm_progress_waiters, memory_order_relaxed) > 0 ||
                   atomic_load_explicit(&tdm_progress_blocked, memory_order_relaxed) > 0
               ? NO_WORK
               : WORK_BESIDE_COMPUTATION;
}

/* Whether a one-sided window exists that peers may access (rma/window.c):
   then this process may be the target of gets, puts and accumulates that
   the MPI library serves only inside its calls. */
static int serving(void)
{
    return atomic_load_explicit(&tdm_windows_open, memory_order_relaxed) > 0;
}

/* Whether the thread has nothing to do: no work counted and no window to
   serve, or only schedules that an application thread is moving itself in
   a wait. */
static int idle(void)
{
    long outstanding = tdm_progress_outstanding();
    return (outstanding == 0 && !serving()) ||
           (outstanding > 0 &&
            atomic_load_explicit(&tdm_progress_drivers, memory_order_relaxed) > 0 &&
            outstanding == atomic_load_explicit(&tdm_progress_own_work, memory_order_relaxed));
}

/* Serving windows with nothing else to do, the thread cannot see whether a
   peer's operation arrived: one-sided traffic fills no request Tandem
   counts. So it polls on a timer whose pause doubles from 1 us up to
   SERVE_MAX_US while its polls find nothing, and starts again from 1 us
   after a poll that did work, which it tells by the poll's length: more
   than four times the quietest recent poll and ACTIVE_NS more (a poll that
   matched a lock request or copied a piece of a get takes microseconds; an
   empty one a fraction of one). A target that computes then answers a
   peer's first operation within SERVE_MAX_US, and the rest of an epoch at
   the pace of a thread that polls eagerly; an idle window costs a poll a
   millisecond. A thread on a core no rank computes on
   (tdm_affinity_spare_for) polls without pause instead, as MPICH's own
   progress thread does: on the 16-core machine, a 1-4 MiB MPICH get with
   its target computing was 86-100% hidden so, against 11-24% with the
   timer (docs/PERFORMANCE.md, "One-sided: overhead and availability"). */
enum { SERVE_MAX_US = 1000, SERVE_SPARE_MAX_US = 0, ACTIVE_NS = 1000 };

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int tdm_progress_issue_guard;
static pthread_mutex_t issue_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long issue_skips; /* polls skipped for a start (TANDEM_VERBOSE=2) */

/* One poll of the thread's strategy; skipped while an application thread
   starts a one-sided operation where that needs it (tdm_progress_issue_guard). */
static void drive_once(void)
{
    if (!tdm_progress_issue_guard || !serving()) {
        engine.drive(engine.context);
        return;
    }
    if (pthread_mutex_trylock(&issue_lock) != 0) {
        atomic_fetch_add_explicit(&issue_skips, 1, memory_order_relaxed);
        return;
    }
    engine.drive(engine.context);
    pthread_mutex_unlock(&issue_lock);
}

/* The pause after a serving poll that took 'took' ns; 'quiet' follows the
   length of an empty poll (falls at once, rises slowly). */
static int serve_pause(long long took, long long *quiet, int pause)
{
    int active = *quiet > 0 && took > 4 * *quiet + ACTIVE_NS;
    if (*quiet == 0 || took < *quiet)
        *quiet = took > 0 ? took : 1;
    else
        *quiet += (took - *quiet) / 64;
    if (active)
        return 1;
    return pause * 2 > engine.serve_max_us ? engine.serve_max_us : pause * 2;
}

static void *progress_main(void *unused)
{
    (void)unused;
    on_thread = 1;
    /* Short sleeps must stay short: the default timer slack is 50 us. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    /* Turns as short as its polls: with the kernel's default slice (1.4 ms
       here) a thread woken beside a computation waited for the end of the
       computation's slice, and a rested 1 MiB shaped collective hid 0-3%
       instead of 71-85% (docs/PERFORMANCE.md, "Short turns"). 100 us is the
       kernel's shortest; the kernel's own slice measured no better anywhere. */
    if (tdm_affinity_slice_self(SLICE_US) == 0)
        atomic_store(&engine.slice_us, SLICE_US);
    if (engine.cpu >= 0)
        tdm_affinity_pin(pthread_self(), engine.cpu);
    int pause = 1;
    int serve = 1;       /* the pause while serving windows only */
    long long quiet = 0; /* the length of an empty poll, ns (serve_pause) */
    long seen = 0;
    int borrowing = 0;       /* counted in the node's borrowers: it has work */
    double asleep_since = 0; /* see work_beside */
    tdm_poll_policy policy = engine.policy;
    if (policy == TDM_POLL_EVENT && tdm_netwait_open() != 0) {
        tdm_log_warn("TANDEM_POLL=event: cannot watch sockets (epoll); sleeping instead");
        policy = TDM_POLL_SLEEP;
    }
    /* Event policy: look for sockets the MPI library opened since the last
       look; 2: now, 1: unless the last look is recent (a scan of the
       process's descriptors costs tens of microseconds, too much for every
       collective of a loop to pay when the thread wakes up for it). */
    int rescan = 2;
    pthread_mutex_lock(&engine.lock);
    for (;;) {
        while (!engine.stop && idle()) {
            /* Back on the node's CPUs before it sleeps. Here, not in a check
               of its own before this loop: work that completed between the
               two checks put the thread to sleep pinned beside its rank (a
               ThreadSanitizer run in CI found it still there 20 s later). */
            if (borrowing) {
                tdm_node_borrow(-1);
                borrowing = 0;
                follow_lent_cpu(NO_WORK, 0);
            }
            /* Announce the sleep, then look at the count once more: a waker
               that counted work (or stopped driving) before this store sees
               it here; one that does after sees 'waiting' (both sides
               fence). */
            atomic_store_explicit(&engine.waiting, 1, memory_order_relaxed);
            atomic_thread_fence(memory_order_seq_cst);
            if (idle())
                pthread_cond_wait(&engine.wake, &engine.lock);
            atomic_store_explicit(&engine.waiting, 0, memory_order_relaxed);
            pause = 1;
            rescan = rescan > 1 ? rescan : 1;
        }
        if (engine.stop) {
            if (borrowing) {
                tdm_node_borrow(-1);
                follow_lent_cpu(NO_WORK, 0);
            }
            break;
        }
        pthread_mutex_unlock(&engine.lock);
        if (!borrowing) {
            tdm_node_borrow(1);
            borrowing = 1;
        }
        int long_asleep;
        thread_work work = work_beside(&asleep_since, &long_asleep);
        follow_lent_cpu(work, long_asleep);
        atomic_store_explicit(&engine.on_cpu, sched_getcpu(), memory_order_relaxed);

        if (atomic_load_explicit(&tdm_progress_blocked, memory_order_relaxed) > 0 &&
            atomic_load_explicit(&tdm_progress_own_work, memory_order_relaxed) == 0) {
            tdm_pause_us(engine.max_pause_us);
        } else if (tdm_progress_outstanding() == 0) { /* serving windows only */
            long long t0 = now_ns();
            drive_once();
            atomic_fetch_add_explicit(&engine.polls, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&engine.serve_polls, 1, memory_order_relaxed);
            serve = serve_pause(now_ns() - t0, &quiet, serve);
            if (policy == TDM_POLL_EVENT && serve > 1) {
                if (rescan)
                    tdm_netwait_scan(rescan > 1 ? 0 : TDM_NETWAIT_RESCAN_MS);
                rescan = 0;
                if (tdm_netwait(serve)) /* a peer's operation over a socket */
                    serve = 1;
            } else {
                tdm_pause_us(serve);
            }
            seen = 0;
        } else {
            drive_once();
            atomic_fetch_add_explicit(&engine.polls, 1, memory_order_relaxed);
            serve = 1;
            long now = tdm_progress_outstanding();
            if (now > seen) /* new work: poll eagerly again */
                pause = 1;
            seen = now;
            switch (policy) {
            case TDM_POLL_YIELD:
                /* The turn is given back for a computation beside the
                   thread. While an application thread waits for a proxy,
                   this thread is what it waits for, and its own core is
                   idle: a yield then went to whatever else was runnable,
                   such as a node mate spinning in a blocking call, and a
                   4 MiB MPICH iallreduce over shared memory took 1.85 ms
                   instead of 0.95 (native 0.75; docs/PERFORMANCE.md
                   "Yielding only beside a computation"). */
                if (atomic_load_explicit(&tdm_progress_waiters, memory_order_relaxed) == 0)
                    sched_yield();
                break;
            case TDM_POLL_SLEEP:
                tdm_pause_us(pause);
                pause = doubled(pause);
                break;
            case TDM_POLL_EVENT: {
                if (atomic_load_explicit(&tdm_progress_waiters, memory_order_relaxed) > 0) {
                    sched_yield(); /* an application thread waits for a proxy */
                    pause = 1;
                    break;
                }
                if (rescan)
                    tdm_netwait_scan(rescan > 1 ? 0 : TDM_NETWAIT_RESCAN_MS);
                int news = tdm_netwait(pause);
                if (news)
                    atomic_fetch_add_explicit(&engine.socket_wakes, 1, memory_order_relaxed);
                /* A listening socket took a connection (a new socket for
                   sure), or a wait heard nothing for the longest pause (maybe
                   one the MPI library opened by itself). */
                rescan = news & 2 ? 2 : news == 0 && pause == engine.max_pause_us ? 1 : 0;
                /* The pause grows after news too: restarting it from 1 us
                   after each one cost the receiver of a 4 MiB shaped
                   transfer 7.3 ms of CPU instead of 2.4 (bench/transfer_cpu)
                   and lowered the overlap of 4 MiB collectives by up to 29
                   points (docs/PERFORMANCE.md, "Waiting on sockets"). */
                pause = doubled(pause);
                break;
            }
            }
        }
        pthread_mutex_lock(&engine.lock);
    }
    pthread_mutex_unlock(&engine.lock);
    tdm_netwait_close();
    engine.cpu_spent = seconds(CLOCK_THREAD_CPUTIME_ID); /* read after the join */
    return NULL;
}

/* Not inlined: GCC rejects an inlined atomic_thread_fence under -fsanitize=thread. */
__attribute__((noinline)) void tdm_progress_wake(void)
{
    /* The count changed before this call. A thread that is not waiting will
       look at the count again before it sleeps (see progress_main): nothing
       to do, and no lock taken, so a post never contends with the thread's
       own loop. A waiting one may still be between its announcement and
       pthread_cond_wait, holding the lock: taking the lock once makes sure it
       sleeps before the signal. Signalling after the unlock spares the woken
       thread a block on the lock the waker would still hold (a second futex
       call each side, 10 us a wake-up on this VM). */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&engine.waiting, memory_order_relaxed))
        return;
    pthread_mutex_lock(&engine.lock);
    pthread_mutex_unlock(&engine.lock);
    pthread_cond_signal(&engine.wake);
}

void tdm_progress_driver_leaves(void)
{
    atomic_fetch_sub_explicit(&tdm_progress_drivers, 1, memory_order_seq_cst);
    if (tdm_progress_outstanding() > 0)
        tdm_progress_wake();
}

/* Work was counted from zero without a wake-up (tdm_progress_work_unwoken). */
static atomic_int unwoken;

int tdm_progress_work_count(void)
{
    tdm_progress_note_app_cpu();
    /* From zero, the thread may sleep; with an application thread driving,
       it may sleep beside work it alone moves now (progress.h); after work
       counted without a wake-up, it may sleep beside that (read before it
       is written: a post must not write a shared line it need not). */
    return atomic_fetch_add_explicit(&tdm_progress_work, 1, memory_order_seq_cst) == 0 ||
           atomic_load_explicit(&tdm_progress_drivers, memory_order_seq_cst) > 0 ||
           (atomic_load_explicit(&unwoken, memory_order_seq_cst) &&
            atomic_exchange_explicit(&unwoken, 0, memory_order_seq_cst));
}

void tdm_progress_work_unwoken(void)
{
    atomic_store_explicit(&unwoken, 1, memory_order_seq_cst);
}

void tdm_progress_work_begin(void)
{
    if (tdm_progress_work_count())
        tdm_progress_wake();
}

void tdm_progress_work_end(void)
{
    atomic_fetch_sub_explicit(&tdm_progress_work, 1, memory_order_acq_rel);
}

int tdm_progress_engine_start(tdm_progress_drive_fn drive, void *context, tdm_poll_policy policy,
                              int max_pause_us, int cpu)
{
    engine.drive = drive;
    engine.context = context;
    engine.policy = policy;
    engine.max_pause_us = max_pause_us < 1 ? 1 : max_pause_us;
    engine.serve_max_us = SERVE_MAX_US;
    if (tdm_affinity_spare_for(cpu))
        engine.serve_max_us = SERVE_SPARE_MAX_US;
    engine.cpu = cpu;
    engine.stop = 0;
    atomic_store(&engine.polls, 0);
    atomic_store(&engine.serve_polls, 0);
    atomic_store(&engine.socket_wakes, 0);
    atomic_store(&engine.moves, 0);
    atomic_store(&engine.unstuck, 0);
    atomic_store(&engine.on_cpu, -1);
    engine.placed = PLACED_SHARED;
    engine.placed_cpu = -1;
    atomic_store(&engine.may_move, 0);
    atomic_store(&tdm_progress_follows_app, 0);
    atomic_store(&tdm_progress_app_cpu, -1);
    engine.started = seconds(CLOCK_MONOTONIC);
    if (pthread_create(&engine.thread, NULL, progress_main, NULL) != 0)
        return -1;
    tdm_progress_running = 1;
    return 0;
}

void tdm_progress_engine_stop(void)
{
    if (!tdm_progress_running)
        return;
    pthread_mutex_lock(&engine.lock);
    engine.stop = 1;
    pthread_cond_signal(&engine.wake);
    pthread_mutex_unlock(&engine.lock);
    pthread_join(engine.thread, NULL);
    engine.wall_spent = seconds(CLOCK_MONOTONIC) - engine.started;
    tdm_progress_running = 0;
}

int tdm_progress_follows_lent_cpus(void)
{
    return atomic_load_explicit(&engine.may_move, memory_order_relaxed);
}

void tdm_progress_times(double *cpu, double *wall)
{
    *cpu = engine.cpu_spent;
    *wall = engine.wall_spent;
}

long tdm_progress_polls(void)
{
    return atomic_load(&engine.polls);
}

long tdm_progress_serve_polls(void)
{
    return atomic_load(&engine.serve_polls);
}

long tdm_progress_socket_wakes(void)
{
    return atomic_load(&engine.socket_wakes);
}

int tdm_progress_on_thread(void)
{
    return on_thread;
}

int tdm_progress_cpu(void)
{
    return tdm_progress_running && engine.cpu >= 0 ? engine.cpu : -1;
}

void tdm_progress_share_node(int mates_over_network)
{
    engine.mates_over_network = mates_over_network;
    if (tdm_progress_running && engine.cpu < 0 && tdm_affinity_share_node(engine.thread) == 0) {
        atomic_store_explicit(&engine.may_move, 1, memory_order_relaxed);
        atomic_store_explicit(&tdm_progress_follows_app, tdm_affinity_ranks_apart(),
                              memory_order_relaxed);
    }
}

int tdm_progress_slice_us(void)
{
    return atomic_load(&engine.slice_us);
}

long tdm_progress_moves(void)
{
    return atomic_load(&engine.moves);
}

int tdm_progress_polled_cpu(void)
{
    return atomic_load_explicit(&engine.on_cpu, memory_order_relaxed);
}

long tdm_progress_unstuck(void)
{
    return atomic_load(&engine.unstuck);
}

int (*tdm_progress_extra_poll)(void);
int (*tdm_progress_windows_poll)(void);
static atomic_long window_polls; /* see tdm_progress_window_polls */

void tdm_progress_issue_begin(void)
{
    pthread_mutex_lock(&issue_lock);
}

void tdm_progress_issue_end(void)
{
    pthread_mutex_unlock(&issue_lock);
}

long tdm_progress_issue_skips(void)
{
    return atomic_load_explicit(&issue_skips, memory_order_relaxed);
}

long tdm_progress_window_polls(void)
{
    return atomic_load(&window_polls);
}

/* The event policy's longest wait for news from the sockets before it polls
   anyway: over shared memory, which has no socket, its timer alone moves the
   transfers. No other value was measured. */
enum { EVENT_PAUSE_MAX_US = 1000 };

/* The drive function of the real engine: a probe on a communicator nobody
   sends on runs the MPI library's progress engine and matches nothing. */
static void drive_mpi(void *context)
{
    int flag = 0;
    if (tdm_progress_extra_poll && tdm_progress_extra_poll() > 0)
        return; /* testing the schedules' requests drove the MPI library */
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, *(MPI_Comm *)context, &flag, MPI_STATUS_IGNORE);
    if (tdm_progress_windows_poll && serving() && tdm_progress_windows_poll())
        atomic_fetch_add_explicit(&window_polls, 1, memory_order_relaxed);
}

/* The proxy strategy's test of the pending proxies (tdm_proxy_poll), given
   by tdm_progress_start's caller. */
static int (*test_proxies)(void);

/* The proxy strategy's poll: test the pending proxies, which drives the MPI
   library as well; with none pending (only persistent requests counted), drive
   it as the drive strategy does. */
static void poll_proxies(void *context)
{
    int schedules = tdm_progress_extra_poll ? tdm_progress_extra_poll() : 0;
    if (test_proxies() == 0 && schedules == 0)
        drive_mpi(context);
}

int tdm_progress_start(int (*test)(void))
{
    tdm_progress_strategy = (int)TDM_CONFIG_NUMBER(PROGRESS);
    /* auto: the sizes the eager-limit benchmark found proxying or driving does
       not pay for (docs/PERFORMANCE.md) */
    tdm_eager_limit = TDM_CONFIG_NUMBER(EAGER_LIMIT);
    if (tdm_eager_limit == TDM_CONFIG_AUTO)
        tdm_eager_limit = tdm_progress_strategy == TDM_PROGRESS_PROXY ? 64 << 10 : 4 << 10;
    if (tdm_progress_strategy == TDM_PROGRESS_OFF)
        return MPI_SUCCESS;
    int rc = tdm_comm_copy(tdm_world, &private_comm);
    if (rc == MPI_SUCCESS)
        rc = tdm_node_init(private_comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int cpu = -1;
    rc = tdm_affinity_choose(tdm_config[TDM_CFG_PROGRESS_CPUS].text, &cpu);
    if (rc != MPI_SUCCESS)
        return rc;
    test_proxies = test;
    tdm_progress_drive_fn poll =
        tdm_progress_strategy == TDM_PROGRESS_PROXY ? poll_proxies : drive_mpi;
    tdm_poll_policy policy = (tdm_poll_policy)TDM_CONFIG_NUMBER(POLL);
    int longest = policy == TDM_POLL_EVENT ? EVENT_PAUSE_MAX_US : TDM_PAUSE_MAX_US;
    if (tdm_progress_engine_start(poll, &private_comm, policy, longest, cpu) != 0) {
        tdm_log_warn("cannot start the progress thread; nonblocking calls progress as without "
                     "Tandem");
        PMPI_Comm_free(&private_comm);
        tdm_progress_strategy = TDM_PROGRESS_OFF;
    }
    return MPI_SUCCESS;
}

void tdm_progress_stop(void)
{
    tdm_progress_engine_stop();
    tdm_affinity_forget();
    tdm_node_finalize();
    if (private_comm != MPI_COMM_NULL) {
        PMPI_Barrier(private_comm);
        PMPI_Comm_free(&private_comm);
    }
    atomic_store(&tdm_progress_work, 0);
    tdm_progress_strategy = TDM_PROGRESS_OFF;
    tdm_progress_extra_poll = NULL;
}
