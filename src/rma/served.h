/*
 * Windows served by the progress processes (TANDEM_GHOSTS=G; DART-MPI's
 * design, done Casper's way). An MPI_Win_allocate window lives in shared
 * memory of its host, which the host's progress processes map; every
 * operation the program aims at a rank of it goes to a progress process of
 * that rank's host instead, with the displacement moved to where the rank's
 * part lies in the host's memory, so it completes while the rank computes
 * and makes no MPI call. Each rank is served by one progress process, and
 * its locks and accumulates go through one window of the MPI library's
 * (one per rank index within a host), so exclusive locks stay exclusive to
 * the rank and accumulates to one location stay atomic and ordered. Fence
 * and post/start/complete/wait become flushes of a window that is locked
 * for the whole life of the served one, and the matching barriers and
 * notices among the program's ranks. docs/ONESIDED.md.
 *
 * The program's handle is a window of the MPI library's over the same
 * memory and communicator (so its group, attributes, name and error
 * handler are the program's); Tandem's entry points recognise it.
 */
#ifndef TDM_RMA_SERVED_H
#define TDM_RMA_SERVED_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/runtime.h"

/* How many served windows this process holds: the entry points look a
   window up only while there is one. */
extern atomic_int tdm_served_windows;

/* A progress process, from MPI_Init: serve the host's windows until the
   application's ranks finalize, then finalize and exit. */
void tdm_served_ghost_run(void) __attribute__((noreturn));

/* MPI_Win_allocate (and its large-count form) while progress processes
   exist: make a served window and return 1 with '*rc' the call's result,
   or return 0 for a window the progress processes do not serve (the caller
   makes it as usual; TANDEM_VERBOSE=1 says why, once). */
int tdm_served_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win, int *rc);

/* MPI_Win_free: return 1 with '*rc' the call's result if '*win' is served,
   else 0. */
int tdm_served_free(MPI_Win *win, int *rc);

/* The MPI_WIN_CREATE_FLAVOR a served window reports (MPI_WIN_FLAVOR_ALLOCATE):
   1 with '*value' set if 'win' is served, else 0. */
int tdm_served_flavor(MPI_Win win, void *value);

void tdm_served_route_slow(MPI_Win *win, int *rank, MPI_Aint *disp);

/* Before a one-sided operation: where '*win' is served, the window,
   target rank and displacement (in bytes, at the host's memory) the
   operation goes to instead. A rank out of range is left for the MPI
   library to report on the program's window. */
static inline void tdm_served_route(MPI_Win *win, int *rank, MPI_Aint *disp)
{
    if (TDM_UNLIKELY(atomic_load_explicit(&tdm_served_windows, memory_order_relaxed)))
        tdm_served_route_slow(win, rank, disp);
}

/* How many operations this process handed to its progress processes; of
   them, '*across' to ranks of other hosts. */
long tdm_served_offloaded(long *across);

int tdm_served_offload_slow(MPI_Win win, int get, void *origin, MPI_Count origin_count,
                            MPI_Datatype origin_datatype, int rank, MPI_Aint disp,
                            MPI_Count target_count, MPI_Datatype target_datatype,
                            MPI_Request *request);

/* MPI_Put ('get' 0) or MPI_Get ('get' 1) on a served window, or their
   request-based forms ('request' not NULL): hand it to this rank's progress
   process (origin offload, TANDEM_RMA_OFFLOAD_LIMIT) and return 1 where
   both sides are contiguous, inside the target's part and the size at
   least the limit (to a rank of another host: at most 2 GiB); else 0, and
   the caller routes it. The next synchronisation of the window waits for
   it; a request-based one's '*request' is a generalized request that the
   progress process's answer completes (MPICH). */
static inline int tdm_served_offload(MPI_Win win, int get, const void *origin,
                                     MPI_Count origin_count, MPI_Datatype origin_datatype, int rank,
                                     MPI_Aint disp, MPI_Count target_count,
                                     MPI_Datatype target_datatype, MPI_Request *request)
{
    if (TDM_LIKELY(atomic_load_explicit(&tdm_served_windows, memory_order_relaxed) == 0))
        return 0;
    return tdm_served_offload_slow(win, get, (void *)(intptr_t)origin, origin_count,
                                   origin_datatype, rank, disp, target_count, target_datatype,
                                   request);
}

#endif
