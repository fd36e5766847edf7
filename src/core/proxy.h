/*
 * Proxies: operations that Tandem completes on the application's behalf
 * behind an MPI generalized request. Two kinds use them:
 *   - the proxy strategy (TANDEM_PROGRESS=proxy): the real point-to-point
 *     request is posted on the caller's thread, handed to the progress thread,
 *     which tests it with MPI_Testsome and completes the generalized request;
 *   - the MPI-IO offload: a worker thread executes the blocking file operation
 *     and completes the generalized request.
 *
 * The application only ever holds the generalized request. Its status is the
 * real operation's: source, tag, cancellation and the byte count, so
 * MPI_Get_count and MPI_Get_elements work with any datatype. An error of the
 * real operation is raised by the MPI library where the real operation
 * completes (that is where the MPI calls the error handler) and returned by
 * the application's completion call, as MPI_ERR_IN_STATUS for the calls that
 * complete several requests.
 *
 * Lifetime: a proxy holds one reference for its finisher (the thread that
 * completes it) and one for the MPI library's free callback; a completion
 * call that looks at it takes a third while it does. The last one frees it.
 */
#ifndef TDM_PROXY_H
#define TDM_PROXY_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct tdm_proxy tdm_proxy;

struct tdm_proxy {
    MPI_Request greq; /* the generalized request the application holds */
    MPI_Request real; /* point-to-point: the real request, the progress thread's alone */
    int counted;      /* finishing it ends one unit of the tracker's counted work */
    atomic_int refs;
    atomic_int published;              /* the final fields below are written (before the MPI
                                          library learns of the completion) */
    atomic_int done;                   /* published, and the generalized request is complete */
    atomic_int cancel_asked;           /* MPI_Cancel reached the proxy before it finished */
    MPI_Status status;                 /* final: the real operation's status */
    MPI_Count bytes;                   /* final: bytes transferred */
    int cancelled;                     /* final */
    int error;                         /* final: MPI_SUCCESS or the error code */
    void (*release)(tdm_proxy *proxy); /* optional: called just before it is freed */
    int (*drive)(void); /* optional: moves it on the calling thread (collective schedules);
                           a waiter calls it for a while before it sleeps */
    int waiter_drives;  /* drive set, and a waiter drives it throughout even where waiters
                           watch (tdm_proxy_watch_init): the thread was not woken for it, or
                           its messages are small */
    tdm_proxy *next;    /* queue link of whoever owns it before it finishes */
};

/* A zeroed proxy of 'size' bytes (a larger struct may embed tdm_proxy as its
   first member), with its two references. NULL when out of memory. */
tdm_proxy *tdm_proxy_new(size_t size);

/* Create the generalized request of 'proxy', map it in the request tracker
   and store it in *request. Returns an MPI code; on failure the proxy is
   released and freed and *request is untouched. */
int tdm_proxy_start(tdm_proxy *proxy, MPI_Request *request);

/* The proxy strategy: wrap the real request 'real' just posted by the
   application (replacing *request with the generalized request) and hand it to
   the progress thread. On failure *request stays the real request, which is
   still correct, only not proxied. */
void tdm_proxy_post(MPI_Request *request);

/* Number of operations tdm_proxy_post proxied so far. */
long tdm_proxy_posted(void);

/* Record the final status and error, complete the generalized request, wake
   whoever waits, and drop the finisher's reference. Finisher thread. */
void tdm_proxy_finish(tdm_proxy *proxy, const MPI_Status *status, int error);

/* Progress thread, proxy strategy: cancel what was asked, test every pending
   real request once, finish the completed ones. Returns the number of pending
   proxies it tested (0: nothing was pending). */
int tdm_proxy_poll(void);

/* The proxy behind 'request' with a reference taken, or NULL. */
tdm_proxy *tdm_proxy_hold(MPI_Request request);

/* Drop a reference taken by tdm_proxy_hold (or the free callback's). */
void tdm_proxy_release(tdm_proxy *proxy);

static inline int tdm_proxy_done(tdm_proxy *proxy)
{
    return atomic_load_explicit(&proxy->done, memory_order_acquire);
}

/* Sleep until 'proxy' is finished (no CPU spent meanwhile). */
void tdm_proxy_wait(tdm_proxy *proxy);

/* Sleep until one of the 'count' proxies (NULL entries are skipped) is
   finished. */
void tdm_proxy_wait_any(tdm_proxy *const *proxies, int count);

/* Whether waiters watch their proxies rather than drive them: the progress
   thread polls on a CPU of its own and every rank of the node has one too
   (see wait_any in proxy.c). In MPI_Init, once the thread runs. */
void tdm_proxy_watch_init(int thread_has_own_cpu);

/* Number of waits that watched so far (TANDEM_VERBOSE=2). */
long tdm_proxy_watched(void);

#endif
