/* Where the progress thread runs (TANDEM_PROGRESS_CPUS). */
#ifndef TDM_AFFINITY_H
#define TDM_AFFINITY_H

/* Choose the progress thread's CPU for this rank from the setting 'spec'
   ("auto", "none" or a list "2,3" / "2_3", one CPU per local rank). Sets
   *cpu to -1 when the thread shares the rank's own CPUs. Collective over
   MPI_COMM_WORLD (it compares the bindings of the ranks of each node).
   Application thread, in MPI_Init. Returns an MPI error code. */
int tdm_affinity_choose(const char *spec, int *cpu);

/* Pin the calling thread to one CPU. Returns 0, or -1 if the OS refused. */
int tdm_affinity_pin_self(int cpu);

#endif
