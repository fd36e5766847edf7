/*
 * The schedule engine (see schedule.h): communicator state, starting a
 * schedule, and the progress thread's poll.
 */
#include "coll/schedule.h"
#include "coll/select.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/hold.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "impl/impl.h"
#include "monitor/monitor.h"

int tdm_coll_on;
int tdm_coll_blocking_on;
static atomic_long started;
static atomic_long finished_by_calls; /* on an application thread: in its MPI calls */
static atomic_long posted_unwoken;    /* posted without waking the thread (needs_no_thread) */
static atomic_long slot_uses;         /* collectives through the shared-memory slots */

/* ------------------------------------------------- communicator state */

/* What a communicator keeps apart for its nonblocking (0) and its blocking
   (1) collectives (schedule.h). */
typedef struct {
    atomic_ullong sequence; /* collectives started */
    atomic_ullong uses;     /* collectives that used the slots */
    char *slots;            /* the ring's first slot, or NULL: no shared path */
    int nslots;
} coll_ring;

typedef struct coll_comm {
    struct coll_comm *next;
    MPI_Comm dup; /* private duplicate: Tandem's collectives only */
    atomic_int in_flight;
    coll_ring ring[2]; /* [blocking] */
    /* the shared-memory slots, when every rank is on this node */
    MPI_Win win;
    size_t slot_bytes, segment;
    size_t held; /* this rank's share of the window, counted in slots_held */
} coll_comm;

static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static coll_comm *comms;
static int keyval = MPI_KEYVAL_INVALID;
static int stopped;
/* The world's duplicate, alive from MPI_Init to MPI_Finalize: where the
   schedules' own communicators may be freed meanwhile, the library's
   progress engine is run by a probe on it (drive_library). */
static MPI_Comm drive_comm = MPI_COMM_NULL;
static atomic_size_t slots_held; /* bytes, at most TANDEM_COLL_SHM_LIMIT */

/* The user communicator is freed: so are its private copy and its slots.
   The collectives Tandem ran on it are over (tdm_coll_comm_freeing). */
static int comm_deleted(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    coll_comm *c = value;
    if (!stopped && c->win != MPI_WIN_NULL) {
        PMPI_Win_free(&c->win);
        atomic_fetch_sub(&slots_held, c->held);
    }
    if (!stopped && c->dup != MPI_COMM_NULL)
        PMPI_Comm_free(&c->dup);
    return MPI_SUCCESS;
}

/* Whether every rank of 'node' can hold 'share' more bytes of slots
   (TANDEM_COLL_SHM_LIMIT); collective, so all take the slots or none. Its
   rank 0 says so when not (TANDEM_VERBOSE). */
static int slots_fit(MPI_Comm node, size_t share, int size)
{
    size_t limit = (size_t)TDM_CONFIG_NUMBER(COLL_SHM_LIMIT);
    int fits = share <= limit && atomic_load(&slots_held) <= limit - share;
    if (PMPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, node) != MPI_SUCCESS)
        return 0;
    int rank = 0;
    PMPI_Comm_rank(node, &rank);
    if (!fits && rank == 0 && TDM_CONFIG_NUMBER(VERBOSE) >= 1)
        tdm_log_info("a communicator of %d ranks gets no shared-memory slots: a rank holds "
                     "TANDEM_COLL_SHM_LIMIT (%zu bytes) already",
                     size, limit);
    return fits;
}

/* The slots of a communicator: SLOTS for the nonblocking collectives (more
   in flight wait for one), and a segment of SLOT_BYTES per rank in each (the
   largest block that takes the path): this rank's share is 1 MiB per
   communicator, within TANDEM_COLL_SHM_LIMIT over all of them. No other
   values were measured. */
enum { SLOTS = 16, SLOT_BYTES = 64 << 10 };
_Static_assert(SLOT_BYTES % TDM_SLOT_FLAG == 0, "segments keep the flags' alignment");

/* The slots of a communicator whose ranks share one node: a ring of SLOTS
   for the nonblocking collectives and one for the blocking ones (SLOTS as
   well when only they run in Tandem; else a quarter as many: one blocking
   collective is in flight at a time, and a second slot lets a rank start
   the next one before the others have read the last), each slot a flag
   pair per rank and a segment per rank, in one window that rank 0 allocates
   and zeroes. Collective over the duplicate; without it, no shared path. */
