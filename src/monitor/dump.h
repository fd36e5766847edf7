/*
 * The whole-run record (TANDEM_MONITOR=1): a view of everything, started at
 * MPI_Init, and its files, written at MPI_Finalize (dump.c names them). It
 * sits above the counters and views of monitor/monitor.h, which know
 * nothing of it.
 */
#ifndef TDM_DUMP_H
#define TDM_DUMP_H

#include <stdint.h>
#include <stdio.h>

/* Start the whole-run view if TANDEM_MONITOR=1. Application thread, in
   MPI_Init, once tdm_monitor_init succeeded. */
void tdm_monitor_run_start(void);

/* Stop the whole-run view, write its files and release it; nothing if it
   did not start. Collective over MPI_COMM_WORLD; before
   tdm_monitor_finalize. */
void tdm_monitor_run_finish(void);

/* Write the .prof lines of rank 'rank' of 'size' from its counters 'values'
   ([TDM_VIEW_KINDS][peer][field], as a view of everything reads them) and
   the communicators listed. */
void tdm_monitor_write_prof(FILE *f, int rank, int size, const uint64_t *values);

#endif
