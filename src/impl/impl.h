/*
 * What differs between MPI implementations, behind one small interface. Each
 * implementation has its own file (openmpi.c, mpich.c, generic.c); exactly one
 * of them is non-empty for a given mpi.h.
 */
#ifndef TDM_IMPL_H
#define TDM_IMPL_H

#include <mpi.h>
#include <stddef.h>

/* "Open MPI", "MPICH" or "MPI": the family this build was compiled against. */
const char *tdm_impl_family(void);

/* Why the progress processes (TANDEM_GHOSTS) leave this MPI library's
   MPI_Win_allocate windows to it, in a sentence; NULL where they serve them
   (rma/served.h). */
const char *tdm_impl_windows_unserved(void);

/* Check that the MPI library this process actually uses (the one providing
   PMPI_Init) belongs to the family this build was compiled for. Returns 0 when
   it does; otherwise writes a message naming both into msg and returns -1.
   Called from the library constructor, before main. */
int tdm_impl_check_process_mpi(char *msg, size_t size);

/* How this MPI's mpi_f08 module calls the library, which decides the
   Fortran 2008 entry points that src/wrappers/gen_f_wrappers.c defines:
     TDM_F08_NONE        not known: Tandem defines none, and such calls pass
                         through wherever the library does not call MPI_*
     TDM_F08_ADDRESS     Open MPI 4.1: mpi_name_f08_, with the arguments of
                         mpif.h's mpi_name_ (choice buffers by address)
     TDM_F08_DESCRIPTOR  MPICH 4: mpi_name_f08ts_ for the calls with a choice
                         buffer, which arrives as gfortran's array descriptor
                         (wrappers/fortran.h), mpi_name_f08_ for the others,
                         and a _large_ form of each for MPI_COUNT_KIND counts
   In each, IERROR is optional: a NULL pointer when the call leaves it out. */
#define TDM_F08_NONE 0
#define TDM_F08_ADDRESS 1
#define TDM_F08_DESCRIPTOR 2
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION <= 4
#define TDM_F08 TDM_F08_ADDRESS
#elif defined(MPICH_VERSION) && !defined(OPEN_MPI) && MPI_VERSION >= 4
#define TDM_F08 TDM_F08_DESCRIPTOR
#else
#define TDM_F08 TDM_F08_NONE
#endif

/* The Fortran sentinels: addresses that a Fortran program passes for
   MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE,
   MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY, through mpif.h, the mpi module or the
   mpi_f08 module. Each returns 0 when the address is not that sentinel or
   when the program has no Fortran MPI at all. */
int tdm_impl_f_is_bottom(const void *address);
int tdm_impl_f_is_in_place(const void *address);
int tdm_impl_f_is_status_ignore(const MPI_Fint *address);
int tdm_impl_f_is_statuses_ignore(const MPI_Fint *address);
int tdm_impl_f_is_unweighted(const MPI_Fint *address);
int tdm_impl_f_is_weights_empty(const MPI_Fint *address);

/* Called just before Tandem asks the MPI library for MPI_THREAD_MULTIPLE
   so that a thread of its own calls the library beside the application's
   (a progress thread, or a progress process's threads): the library's
   settings that such a second thread needs, set in the environment where
   the user has not set them. Returns what it set ("NAME=VALUE", said under
   TANDEM_VERBOSE=1), or NULL. */
const char *tdm_impl_before_threaded_init(void);

/* The progress thread's poll while one-sided windows exist, after its
   probe: whatever else this MPI library needs called to move one-sided
   traffic. Returns 1 if it called something, 0 if nothing is needed.
   Progress thread. */
int tdm_impl_drive_windows(void);

/* Whether this MPI library, for a request-based one-sided operation
   (MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate), sets the
   callback that completes the request only after the call that starts the
   transfer returned, so that another thread's poll in between runs the
   callback unset and the request never completes: Open MPI 4.1's osc/ucx
   (ucp_ep_flush_nb or ucp_atomic_fetch_nb, then its request's
   external_req), on UCX (pml ucx). Tandem's thread then keeps its polls
   apart from such starts (core/progress.h). */
