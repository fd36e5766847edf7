/*
 * How the blocking point-to-point calls wait (TANDEM_WAIT): spinning inside
 * the MPI library, or lending the core to other ranks' progress threads.
 */
#ifndef TDM_P2P_BLOCKING_H
#define TDM_P2P_BLOCKING_H

/* Decide from the configuration, after the progress thread's CPU was chosen:
   'thread_has_own_cpu' when it got a spare core. Application thread, in
   MPI_Init. */
void tdm_lend_init(int thread_has_own_cpu);

/* Back to waiting as the MPI library does. In MPI_Finalize. */
void tdm_lend_stop(void);

/* To whom the blocking calls lend their core, in words, or NULL when they
   spin. */
const char *tdm_lend_scope(void);

#endif
