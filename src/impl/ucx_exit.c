/*
 * MPI libraries built on UCX: progress while MPI_Finalize waits for the
 * other ranks.
 *
 * MPICH 4.0's ch4:ucx finalize closes every UCX endpoint (ucp_disconnect_nb),
 * drives its UCX workers until the closes complete, then waits in a PMI
 * barrier, a blocking read on the launcher's socket, before destroying the
 * workers. A close may need its peer's worker to run; a peer already in that
 * barrier runs nothing, and the closing rank spins forever while the others
 * wait for it. Over UCX's TCP transport half of the 4-rank runs of
 * MPI_Init + MPI_Barrier + MPI_Finalize hung here (docs/perf/finalize-hang;
 * MPICH removed the barrier later, pmodels/mpich#6596).
 *
 * Tandem interposes the few UCX calls of that sequence (libtandem, and the
 * virtual ranks' libtandem-virt, whose processes end MPI the same way). From the first
 * ucp_disconnect_nb made inside MPI_Finalize, a thread of Tandem drives the
 * workers the MPI library created during MPI_Init, until the library
 * destroys one; the library created them UCS_THREAD_MODE_SERIALIZED, so
 * every interposed call takes one lock from then on. Before that the
 * interposed calls cost a relaxed load and go straight to UCX.
 *
 * No UCX header is needed: the handles are opaque pointers, and
 * ucs_status_t is a packed enum, one signed byte.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "impl/impl.h"

#define TDM_UCX_API __attribute__((visibility("default")))

typedef int8_t ucs_status_t;
typedef void *ucp_worker_h;

enum { MAX_WORKERS = 64, LONGEST_PAUSE_US = 1000 };

static struct {
    atomic_int recording; /* inside MPI_Init: workers created are the MPI's */
    atomic_int armed;     /* inside MPI_Finalize, Tandem active */
    int report;           /* say what the helper did (TANDEM_VERBOSE=2) */
    atomic_int closing;   /* the MPI library closes its endpoints: lock every call */
    pthread_mutex_t lock;
    ucp_worker_h workers[MAX_WORKERS];
    int nworkers;
    pthread_t helper;
    int helper_running;
    atomic_int helper_stop;
    long helper_polls; /* written by the helper, read after the join */
} ucx = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The interposed calls, as UCX 1.x declares them. */
typedef ucs_status_t worker_create_fn(void *, const void *, ucp_worker_h *);
typedef unsigned worker_progress_fn(ucp_worker_h);
typedef void *disconnect_fn(void *);
typedef int request_is_completed_fn(void *);
typedef void request_release_fn(void *);
typedef void worker_destroy_fn(ucp_worker_h);
TDM_UCX_API worker_create_fn ucp_worker_create;
TDM_UCX_API worker_progress_fn ucp_worker_progress;
TDM_UCX_API disconnect_fn ucp_disconnect_nb;
TDM_UCX_API request_is_completed_fn ucp_request_is_completed;
TDM_UCX_API request_release_fn ucp_request_release;
TDM_UCX_API worker_destroy_fn ucp_worker_destroy;

/* UCX's own function 'name', resolved once (NULL where UCX is not loaded;
   then nothing calls the interposed function either). */
