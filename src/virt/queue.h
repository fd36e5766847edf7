/*
 * Messages between the virtual ranks of one process: per-rank queues of
 * posted receives and of unexpected messages, matched as MPI matches
 * (context, source, tag, with MPI_ANY_SOURCE and MPI_ANY_TAG; messages from
 * one sender matched in the order sent). A message up to the eager limit is
 * copied once into the queue when no receive waits for it; a larger one
 * waits in the queue as the sender's buffer, and the receive copies it once,
 * sender buffer to receiver buffer, and completes the send. A receive that
 * is already posted gets any message in one copy.
 *
 * Every function here runs on a rank (user-level thread) of this process.
 */
#ifndef TDM_VIRT_QUEUE_H
#define TDM_VIRT_QUEUE_H

#include <mpi.h>
#include <stddef.h>

#include "virt/sched.h"

/* Messages up to this many bytes are copied when sent before their receive
   is posted; larger ones wait for it (rendezvous). */
#define TDM_VIRT_EAGER_LIMIT 16384

enum { TDM_VIRT_SEND = 1, TDM_VIRT_RECV = 2, TDM_VIRT_COLL = 3 };

/* The modes of a persistent send (MPI_Send_init, MPI_Ssend_init,
   MPI_Bsend_init; MPI_Rsend_init's is the standard one). */
enum { TDM_VIRT_STANDARD = 0, TDM_VIRT_SYNCHRONOUS = 1, TDM_VIRT_BUFFERED = 2 };

/* A nonblocking collective's schedule (virt/coll). */
typedef struct tdm_virt_sched tdm_virt_sched;

typedef struct tdm_virt_request {
    int index;                /* its handle's number (tdm_virt_request_at) */
    int kind;                 /* TDM_VIRT_SEND, TDM_VIRT_RECV or TDM_VIRT_COLL */
    int done;                 /* set last, when complete (atomic) */
    int freed;                /* MPI_Request_free'd before it completed */
    int errors_return;        /* its communicator's error handler (api.c's fail) */
    MPI_Comm err_comm;        /* that communicator's handle, for a handler of the program's */
    tdm_virt_rank *owner;     /* the rank that started it and waits on it */
    void *buf;                /* receive: where the data goes */
    int count;                /* receive: its count of 'type' */
    MPI_Datatype type;        /* receive: its datatype */
    size_t capacity;          /* receive: its bytes */
    int contiguous;           /* receive: its items lie in one block */
    int context, source, tag; /* receive: what it matches */
    int status_source;        /* the status: sender's rank in the communicator */
    int status_tag;
    int status_error;     /* MPI_SUCCESS or MPI_ERR_TRUNCATE */
    size_t status_bytes;  /* bytes received (or sent) */
    int status_cancelled; /* a receive taken back by MPI_Cancel */
    tdm_virt_sched *coll; /* a collective's schedule until it completes */
    /* MPI_Send_init / MPI_Recv_init: 'persistent' is TDM_VIRT_SEND or
       TDM_VIRT_RECV (0 for any other request), 'active' between MPI_Start
       and its completion's wait or test; what each MPI_Start starts
       ('p_mode': a send's TDM_VIRT_STANDARD, _SYNCHRONOUS or _BUFFERED). */
    int persistent, active, p_mode;
    void *p_buf;
    int p_count;
    MPI_Datatype p_type;
    int p_peer, p_tag;
    MPI_Comm p_comm;
    /* Run once the request is released and complete: what the program's
       entry point made for it (src/virt/fortran.c: an array section's
       datatype, a contiguous copy). */
    void (*on_release)(void *);
    void *on_release_arg;
    struct tdm_virt_request *next; /* in the posted queue or a free list */
} tdm_virt_request;

/* Make the mailboxes of this process's ranks. Before the ranks start. */
int tdm_virt_queue_init(int ranks);
void tdm_virt_queue_finish(void);

/* A new request of 'self', and its end (after completion, or freed). */
tdm_virt_request *tdm_virt_request_new(tdm_virt_rank *self);
void tdm_virt_request_release(tdm_virt_rank *self, tdm_virt_request *req);

/* Set every field of a request as new ('index': its number, or -1 for one
   that a blocking call keeps on its stack and never releases). */
void tdm_virt_request_init(tdm_virt_request *req, tdm_virt_rank *self, int index);

/* The request numbered 'index', or NULL. */
tdm_virt_request *tdm_virt_request_at(int index);

/* Call fn(arg) once the program's request 'handle' is released and
   complete (src/virt/api.c, which knows the handles). Returns MPI_SUCCESS,
   or MPI_ERR_REQUEST when 'handle' is not one of the runtime's requests
   (fn is then not called). */
int tdm_virt_request_on_release(MPI_Request handle, void (*fn)(void *), void *arg);

/* MPI_Comm_create_errhandler, for C's functions or Fortran's (fortran 1:
   called with the communicator's Fortran handle and the code, both by
   reference) (src/virt/api.c). */
int tdm_virt_errhandler_create(void (*fn)(void), int fortran, MPI_Errhandler *errhandler);

static inline int tdm_virt_request_done(const tdm_virt_request *req)
{
    return __atomic_load_n(&req->done, __ATOMIC_ACQUIRE);
}

