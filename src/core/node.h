/*
 * What the ranks of one node (a host: the ranks that share its cores) know
 * of each other: which ranks of MPI_COMM_WORLD the MPI library reaches
 * through shared memory, how many of their progress threads want a CPU
 * right now, and which CPUs ranks blocked in a lending wait leave idle (both
 * in shared memory). A rank blocked in a lending wait (TANDEM_WAIT) sleeps
 * between its polls only while some thread of its node wants a CPU: with
 * nobody to lend to, sleeping would only delay it. A progress thread with
 * work and no CPU of its own moves to a lent CPU while it is lent, instead of
 * waiting for the scheduler to notice the idle core.
 */
#ifndef TDM_NODE_H
#define TDM_NODE_H

#include <mpi.h>

/* Learn the node: split 'world', Tandem's copy of MPI_COMM_WORLD, by host
   name, note the MPI's shared-memory mates, and make the shared counter.
   Collective over MPI_COMM_WORLD; application thread, in MPI_Init, before
   Tandem's threads start. Returns an MPI error code. */
int tdm_node_init(MPI_Comm world);

/* The communicator of this node's ranks (MPI_COMM_NULL before
   tdm_node_init or after tdm_node_finalize). */
MPI_Comm tdm_node_comm(void);

/* Whether the MPI library reaches the rank 'world_rank' of MPI_COMM_WORLD
   through shared memory (MPI_COMM_TYPE_SHARED; a subset of the node): 1 also
   when that is not known (before tdm_node_init, or outside the world). */
int tdm_node_mate(int world_rank);

/* This rank's progress thread starts (+1) or stops (-1) wanting a CPU: it
   has work outstanding, or no longer. Progress thread. */
void tdm_node_borrow(int delta);

/* How many progress threads of this node want a CPU now; 1 when the counter
   could not be shared. Any thread. */
int tdm_node_borrowers(void);

/* This rank, blocked in a lending wait, leaves 'cpu' idle (>= 0), or takes
   it back (-1). Application thread. One slot per rank: with several of its
   threads lending at once, the slot names the last one's CPU, and the first
   to return clears it (a thread then stays where the scheduler puts it). */
void tdm_node_lend(int cpu);

/* This rank's progress thread is pinned to the lent CPU 'cpu' (>= 0), or
   left it (-1). Progress thread. */
void tdm_node_guest(int cpu);

/* Whether a progress thread of another rank of this node is pinned to
   'cpu' (the CPU this rank lends); 1 when that could not be shared. Any
   thread. */
int tdm_node_has_guest(int cpu);

/* A CPU that a rank of this node lends now, or -1: 'current' if it is still
   lent, else the first lent one after this rank's own slot (so that the
   threads of several ranks spread over several lenders). Any thread. */
int tdm_node_lent_cpu(int current);

/* Unmap the counter and free the communicator. Collective over the node's ranks;
   in MPI_Finalize, after Tandem's threads stopped. */
void tdm_node_finalize(void);

#endif
