/*
 * The MPI-IO offload: a worker thread that executes the independent
 * nonblocking file operations behind generalized requests.
 */
#ifndef TDM_IO_OFFLOAD_H
#define TDM_IO_OFFLOAD_H

/* Finish every queued operation and stop the worker (MPI_Finalize, before
   PMPI_Finalize). Application thread. */
void tdm_io_stop(void);

/* Number of file operations offloaded so far. */
long tdm_io_offloaded(void);

#endif
