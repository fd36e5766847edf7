/* Where the progress thread runs (TANDEM_PROGRESS_CPUS). */
#ifndef TDM_AFFINITY_H
#define TDM_AFFINITY_H

#include <mpi.h>
#include <pthread.h>
#include <sched.h>

/* Choose the progress thread's CPU for this rank from the setting 'spec'
   ("auto", "share", "none" or a list "2,3" / "2_3", one CPU per local rank). Sets
   *cpu to -1 when the thread shares the rank's own CPUs. Collective over the
   node's ranks (it compares their bindings; tdm_node_init ran). Application
   thread, in MPI_Init. Returns an MPI error code. */
int tdm_affinity_choose(const char *spec, int *cpu);

/* The CPUs the node's 'ranks' ranks are bound to, all together, and
   whether the kernel shares a CPU between their sessions before their tasks
   (tdm_affinity_choose learns both). */
void tdm_affinity_set_node_cpus(const cpu_set_t *cpus, int ranks, int sessions_apart);

/* Whether a thread that runs on another rank's CPU costs that rank half of
   it: the node's ranks are bound to no more CPUs than there are ranks
   (unbound ones to all of the host's), and they run in sessions of their
   own that the kernel shares a CPU between first (autogroup scheduling;
   MPICH's hydra starts each rank so, Open MPI's mpirun all in one), so a
   thread alone in its session there gets half of it however often it
   yields. 0 when the node's CPUs are not known. */
int tdm_affinity_ranks_apart(void);

/* Whether each rank of the node has a CPU of its own: the node's ranks are
   bound to at least as many CPUs as there are ranks (unbound ones to all of
   the host's). A rank that waits may then keep its CPU busy for a while
   without taking it from another rank. 0 when the node's CPUs are not known
   (TANDEM_PROGRESS_CPUS=none or a list). */
int tdm_affinity_core_each(void);

/* Whether a progress thread placed on 'cpu' (-1: on the node's CPUs) runs
   on a core no rank computes on: 'cpu' is outside every rank's CPUs, or the
   ranks may run on twice as many CPUs as there are ranks (unbound ranks on
   a large host). 0 when the node's CPUs are not known. */
int tdm_affinity_spare_for(int cpu);

/* How many CPUs this host gives the job, known before MPI_Init: the CPUs
   this process or its parent (the launcher's daemon, which no launcher
   binds) may run on, whichever are more, so that a rank bound to one core
   still sees the host's share of the job (a taskset or cgroup around the
   launcher bounds both). 0 if neither could be read. */
int tdm_affinity_launch_cpus(void);

/* Whether 'ranks' ranks on a host of 'cpus' CPUs leave a CPU for each
   rank's progress thread beside the CPUs its computation takes: one per
   rank, or the first number of 'omp_threads' (OMP_NUM_THREADS, NULL when
   unset) where that is more. */
int tdm_affinity_room_for_threads(int ranks, int cpus, const char *omp_threads);

/* Whether the progress thread has a core of its own, so that no rank need
   lend it one (TANDEM_WAIT=auto): it is pinned ('cpu' >= 0, a spare CPU or
   one the user chose), or it runs beside unbound ranks with a CPU each to
   spare (tdm_affinity_spare_for(-1)). */
int tdm_affinity_thread_has_core(int cpu);

/* How many CPUs the ranks of 'host', a communicator of ranks that share
   one host, may run on, all together: the union of their affinity masks
   (each rank's own, set by the launcher or inherited: Open MPI binds 2
   ranks to a core each, 4 ranks on 2 cores to both; MPICH binds none).
   Collective over 'host'; application thread. -1 if it failed. */
int tdm_affinity_host_cpus(MPI_Comm host);

/* Drop what tdm_affinity_choose learnt. In MPI_Finalize. */
void tdm_affinity_forget(void);

/* Ask the scheduler for time slices of 'us' microseconds for the calling
   thread (Linux 6.12 and later: a fair task with a shorter slice than the
   one running preempts it when woken, and gives the CPU back sooner).
   Only for a thread of the normal class; its nice value is kept. Returns 0,
   or -1 if the thread is of another class or the OS refused (older kernels
   accept the request and ignore it). */
int tdm_affinity_slice_self(int us);

/* Pin 'thread' to one CPU; if it waits for a turn elsewhere, the kernel
   moves it at once. Returns 0, or -1 if the OS refused. */
int tdm_affinity_pin(pthread_t thread, int cpu);

/* Let 'thread' run on any CPU a rank of this node is bound to (a progress
   thread without a spare core then runs wherever a rank waits in a lending
   blocking call, TANDEM_WAIT). Returns 0, or -1 when the node's CPUs are not
   known (tdm_affinity_choose found a spare one, or was not asked to look) or
   the OS refused. */
int tdm_affinity_share_node(pthread_t thread);
/* As tdm_affinity_share_node, but off 'cpu' (the kernel moves 'thread' at
   once if it runs or waits there). Returns -1 as it does, and when no other
   CPU of the node is left. */
int tdm_affinity_share_node_except(pthread_t thread, int cpu);

#endif