/* Send to 'target' on 'context', as rank 'source' of the communicator.
   'sync': complete only once matched (MPI_Ssend). The send's request is
   *out when that is not NULL on entry (the caller's, initialized), else a
   new one put in *out. Returns an MPI error code; nothing is queued on
   error. */
int tdm_virt_isend(tdm_virt_rank *self, const void *buf, int count, MPI_Datatype type,
                   tdm_virt_rank *target, int context, int source, int tag, int sync,
                   tdm_virt_request **out);

/* A message for 'target' that came from another process: 'bytes' of packed
   data at 'data', inside the malloc'ed 'arrived', which the queue frees
   once the data is received. From any thread (the poller). Returns an MPI
   error code. */
int tdm_virt_deliver(tdm_virt_rank *target, int context, int source, int tag, void *arrived,
                     const void *data, size_t bytes);

/* A message for 'target' from another process whose data is still there
   (a rendezvous between processes, virt/net): 'bytes' of data, which the
   receive that matches it asks the fetch function for ('remote': net's
   handle of it). From any thread (the poller). Returns an MPI error code. */
int tdm_virt_deliver_remote(tdm_virt_rank *target, int context, int source, int tag, size_t bytes,
                            void *remote);

/* How a receive gets the data of a message that tdm_virt_deliver_remote
   queued: start moving it into the receive, which the fetcher completes
   later (tdm_virt_complete, tdm_virt_complete_packed). Returns an MPI
   error code (the receive then completes with it). */
typedef int (*tdm_virt_fetch)(tdm_virt_request *recv, size_t bytes, int source, int tag,
                              void *remote);
void tdm_virt_queue_set_fetch(tdm_virt_fetch fetch);

/* Complete a request: its status (the sender's rank, the tag, the bytes,
   MPI_SUCCESS or an error), then wake its owner. Any thread. */
void tdm_virt_complete(tdm_virt_request *req, int source, int tag, size_t bytes, int error);

/* Complete a receive with 'bytes' of packed data at 'data', copied into it
   (MPI_ERR_TRUNCATE in its status where they do not fit). Any thread. */
void tdm_virt_complete_packed(tdm_virt_request *recv, const void *data, size_t bytes, int source,
                              int tag);

/* Take out every queued message of tdm_virt_deliver_remote's that no
   receive matched, handing each to 'drop' ('remote', its bytes): once
   every rank of the process has finished. */
void tdm_virt_queue_drain(void (*drop)(void *remote, size_t bytes));

/* Post a receive of 'self', its request as tdm_virt_isend's. Returns an MPI
   error code. */
int tdm_virt_irecv(tdm_virt_rank *self, void *buf, int count, MPI_Datatype type, int context,
                   int source, int tag, tdm_virt_request **out);

/* A message queued for a rank that no receive matched yet. */
typedef struct tdm_virt_message tdm_virt_message;

/* Whether a message that a receive would match is queued; its envelope in
 *source, *tag, *bytes. 'block': wait until one is (MPI_Probe; 'call'
   names it in the deadlock report). With 'take' not NULL, the message
   found is taken out of the queue, so that no receive matches it, and put
   in *take for tdm_virt_mrecv (MPI_Mprobe). */
int tdm_virt_probe(tdm_virt_rank *self, const char *call, int context, int source, int tag,
                   int block, int *found, int *out_source, int *out_tag, size_t *bytes,
                   tdm_virt_message **take);

/* Receive a message that tdm_virt_probe took (and free it): the receive's
   request (as tdm_virt_irecv's) completes at once. Returns an MPI error
   code; on error the message stays. */
int tdm_virt_mrecv(tdm_virt_rank *self, tdm_virt_message *msg, void *buf, int count,
                   MPI_Datatype type, tdm_virt_request **out);

/* What moves the rank's nonblocking collectives on, called by every wait
   while the rank has some in flight (rank->coll): with 'move', as far as
   they go; without, only whether one can go on now. */
typedef int (*tdm_virt_progress)(tdm_virt_rank *self, int move);
void tdm_virt_queue_set_progress(tdm_virt_progress progress);

/* Wait for one request to complete (switching to other ranks meanwhile,
   and moving the rank's nonblocking collectives on). */
void tdm_virt_request_wait(tdm_virt_rank *self, tdm_virt_request *req, const char *call, int peer,
                           int tag);

/* Take back a receive of 'self' that no message matched yet: it completes
   as cancelled (status_cancelled). Returns whether it was taken back. */
int tdm_virt_cancel(tdm_virt_rank *self, tdm_virt_request *req);

/* The bytes of 'count' items of 'type'; *contiguous tells whether they lie
   in one block from the buffer's start. Returns an MPI error code. */
int tdm_virt_type_bytes(MPI_Datatype type, int count, size_t *bytes, int *contiguous);

/* 'count' x 'type' at 'buf' as 'bytes' packed bytes at 'data' (a copy where
   'contiguous', as tdm_virt_type_bytes said). Returns an MPI error code. */
int tdm_virt_pack(const void *buf, int count, MPI_Datatype type, void *data, size_t bytes,
                  int contiguous);

#endif
