/*
 * Proxies behind generalized requests (see proxy.h): their callbacks, the
 * hand-off of point-to-point proxies to the progress thread, the progress
 * thread's Testsome over the pending set, and the sleeping wait.
 */
#include "core/proxy.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "core/affinity.h"
#include "core/config.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"

/* Finished proxies are announced here; waiters sleep on 'finished'. */
static pthread_mutex_t finish_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;

/* Proxies handed over by application threads, not yet seen by the thread. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static tdm_proxy *queue_head, *queue_tail;

/* Point-to-point operations proxied so far (TANDEM_VERBOSE=2 reports it). */
static atomic_long posted;

/* MPI_Cancel calls on pending proxies not yet acted upon. */
static atomic_int cancels_asked;

/* The progress thread's own pending set: proxies[i] waits for reals[i]. */
static struct {
    tdm_proxy **proxies;
    MPI_Request *reals;
    int *indices;
    MPI_Status *statuses;
    int count, capacity;
} pending;

tdm_proxy *tdm_proxy_new(size_t size)
{
    tdm_proxy *proxy = calloc(1, size < sizeof *proxy ? sizeof *proxy : size);
    if (proxy) {
        atomic_init(&proxy->refs, 2);
        proxy->greq = MPI_REQUEST_NULL;
        proxy->real = MPI_REQUEST_NULL;
    }
    return proxy;
}

void tdm_proxy_release(tdm_proxy *proxy)
{
    if (atomic_fetch_sub_explicit(&proxy->refs, 1, memory_order_acq_rel) == 1) {
        if (proxy->release)
            proxy->release(proxy);
        free(proxy);
    }
}

tdm_proxy *tdm_proxy_hold(MPI_Request request)
{
    if (request == MPI_REQUEST_NULL)
        return NULL;
    tdm_proxy *proxy = tdm_request_proxy_of(request);
    /* The free callback's reference cannot go meanwhile: only a completion
       call on this very handle drops it, and that is the caller's. */
    if (proxy)
        atomic_fetch_add_explicit(&proxy->refs, 1, memory_order_relaxed);
    return proxy;
}

/* MPI calls this when a completion call returns the generalized request. */
static int query_fn(void *extra_state, MPI_Status *status)
{
    tdm_proxy *proxy = extra_state;
    /* Always 1 here; the acquire makes the final fields visible by Tandem's
       own ordering, not only by the MPI library's. */
    (void)atomic_load_explicit(&proxy->published, memory_order_acquire);
    status->MPI_SOURCE = proxy->status.MPI_SOURCE;
    status->MPI_TAG = proxy->status.MPI_TAG;
    status->MPI_ERROR = proxy->error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, proxy->bytes);
    PMPI_Status_set_cancelled(status, proxy->cancelled);
    /* The error was raised where the real operation completed; returning it
       here would raise it a second time, on another communicator's handler.
       Tandem's completion hooks return it instead. */
    return MPI_SUCCESS;
}

/* MPI calls this when the application's handle is freed (by a completion
   call or MPI_Request_free): forget the mapping, drop the reference. */
static int free_fn(void *extra_state)
{
    tdm_proxy *proxy = extra_state;
    tdm_request_freed(proxy->greq);
    tdm_proxy_release(proxy);
    return MPI_SUCCESS;
}

/* MPI_Cancel on the generalized request: the progress thread owns the real
   request, so it cancels it on its next poll. An offloaded task cannot be
   cancelled once queued; MPI allows a cancel to fail. */
static int cancel_fn(void *extra_state, int complete)
{
    tdm_proxy *proxy = extra_state;
    if (!complete && proxy->counted) {
        atomic_store_explicit(&proxy->cancel_asked, 1, memory_order_release);
        atomic_fetch_add_explicit(&cancels_asked, 1, memory_order_release);
    }
    return MPI_SUCCESS;
}

int tdm_proxy_start(tdm_proxy *proxy, MPI_Request *request)
{
    int rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, proxy, &proxy->greq);
    if (rc != MPI_SUCCESS) {
        if (proxy->release)
            proxy->release(proxy);
        free(proxy);
        return rc;
    }
    if (tdm_request_add_proxy(proxy->greq, proxy) != 0) {
        /* Out of memory: complete and free the generalized request at once;
           its free callback drops one reference, the second one here. */
        PMPI_Grequest_complete(proxy->greq);
        PMPI_Request_free(&proxy->greq);
        tdm_proxy_release(proxy);
        return MPI_ERR_NO_MEM;
    }
    *request = proxy->greq;
    return MPI_SUCCESS;
}

