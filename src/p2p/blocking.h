/*
 * How the blocking point-to-point calls wait (TANDEM_WAIT): spinning inside
 * the MPI library, or lending the core to other ranks' progress threads.
 */
#ifndef TDM_P2P_BLOCKING_H
#define TDM_P2P_BLOCKING_H

enum { TDM_WAIT_AUTO = 0, TDM_WAIT_SPIN = 1, TDM_WAIT_LEND = 2 }; /* TANDEM_WAIT's choices */

/* Decide from the configuration, after the progress thread's CPU was chosen:
   'thread_has_own_cpu' when it got a spare core. Application thread, in
   MPI_Init. */
void tdm_lend_init(int thread_has_own_cpu);

/* Back to waiting as the MPI library does. In MPI_Finalize. */
void tdm_lend_stop(void);

/* To whom the blocking calls lend their core, in words, or NULL when they
   spin. */
const char *tdm_lend_scope(void);

/* Without a progress thread, on a host with more ranks than cores: every
   blocking wait (the blocking point-to-point calls and MPI_Wait, Waitall,
   Waitany, Waitsome) polls and sleeps between its polls, leaving the core
   to the host's other ranks. Application thread, in MPI_Init. */
void tdm_nap_init(void);

/* Whether the waits sleep so. Any thread. */
int tdm_waits_nap(void);

/* A sleeping wait's pauses: polls without sleeping for its first 50 us,
   then sleeps 1 us, 2, 4, ... up to TDM_PAUSE_MAX_US between polls. */
typedef struct {
    double spin_end;
    int pause; /* the next sleep, us; 0 while it spins */
    int slack; /* the thread's timer slack before, or -1 */
} tdm_nap;
void tdm_nap_start(tdm_nap *nap);
void tdm_nap_take(tdm_nap *nap); /* between two polls */
void tdm_nap_end(tdm_nap *nap);

#endif
