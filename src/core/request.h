/*
 * The request tracker: the application's requests that Tandem counts as
 * outstanding background work in the progress engine (tdm_progress_work_*),
 * which wakes its thread and lets it sleep again, and the persistent requests
 * it knows the size of.
 *
 * Any application thread may call these functions concurrently; the progress
 * thread calls none of them (it reads the engine's count).
 */
#ifndef TDM_REQUEST_H
#define TDM_REQUEST_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>

/* Number of requests counted since the start (for TANDEM_VERBOSE=2). */
long tdm_request_counted_total(void);

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

/* Forget everything (MPI_Finalize, once the progress engine stopped: it
   forgets the work counted). */
void tdm_request_reset(void);

#endif
