/*
 * Nonblocking collectives as background schedules (after FastMPJ's, Ramos et al.).
 *
 * A schedule is a list of rounds; a round holds local operations (copy,
 * reduce), done when the round starts, and point-to-point operations (send,
 * receive), posted then; a round starts when the previous one completed
 * (FastMPJ's dependent stages; operations within a round are independent).
 * The first round starts inside the MPI_I* call, on the caller's thread; then
 * the progress thread, and any MPI call the application makes meanwhile, test
 * the round's requests and start the next round; whichever finds the last
 * round complete completes the generalized request the application holds (a
 * proxy: MPI_Wait moves the schedules for a while, then sleeps until then).
 *
 * Each user communicator gets a private duplicate (made where the
 * communicator is made, cached as an attribute) and a 64-bit sequence number: a
 * collective's messages use tag = sequence mod TDM_COLL_TAGS on the
 * duplicate, so any number of collectives (fewer than TDM_COLL_TAGS per
 * communicator) can be in flight and complete in any order.
 *
 * Blocking and nonblocking collectives have sequences, tags and
 * shared-memory slots of their own: a program whose ranks call them in a
 * different order on one communicator (one rank MPI_Iallreduce then
 * MPI_Barrier, the other the reverse) breaks the standard's rule, but both
 * MPI libraries keep the two apart and run it, and so does Tandem (the
 * nonblocking one completes while the rank waits in the blocking one).
 * Two nonblocking (or two blocking) collectives in different orders are not
 * told apart, as in the MPI libraries.
 *
 * While a schedule waits for other ranks (a round's messages, or their
 * flags in shared memory) the thread that moves it also runs the MPI
 * library's progress engine, as the library's own blocking collectives and
 * waits do: one-sided operations that target this rank, the acknowledgement
 * of a synchronous send and the rest of the library's work go on meanwhile.
 */
#ifndef TDM_COLL_SCHEDULE_H
#define TDM_COLL_SCHEDULE_H

#include <mpi.h>

#include "core/proxy.h"

/* Tags on the duplicate: [0, TAGS) for the nonblocking collectives,
   [TAGS, 2 TAGS) for the blocking ones, and DRIVE_TAG, which no message
   carries: a probe for it runs the MPI library's progress engine. */
enum { TDM_COLL_TAGS = 1 << 20, TDM_COLL_DRIVE_TAG = 2 * TDM_COLL_TAGS };

typedef enum {
    TDM_OP_SEND,
    TDM_OP_RECV,
    TDM_OP_COPY,
    TDM_OP_REDUCE,
    TDM_OP_WAIT,
    TDM_OP_SIGNAL,
    TDM_OP_NOTE
} tdm_op_kind;

/* One operation. SEND/RECV: buf, count, type with peer (a rank of the
   communicator). COPY: src (src_count x src_type) -> buf (count x type), two
   type maps with the same signature, copied in memory (never through the
   MPI's transport: a message to oneself may cross the network). REDUCE:
   buf = src op buf (count x type). WAIT (shared memory): the round goes on
   once each of 'count' 64-bit flags from src, 'stride' bytes apart, is at
   least 'value' (else it resumes there at the next poll). SIGNAL: the flag
   at buf becomes 'value' (after every write before it). NOTE: count x type
   that rank 'peer' reads from this rank's writes to shared memory: nothing
   moves, monitoring records it as a message sent to 'peer'. */
typedef struct {
    tdm_op_kind kind;
    void *buf;
    const void *src;
    MPI_Count count;
    MPI_Datatype type;
    int peer;
    MPI_Op op;
    MPI_Count src_count;
    MPI_Datatype src_type;
    unsigned long long value;
    MPI_Aint stride;
} tdm_op;

typedef struct tdm_schedule tdm_schedule;

/* A new empty schedule for a collective on 'comm', nonblocking or
   'blocking' (run by tdm_schedule_run); NULL without memory. */
tdm_schedule *tdm_schedule_new(MPI_Comm comm, int blocking);

/* This rank and the number of ranks of the schedule's communicator. */
void tdm_schedule_ranks(const tdm_schedule *s, int *rank, int *size);

/* Append an operation to the last round; tdm_schedule_round() opens a new
   round. Return 0, or -1 without memory (the schedule then fails to start). */
int tdm_schedule_add(tdm_schedule *s, tdm_op op);
int tdm_schedule_round(tdm_schedule *s);

