/*
 * Monitoring of communications (after Open MPI's monitoring, Bosilca et
 * al.): per-peer message counts, bytes and size histograms, by kind of
 * traffic.
 *
 * Counting is lock-free: each thread that records owns a block of counters
 * (kind x peer x {messages, bytes, 66 bins}) that only it writes, with plain
 * relaxed stores; readers sum the blocks of every thread. The raw counters
 * never go down. Every consumer -- the whole-run record (TANDEM_MONITOR=1),
 * the program's view (tandem_monitor_*), each MPI_T handle -- is a "view":
 * what it counted is its accumulated part plus, while it runs, the raw total
 * minus the total when it started. So views start, stop and reset without
 * touching each other, and recording is on while at least one view runs.
 */
#ifndef TDM_MONITOR_H
#define TDM_MONITOR_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "tandem.h"
#include "impl/impl.h"

/* The kinds a view holds: the public ones of tandem.h, and one of Tandem's
   own, TDM_COLL_NATIVE, the logical volume of the collectives the MPI library
   ran (those Tandem ran are coll_internal's messages). TANDEM_MONITOR_ALL is
   never recorded: a reader sums p2p_send, osc_put, osc_get, coll_internal
   and TDM_COLL_NATIVE, each byte that crossed between ranks once
   (docs/MONITORING.md, "What all counts"). */
enum {
    TDM_KINDS = TANDEM_MONITOR_KINDS,       /* public: the files, the API, MPI_T */
    TDM_COLL_NATIVE = TANDEM_MONITOR_KINDS, /* the C lines of the .prof files */
    TDM_VIEW_KINDS = TANDEM_MONITOR_KINDS + 1,
    TDM_BINS = TANDEM_MONITOR_BINS,
    TDM_FIELDS = 2 + TDM_BINS, /* messages, bytes, bins */
};

/* The short names of the public kinds ("p2p_send", ..., "all"), in enum order. */
extern const char *const tdm_monitor_kind_names[TDM_KINDS];

/* Set by every collective hook (coll/hooks.c) for the calling thread: the
   call ran in Tandem (1: its messages are coll_internal) or was left to the
   MPI library (0). The collective's record, made after the call, reads it. */
extern __thread int tdm_monitor_coll_by_tandem __attribute__((tls_model("initial-exec")));

/* Nonzero while some view runs; the wrappers test it before recording. */
extern int tdm_monitor_on_flag;

static inline int tdm_monitor_on(void)
{
    return __atomic_load_n(&tdm_monitor_on_flag, __ATOMIC_RELAXED);
}

/* Set up the counters and the program's view. After MPI_Init, application
   thread. Returns 0, or -1 out of memory (monitoring stays off). */
int tdm_monitor_init(void);

/* Release everything (the whole-run view, monitor/dump.h, is released
   before). Before PMPI_Finalize. */
void tdm_monitor_finalize(void);

/* Histogram bin of a message of 'bytes' bytes. */
static inline int tdm_monitor_bin(uint64_t bytes)
{
    return bytes == 0 ? 0 : 64 - __builtin_clzll(bytes);
}

/* Record one message of 'bytes' bytes with world rank 'peer' ('kind' any but
   TANDEM_MONITOR_ALL). Any thread. */
void tdm_monitor_record(int kind, int peer, uint64_t bytes);

/* The world rank of rank 'rank' of 'comm' (of its remote group for an
   inter-communicator), or -1 (MPI_PROC_NULL, MPI_ANY_SOURCE, not in
   MPI_COMM_WORLD). */
int tdm_monitor_world_rank(MPI_Comm comm, int rank);

/* Bytes of 'count' elements of 'type'. */
static inline uint64_t tdm_monitor_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || tdm_impl_type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* Record a point-to-point send of 'count' x 'type' to 'dest' of 'comm'. */
void tdm_monitor_send(MPI_Count count, MPI_Datatype type, int dest, MPI_Comm comm);

/* Record the receive a completed status describes ('comm' translates its
   source; nothing for MPI_PROC_NULL, an empty or a cancelled status). */
void tdm_monitor_received(const MPI_Status *status, MPI_Comm comm);

/* Nonblocking and persistent point-to-point requests: remember what a
   request will send or receive, then record it when it starts (a persistent
   send) or completes (a receive). */
void tdm_monitor_posted_recv(MPI_Request request, MPI_Comm comm, int persistent);
void tdm_monitor_posted_send(MPI_Request request, MPI_Count count, MPI_Datatype type, int dest,
                             MPI_Comm comm);
