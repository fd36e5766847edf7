/*
 * The application's world (runtime.h's tdm_world) and the progress
 * processes that leave it (TANDEM_GHOSTS=G, DART-MPI's design): on each
 * host, the G processes with the highest ranks on that host are taken out
 * of the job at MPI_Init and never return to the program; the others get a
 * communicator of their own that the entry points use wherever the program
 * names MPI_COMM_WORLD, so its size, its ranks, its group, every status and
 * every rank argument are those of a job without them. Until MPI_Finalize the
 * progress processes run the MPI library's progress engine; the one-sided
 * operations they are to serve are the next step (docs/ONESIDED.md).
 * TANDEM_REORDER=MAPPING renumbers that world instead (or as well): the
 * processes stay where they were launched, and rank i is the process launched
 * in the slot tandem place's mapping gives rank i (docs/PLACEMENT.md).
 */
#ifndef TDM_CORE_WORLD_H
#define TDM_CORE_WORLD_H

/* Right after the MPI library's MPI_Init: with TANDEM_GHOSTS=G > 0, split
   the job, with TANDEM_REORDER renumber it, and set tdm_world. A progress process does not return:
   it serves until the application's ranks finalize, then finalizes and exits with status 0. A host
   with G processes or fewer, or a mapping that does not fit the job, stops every rank (exit status
   1) with a message that says so. Collective over MPI_COMM_WORLD; returns an MPI error code. */
int tdm_world_start(void);

/* In MPI_Finalize, after Tandem's own teardown and before the MPI library's:
   release the progress processes and the application's world. */
void tdm_world_finish(void);

/* The progress processes of the job (0 without TANDEM_GHOSTS). */
int tdm_world_ghosts(void);

#endif
