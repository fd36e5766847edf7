/*
 * The application's world (runtime.h's tdm_world) and the progress
 * processes that leave it (TANDEM_GHOSTS=G, DART-MPI's design): on each
 * host, the G processes with the highest ranks on that host are taken out
 * of the job at MPI_Init and never return to the program; the others get a
 * communicator of their own that the entry points use wherever the program
 * names MPI_COMM_WORLD, so its size, its ranks, its group, every status and
 * every rank argument are those of a job without them. Until MPI_Finalize the
 * progress processes serve the one-sided windows of their host
 * (rma/served.h, docs/ONESIDED.md).
 * TANDEM_REORDER=MAPPING renumbers that world instead (or as well): the
 * processes stay where they were launched, and rank i is the process launched
 * in the slot tandem place's mapping gives rank i (docs/PLACEMENT.md).
 */
#ifndef TDM_CORE_WORLD_H
#define TDM_CORE_WORLD_H

#include <mpi.h>

/* Right after the MPI library's MPI_Init: with TANDEM_GHOSTS=G > 0, split
   the job, with TANDEM_REORDER renumber it, and set tdm_world. In a progress process it returns
   with tdm_world_progress_process() true and nothing else set up: MPI_Init then hands it to
   rma/served.h, which serves until the application's ranks finalize. A host
   with G processes or fewer, or a mapping that does not fit the job, stops every rank (exit status
   1) with a message that says so. Collective over MPI_COMM_WORLD; returns an MPI error code. */
int tdm_world_start(void);

/* In MPI_Finalize, after Tandem's own teardown and before the MPI library's:
   release the progress processes and the application's world. */
void tdm_world_finish(void);

/* The progress processes of the job (0 without TANDEM_GHOSTS). */
int tdm_world_ghosts(void);

/* With progress processes: nonzero in one of them. */
int tdm_world_progress_process(void);

/* With progress processes: the whole job (a duplicate of the MPI library's
   MPI_COMM_WORLD, same ranks), the host of a job rank (the job rank of that
   host's first process) and whether a job rank is a progress process. */
MPI_Comm tdm_world_job(void);
int tdm_world_host_of(int job_rank);
int tdm_world_is_ghost(int job_rank);

/* A progress process, once the application's ranks entered MPI_Finalize:
   finalize and exit with status 0. */
void tdm_world_ghost_exit(void) __attribute__((noreturn));

#endif