static void *next(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_relaxed);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(slot, f, memory_order_relaxed);
    }
    return f;
}
#define NEXT(type, name)                \
    static _Atomic(void *) name##_slot; \
    type *real = (type *)next(&name##_slot, #name)

static unsigned progress_next(ucp_worker_h worker)
{
    NEXT(worker_progress_fn, ucp_worker_progress);
    return real(worker);
}

static void pause_us(int us)
{
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *helper_main(void *unused)
{
    (void)unused;
    int pause = 1;
    long polls = 0;
    while (!atomic_load_explicit(&ucx.helper_stop, memory_order_acquire)) {
        unsigned events = 0;
        pthread_mutex_lock(&ucx.lock);
        for (int i = 0; i < ucx.nworkers; i++)
            events += progress_next(ucx.workers[i]);
        pthread_mutex_unlock(&ucx.lock);
        polls++;
        /* Short pauses while something happens, up to 1 ms while nothing
           does: a barrier can last as long as the slowest rank's exit. */
        pause = events ? 1 : pause * 2 > LONGEST_PAUSE_US ? LONGEST_PAUSE_US : pause * 2;
        pause_us(pause);
    }
    ucx.helper_polls = polls;
    return NULL;
}

/* The first close inside MPI_Finalize: lock from now on, start the helper. */
static void begin_closing(void)
{
    if (atomic_load_explicit(&ucx.closing, memory_order_relaxed) ||
        !atomic_load_explicit(&ucx.armed, memory_order_relaxed))
        return;
    atomic_store_explicit(&ucx.closing, 1, memory_order_relaxed);
    if (ucx.nworkers == 0)
        return;
    int err = pthread_create(&ucx.helper, NULL, helper_main, NULL);
    if (err != 0) {
        tdm_log_warn("MPI_Finalize: cannot start the thread that drives UCX while the MPI "
                     "library closes its endpoints (%s); the MPI library may hang there",
                     strerror(err));
        return;
    }
    ucx.helper_running = 1;
}

static void stop_helper(void)
{
    if (!ucx.helper_running)
        return;
    atomic_store_explicit(&ucx.helper_stop, 1, memory_order_release);
    pthread_join(ucx.helper, NULL);
    ucx.helper_running = 0;
    if (ucx.report)
        tdm_log_info("MPI_Finalize: drove %d UCX worker%s %ld times while the MPI library "
                     "closed its endpoints",
                     ucx.nworkers, ucx.nworkers == 1 ? "" : "s", ucx.helper_polls);
}

void tdm_ucx_exit_init_begins(void)
{
    atomic_store_explicit(&ucx.recording, 1, memory_order_relaxed);
}

void tdm_ucx_exit_init_ends(void)
{
    atomic_store_explicit(&ucx.recording, 0, memory_order_relaxed);
}

void tdm_ucx_exit_finalize_begins(int report)
{
    ucx.report = report;
    atomic_store_explicit(&ucx.armed, 1, memory_order_relaxed);
}

ucs_status_t ucp_worker_create(void *context, const void *params, ucp_worker_h *worker)
{
    NEXT(worker_create_fn, ucp_worker_create);
    if (!real)
        return -1; /* UCS_ERR_NO_MESSAGE: not reached, UCX's callers link UCX */
    ucs_status_t status = real(context, params, worker);
    if (status == 0 && atomic_load_explicit(&ucx.recording, memory_order_relaxed)) {
        pthread_mutex_lock(&ucx.lock);
        if (ucx.nworkers < MAX_WORKERS)
            ucx.workers[ucx.nworkers++] = *worker;
        pthread_mutex_unlock(&ucx.lock);
    }
    return status;
}

/* Around each call to UCX: the lock, once the MPI library closes its
   endpoints (then 1 is returned, for leave). */
static int enter(void)
{
    if (!atomic_load_explicit(&ucx.closing, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&ucx.lock);
    return 1;
}

static void leave(int locked)
{
    if (locked)
        pthread_mutex_unlock(&ucx.lock);
}

unsigned ucp_worker_progress(ucp_worker_h worker)
{
    int locked = enter();
    unsigned events = progress_next(worker);
    leave(locked);
    return events;
}

void *ucp_disconnect_nb(void *endpoint)
{
    NEXT(disconnect_fn, ucp_disconnect_nb);
    begin_closing();
    int locked = enter();
    void *request = real(endpoint);
    leave(locked);
    return request;
}

int ucp_request_is_completed(void *request)
{
    NEXT(request_is_completed_fn, ucp_request_is_completed);
    int locked = enter();
    int done = real(request);
    leave(locked);
    return done;
}

void ucp_request_release(void *request)
{
    NEXT(request_release_fn, ucp_request_release);
    int locked = enter();
    real(request);
    leave(locked);
}

void ucp_worker_destroy(ucp_worker_h worker)
{
    NEXT(worker_destroy_fn, ucp_worker_destroy);
    stop_helper(); /* the barrier is over: nothing waits for this rank any more */
    pthread_mutex_lock(&ucx.lock);
    for (int i = 0; i < ucx.nworkers; i++) {
        if (ucx.workers[i] == worker) {
            ucx.workers[i] = ucx.workers[--ucx.nworkers];
            break;
        }
    }
    pthread_mutex_unlock(&ucx.lock);
    real(worker);
}