void tdm_proxy_post(MPI_Request *request)
{
    if (*request == MPI_REQUEST_NULL)
        return;
    tdm_proxy *proxy = tdm_proxy_new(sizeof *proxy);
    if (!proxy)
        return;
    proxy->real = *request;
    proxy->counted = 1;
    if (tdm_proxy_start(proxy, request) != MPI_SUCCESS)
        return;
    pthread_mutex_lock(&queue_lock);
    if (queue_tail)
        queue_tail->next = proxy;
    else
        queue_head = proxy;
    queue_tail = proxy;
    pthread_mutex_unlock(&queue_lock);
    atomic_fetch_add_explicit(&posted, 1, memory_order_relaxed);
    tdm_progress_work_begin();
}

long tdm_proxy_posted(void)
{
    return atomic_load(&posted);
}

void tdm_proxy_finish(tdm_proxy *proxy, const MPI_Status *status, int error)
{
    MPI_Count bytes = 0;
    int cancelled = 0;
    proxy->status = *status;
    PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    PMPI_Test_cancelled(status, &cancelled);
    proxy->bytes = bytes == MPI_UNDEFINED ? 0 : bytes;
    proxy->cancelled = cancelled;
    proxy->error = error;
    atomic_store_explicit(&proxy->published, 1, memory_order_release);
    PMPI_Grequest_complete(proxy->greq);

    pthread_mutex_lock(&finish_lock);
    atomic_store_explicit(&proxy->done, 1, memory_order_release);
    pthread_cond_broadcast(&finished);
    pthread_mutex_unlock(&finish_lock);
    if (proxy->counted)
        tdm_progress_work_end();
    tdm_proxy_release(proxy);
}

void tdm_proxy_wait(tdm_proxy *proxy)
{
    tdm_proxy_wait_any(&proxy, 1);
}

static int any_done(tdm_proxy *const *proxies, int count)
{
    for (int i = 0; i < count; i++)
        if (proxies[i] && tdm_proxy_done(proxies[i]))
            return 1;
    return 0;
}

/* How long a waiter moves driveable proxies itself before it sleeps: a
   short collective then ends without two thread hand-offs (about 20 us
   here), a long one does not keep the core busy. Between two polls it
   yields, for a rank or thread it waits for that may need its core; where
   each rank of the node has a CPU of its own (tdm_affinity_core_each) it
   starts yielding only after SPIN_NS. A yield costs a system call and a
   pass through the scheduler even when nothing else is runnable: yielding
   from the first poll, an 8-byte Open MPI iallreduce on 2 ranks over
   shared memory took 1.66 us instead of 1.21, a 64 KiB ibcast 7.75 instead
   of 6.90 (docs/PERFORMANCE.md, "A waiter that yields later"). With more
   ranks than CPUs, spinning 20 us doubled the time of an 8-byte
   iallreduce on 4 ranks, so there it yields at once. */
enum { DRIVE_NS = 200 * 1000, SPIN_NS = 20 * 1000 };

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A waiter near lenders (tdm_progress_near_lenders) looks after 100 us,
   then after twice as long each time up to the scheduler's tick (4 ms
   here), whether the progress thread ran for at least half of that time; if
   it did not, it moves it off the CPU where it waits for a turn
   (tdm_progress_unstick), once. Where node mates share memory, waiters
   sleep without a timer: timed sleeps made an Open MPI Isend + Wait of 1 MiB
   8 us slower there (35 to 43 us) and hid half as much of it, and halved
   the share hidden of an Irecv + Wait of 1 MiB against a lending MPI_Send
   (docs/PERFORMANCE.md, "A thread without a turn"). */
enum { CHECK_FIRST_NS = 100 * 1000, CHECK_LAST_NS = 4 * 1000 * 1000 };

/* Sleep on 'finished' until a proxy is done or 'until_ns' (CLOCK_MONOTONIC)
   passed. Under finish_lock. */
static void sleep_until(tdm_proxy *const *proxies, int count, long long until_ns)
{
    struct timespec until = {until_ns / 1000000000LL, until_ns % 1000000000LL};
    while (!any_done(proxies, count) &&
           pthread_cond_clockwait(&finished, &finish_lock, CLOCK_MONOTONIC, &until) == 0)
        ;
}