static void attach_slots(coll_comm *c)
{
    int size, node_size, rank;
    MPI_Comm node;
    c->win = MPI_WIN_NULL;
    PMPI_Comm_size(c->dup, &size);
    PMPI_Comm_rank(c->dup, &rank);
    if (!TDM_CONFIG_NUMBER(COLL_SHM) || size < 2 ||
        PMPI_Comm_split_type(c->dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    PMPI_Comm_size(node, &node_size);
    c->segment = SLOT_BYTES;
    c->ring[0].nslots = tdm_coll_on ? SLOTS : 0;
    c->ring[1].nslots = !tdm_coll_blocking_on ? 0 : !tdm_coll_on ? SLOTS : SLOTS / 4;
    int nslots = c->ring[0].nslots + c->ring[1].nslots;
    c->slot_bytes = (size_t)size * (2 * TDM_SLOT_FLAG + c->segment);
    MPI_Aint total = rank == 0 ? (MPI_Aint)(c->slot_bytes * (size_t)nslots) : 0, got;
    int unit;
    char *mine = NULL;
    char *slots = NULL;
    size_t share = c->segment * (size_t)nslots;
    if (node_size == size && /* the same answer on every rank */
        slots_fit(node, share, size) &&
        PMPI_Win_allocate_shared(total, 1, MPI_INFO_NULL, node, &mine, &c->win) == MPI_SUCCESS &&
        PMPI_Win_shared_query(c->win, 0, &got, &unit, &slots) == MPI_SUCCESS) {
        if (rank == 0)
            memset(slots, 0, (size_t)total);
        c->held = share;
        atomic_fetch_add(&slots_held, share);
        PMPI_Barrier(node); /* the zeroes are there before any use */
    } else if (c->win != MPI_WIN_NULL) {
        PMPI_Win_free(&c->win);
    }
    if (c->win != MPI_WIN_NULL) {
        c->ring[0].slots = c->ring[0].nslots ? slots : NULL;
        c->ring[1].slots =
            c->ring[1].nslots ? slots + (size_t)c->ring[0].nslots * c->slot_bytes : NULL;
    }
    PMPI_Comm_free(&node);
}

/* Communicators from MPI_Comm_idup: no rank may wait for the others there,
   so Tandem's duplicate is made by an MPI_Comm_idup of the same parent,
   posted right after the application's on every rank. The application's new
   communicator cannot be used (nor given an attribute) before its own request
   completes, so its state waits here until its first Tandem collective. */
typedef struct pending_dup {
    struct pending_dup *next;
    MPI_Comm comm;       /* the application's new communicator */
    coll_comm *state;    /* its state, without shared-memory slots */
    MPI_Request request; /* Tandem's MPI_Comm_idup making state->dup */
} pending_dup;

static pending_dup *pending_dups; /* under comms_lock */

static void remember(coll_comm *c)
{
    pthread_mutex_lock(&comms_lock);
    c->next = comms;
    comms = c;
    pthread_mutex_unlock(&comms_lock);
}

/* Remove the pending duplicate of 'comm' from the list (NULL if none). */
static pending_dup *take_pending(MPI_Comm comm)
{
    pending_dup *found = NULL;
    pthread_mutex_lock(&comms_lock);
    for (pending_dup **p = &pending_dups; *p; p = &(*p)->next) {
        if ((*p)->comm == comm) {
            found = *p;
            *p = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&comms_lock);
    return found;
}

/* Complete a pending duplicate and return its state, ready for use; NULL
   (and nothing left behind) if it failed or is not a copy of 'comm'. The
   wait depends only on MPI progress on the other ranks: they all posted
   the same MPI_Comm_idup, since the application's one completed. */
static coll_comm *finish_pending(pending_dup *p, MPI_Comm comm)
{
    coll_comm *c = p->state;
    int same = MPI_UNEQUAL;
    if (PMPI_Wait(&p->request, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        (comm != MPI_COMM_NULL &&
         (PMPI_Comm_compare(comm, c->dup, &same) != MPI_SUCCESS || same != MPI_CONGRUENT))) {
        if (c->dup != MPI_COMM_NULL)
            PMPI_Comm_free(&c->dup);
        free(c);
        c = NULL;
    }
    free(p);
    return c;
}

/* The state of 'comm'. Making it is collective over 'comm' (a duplicate, the
   shared-memory window), so it is made where every rank is in the same call
   and waiting for the others is safe: MPI_Init for MPI_COMM_WORLD, the
   constructor of any other communicator Tandem intercepts (coll/hooks.c),
   or, for MPI_Comm_idup and MPI_Comm_idup_with_info, a nonblocking
   duplicate finished here. A communicator made otherwise (by a constructor
   Tandem does not intercept) gets it on its first Tandem collective, which then
   waits for every rank (README, known issues). 'made' says that the call
   comes from where 'comm' was made: the private copy is then made with
   tdm_comm_copy, which leaves the MPI library's collective state of 'comm'
   as it would be without Tandem; elsewhere a receive of the application may
   be posted on 'comm', so it is an MPI_Comm_dup. NULL for an
   inter-communicator or without memory: the caller leaves the call to MPI. */
static coll_comm *state_of(MPI_Comm comm, int made)
{
    coll_comm *c = NULL;
    int flag = 0, inter = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL)
        return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &c, &flag) == MPI_SUCCESS && flag)
        return c;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return NULL;
    pending_dup *p = take_pending(comm);
    if (p && (c = finish_pending(p, comm)) != NULL) {
        PMPI_Comm_set_attr(comm, keyval, c);
        remember(c);
        return c;
    }
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if ((made ? tdm_comm_copy(comm, &c->dup) : PMPI_Comm_dup(comm, &c->dup)) != MPI_SUCCESS) {
        free(c);
        return NULL;
    }
    attach_slots(c);
    PMPI_Comm_set_attr(comm, keyval, c);
    remember(c);
    return c;
}

void tdm_coll_comm_created(MPI_Comm comm)
{
    if (keyval != MPI_KEYVAL_INVALID && comm != MPI_COMM_NULL)
        (void)state_of(comm, 1);
}

void tdm_coll_comm_posted(MPI_Comm parent, MPI_Comm comm)
{
    int inter = 0;
    if (keyval == MPI_KEYVAL_INVALID || parent == MPI_COMM_NULL || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(parent, &inter) != MPI_SUCCESS || inter)
        return;
    pending_dup *p = calloc(1, sizeof *p);
    coll_comm *c = calloc(1, sizeof *c);
    if (!p || !c || PMPI_Comm_idup(parent, &c->dup, &p->request) != MPI_SUCCESS) {
        free(p); /* the lazy way then */
        free(c);
        return;
    }
    c->win = MPI_WIN_NULL; /* no shared-memory slots: a window is not made nonblocking */
    p->comm = comm;
    p->state = c;
    pthread_mutex_lock(&comms_lock);
    p->next = pending_dups;
    pending_dups = p;
    pthread_mutex_unlock(&comms_lock);
}

/* Finish a pending duplicate that will never be used, and free it. */
static void drop_pending(pending_dup *p)
{
    coll_comm *c = finish_pending(p, MPI_COMM_NULL);
    if (c) {
        PMPI_Comm_free(&c->dup);
        free(c);
    }
}

/* Complete the collectives in flight on 'comm', moving them on this thread
   too. MPI_Comm_free lets the operations pending on a communicator complete
   normally, but the next rounds of Tandem's collectives need the private
   copy and the slots that the attribute's delete callback frees. Waiting
   needs only progress: every rank posted its collectives on 'comm' before
   freeing it, and a program that would deadlock here would deadlock too
   where MPI_Comm_free synchronizes, which the standard allows of a
   collective call. */
static void drain(MPI_Comm comm)
{
    coll_comm *c = NULL;
    int flag = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, keyval, &c, &flag) != MPI_SUCCESS || !flag)
        return;
    while (atomic_load_explicit(&c->in_flight, memory_order_acquire) > 0) {
        tdm_coll_poll();
        sched_yield(); /* the progress thread may hold the schedules */
    }
}