/* The shared-memory slots of a communicator whose ranks share one node: N
   slots in a window those ranks share, used in turn by the collectives that
   take the shared path (use k, counted from 1, takes slot (k - 1) mod N);
   the blocking collectives have a ring of slots of their own.
   Each rank has a 'posted' and an 'ack' flag in a slot and a data segment of
   'bytes'. A use may touch its slot once every rank acknowledged the slot's
   previous use ('previous': use - N, or 0). */
enum { TDM_SLOT_FLAG = 64 }; /* bytes between two ranks' flags */
typedef struct {
    unsigned long long use, previous;
    char *posted, *acks; /* rank r's flag at + r * TDM_SLOT_FLAG */
    char *data;          /* rank r's segment at data + r * bytes */
    size_t bytes;
} tdm_slot;

/* The bytes of a rank's segment in a slot of the communicator of 's'; 0 when
   it has no shared path (ranks on several nodes, TANDEM_COLL_SHM=0). */
size_t tdm_schedule_slot_bytes(const tdm_schedule *s);

/* Take the next use of the communicator's slots for 's' (only when
   tdm_schedule_slot_bytes() said yes, and as every rank does: the same
   collectives take the shared path on every rank, in the same order). */
void tdm_schedule_slot(tdm_schedule *s, tdm_slot *slot);

/* Memory the schedule frees when it ends (scratch buffers). */
void *tdm_schedule_scratch(tdm_schedule *s, size_t bytes);

/* The bytes of 'count' x 'type' (0 for MPI_DATATYPE_NULL). */
MPI_Aint tdm_coll_bytes(MPI_Count count, MPI_Datatype type);

/* Whether 'count' x 'type' is one contiguous run of bytes; then *offset is
   where it starts in the buffer and *bytes its length. */
int tdm_coll_contiguous(MPI_Count count, MPI_Datatype type, MPI_Aint *offset, MPI_Aint *bytes);

/* Whether building 's' ran out of memory; discard it then (frees it). */
int tdm_schedule_failed(const tdm_schedule *s);
void tdm_schedule_discard(tdm_schedule *s);

/* Run the schedule to its end on the calling thread (a blocking
   collective). Consumes 's'. Returns an MPI code. */
int tdm_schedule_run(tdm_schedule *s);

/* Start the schedule: its first round now, the rest in the background; *request
   becomes the generalized request the application completes. Consumes 's'.
   Returns an MPI code. */
int tdm_schedule_start(tdm_schedule *s, MPI_Request *request);

/* Advance every schedule in flight: the progress thread, and a thread that
   waits for or tests a schedule's request. Where none of them called the MPI
   library (each waits for flags in shared memory), it runs the library's
   progress engine once. Returns how many there are (0: none; 1 when another
   thread is advancing them). */
int tdm_coll_poll(void);

/* Nonzero when TANDEM_COLL=tandem (tdm_coll_on) and TANDEM_COLL_BLOCKING=tandem
   (tdm_coll_blocking_on) are in force (set in MPI_Init). */
extern int tdm_coll_on;
extern int tdm_coll_blocking_on;

/* MPI_Init: read TANDEM_COLL (the progress thread must run for it),
   TANDEM_COLL_BLOCKING and the tuning file. */
void tdm_coll_init(void);

/* A communicator was made, in a call every one of its ranks is in: make
   Tandem's state of it now (collective over it) while collectives are on. */
void tdm_coll_comm_created(MPI_Comm comm);

/* MPI_Comm_idup posted 'comm', a copy of 'parent': post Tandem's own
   duplicate of 'parent' beside it (the state is taken on the first Tandem
   collective on 'comm'). */
void tdm_coll_comm_posted(MPI_Comm parent, MPI_Comm comm);

/* MPI_Comm_free is about to free 'comm': drop what was prepared for it, and
   complete Tandem's collectives still in flight on it. Application thread. */
void tdm_coll_comm_freeing(MPI_Comm comm);

/* Before PMPI_Finalize: free the private communicators. */
void tdm_coll_stop(void);

/* Collectives Tandem ran so far, and the nonblocking ones among them that an
   application thread finished, in one of its MPI calls rather than the
   progress thread (TANDEM_VERBOSE=2). */
long tdm_coll_started(void);
long tdm_coll_finished_by_calls(void);
/* How many were posted without waking the progress thread: small enough to
   be left to the MPI library and the application's calls. */
long tdm_coll_unwoken(void);
/* How many took the shared-memory slots (one per use of a slot): the
   collectives on a communicator whose ranks share one node. */
long tdm_coll_slot_uses(void);

#endif