void tdm_monitor_started(MPI_Request request);
void tdm_monitor_freed(MPI_Request request);

/* Matched probes: MPI_Mprobe or MPI_Improbe returned 'message', matched on
   'comm' (nothing for MPI_MESSAGE_NO_PROC); it is remembered until its
   MPI_Mrecv or MPI_Imrecv, which takes it back before the call (the call
   sets the handle to MPI_MESSAGE_NULL): tdm_monitor_take_message returns
   whether it was remembered, with its communicator. A message is
   remembered while monitoring records, and taken back even after it
   stopped. Any thread. */
void tdm_monitor_matched(MPI_Message message, MPI_Comm comm);
int tdm_monitor_take_message(MPI_Message message, MPI_Comm *comm);

/* Nonzero while some receive request is remembered: the completion calls
   then take the slow path that reports statuses. */
int tdm_monitor_receives_pending(void);

/* Completion calls. Before the MPI library may complete before[0..n-1],
   the call claims their receives: it takes their entries out of the
   remembered ones (claimed[i], or NULL), since the handle of a request that
   completes is free at once, and another thread's new request may get it
   and be remembered under it before this call could look its own up (one
   receive in a hundred went unrecorded with two threads). Returns how many
   it claimed. Then tdm_monitor_settle() records the 'ndone' completions:
   request indices[k] (or k) with statuses[k] (or statuses[indices[k]] when
   'by_index'); with 'errors' (MPI_ERR_IN_STATUS), a status whose MPI_ERROR
   is MPI_ERR_PENDING did not complete and one with another error completed
   without data. Every claimed entry that did not complete, and a completed
   persistent one, is remembered again. Any thread. */
int tdm_monitor_claim(int n, const MPI_Request *before, void **claimed);
void tdm_monitor_settle(int n, void **claimed, const int *indices, int ndone,
                        const MPI_Status *statuses, int by_index, int errors);

/* Collectives: the logical volume per call, as Open MPI's coll monitoring
   records it (coll; and TDM_COLL_NATIVE where the MPI library ran the call).
   'shape' classifies the call for the per-communicator counts. */
enum { TDM_O2A, TDM_A2O, TDM_A2A, TDM_SHAPES };
void tdm_monitor_coll(MPI_Comm comm, int shape, uint64_t total);
void tdm_monitor_coll_peer(MPI_Comm comm, int rank, uint64_t bytes);

/* One-sided: 'kind' is TANDEM_MONITOR_OSC_PUT or _GET, 'target' a rank of the
   window's group. */
void tdm_monitor_osc(int kind, MPI_Win win, int target, uint64_t bytes);

/* The program's view and the MPI_T handles use these. A sample is the raw
   total of 'n' counters: kinds[i], fields[i] (0 messages, 1 bytes, 2 + bin)
   and peers[i]. */
typedef struct {
    int running;
    int n;
    const int *kinds, *fields, *peers; /* NULL kinds: every counter of TDM_VIEW_KINDS,
                                          [kind][peer][field] */
    uint64_t *start;                   /* raw totals when it started */
    uint64_t *accumulated;             /* counted while it ran before */
} tdm_monitor_view;

int tdm_monitor_view_init(tdm_monitor_view *v, int n, const int *kinds, const int *fields,
                          const int *peers);
void tdm_monitor_view_free(tdm_monitor_view *v);
void tdm_monitor_view_start(tdm_monitor_view *v);
void tdm_monitor_view_stop(tdm_monitor_view *v);
void tdm_monitor_view_reset(tdm_monitor_view *v);
/* out[i] = what the view counted for counter i. */
void tdm_monitor_view_read(tdm_monitor_view *v, uint64_t *out);

/* The number of ranks of MPI_COMM_WORLD (0 before MPI_Init). */
int tdm_monitor_world_size(void);

/* Per-communicator collective counts, for the dump: calls 'fn' once per
   communicator listed (MPI_COMM_WORLD and each one the program called a
   collective on, freed ones included; never one of Tandem's own). */
typedef struct {
    const char *name;
    int size;
    const int *world; /* world rank of each member */
    uint64_t operations[TDM_SHAPES], bytes[TDM_SHAPES];
} tdm_monitor_comm_summary;
void tdm_monitor_each_comm(void (*fn)(const tdm_monitor_comm_summary *, void *), void *arg);

/* List 'comm' for the dump now if it is not yet (MPI_COMM_WORLD, when the
   whole-run view starts: its line comes first, as in Open MPI's files). */
void tdm_monitor_list_comm(MPI_Comm comm);

#endif