void tdm_coll_comm_freeing(MPI_Comm comm)
{
    pending_dup *p = take_pending(comm);
    if (p)
        drop_pending(p);
    drain(comm);
}

/* ------------------------------------------------------------ schedules */

struct tdm_schedule {
    tdm_proxy base; /* first: the generalized request */
    coll_comm *comm;
    int blocking; /* run by tdm_schedule_run: the blocking collectives' tags and slots */
    int shared;   /* it waits for flags in shared memory */
    int tag, rank, size;
    tdm_op *ops;
    int nops, capacity;
    int *round_end; /* round r holds ops [round_end[r-1], round_end[r]) */
    int nrounds, round_capacity;
    int round;   /* the round in progress */
    int next_op; /* its next operation to do (a WAIT resumes there) */
    unsigned long long sequence;
    MPI_Request *requests; /* its point-to-point operations */
    MPI_Status *statuses;
    int nrequests;
    void **scratch;
    int nscratch;
    /* what a nonblocking schedule holds until it ends (core/hold.h) */
    MPI_Datatype *held_types;
    int nheld_types;
    MPI_Op held_op;
    int failed;
    tdm_schedule *next;
};

static void release(tdm_proxy *proxy)
{
    tdm_schedule *s = (tdm_schedule *)proxy;
    for (int i = 0; i < s->nheld_types; i++)
        tdm_release_type(s->held_types[i]);
    free(s->held_types);
    if (s->held_op != MPI_OP_NULL)
        tdm_release_op(s->held_op);
    for (int i = 0; i < s->nscratch; i++)
        free(s->scratch[i]);
    free(s->scratch);
    free(s->ops);
    free(s->round_end);
    free(s->requests);
    free(s->statuses);
}