int tdm_impl_rma_requests_race(void);

/* MPI_Waitall as this MPI library does it correctly under
   MPI_THREAD_MULTIPLE (the level Tandem asks for on the application's
   behalf). */
int tdm_impl_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);

/* A generalized request whose 'poll' the MPI library calls while a test on
   it runs, and 'wait' in a wait for it (MPICH's MPIX_Grequest_start), so
   that something outside the library can complete it
   (MPI_Grequest_complete) without a thread of its own. Returns
   MPI_ERR_UNSUPPORTED_OPERATION where the library has none (Open MPI:
   then tdm_impl_progress_hook). Application threads. */
int tdm_impl_grequest_polled(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free,
                             MPI_Grequest_cancel_function *cancel,
                             int (*poll)(void *state, MPI_Status *status),
                             int (*wait)(int count, void **states, double timeout,
                                         MPI_Status *status),
                             void *state, MPI_Request *request);

/* Has the MPI library's progress loop call 'hook' in every wait and test
   and every other call that moves messages, on whichever thread makes it
   (Open MPI's opal_progress_register); 'hook' returns the number of
   requests it completed, 0 when it found nothing to do, which it must find
   cheaply, and may be called again from within itself. Returns 0, or -1
   where the library has no such loop. At most once per hook. Application
   threads. */
int tdm_impl_progress_hook(int (*hook)(void));

/* PMPI_Type_size, without the call where the handle itself states the size:
   MPICH's predefined datatypes. Tandem sizes every intercepted
   point-to-point operation (the eager limit, the lending waits, the
   monitor), and MPICH's PMPI_Type_size is some 40 instructions of checks,
   3.3 ns a call here (docs/PERFORMANCE.md, "The thread level's cost").
   Returns what PMPI_Type_size returns. Any thread. */
int tdm_impl_type_size(MPI_Datatype datatype, int *size);

/* The bytes a completed receive's status reports, or -1 if the operation
   was cancelled. Read from the status's fields where the layout is known (a
   few nanoseconds less per monitored receive than the MPI calls). */
long long tdm_impl_status_bytes(const MPI_Status *status);

/* Whether this MPI library moves messages between ranks of one node through
   shared memory (as it does unless told otherwise): 0 when its settings
   exclude that (Open MPI's btl list without vader or sm; MPICH's
   MPIR_CVAR_NOLOCAL), so that node mates talk as over a network. Read through
   the MPI tool interface; after MPI_Init. */
int tdm_impl_node_uses_shm(void);

/* How the launcher spread the job: *world ranks in all, *local of them on
   this host, from the variables each MPI's launcher gives its ranks (Open
   MPI's mpirun: OMPI_COMM_WORLD_SIZE and _LOCAL_SIZE; MPICH's Hydra:
   PMI_SIZE and MPI_LOCALNRANKS). Returns 0, or -1 where the launcher said
   nothing (a singleton, another launcher). Before MPI_Init too. */
int tdm_impl_launch_shape(int *world, int *local);

/* This process's rank among those of its host, from the launcher's
   variables (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, Hydra's
   MPI_LOCALRANKID), or -1. Before MPI_Init too. */
int tdm_impl_launch_local_rank(void);

/* MPI libraries on UCX (ucx_exit.c): the MPI library's UCX workers are
   those created between init_begins and init_ends (around MPI_Init); from
   finalize_begins (before PMPI_Finalize, whenever Tandem is active), a
   thread drives them while the library closes its endpoints, until it
   destroys one. 'report': log what the thread did. */
void tdm_ucx_exit_init_begins(void);
void tdm_ucx_exit_init_ends(void);
void tdm_ucx_exit_finalize_begins(int report);

#endif
