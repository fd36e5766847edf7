/*
 * Messages between virtual ranks of different processes, over the real MPI
 * (PMPI_*), on a communicator of their own (a duplicate of the real
 * MPI_COMM_WORLD), tag TDM_VIRT_NET_TAG: a header that names the
 * destination rank (its index in its process), the context, the source
 * rank in the communicator and the tag. The real MPI keeps the messages of
 * one process to another in order, and one poller at a time moves what
 * arrived into the mailboxes, in order: matching stays MPI's. Up to 4 KiB
 * the data follows the header in the same message, and the send completes
 * once it is copied out (the real MPI's send then runs on, and the poller
 * frees its buffer). A larger message's data is a message of its own on
 * another duplicate, sent from the program's buffer: the poller holds it
 * (MPI_Improbe) when its header arrives, and the receive that matches the
 * header takes it with MPI_Imrecv into its own buffer; the send completes
 * when the real MPI's does.
 *
 * tdm_virt_send routes a message to a rank of this process (virt/queue) or
 * of another one. A deadlock across processes is found by waves of the
 * processes' counts of messages (tdm_virt_net_quiet).
 *
 * Received messages are matched with MPI_Improbe and received with
 * MPI_Imrecv, by whichever thread polls (a core between its ranks' turns
 * or when idle, and the progress thread), and handed to their ranks in the
 * order they matched.
 */
#ifndef TDM_VIRT_NET_H
#define TDM_VIRT_NET_H

#include <mpi.h>

#include "virt/queue.h"
#include "virt/sched.h"

/* Ranks per process and this process's number among 'processes'.
   Application thread, after MPI_Init of the real MPI. Returns an MPI error
   code. */
int tdm_virt_net_init(int ranks_per_process, int process, int processes);

/* Start the progress thread (TANDEM_VIRT_PROGRESS=thread), which polls the
   real MPI while the ranks compute; nothing with one process. Returns 0, or
   -1 when the thread cannot be made. */
int tdm_virt_net_start_progress(void);

/* Complete the sends still in flight and free the communicator; before the
   real MPI_Finalize. */
void tdm_virt_net_finish(void);

/* Receive what other processes sent and free the buffers of completed
   sends; returns nonzero if a message arrived. Any thread; one at a time
   (others return 0 at once). */
int tdm_virt_net_poll(void);

/* The job's verdict on this quiet process (tdm_virt_quiet in virt/sched.h):
   TDM_VIRT_DEADLOCK once every process is quiet or done and no message is
   on its way, twice in a row; any thread. */
int tdm_virt_net_quiet(int unfinished);

/* This process's part of the deadlock report ('text'): process 0 gathers
   every process's and prints them in order, then every process exits with
   status 1 (tdm_virt_reported). Does not return. */
void tdm_virt_net_reported(const char *text) __attribute__((noreturn));

/* The process that runs world rank 'world' (0 with one process). */
int tdm_virt_net_process_of(int world);

/* Send to world rank 'dest' on 'context' as rank 'source' of the
   communicator: in this process through the queues, otherwise over the
   real MPI. Returns an MPI error code; the request in *out. */
int tdm_virt_send(tdm_virt_rank *self, const void *buf, int count, MPI_Datatype type, int dest,
                  int context, int source, int tag, int sync, tdm_virt_request **out);

#endif
