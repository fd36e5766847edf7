/* Process-wide state shared by the wrappers and every component. */
#ifndef TDM_RUNTIME_H
#define TDM_RUNTIME_H

#include <mpi.h>
#include <stdatomic.h>

#define TDM_EXPORT __attribute__((visibility("default")))
#define TDM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TDM_LIKELY(x) __builtin_expect(!!(x), 1)

/* The language of the entry point the application called: C, Fortran
   through mpif.h or the mpi module, or Fortran 2008 through the mpi_f08
   module (whose entry points are the MPI library's own, not mpif.h's). */
enum { TDM_LANG_C = 0, TDM_LANG_FORTRAN = 1, TDM_LANG_F08 = 2 };

/* Nonzero while Tandem is active: set by the MPI_Init hook after the MPI
   library granted MPI_THREAD_MULTIPLE (and TANDEM_DISABLE is not set), cleared
   by the MPI_Finalize hook. Written only by the application thread that
   initialises or finalises MPI, before any Tandem thread starts and after all
   of them stopped; every wrapper reads it first and passes straight to PMPI
   when it is zero. */
extern int tdm_active;

/* Nonzero when TANDEM_TRACE is set and Tandem is active. */
extern int tdm_trace_on;

/* Print one trace line for an intercepted call (any thread). */
void tdm_trace_call(const char *function, int lang);

#define TDM_TRACE_CALL(function, lang)      \
    do {                                    \
        if (TDM_UNLIKELY(tdm_trace_on))     \
            tdm_trace_call(function, lang); \
    } while (0)

/* Make *status the empty status of MPI (source and tag ANY, no error, no
   element, not cancelled): what a null request completes with. */
void tdm_status_empty(MPI_Status *status);

/* A private copy of the intra-communicator 'comm', for Tandem's own
   messages, with comm's error handler. It is made with MPI_Comm_create_group
   over comm's whole group, not MPI_Comm_dup, because a duplicate runs the MPI
   library's collectives on 'comm' itself, and the application can tell:
   Open MPI 4.1 numbers the tags of the nonblocking collectives of a
   communicator with one counter, and each communicator made from it takes
   three or more of them. Tandem taking some would move every later tag of
   the application's, and Open MPI's treematch component sends the edges of
   an MPI_Dist_graph_create with the fixed tags -50 and -51 on its parent,
   which that counter reaches after some 23 nonblocking collectives there, so
   whether such a program hangs would depend on Tandem (README, known issues).
   A duplicate would also run the application's attribute copy callbacks.
   MPI_Comm_create_group agrees with point-to-point messages on 'comm', under
   a tag of the application's range, so this is called only where no other
   thread may have posted a receive on 'comm' yet: in MPI_Init, and in the
   constructor that made 'comm'. Collective over 'comm'; returns an MPI error
   code. */
int tdm_comm_copy(MPI_Comm comm, MPI_Comm *copy);

/* How many one-sided windows this process holds (made and not freed
   through Tandem's entry points: src/rma/window.c). Any thread. */
extern atomic_int tdm_windows_open;

/* The application's world: MPI_COMM_WORLD, or, where progress processes
   were taken out of the job (TANDEM_GHOSTS, core/world.c), the communicator
   of the application's processes alone, which every entry point uses in
   place of MPI_COMM_WORLD. Tandem's own code uses it wherever it means the
   program's world. Set in MPI_Init. */
extern MPI_Comm tdm_world;

/* Nonzero while tdm_world stands for MPI_COMM_WORLD in the entry points. */
extern int tdm_world_translated;

/* The communicator an entry point passes on for the program's 'comm': the
   application's world for MPI_COMM_WORLD (the generated dispatchers call it
   for every communicator argument). */
static inline MPI_Comm tdm_world_in(MPI_Comm comm)
{
    return TDM_UNLIKELY(tdm_world_translated) && comm == MPI_COMM_WORLD ? tdm_world : comm;
}

/* This process's rank in the application's world, -1 before MPI_Init. */
extern int tdm_world_rank;

/* The thread level the MPI library runs at (granted at init). */
extern int tdm_mpi_thread_level;

/* Call a PMPI function and jump to 'fn_exit' with its code on failure; the
   single-exit-label convention of every function that makes several calls. */
#define TDM_CALL_MPI(rc, call)                 \
    do {                                       \
        (rc) = (call);                         \
        if (TDM_UNLIKELY((rc) != MPI_SUCCESS)) \
            goto fn_exit;                      \
    } while (0)

#endif