/* Where the progress thread polls without pause on a CPU of its own and
   every rank of the node has one too, a waiter for a collective schedule
   leaves the MPI library to the thread once the thread is at it: it
   watches the schedules' flags for WATCH_NS, then sleeps. Calls from both
   threads contend for the library's lock, and a waiter that drove made the
   thread idle, so that each schedule's end cost a hand-off between them.
   Until the thread's first poll after the wait began (it may be waking up)
   the waiter drives the schedule itself, and throughout one marked
   waiter_drives: one the thread was not woken for, or one of small
   messages, whose rounds are hand-offs of a few microseconds that a
   driving waiter made sooner. On 16 cores, watching took the pure time of
   1 MiB collectives to 0.92x of driving's (geometric mean of 16 cells, 13
   and 14 of them faster), 4 MiB to 0.97-0.98x, and made 64 KiB ones 1.08x
   slower, up to 1.57x (docs/PERFORMANCE.md, "A waiter that watches").
   Waits for point-to-point proxies sleep at once, as before: watching them
   too changed their transfers by 0.95-1.03x. */
static int watching;
static atomic_long watched; /* waits that watched (TANDEM_VERBOSE=2) */
enum { WATCH_NS = DRIVE_NS };

void tdm_proxy_watch_init(int thread_has_own_cpu)
{
    watching = thread_has_own_cpu && tdm_affinity_core_each() &&
               (tdm_poll_policy)TDM_CONFIG_NUMBER(POLL) == TDM_POLL_YIELD;
}