tdm_schedule *tdm_schedule_new(MPI_Comm comm, int blocking)
{
    coll_comm *c = state_of(comm, 0);
    if (!c)
        return NULL;
    tdm_schedule *s = (tdm_schedule *)tdm_proxy_new(sizeof *s);
    if (!s)
        return NULL;
    s->base.release = release;
    s->comm = c;
    s->held_op = MPI_OP_NULL;
    s->blocking = blocking != 0;
    s->sequence =
        atomic_fetch_add_explicit(&c->ring[s->blocking].sequence, 1, memory_order_relaxed);
    s->tag = (int)(s->sequence % TDM_COLL_TAGS) + (s->blocking ? TDM_COLL_TAGS : 0);
    PMPI_Comm_rank(c->dup, &s->rank);
    PMPI_Comm_size(c->dup, &s->size);
    if (tdm_schedule_round(s) != 0) {
        tdm_schedule_discard(s);
        return NULL;
    }
    return s;
}

void tdm_schedule_ranks(const tdm_schedule *s, int *rank, int *size)
{
    *rank = s->rank;
    *size = s->size;
}

static int grow(void **items, int *capacity, int need, size_t size)
{
    if (need <= *capacity)
        return 0;
    int cap = *capacity ? *capacity * 2 : 8;
    while (cap < need)
        cap *= 2;
    void *more = realloc(*items, size * (size_t)cap);
    if (!more)
        return -1;
    *items = more;
    *capacity = cap;
    return 0;
}

int tdm_schedule_round(tdm_schedule *s)
{
    if (grow((void **)&s->round_end, &s->round_capacity, s->nrounds + 1, sizeof(int)) != 0) {
        s->failed = 1;
        return -1;
    }
    s->round_end[s->nrounds++] = s->nops;
    return 0;
}

int tdm_schedule_add(tdm_schedule *s, tdm_op op)
{
    if (grow((void **)&s->ops, &s->capacity, s->nops + 1, sizeof op) != 0) {
        s->failed = 1;
        return -1;
    }
    s->ops[s->nops++] = op;
    s->shared |= op.kind == TDM_OP_WAIT;
    s->round_end[s->nrounds - 1] = s->nops;
    return 0;
}

size_t tdm_schedule_slot_bytes(const tdm_schedule *s)
{
    return s->comm->ring[s->blocking].slots ? s->comm->segment : 0;
}

void tdm_schedule_slot(tdm_schedule *s, tdm_slot *slot)
{
    coll_comm *c = s->comm;
    coll_ring *ring = &c->ring[s->blocking];
    unsigned n = (unsigned)ring->nslots;
    unsigned long long use = atomic_fetch_add_explicit(&ring->uses, 1, memory_order_relaxed) + 1;
    atomic_fetch_add_explicit(&slot_uses, 1, memory_order_relaxed);
    char *base = ring->slots + ((use - 1) % n) * c->slot_bytes;
    slot->use = use;
    slot->previous = use > n ? use - n : 0;
    slot->posted = base;
    slot->acks = base + (size_t)s->size * TDM_SLOT_FLAG;
    slot->data = base + 2 * (size_t)s->size * TDM_SLOT_FLAG;
    slot->bytes = c->segment;
}

void *tdm_schedule_scratch(tdm_schedule *s, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    void **list = realloc(s->scratch, sizeof(void *) * (size_t)(s->nscratch + 1));
    if (!p || !list) {
        free(p);
        if (list)
            s->scratch = list;
        s->failed = 1;
        return NULL;
    }
    s->scratch = list;
    s->scratch[s->nscratch++] = p;
    return p;
}

MPI_Aint tdm_coll_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
    if (type != MPI_DATATYPE_NULL)
        tdm_impl_type_size(type, &size);
    return (MPI_Aint)count * size;
}

