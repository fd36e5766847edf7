/*
 * The request tracker: the application's requests that Tandem counts as
 * outstanding background work, and the persistent requests it knows the size
 * of. Its count is what wakes the progress thread and lets it sleep again.
 *
 * Any application thread may call these functions concurrently; the progress
 * thread only reads tdm_request_outstanding().
 */
#ifndef TDM_REQUEST_H
#define TDM_REQUEST_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>

/* Number of requests counted since the start (for TANDEM_VERBOSE=2). */
long tdm_request_counted_total(void);

/* Number of requests now counted as outstanding work. */
extern atomic_long tdm_request_counted;

static inline long tdm_request_outstanding(void)
{
    return atomic_load_explicit(&tdm_request_counted, memory_order_acquire);
}

/* Count an active nonblocking request of 'bytes' bytes (no-op at or below the
   eager limit). */
void tdm_request_started(MPI_Request request, long long bytes);

/* Remember the size of a new persistent request; MPI_Start counts it. */
void tdm_request_persistent(MPI_Request request, long long bytes);

/* MPI_Start on a request: counts it if it is a large persistent request. */
void tdm_request_start_persistent(MPI_Request request);

/* The request completed: stop counting it (a persistent one stays known). */
void tdm_request_completed(MPI_Request request);

/* The request was freed: forget it. */
void tdm_request_freed(MPI_Request request);

/* Work that is not an application request (a proxy handed to the progress
   thread) begins or ends: counted like a started request. */
void tdm_request_work_begin(void);
void tdm_request_work_end(void);

/* tdm_request_work_begin() without the wake-up: returns whether the caller
   must wake the thread (tdm_progress_wake), which it does once the work can
   be moved; a thread woken before would only contend with the caller for
   the MPI library while it posts. */
int tdm_request_work_count(void);

/* The caller told to wake the thread did not (the work needs no thread):
   the next tdm_request_work_count() says to wake it, whatever the count. */
void tdm_request_work_unwoken(void);

/* Number of proxies whose generalized request the tracker maps. */
extern atomic_long tdm_request_proxies;

static inline long tdm_request_proxies_known(void)
{
    return atomic_load_explicit(&tdm_request_proxies, memory_order_acquire);
}

/* Map the generalized request 'handle' to 'proxy' (0, or -1 out of memory);
   tdm_request_freed() forgets the mapping. */
int tdm_request_add_proxy(MPI_Request handle, void *proxy);

/* The proxy behind 'handle', or NULL. */
void *tdm_request_proxy_of(MPI_Request handle);

/* Number of requests the tracker knows (counted or persistent); for tests. */
size_t tdm_request_known(void);

/* Forget everything (MPI_Finalize). */
void tdm_request_reset(void);

#endif