long tdm_proxy_watched(void)
{
    return atomic_load(&watched);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Watch for WATCH_NS, driving until the thread's first poll (above).
   Returns whether one is done. */
static int watch_any(tdm_proxy *const *proxies, int count, int (*drive)(void))
{
    long polls = tdm_progress_polls();
    int done = 0;
    long long start = now_ns();
    for (long long t = start; !done && t - start < WATCH_NS; t = now_ns()) {
        if (drive && tdm_progress_polls() == polls)
            drive();
        if (!(done = any_done(proxies, count)))
            cpu_relax();
    }
    return done;
}

/* Drive the proxies for a while, or watch them, then sleep until one is
   done, looking after the progress thread's turns (above) near lenders. */
static void wait_any(tdm_proxy *const *proxies, int count)
{
    int (*drive)(void) = NULL;
    int waiter_drives = 0;
    for (int i = 0; i < count; i++)
        if (proxies[i] && proxies[i]->drive) {
            drive = proxies[i]->drive;
            waiter_drives |= proxies[i]->waiter_drives;
        }
    if (watching && drive && !waiter_drives) {
        atomic_fetch_add_explicit(&watched, 1, memory_order_relaxed);
        if (watch_any(proxies, count, drive))
            return;
    } else if (drive) {
        atomic_fetch_add_explicit(&tdm_progress_drivers, 1, memory_order_seq_cst);
        int done = 0;
        long long start = now_ns(), spin = tdm_affinity_core_each() ? SPIN_NS : 0;
        for (long long t = start; !done && t - start < DRIVE_NS; t = now_ns()) {
            drive();
            done = any_done(proxies, count);
            if (!done && t - start >= spin)
                sched_yield();
        }
        tdm_progress_driver_leaves();
        if (done)
            return;
    }
    atomic_fetch_add_explicit(&tdm_progress_sleepers, 1, memory_order_relaxed);
    pthread_mutex_lock(&finish_lock);
    if (!any_done(proxies, count) && tdm_progress_near_lenders()) {
        for (long long wait = CHECK_FIRST_NS; wait <= CHECK_LAST_NS; wait *= 2) {
            double ran = tdm_progress_thread_seconds();
            long long from = now_ns();
            sleep_until(proxies, count, from + wait);
            if (any_done(proxies, count))
                break;
            if ((tdm_progress_thread_seconds() - ran) * 1e9 < (double)(now_ns() - from) / 2) {
                pthread_mutex_unlock(&finish_lock);
                tdm_progress_unstick();
                pthread_mutex_lock(&finish_lock);
                break;
            }
        }
    }
    while (!any_done(proxies, count))
        pthread_cond_wait(&finished, &finish_lock);
    pthread_mutex_unlock(&finish_lock);
    atomic_fetch_sub_explicit(&tdm_progress_sleepers, 1, memory_order_relaxed);
}

void tdm_proxy_wait_any(tdm_proxy *const *proxies, int count)
{
    if (any_done(proxies, count))
        return;
    atomic_fetch_add_explicit(&tdm_progress_waiters, 1, memory_order_relaxed);
    wait_any(proxies, count);
    atomic_fetch_sub_explicit(&tdm_progress_waiters, 1, memory_order_relaxed);
}

/* Room for 'extra' more pending proxies. Progress thread. */
static int pending_reserve(int extra)
{
    if (pending.count + extra <= pending.capacity)
        return 0;
    int capacity = pending.capacity ? pending.capacity : 64;
    while (capacity < pending.count + extra)
        capacity *= 2;
    void *p = realloc(pending.proxies, sizeof(tdm_proxy *) * (size_t)capacity);
    void *r = p ? realloc(pending.reals, sizeof(MPI_Request) * (size_t)capacity) : NULL;
    if (p)
        pending.proxies = p;
    if (r)
        pending.reals = r;
    void *x = r ? realloc(pending.indices, sizeof(int) * (size_t)capacity) : NULL;
    if (x)
        pending.indices = x;
    void *s = x ? realloc(pending.statuses, sizeof(MPI_Status) * (size_t)capacity) : NULL;
    if (s)
        pending.statuses = s;
    if (!s)
        return -1;
    pending.capacity = capacity;
    return 0;
}

/* Move what application threads handed over into the pending set. */
static void take_queue(void)
{
    pthread_mutex_lock(&queue_lock);
    tdm_proxy *head = queue_head;
    queue_head = queue_tail = NULL;
    pthread_mutex_unlock(&queue_lock);
    while (head) {
        tdm_proxy *next = head->next;
        head->next = NULL;
        if (pending_reserve(1) != 0) { /* keep the rest queued for the next poll */
            pthread_mutex_lock(&queue_lock);
            tdm_proxy *last = head;
            while (last->next)
                last = last->next;
            last->next = queue_head;
            queue_head = head;
            if (!queue_tail)
                queue_tail = last;
            pthread_mutex_unlock(&queue_lock);
            head->next = next;
            return;
        }
        pending.proxies[pending.count] = head;
        pending.reals[pending.count] = head->real;
        pending.count++;
        head = next;
    }
}

static void act_on_cancels(void)
{
    for (int i = 0; i < pending.count; i++)
        if (atomic_exchange_explicit(&pending.proxies[i]->cancel_asked, 0, memory_order_acq_rel))
            PMPI_Cancel(&pending.reals[i]);
}

int tdm_proxy_poll(void)
{
    /* A proxy is queued before it can be cancelled, and its flag is set before
       the counter: reading the counter first, then taking the queue, finds
       every proxy whose cancel was counted. */
    int cancels = atomic_exchange_explicit(&cancels_asked, 0, memory_order_acq_rel);
    take_queue();
    if (cancels)
        act_on_cancels();
    int count = pending.count;
    if (count == 0)
        return 0;
    int done = 0;
    int rc = PMPI_Testsome(count, pending.reals, &done, pending.indices, pending.statuses);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        tdm_log_warn("MPI_Testsome on %d proxied requests failed (MPI error %d)", count, rc);
        return count;
    }
    if (done == MPI_UNDEFINED || done == 0)
        return count;
    for (int k = 0; k < done; k++) {
        int i = pending.indices[k];
        int error = rc == MPI_ERR_IN_STATUS ? pending.statuses[k].MPI_ERROR : MPI_SUCCESS;
        tdm_proxy_finish(pending.proxies[i], &pending.statuses[k], error);
        pending.proxies[i] = NULL;
    }
    /* After an error, Open MPI frees every request of the array whose status
       holds an error code, reported or not (ompi_errhandler_request_invoke),
       and incomplete requests may hold a stale one: such a request is gone
       from the MPI and would never be reported. Finish its proxy with an empty
       status; a send freed this way still completes inside the MPI. */
    for (int i = 0; rc == MPI_ERR_IN_STATUS && i < count; i++)
        if (pending.proxies[i] && pending.reals[i] == MPI_REQUEST_NULL) {
            MPI_Status empty;
            tdm_status_empty(&empty);
            tdm_proxy_finish(pending.proxies[i], &empty, MPI_SUCCESS);
            pending.proxies[i] = NULL;
        }
    int kept = 0; /* compact, keeping the posting order */
    for (int i = 0; i < count; i++) {
        if (!pending.proxies[i])
            continue;
        pending.proxies[kept] = pending.proxies[i];
        pending.reals[kept] = pending.reals[i];
        kept++;
    }
    pending.count = kept;
    return count;
}