int tdm_coll_contiguous(MPI_Count count, MPI_Datatype type, MPI_Aint *offset, MPI_Aint *bytes)
{
    int size = 0;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (tdm_impl_type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return 0;
    *offset = true_lb;
    *bytes = (MPI_Aint)count * size;
    return true_extent == size && (count <= 1 || extent == size);
}

/* A COPY: one memcpy when both sides are contiguous, else one pack (or
   unpack) when one side is, else both through a temporary buffer. */
static int copy(const tdm_op *op)
{
    MPI_Aint from, to, bytes, dst_bytes;
    int src_flat = tdm_coll_contiguous(op->src_count, op->src_type, &from, &bytes);
    int dst_flat = tdm_coll_contiguous(op->count, op->type, &to, &dst_bytes);
    char *dst = (char *)op->buf + (dst_flat ? to : 0);
    const char *src = (const char *)op->src + (src_flat ? from : 0);
    int packed = 0, in = 0, out = 0, rc = MPI_SUCCESS;
    if (op->count == 0 || op->src_count == 0)
        return MPI_SUCCESS;
    if (src_flat && dst_flat && bytes == dst_bytes) {
        if (dst != src)
            memmove(dst, src, (size_t)bytes);
        return MPI_SUCCESS;
    }
    if (dst_flat)
        return PMPI_Pack(op->src, (int)op->src_count, op->src_type, dst, (int)dst_bytes, &in,
                         MPI_COMM_SELF);
    if (src_flat)
        return PMPI_Unpack(src, (int)bytes, &out, op->buf, (int)op->count, op->type, MPI_COMM_SELF);
    rc = PMPI_Pack_size((int)op->src_count, op->src_type, MPI_COMM_SELF, &packed);
    void *tmp = rc == MPI_SUCCESS ? malloc(packed ? (size_t)packed : 1) : NULL;
    if (!tmp)
        return rc == MPI_SUCCESS ? MPI_ERR_NO_MEM : rc;
    rc = PMPI_Pack(op->src, (int)op->src_count, op->src_type, tmp, packed, &in, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Unpack(tmp, packed, &out, op->buf, (int)op->count, op->type, MPI_COMM_SELF);
    free(tmp);
    return rc;
}

/* run_round(): the round waits for a flag of another rank. */
enum { BLOCKED = -1 };

static int flags_reached(const tdm_op *op)
{
    for (MPI_Count k = 0; k < op->count; k++) {
        const atomic_ullong *flag = (const atomic_ullong *)((const char *)op->src + k * op->stride);
        if (atomic_load_explicit(flag, memory_order_acquire) < op->value)
            return 0;
    }
    return 1;
}

/* Monitoring: the schedule's messages are the coll_internal kind. */
static void monitor_send(const tdm_schedule *s, const tdm_op *op)
{
    if (tdm_monitor_on() && op->peer != s->rank)
        tdm_monitor_record(TANDEM_MONITOR_COLL_INTERNAL,
                           tdm_monitor_world_rank(s->comm->dup, op->peer),
                           tdm_monitor_bytes(op->count, op->type));
}

/* Go on with the round in progress from its next operation: local ones
   done, point-to-point ones posted, up to its end or an unmet WAIT. Returns
   an MPI code, or BLOCKED. */
static int run_round(tdm_schedule *s)
{
    MPI_Comm comm = s->comm->dup;
    int rc = MPI_SUCCESS;
    for (; s->next_op < s->round_end[s->round] && rc == MPI_SUCCESS; s->next_op++) {
        tdm_op *op = &s->ops[s->next_op];
        int count = (int)op->count;
        switch (op->kind) {
        case TDM_OP_COPY: rc = copy(op); break;
        case TDM_OP_REDUCE: /* nothing to combine in an empty reduction */
            rc = count ? PMPI_Reduce_local(op->src, op->buf, count, op->type, op->op) : MPI_SUCCESS;
            break;
        case TDM_OP_SEND:
            monitor_send(s, op);
            rc = PMPI_Isend(op->buf, count, op->type, op->peer, s->tag, comm,
                            &s->requests[s->nrequests++]);
            break;
        case TDM_OP_NOTE: monitor_send(s, op); break;
        case TDM_OP_RECV:
            rc = PMPI_Irecv(op->buf, count, op->type, op->peer, s->tag, comm,
                            &s->requests[s->nrequests++]);
            break;
        case TDM_OP_WAIT:
            if (!flags_reached(op))
                return BLOCKED;
            break;
        case TDM_OP_SIGNAL:
            atomic_store_explicit((atomic_ullong *)op->buf, op->value, memory_order_release);
            break;
        }
    }
    return rc;
}

/* End the schedule with 'error' (MPI_SUCCESS when it completed). */
static void finish(tdm_schedule *s, int error)
{
    MPI_Status status;
    tdm_status_empty(&status);
    atomic_fetch_sub_explicit(&s->comm->in_flight, 1, memory_order_release);
    if (!tdm_progress_on_thread())
        atomic_fetch_add_explicit(&finished_by_calls, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&tdm_progress_own_work, 1, memory_order_relaxed);
    tdm_proxy_finish(&s->base, &status, error);
}

/* Run the MPI library's progress engine once: a probe of a tag no message
   carries, on a communicator that stays until MPI_Finalize. Any thread. */
static void drive_library(void)
{
    int flag = 0;
    if (drive_comm != MPI_COMM_NULL)
        PMPI_Iprobe(MPI_ANY_SOURCE, TDM_COLL_DRIVE_TAG, drive_comm, &flag, MPI_STATUS_IGNORE);
}

/* How often a waiter runs the library's progress engine: once a period,
   from one period after its wait began. What it serves only matters where
   the wait is long, since the ranks waited for wait for it: 10 us where
   one-sided operations may target this rank (a window exists), else 1 ms
   (a synchronous send's acknowledgement, say). A probe on every pass of
   every wait cost a third more time per 8-byte MPICH barrier on 4 ranks of
   2 cores and three times as much with Open MPI, and one every 10 us still
   made Open MPI's 8-byte iallreduce on 4 ranks of 2 cores take 47 us
   instead of 36, each probe a turn of its progress loop that yields the
   core where ranks outnumber cores (docs/perf/transparency/). */
enum { DRIVE_WINDOWS_NS = 10 * 1000, DRIVE_OTHERWISE_NS = 1000 * 1000 };

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Whether a wait whose next drive is due at '*due' (0: it just began)
   drives now; moves '*due' on. */
static int drive_due(long long *due)
{
    long long now = now_ns();
    long long period = atomic_load_explicit(&tdm_windows_open, memory_order_relaxed) > 0
                           ? DRIVE_WINDOWS_NS
                           : DRIVE_OTHERWISE_NS;
    if (*due == 0)
        *due = now + period;
    if (now < *due)
        return 0;
    *due = now + period;
    return 1;
}

/* What advance() did: the schedule ended (it may be freed already), the
   MPI library was called to test its requests. */
enum { ADVANCE_ENDED = 1, ADVANCE_TESTED = 2 };

/* Go on with the round in progress, test its requests, and start the
   following rounds as long as they complete at once. */
static int advance(tdm_schedule *s)
{
    int did = 0;
    for (;;) {
        int done = 1, rc = run_round(s);
        if (rc == BLOCKED)
            return did;
        if (rc == MPI_SUCCESS && s->nrequests) {
            rc = PMPI_Testall(s->nrequests, s->requests, &done, s->statuses);
            did |= ADVANCE_TESTED;
        }
        if (rc == MPI_SUCCESS && !done)
            return did;
        if (rc != MPI_SUCCESS || ++s->round >= s->nrounds) {
            finish(s, rc);
            return did | ADVANCE_ENDED;
        }
        s->nrequests = 0;
    }
}

/* Schedules handed over by application threads, and the progress thread's own. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static tdm_schedule *queued;
static tdm_schedule *active;
static long long poll_drive_due; /* drive_due() of the pollers, under poll_lock */

int tdm_schedule_failed(const tdm_schedule *s)
{
    return s->failed;
}

void tdm_schedule_discard(tdm_schedule *s)
{
    release(&s->base);
    free(s);
}

/* Make 's' ready to run: room for its requests, a place among those in
   flight. On failure (an MPI code) 's' is discarded. */
static int prepare(tdm_schedule *s)
{
    int most = 0;
    for (int r = 0; r < s->nrounds; r++) {
        int n = s->round_end[r] - (r ? s->round_end[r - 1] : 0);
        most = n > most ? n : most;
    }
    s->requests = malloc(sizeof(MPI_Request) * (size_t)(most + 1));
    s->statuses = malloc(sizeof(MPI_Status) * (size_t)(most + 1));
    if (s->failed || !s->requests || !s->statuses) {
        tdm_schedule_discard(s);
        return MPI_ERR_NO_MEM;
    }
    if (atomic_fetch_add_explicit(&s->comm->in_flight, 1, memory_order_relaxed) >=
        TDM_COLL_TAGS - 1) {
        atomic_fetch_sub_explicit(&s->comm->in_flight, 1, memory_order_relaxed);
        tdm_log_warn("more than %d collectives in flight on one communicator: their tags "
                     "would collide; complete some first",
                     TDM_COLL_TAGS - 1);
        tdm_schedule_discard(s);
        return MPI_ERR_OTHER;
    }
    s->round = 0;
    s->next_op = 0;
    s->nrequests = 0;
    atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
    return MPI_SUCCESS;
}

int tdm_schedule_run(tdm_schedule *s)
{
    int rc = prepare(s);
    long long due = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    while (rc == MPI_SUCCESS && s->round < s->nrounds) {
        rc = run_round(s);
        if (rc == BLOCKED) { /* another rank's turn: its thread or call moves it */
            rc = MPI_SUCCESS;
            if (drive_due(&due))
                drive_library();
            tdm_progress_touch(); /* the nonblocking collectives in flight */
            sched_yield();
            continue;
        }
        if (rc == MPI_SUCCESS && s->nrequests)
            rc = PMPI_Waitall(s->nrequests, s->requests, s->statuses);
        s->round++;
        s->nrequests = 0;
    }
    /* Where one-sided operations may target this rank, what the other ranks
       sent through the MPI library before they raised their flags is
       received now, as the library's own collective would have received it
       before its own messages (the end of an epoch that MPI_Win_test then
       sees, say). */
    if (s->shared && atomic_load_explicit(&tdm_windows_open, memory_order_relaxed) > 0)
        drive_library();
    atomic_fetch_sub_explicit(&s->comm->in_flight, 1, memory_order_relaxed);
    tdm_schedule_discard(s);
    return rc;
}

/* Whether the schedule needs no thread once the call posted its round:
   every message it has is in that round and is at most TANDEM_EAGER_LIMIT
   bytes, and what follows is local (copies, reductions). It is then left to
   the MPI library, like a point-to-point operation of that size, and the
   application's next call to Tandem (its wait) finishes it; waking the
   thread for it only took the posting rank's core (64 KiB MPICH iscatter,
   2 ranks: 38 us instead of 39-82, docs/PERFORMANCE.md "Small
   collectives"). */
static int needs_no_thread(const tdm_schedule *s)
{
    for (int i = s->round ? s->round_end[s->round - 1] : 0; i < s->nops; i++) {
        const tdm_op *op = &s->ops[i];
        int posted = i < s->round_end[s->round];
        switch (op->kind) {
        case TDM_OP_SEND:
        case TDM_OP_RECV:
            if (!posted || tdm_coll_bytes(op->count, op->type) > tdm_eager_limit)
                return 0;
            break;
        case TDM_OP_WAIT:
        case TDM_OP_SIGNAL: return 0; /* shared memory: another rank's turn */
        default: break;
        }
    }
    return 1;
}

/* Whether the schedule moves small pieces: each of its messages is at most
   TANDEM_EAGER_LIMIT bytes, or, where it has none (the shared-memory
   slots), each of its copies. A waiter then drives it rather than watch the
   progress thread do so (core/proxy.c, wait_any). */
static int small(const tdm_schedule *s)
{
    long long message = -1, copy = 0;
    for (int i = 0; i < s->nops; i++) {
        const tdm_op *op = &s->ops[i];
        int is_message = op->kind == TDM_OP_SEND || op->kind == TDM_OP_RECV;
        if (!is_message && op->kind != TDM_OP_COPY)
            continue; /* flags, notes, reductions: no datatype of their own to size */
        long long bytes = tdm_coll_bytes(op->count, op->type);
        if (is_message)
            message = bytes > message ? bytes : message;
        else
            copy = bytes > copy ? bytes : copy;
    }
    return (message >= 0 ? message : copy) <= tdm_eager_limit;
}

/* Hold 'type' for 's' once. Returns 0, or -1 without memory. */
static int hold_type(tdm_schedule *s, MPI_Datatype type)
{
    for (int i = 0; i < s->nheld_types; i++)
        if (s->held_types[i] == type)
            return 0;
    int held = tdm_hold_type(type);
    if (held <= 0)
        return held; /* predefined, or no memory */
    MPI_Datatype *more =
        realloc(s->held_types, sizeof(MPI_Datatype) * (size_t)(s->nheld_types + 1));
    if (!more) {
        tdm_release_type(type);
        return -1;
    }
    s->held_types = more;
    s->held_types[s->nheld_types++] = type;
    return 0;
}

/* Hold the derived datatypes and the user-defined operation of a
   nonblocking schedule, which the application may free before it ends (a
   blocking one ends before its call returns). Returns an MPI code. */
static int hold_objects(tdm_schedule *s)
{
    for (int i = 0; i < s->nops; i++) {
        const tdm_op *op = &s->ops[i];
        if (op->kind == TDM_OP_WAIT || op->kind == TDM_OP_SIGNAL)
            continue; /* flags: no datatype */
        if (hold_type(s, op->type) != 0 ||
            (op->kind == TDM_OP_COPY && hold_type(s, op->src_type) != 0))
            return MPI_ERR_NO_MEM;
        if (op->kind == TDM_OP_REDUCE && s->held_op == MPI_OP_NULL) {
            int held = tdm_hold_op(op->op);
            if (held < 0)
                return MPI_ERR_NO_MEM;
            if (held > 0)
                s->held_op = op->op;
        }
    }
    return MPI_SUCCESS;
}

int tdm_schedule_start(tdm_schedule *s, MPI_Request *request)
{
    int rc = hold_objects(s);
    if (rc != MPI_SUCCESS) {
        tdm_schedule_discard(s);
        return rc;
    }
    rc = prepare(s);
    if (rc != MPI_SUCCESS)
        return rc;
    s->base.counted = 1;
    s->base.drive = tdm_coll_poll;
    s->base.waiter_drives = small(s);
    if ((rc = tdm_proxy_start(&s->base, request)) != MPI_SUCCESS) {
        atomic_fetch_sub_explicit(&s->comm->in_flight, 1, memory_order_relaxed);
        return rc; /* the proxy, and with it the schedule, is freed */
    }
    /* Counted first (finish() uncounts), but the thread is woken only once
       the first round is posted and the schedule queued: woken before, it
       would take the MPI library's lock from under these sends and find
       nothing to move. */
    int wake = tdm_progress_work_count();
    atomic_fetch_add_explicit(&tdm_progress_own_work, 1, memory_order_relaxed);
    rc = run_round(s);
    /* Rounds of local work only (an allreduce's first copy) end here: the
       messages after them start in the call too, not at the first poll. */
    while (rc == MPI_SUCCESS && s->nrequests == 0 && s->round + 1 < s->nrounds) {
        s->round++;
        rc = run_round(s);
    }
    if (rc != MPI_SUCCESS && rc != BLOCKED) {
        finish(s, rc);
        return MPI_SUCCESS; /* the error comes with the request's completion */
    }
    if (wake && rc != BLOCKED && needs_no_thread(s)) { /* before queueing: s may go at once */
        wake = 0;
        s->base.waiter_drives = 1;
        tdm_progress_work_unwoken();
        atomic_fetch_add_explicit(&posted_unwoken, 1, memory_order_relaxed);
    }
    pthread_mutex_lock(&queue_lock);
    s->next = queued;
    queued = s;
    pthread_mutex_unlock(&queue_lock);
    if (wake)
        tdm_progress_wake();
    return MPI_SUCCESS;
}

/* One thread at a time advances the schedules: the progress thread, or an
   application thread waiting for or testing one of them. */
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;

int tdm_coll_poll(void)
{
    if (pthread_mutex_trylock(&poll_lock) != 0)
        return 1; /* another thread is at it */
    pthread_mutex_lock(&queue_lock);
    tdm_schedule *fresh = queued;
    queued = NULL;
    pthread_mutex_unlock(&queue_lock);
    while (fresh) { /* oldest first, so that rounds start in posting order */
        tdm_schedule *s = fresh, **at = &active;
        fresh = fresh->next;
        while (*at)
            at = &(*at)->next;
        s->next = NULL;
        *at = s;
    }
    int n = 0, tested = 0;
    for (tdm_schedule **at = &active; *at;) {
        tdm_schedule *s = *at, *next = s->next; /* once finished, s may be freed at once */
        int did = advance(s);
        n++;
        tested |= did & ADVANCE_TESTED;
        if (did & ADVANCE_ENDED)
            *at = next;
        else
            at = &s->next;
    }
    /* every one waits for flags in shared memory: the library idles */
    int drive = n && !tested ? drive_due(&poll_drive_due) : (poll_drive_due = 0);
    pthread_mutex_unlock(&poll_lock);
    if (drive)
        drive_library();
    return n;
}

long tdm_coll_started(void)
{
    return atomic_load(&started);
}

long tdm_coll_finished_by_calls(void)
{
    return atomic_load(&finished_by_calls);
}

long tdm_coll_unwoken(void)
{
    return atomic_load(&posted_unwoken);
}

long tdm_coll_slot_uses(void)
{
    return atomic_load(&slot_uses);
}

/* Tuning file warnings: rank 0 says them. */
static void tuning_warning(void *context, const char *message)
{
    (void)context;
    if (tdm_world_rank == 0)
        tdm_log_warn("%s", message);
}

void tdm_coll_init(void)
{
    int nonblocking = TDM_CONFIG_NUMBER(COLL) != 0;
    tdm_coll_blocking_on = 0;
    if (nonblocking && !tdm_progress_running) {
        if (tdm_world_rank == 0)
            tdm_log_warn("TANDEM_COLL=tandem needs the progress thread (TANDEM_PROGRESS=drive "
                         "or proxy); the nonblocking collectives stay with the MPI library");
        nonblocking = 0;
    }
    if (!nonblocking && TDM_CONFIG_NUMBER(COLL_BLOCKING) == 0)
        return;
    int *tag_ub = NULL, flag = 0;
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag) != MPI_SUCCESS || !flag ||
        *tag_ub < TDM_COLL_DRIVE_TAG) {
        if (tdm_world_rank == 0)
            tdm_log_warn("the MPI library's largest tag (MPI_TAG_UB %d) is below the %d that "
                         "Tandem's collectives need; they stay with the MPI library",
                         flag && tag_ub ? *tag_ub : -1, TDM_COLL_DRIVE_TAG);
        return;
    }
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_deleted, &keyval, NULL) != MPI_SUCCESS)
        return;
    const char *tuning = tdm_config[TDM_CFG_COLL_TUNING].text;
    if (tuning && *tuning)
        tdm_coll_tuning_load(tuning, tuning_warning, NULL);
    tdm_coll_blocking_on = TDM_CONFIG_NUMBER(COLL_BLOCKING) != 0;
    if (nonblocking) {
        tdm_progress_extra_poll = tdm_coll_poll;
        tdm_coll_on = 1;
    }
    tdm_coll_comm_created(tdm_world);
    coll_comm *world = state_of(tdm_world, 1);
    drive_comm = world ? world->dup : MPI_COMM_NULL;
}

void tdm_coll_stop(void)
{
    tdm_coll_on = 0;
    tdm_coll_blocking_on = 0;
    tdm_coll_tuning_clear();
    stopped = 1;
    drive_comm = MPI_COMM_NULL;
    pthread_mutex_lock(&comms_lock);
    pending_dup *p = pending_dups;
    pending_dups = NULL;
    pthread_mutex_unlock(&comms_lock);
    while (p) {
        pending_dup *next = p->next;
        drop_pending(p);
        p = next;
    }
    pthread_mutex_lock(&comms_lock);
    while (comms) {
        coll_comm *c = comms;
        comms = c->next;
        if (c->dup != MPI_COMM_NULL)
            PMPI_Comm_free(&c->dup);
        free(c); /* MPI_Finalize's attribute callbacks no longer read it */
    }
    pthread_mutex_unlock(&comms_lock);
}
