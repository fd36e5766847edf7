/*
 * Collectives over the virtual ranks' messages, as schedules: a list of
 * operations cut into rounds by fences. A round's local operations (copy,
 * reduce) run when the round is reached, its sends and receives are posted
 * then (every receive of a round before its sends, so that rendezvous sends
 * cannot wait on each other); the next round starts once all of them
 * completed. A blocking collective builds its schedule and runs it to the
 * end; a nonblocking one starts it, and the rank's waits, tests and blocking
 * calls move it on (tdm_virt_coll_progress).
 */
#include "virt/coll.h"

#include <stdlib.h>
#include <string.h>

#include "virt/net.h"
#include "virt/queue.h"
#include "virt/room.h"

typedef enum { OP_SEND, OP_RECV, OP_COPY, OP_REDUCE, OP_FENCE, OP_CALL } op_kind;

/* SEND/RECV: count x type at buf (src for a send) with 'peer' (a rank of
   the communicator; world_peer its world rank); a 'late' one is awaited
   only at the schedule's end, not by the next fence. COPY: src (src_count
   x src_type) to buf (count x type). REDUCE: buf = src op buf. CALL:
   call(schedule, buf), which adds the operations that follow it (last in
   the schedule when built: what it adds depends on what came before). */
typedef struct {
    op_kind kind;
    int late;
    void (*call)(tdm_virt_sched *, void *);
    const void *src;
    void *buf;
    int count;
    MPI_Datatype type;
    int src_count;
    MPI_Datatype src_type;
    int peer, world_peer;
    MPI_Op op;
} step;

struct tdm_virt_sched {
    const char *call;
    int context, rank, size, tag; /* the communicator's, copied: it may be freed meanwhile */
    int *world;                   /* world rank of each member */
    step *ops;
    int n_ops, cap_ops;
    int next;                /* the first operation not run */
    tdm_virt_request **reqs; /* the round's sends and receives */
    int n_reqs, cap_reqs;
    tdm_virt_request **late; /* those awaited at the end */
    int n_late, cap_late;
    int checked; /* reqs before this one are complete */
    void **scratch;
    int n_scratch, cap_scratch;
    MPI_Datatype *types; /* made for the schedule, freed with it */
    int n_types, cap_types;
    int err;                     /* the first error */
    tdm_virt_request *req;       /* nonblocking: the request the program holds */
    struct tdm_virt_sched *link; /* in the rank's list of those in flight */
};

static void sched_free(tdm_virt_sched *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_scratch; i++)
        free(s->scratch[i]);
    free(s->scratch);
    for (int i = 0; i < s->n_types; i++)
        PMPI_Type_free(&s->types[i]);
    free(s->types);
    free(s->ops);
    free(s->reqs);
    free(s->late);
    free(s->world);
    free(s);
}

static tdm_virt_sched *sched_new(tdm_virt_comm *comm, const char *call)
{
    tdm_virt_sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->call = call;
    s->context = comm->context + 1;
    s->rank = comm->rank;
    s->size = comm->size;
    /* Every member counts the collectives of the communicator alike (MPI
       orders them), so the count tells each one's messages apart: several
       can be in flight at once. */
    s->tag = (int)(comm->coll_count++ & 0x3fffffffu);
    s->world = malloc(sizeof *s->world * (size_t)comm->size);
    if (!s->world) {
        free(s);
        return NULL;
    }
    for (int r = 0; r < comm->size; r++)
        s->world[r] = tdm_virt_comm_world_rank(comm, r);
    return s;
}

static step *add(tdm_virt_sched *s, op_kind kind)
{
    if (s->err != MPI_SUCCESS)
        return NULL;
    step *ops = tdm_virt_room(s->ops, s->n_ops, &s->cap_ops, sizeof *ops, 16);
    if (!ops) {
        s->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->ops = ops;
    step *o = &s->ops[s->n_ops++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    return o;
}

static void add_send(tdm_virt_sched *s, const void *buf, int count, MPI_Datatype type, int peer)
{
    step *o = add(s, OP_SEND);
    if (o)
        *o = (step){.kind = OP_SEND,
                    .src = buf,
                    .count = count,
                    .type = type,
                    .peer = peer,
                    .world_peer = s->world[peer]};
}

static void add_recv(tdm_virt_sched *s, void *buf, int count, MPI_Datatype type, int peer)
{
    step *o = add(s, OP_RECV);
    if (o)
        *o = (step){.kind = OP_RECV, .buf = buf, .count = count, .type = type, .peer = peer};
}

static void add_copy(tdm_virt_sched *s, const void *src, int src_count, MPI_Datatype src_type,
                     void *buf, int count, MPI_Datatype type)
{
    step *o = add(s, OP_COPY);
    if (o)
        *o = (step){.kind = OP_COPY,
                    .src = src,
                    .src_count = src_count,
                    .src_type = src_type,
                    .buf = buf,
                    .count = count,
                    .type = type};
}

static void add_reduce(tdm_virt_sched *s, const void *src, void *buf, int count, MPI_Datatype type,
                       MPI_Op mpi_op)
{
    step *o = add(s, OP_REDUCE);
    if (o)
        *o = (step){
            .kind = OP_REDUCE, .src = src, .buf = buf, .count = count, .type = type, .op = mpi_op};
}

static void add_fence(tdm_virt_sched *s)
{
    add(s, OP_FENCE);
}

/* A buffer of the schedule for count items of type; the address its items
   start at (NULL without memory, and the schedule's error set). */
static char *add_scratch(tdm_virt_sched *s, int count, MPI_Datatype type)
{
    if (s->err != MPI_SUCCESS)
        return NULL;
    void **scratch = tdm_virt_room(s->scratch, s->n_scratch, &s->cap_scratch, sizeof *scratch, 8);
    if (!scratch) {
        s->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->scratch = scratch;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    size_t span = count > 0 ? (size_t)true_extent + (size_t)(count - 1) * (size_t)extent : 1;
    char *mem = malloc(span ? span : 1);
    if (!mem) {
        s->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->scratch[s->n_scratch++] = mem;
    return mem - true_lb;
}

/* 'made' (created with error 'err'), committed and kept by the schedule,
   which frees it; MPI_DATATYPE_NULL on error (the schedule's error set). */
static MPI_Datatype keep_type(tdm_virt_sched *s, int err, MPI_Datatype made)
{
    MPI_Datatype *types = NULL;
    if (err == MPI_SUCCESS)
        err = PMPI_Type_commit(&made);
    if (err == MPI_SUCCESS) {
        types = tdm_virt_room(s->types, s->n_types, &s->cap_types, sizeof *types, 4);
        err = types ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    if (err != MPI_SUCCESS) {
        if (made != MPI_DATATYPE_NULL)
            PMPI_Type_free(&made);
        s->err = err;
        return MPI_DATATYPE_NULL;
    }
    s->types = types;
    s->types[s->n_types++] = made;
    return made;
}

/* A datatype of the schedule's: n blocks of lens[i] x type at displs[i]
   extents; MPI_DATATYPE_NULL without memory (the schedule's error set). */
static MPI_Datatype add_indexed(tdm_virt_sched *s, int n, const int *lens, const int *displs,
                                MPI_Datatype type)
{
    if (s->err != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    MPI_Datatype made = MPI_DATATYPE_NULL;
    int err = PMPI_Type_indexed(n, lens, displs, type, &made);
    return keep_type(s, err, made);
}

/* The blocks of ranks first .. first + n - 1 of a v collective's buffer
   (counts[r] x type at displs[r] extents) as one datatype of the
   schedule's. */
static MPI_Datatype add_blocks(tdm_virt_sched *s, const int *counts, const int *displs, int first,
                               int n, MPI_Datatype type)
{
    return add_indexed(s, n, counts + first, displs + first, type);
}

static MPI_Aint extent_of(MPI_Datatype type)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    return extent;
}

/* Copy src_count x src_type at src to count x type at dst, both in this
   rank (the same type signature). */
static int local_copy(const void *src, int src_count, MPI_Datatype src_type, void *dst, int count,
                      MPI_Datatype type)
{
    size_t sbytes, bytes;
    int scontig, contig;
    int err = tdm_virt_type_bytes(src_type, src_count, &sbytes, &scontig);
    if (err == MPI_SUCCESS)
        err = tdm_virt_type_bytes(type, count, &bytes, &contig);
    if (err != MPI_SUCCESS)
        return err;
    if (sbytes > bytes)
        return MPI_ERR_TRUNCATE;
    if (sbytes == 0)
        return MPI_SUCCESS;
    if (scontig && contig) {
        memmove(dst, src, sbytes);
        return MPI_SUCCESS;
    }
    void *packed = malloc(sbytes);
    if (!packed)
        return MPI_ERR_NO_MEM;
    int position = 0, size;
    err = PMPI_Pack(src, src_count, src_type, packed, (int)sbytes, &position, MPI_COMM_SELF);
    position = 0;
    if (err == MPI_SUCCESS)
        err = PMPI_Type_size(type, &size);
    if (err == MPI_SUCCESS)
        err = PMPI_Unpack(packed, (int)sbytes, &position, dst,
                          size ? (int)(sbytes / (size_t)size) : 0, type, MPI_COMM_SELF);
    free(packed);
    return err;
}

static int push_request(tdm_virt_sched *s, tdm_virt_request *req, int late)
{
    tdm_virt_request ***list = late ? &s->late : &s->reqs;
    int *count = late ? &s->n_late : &s->n_reqs, *cap = late ? &s->cap_late : &s->cap_reqs;
    tdm_virt_request **reqs = tdm_virt_room(*list, *count, cap, sizeof *reqs, 8);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    *list = reqs;
    reqs[(*count)++] = req;
    return MPI_SUCCESS;
}

static int run_op(tdm_virt_rank *self, tdm_virt_sched *s, const step *o)
{
    tdm_virt_request *req = NULL;
    int err;
    switch (o->kind) {
    case OP_SEND:
        err = tdm_virt_send(self, o->src, o->count, o->type, o->world_peer, s->context, s->rank,
                            s->tag, 0, &req);
        break;
    case OP_RECV:
        err = tdm_virt_irecv(self, o->buf, o->count, o->type, s->context, o->peer, s->tag, &req);
        break;
    case OP_COPY: return local_copy(o->src, o->src_count, o->src_type, o->buf, o->count, o->type);
    case OP_REDUCE:
        return o->count > 0 ? PMPI_Reduce_local(o->src, o->buf, o->count, o->type, o->op)
                            : MPI_SUCCESS;
    case OP_CALL: o->call(s, o->buf); return s->err; /* o may have moved: not read after */
    default: return MPI_SUCCESS;
    }
    if (err == MPI_SUCCESS) {
        err = push_request(s, req, o->late);
        if (err != MPI_SUCCESS)
            tdm_virt_request_release(self, req); /* kept until it completes */
    }
    return err;
}

/* Whether the schedule's round has completed (it can go on). */
static int round_done(tdm_virt_sched *s)
{
    while (s->checked < s->n_reqs && tdm_virt_request_done(s->reqs[s->checked]))
        s->checked++;
    return s->checked == s->n_reqs;
}

/* Move the schedule on as far as it goes without waiting; 1 once it is
   complete. */
static int advance(tdm_virt_rank *self, tdm_virt_sched *s)
{
    for (;;) {
        if (!round_done(s))
            return 0;
        for (int i = 0; i < s->n_reqs; i++) {
            if (s->err == MPI_SUCCESS && s->reqs[i]->status_error != MPI_SUCCESS)
                s->err = s->reqs[i]->status_error;
            tdm_virt_request_release(self, s->reqs[i]);
        }
        s->n_reqs = s->checked = 0;
        if (s->err != MPI_SUCCESS)
            s->next = s->n_ops;                 /* stop at the first error */
        if (s->next == s->n_ops && s->n_late) { /* the late ones, as a last round */
            tdm_virt_request **reqs = s->reqs;
            int cap = s->cap_reqs;
            s->reqs = s->late, s->cap_reqs = s->cap_late, s->n_reqs = s->n_late;
            s->late = reqs, s->cap_late = cap, s->n_late = 0;
            continue;
        }
        if (s->next == s->n_ops)
            return 1;
        while (s->next < s->n_ops && s->ops[s->next].kind != OP_FENCE && s->err == MPI_SUCCESS)
            s->err = run_op(self, s, &s->ops[s->next++]);
        if (s->next < s->n_ops && s->ops[s->next].kind == OP_FENCE)
            s->next++;
    }
}

/* Run a blocking collective's schedule to its end and free it. */
static int run(tdm_virt_rank *self, tdm_virt_sched *s)
{
    if (!s)
        return MPI_ERR_NO_MEM;
    if (s->err != MPI_SUCCESS) {
        int err = s->err;
        sched_free(s);
        return err;
    }
    while (!advance(self, s))
        tdm_virt_request_wait(self, s->reqs[s->checked], s->call, TDM_VIRT_NONE, TDM_VIRT_NONE);
    int err = s->err;
    sched_free(s);
    return err;
}

/* Complete a nonblocking collective's request with the schedule's error. */
static void finish_request(tdm_virt_sched *s)
{
    tdm_virt_request *req = s->req;
    req->coll = NULL;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    req->status_error = s->err;
    req->status_bytes = 0;
    __atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
    sched_free(s);
}

/* Start a nonblocking collective's schedule: its request in *out (the
   rank's coll_adopt where a persistent collective starts). */
static int start(tdm_virt_rank *self, tdm_virt_sched *s, tdm_virt_request **out)
{
    tdm_virt_request *adopted = self->coll_adopt;
    self->coll_adopt = NULL;
    if (!s)
        return MPI_ERR_NO_MEM;
    tdm_virt_request *req = NULL;
    if (s->err == MPI_SUCCESS)
        req = adopted ? adopted : tdm_virt_request_new(self);
    if (!req) {
        int err = s->err != MPI_SUCCESS ? s->err : MPI_ERR_NO_MEM;
        sched_free(s);
        return err;
    }
    req->kind = TDM_VIRT_COLL;
    req->coll = s;
    s->req = req;
    *out = req;
    if (advance(self, s)) {
        finish_request(s);
        return MPI_SUCCESS;
    }
    s->link = self->coll;
    self->coll = s;
    return MPI_SUCCESS;
}

int tdm_virt_coll_progress(tdm_virt_rank *self, int move)
{
    int ready = 0;
    for (tdm_virt_sched **p = (tdm_virt_sched **)&self->coll; *p;) {
        tdm_virt_sched *s = *p;
        if (!move) {
            if (round_done(s))
                return 1;
            p = &s->link;
        } else if (advance(self, s)) {
            *p = s->link;
            finish_request(s);
            ready = 1;
        } else {
            p = &s->link;
        }
    }
    return ready;
}

/* ------------------------------------------------------------ algorithms */

static int bad_root(const tdm_virt_comm *comm, int root)
{
    return root < 0 || root >= comm->size;
}

/* Binomial trees (MPICH's): the ranks counted from the tree's root, 'rel';
   the parent of rel > 0 is rel less its lowest set bit, its children rel +
   m for each power of two m below that bit (every power for the root)
   while within the size. The ranks of one process are next to one another
   in the world (host after host) and in most communicators made from it,
   so most edges of a tree stay within a process: a collective crosses the
   network about once per process, where a linear one crossed it once per
   rank of another process: a barrier of 64 ranks on 2 simulated hosts took
   31 us against 285 linear, an allreduce 39 against 296, a gather 42
   against 186 (MPICH; docs/perf/virt/coll-tree/). */
static int tree_parent(int rel)
{
    return rel & (rel - 1);
}

/* The powers of two m that give rel's children (rel + m < n): those below
   the returned bound. */
static int tree_children_below(int rel, int n)
{
    int m = 1;
    while (m < n && !(rel & m))
        m <<= 1;
    return m;
}

static void build_bcast(tdm_virt_sched *s, void *buf, int count, MPI_Datatype type, int root)
{
    int n = s->size, rel = (s->rank - root + n) % n;
    if (rel) {
        add_recv(s, buf, count, type, (tree_parent(rel) + root) % n);
        add_fence(s);
    }
    /* the largest subtree first: its ranks have the most left to pass on */
    for (int m = tree_children_below(rel, n) >> 1; m > 0; m >>= 1)
        if (rel + m < n)
            add_send(s, buf, count, type, (rel + m + root) % n);
}

/* The ranks of rel's subtree, itself included. */
static int tree_size(int rel, int n)
{
    int bound = tree_children_below(rel, n);
    return rel == 0 ? n : bound < n - rel ? bound : n - rel;
}

/* The blocks of the ranks rel, rel + 1, ... as the root's buffer holds them
   (rank (rel + root) % n's at block (rel + root) % n): the copies between
   'staged', in rel order, and 'buffer' (count x type per block; to_buffer
   says which way), in two pieces where the ranks wrap past n - 1. */
static void rotate(tdm_virt_sched *s, char *staged, char *buffer, int count, MPI_Datatype type,
                   int root, int to_buffer)
{
    int n = s->size, tail = n - root;
    MPI_Aint stride = (MPI_Aint)count * extent_of(type);
    char *pieces[2][2] = {{staged, buffer + root * stride}, {staged + tail * stride, buffer}};
    int blocks[2] = {tail, root};
    for (int k = 0; k < 2; k++) {
        const char *from = pieces[k][to_buffer ? 0 : 1];
        char *to = pieces[k][to_buffer ? 1 : 0];
        if (blocks[k])
            add_copy(s, from, blocks[k] * count, type, to, blocks[k] * count, type);
    }
}

/* MPI_Gather up the binomial tree rooted at the root: each rank receives
   its children's subtrees' blocks next to its own (a child m away holds the
   next m ranks' blocks, or those left) and sends them on in one message;
   the root receives them into recvbuf (rank 0) or into a buffer in rel
   order that it copies round into recvbuf. */
static void build_gather(tdm_virt_sched *s, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int root)
{
    int n = s->size, rel = (s->rank - root + n) % n, sub = tree_size(rel, n);
    int bound = tree_children_below(rel, n);
    if (rel && sub == 1) { /* a leaf */
        add_send(s, sendbuf, sendcount, sendtype, (tree_parent(rel) + root) % n);
        return;
    }
    /* the blocks of the subtree, in rel order, as this rank types them */
    int count = rel ? sendcount : recvcount;
    MPI_Datatype type = rel ? sendtype : recvtype;
    MPI_Aint stride = (MPI_Aint)count * extent_of(type);
    char *staged = rel || root ? add_scratch(s, sub * count, type) : recvbuf;
    if (!staged)
        return;
    if (sendbuf != MPI_IN_PLACE)
        add_copy(s, sendbuf, sendcount, sendtype, staged, count, type);
    else if (root) /* the root's block, already in its place of recvbuf */
        add_copy(s, (char *)recvbuf + root * stride, count, type, staged, count, type);
    int children = 0;
    for (int m = 1; m < bound && rel + m < n; m <<= 1, children++) {
        int blocks = m < n - rel - m ? m : n - rel - m;
        add_recv(s, staged + m * stride, blocks * count, type, (rel + m + root) % n);
    }
    if (children)
        add_fence(s);
    if (rel)
        add_send(s, staged, sub * count, type, (tree_parent(rel) + root) % n);
    else if (root)
        rotate(s, staged, recvbuf, count, type, root, 1);
}

/* MPI_Scatter down the same tree: the root sends each child its subtree's
   blocks in one message (from sendbuf, or from a copy of it in rel order),
   each rank keeps its own block and passes its children theirs. */
static void build_scatter(tdm_virt_sched *s, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root)
{
    int n = s->size, rel = (s->rank - root + n) % n, sub = tree_size(rel, n);
    int bound = tree_children_below(rel, n);
    if (rel && sub == 1) {
        add_recv(s, recvbuf, recvcount, recvtype, (tree_parent(rel) + root) % n);
        return;
    }
    int count = rel ? recvcount : sendcount;
    MPI_Datatype type = rel ? recvtype : sendtype;
    MPI_Aint stride = (MPI_Aint)count * extent_of(type);
    char *staged = (char *)sendbuf;
    if (rel || root) {
        staged = add_scratch(s, sub * count, type);
        if (!staged)
            return;
    }
    if (rel) {
        add_recv(s, staged, sub * count, type, (tree_parent(rel) + root) % n);
        add_fence(s);
    } else if (root) {
        rotate(s, staged, (char *)sendbuf, count, type, root, 0);
    }
    if (recvbuf != MPI_IN_PLACE)
        add_copy(s, staged, count, type, recvbuf, recvcount, recvtype);
    for (int m = bound >> 1; m > 0; m >>= 1) {
        if (rel + m >= n)
            continue;
        int blocks = m < n - rel - m ? m : n - rel - m;
        add_send(s, staged + m * stride, blocks * count, type, (rel + m + root) % n);
    }
}

/* Gather: block r of recvbuf (counts[r] x recvtype at displs[r] extents)
   from rank r; the root's own block copied unless sendbuf is MPI_IN_PLACE. */
static void build_gatherv(tdm_virt_sched *s, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, const int *counts,
                          const int *displs, int uniform, MPI_Datatype recvtype, int root)
{
    if (s->rank != root) {
        add_send(s, sendbuf, sendcount, sendtype, root);
        return;
    }
    MPI_Aint extent = extent_of(recvtype);
    for (int r = 0; r < s->size; r++) {
        int count = counts ? counts[r] : uniform;
        MPI_Aint displ = displs ? displs[r] : (MPI_Aint)r * uniform;
        char *at = (char *)recvbuf + displ * extent;
        if (r != root)
            add_recv(s, at, count, recvtype, r);
        else if (sendbuf != MPI_IN_PLACE)
            add_copy(s, sendbuf, sendcount, sendtype, at, count, recvtype);
    }
}

static void build_scatterv(tdm_virt_sched *s, const void *sendbuf, const int *counts,
                           const int *displs, int uniform, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root)
{
    if (s->rank != root) {
        add_recv(s, recvbuf, recvcount, recvtype, root);
        return;
    }
    MPI_Aint extent = extent_of(sendtype);
    for (int r = 0; r < s->size; r++) {
        int count = counts ? counts[r] : uniform;
        MPI_Aint displ = displs ? displs[r] : (MPI_Aint)r * uniform;
        const char *at = (const char *)sendbuf + displ * extent;
        if (r != root)
            add_send(s, at, count, sendtype, r);
        else if (recvbuf != MPI_IN_PLACE)
            add_copy(s, at, count, sendtype, recvbuf, recvcount, recvtype);
    }
}

/* Up a binomial tree: each rank combines its own contribution with its
   children's partial results, lowest child first, and sends the result to
   its parent. A child m away covers the ranks just after those folded so
   far, so every rank computes acc = acc op child and the root gets r0 op
   r1 op ... op r(n-1), the order MPI asks of an operation that does not
   commute; such an operation's tree is rooted at rank 0, which sends the
   result on to the root (a commutative one's at the root). The root's own
   contribution is at recvbuf when sendbuf is MPI_IN_PLACE; the other
   ranks' recvbuf is not used. */
static void build_reduce(tdm_virt_sched *s, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype type, MPI_Op mpi_op, int root)
{
    int n = s->size, commute = 0;
    if (PMPI_Op_commutative(mpi_op, &commute) != MPI_SUCCESS) {
        s->err = MPI_ERR_OP;
        return;
    }
    int top = commute ? root : 0;
    int rel = (s->rank - top + n) % n, bound = tree_children_below(rel, n);
    char *partial[32];
    int children = 0;
    for (int m = 1; m < bound; m <<= 1) {
        if (rel + m >= n)
            break;
        partial[children] = add_scratch(s, count, type);
        add_recv(s, partial[children++], count, type, (rel + m + top) % n);
    }
    if (children)
        add_fence(s);
    const void *acc = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    for (int c = 0; c < children; c++) {
        add_reduce(s, acc, partial[c], count, type, mpi_op); /* partial = acc op partial */
        acc = partial[c];
    }
    if (rel) {
        add_send(s, acc, count, type, (tree_parent(rel) + top) % n);
        if (s->rank == root) { /* an operation that does not commute */
            add_fence(s);
            add_recv(s, recvbuf, count, type, top);
        }
    } else if (s->rank == root) {
        if (acc != recvbuf)
            add_copy(s, acc, count, type, recvbuf, count, type);
    } else {
        add_send(s, acc, count, type, root);
    }
}

static void build_barrier(tdm_virt_sched *s)
{
    static char token;
    int rel = s->rank, children = 0;
    for (int m = 1; m < tree_children_below(rel, s->size) && rel + m < s->size; m <<= 1, children++)
        add_recv(s, &token, 0, MPI_BYTE, rel + m);
    if (children)
        add_fence(s);
    if (rel) {
        add_send(s, &token, 0, MPI_BYTE, tree_parent(rel));
        add_fence(s);
    }
    build_bcast(s, &token, 0, MPI_BYTE, 0);
}

static void build_allreduce(tdm_virt_sched *s, const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype type, MPI_Op mpi_op)
{
    if (sendbuf == MPI_IN_PLACE && s->rank != 0)
        sendbuf = recvbuf;
    build_reduce(s, sendbuf, recvbuf, count, type, mpi_op, 0);
    add_fence(s);
    build_bcast(s, recvbuf, count, type, 0);
}

/* Up the binomial tree rooted at rank 0, then down: every rank has the
   whole receive buffer, so each receives its children's blocks where they
   belong in its own (the subtree of a child m away holds the next m ranks,
   or those left), sends its subtree's blocks, contiguous there, to its
   parent, and rank 0 broadcasts them all. */
static void build_allgather(tdm_virt_sched *s, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype)
{
    int n = s->size, rel = s->rank, bound = tree_children_below(rel, n), children = 0;
    char *block = recvbuf;
    MPI_Aint stride = (MPI_Aint)recvcount * extent_of(recvtype);
    if (sendbuf != MPI_IN_PLACE)
        add_copy(s, sendbuf, sendcount, sendtype, block + rel * stride, recvcount, recvtype);
    for (int m = 1; m < bound && rel + m < n; m <<= 1, children++) {
        int blocks = m < n - rel - m ? m : n - rel - m;
        add_recv(s, block + (rel + m) * stride, blocks * recvcount, recvtype, rel + m);
    }
    if (children)
        add_fence(s);
    if (rel) {
        int blocks = bound < n - rel ? bound : n - rel;
        add_send(s, block + rel * stride, blocks * recvcount, recvtype, tree_parent(rel));
        add_fence(s);
    }
    build_bcast(s, recvbuf, recvcount * n, recvtype, 0);
}

/* MPI_IN_PLACE in the alltoalls: the receive buffer holds what to send. A
   block of 'count' x 'type' at byte 'at' of it widens [*lo, *hi) to its
   bytes. */
static void widen(MPI_Aint at, int count, MPI_Datatype type, MPI_Aint *lo, MPI_Aint *hi)
{
    if (count <= 0)
        return;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint start = at + true_lb, end = start + true_extent + (MPI_Aint)(count - 1) * extent;
    if (*lo > *hi) { /* empty so far */
        *lo = start;
        *hi = end;
        return;
    }
    *lo = start < *lo ? start : *lo;
    *hi = end > *hi ? end : *hi;
}

/* A copy of the receive buffer's bytes [lo, hi), made now, before any block
   arrives, kept by the schedule; the address that stands for recvbuf in it
   (the send buffer, of the receive buffer's layout). */
static const char *in_place_copy(tdm_virt_sched *s, const char *recvbuf, MPI_Aint lo, MPI_Aint hi)
{
    if (lo >= hi)
        return recvbuf; /* nothing to send */
    char *copy = add_scratch(s, (int)(hi - lo), MPI_BYTE);
    if (!copy)
        return NULL;
    memcpy(copy, recvbuf + lo, (size_t)(hi - lo));
    return copy - lo;
}

/* Each rank's block to each: receives first, then the sends, each rank
   starting with its next. */
static void build_alltoallv(tdm_virt_sched *s, const void *sendbuf, const int *sendcounts,
                            const int *sdispls, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int *recvcounts, const int *rdispls, int recvcount,
                            MPI_Datatype recvtype)
{
    MPI_Aint sextent = extent_of(sendtype), rextent = extent_of(recvtype);
    int n = s->size, me = s->rank;
#define AT(buf, counts, displs, uniform, extent, r) \
    ((char *)(buf) + ((displs) ? (MPI_Aint)(displs)[r] : (MPI_Aint)(r) * (uniform)) * (extent))
#define COUNT(counts, uniform, r) ((counts) ? (counts)[r] : (uniform))
    for (int r = 0; r < n; r++)
        if (r != me)
            add_recv(s, AT(recvbuf, recvcounts, rdispls, recvcount, rextent, r),
                     COUNT(recvcounts, recvcount, r), recvtype, r);
    for (int i = 1; i <= n; i++) {
        int r = (me + i) % n;
        const char *from = AT(sendbuf, sendcounts, sdispls, sendcount, sextent, r);
        if (r != me)
            add_send(s, from, COUNT(sendcounts, sendcount, r), sendtype, r);
        else
            add_copy(s, from, COUNT(sendcounts, sendcount, r), sendtype,
                     AT(recvbuf, recvcounts, rdispls, recvcount, rextent, r),
                     COUNT(recvcounts, recvcount, r), recvtype);
    }
#undef AT
#undef COUNT
}

/* An alltoall's blocks up to this many bytes between ranks of several
   processes go by process: one message between each pair of processes
   instead of one per pair of ranks (docs/VIRTUAL.md). On 2 simulated hosts
   of 4 and 16 ranks each that took 0.04-0.21x the time of the direct
   alltoall for 8-byte blocks, 0.34-0.77x for 4 KiB and 0.62-1.48x for
   16 KiB (docs/perf/virt/alltoall-by-process/limit.txt). */
#define ALLTOALL_BY_PROCESS_LIMIT 4096

/*
 * The alltoall by process, where the communicator spans several processes
 * and the blocks are small: in each process the ranks exchange their
 * blocks directly and hand the blocks for other processes to their
 * process's first rank in the communicator (its leader), as packed bytes;
 * the leaders exchange one message per pair of processes; each leader
 * hands each rank of its process, in one message, the blocks that came for
 * it, which land in its receive buffer by a datatype. Three rounds.
 *
 * The leader of process P keeps gathered[a][b]: the block of P's a-th rank
 * for the b-th rank of the other processes (in the communicator's order);
 * and came[i][c]: the block of the i-th rank of the other processes,
 * grouped by process in the order of their leaders, for P's c-th rank.
 * Returns 0 where it does not apply (then the direct schedule is built).
 */
static int build_alltoall_by_process(tdm_virt_sched *s, const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                     MPI_Datatype recvtype)
{
    int n = s->size, me = s->rank, size;
    if (PMPI_Type_size(sendtype, &size) != MPI_SUCCESS)
        return 0;
    long long block = (long long)size * sendcount;
    if (block <= 0 || block > ALLTOALL_BY_PROCESS_LIMIT)
        return 0;
    int B = (int)block;
    int *process = malloc(sizeof *process * (size_t)n * 6);
    if (!process)
        return 0;
    int *index = process + n; /* r's index among its process's ranks */
    int *remote = index + n;  /* r's index among the ranks of other processes than mine */
    int *leader = remote + n; /* the first rank of r's process */
    int *lens = leader + n;   /* for datatypes */
    int *displs = lens + n;
    int mine = tdm_virt_net_process_of(s->world[me]), n_local = 0, n_remote = 0, last = 0;
    for (int r = 0; r < n; r++) {
        process[r] = tdm_virt_net_process_of(s->world[r]);
        last = process[r] > last ? process[r] : last;
    }
    /* per process: its first rank in the communicator, and its ranks */
    int *first = malloc(sizeof *first * 2 * ((size_t)last + 1)), *ranks = first + last + 1;
    if (!first) {
        free(process);
        return 0;
    }
    for (int p = 0; p <= last; p++)
        first[p] = -1, ranks[p] = 0;
    for (int r = 0; r < n; r++) {
        int p = process[r];
        first[p] = first[p] < 0 ? r : first[p];
        leader[r] = first[p];
        index[r] = ranks[p]++;
        if (p == mine)
            n_local++;
        else
            remote[r] = n_remote++;
    }
    if (n_remote == 0) {
        free(first);
        free(process);
        return 0;
    }
    int mine_leader = leader[me];
    MPI_Aint sextent = extent_of(sendtype), rextent = extent_of(recvtype);
    const char *send = sendbuf;
    char *recv = recvbuf;
#define SEND_AT(r) (send + (MPI_Aint)(r)*sendcount * sextent)
#define RECV_AT(r) (recv + (MPI_Aint)(r)*recvcount * rextent)

    /* Round 1: the blocks of this process's ranks directly; those for the
       others to the leader, packed in the communicator's order. Every
       receive first; a rank sends the leader its block, then the rest, as
       the leader receives them. */
    for (int r = 0; r < n; r++)
        if (process[r] == mine && r != me)
            add_recv(s, RECV_AT(r), recvcount, recvtype, r);
    char *gathered = NULL;
    if (me == mine_leader) {
        gathered = add_scratch(s, n_local * n_remote * B, MPI_BYTE);
        for (int r = 0; r < n && gathered; r++)
            if (process[r] == mine && r != me)
                add_recv(s, gathered + (size_t)index[r] * n_remote * B, n_remote * B, MPI_BYTE, r);
    }
    for (int i = 1; i <= n; i++) { /* each rank starting with its next */
        int r = (me + i) % n;
        if (process[r] == mine && r == me)
            add_copy(s, SEND_AT(r), sendcount, sendtype, RECV_AT(r), recvcount, recvtype);
        else if (process[r] == mine)
            add_send(s, SEND_AT(r), sendcount, sendtype, r);
    }
    for (int r = 0; r < n; r++) {
        lens[r] = process[r] == mine ? 0 : sendcount;
        displs[r] = r * sendcount;
    }
    MPI_Datatype for_others = add_indexed(s, n, lens, displs, sendtype);
    if (me != mine_leader)
        add_send(s, send, 1, for_others, mine_leader);
    else if (gathered)
        add_copy(s, send, 1, for_others, gathered + (size_t)index[me] * n_remote * B, n_remote * B,
                 MPI_BYTE);
    add_fence(s);

    /* Round 2: leader to leader, the blocks of one process's ranks for the
       other's, one message each way. */
    char *came = NULL;
    int *segment = lens; /* came's first row for each other process, by its leader */
    if (me == mine_leader && gathered) {
        came = add_scratch(s, n_remote * n_local * B, MPI_BYTE);
        int at = 0;
        for (int q = 0; q < n; q++)
            if (leader[q] == q && process[q] != mine) {
                int theirs = ranks[process[q]];
                segment[q] = at;
                if (came)
                    add_recv(s, came + (size_t)at * n_local * B, theirs * n_local * B, MPI_BYTE, q);
                at += theirs;
            }
        for (int q = 0; q < n && came; q++) {
            if (leader[q] != q || process[q] == mine)
                continue;
            /* gathered[a][remote[j]] for each of my ranks a, each j of q's */
            int k = 0, *blocks = malloc(sizeof *blocks * (size_t)n_local * (size_t)n * 2);
            if (!blocks) {
                s->err = MPI_ERR_NO_MEM;
                break;
            }
            for (int a = 0; a < n_local; a++)
                for (int j = 0; j < n; j++)
                    if (leader[j] == q) {
                        blocks[k] = B;
                        blocks[n_local * n + k++] = (a * n_remote + remote[j]) * B;
                    }
            MPI_Datatype out = add_indexed(s, k, blocks, blocks + (size_t)n_local * n, MPI_BYTE);
            free(blocks);
            add_send(s, gathered, 1, out, q);
        }
    }
    add_fence(s);

    /* Round 3: each rank's blocks from the other processes, from its leader,
       in the communicator's order. */
    int *row = malloc(sizeof *row * (size_t)n);
    for (int r = 0; r < n && row; r++)
        row[r] = process[r] == mine ? -1 : segment[leader[r]] + index[r];
    for (int r = 0; r < n; r++) {
        lens[r] = process[r] == mine ? 0 : recvcount;
        displs[r] = r * recvcount;
    }
    MPI_Datatype from_others = add_indexed(s, n, lens, displs, recvtype);
    if (!row)
        s->err = MPI_ERR_NO_MEM;
    else if (me != mine_leader)
        add_recv(s, recv, 1, from_others, mine_leader);
    else if (came)
        for (int c = 0; c < n; c++) { /* my process's ranks, c its rank */
            if (process[c] != mine)
                continue;
            int k = 0;
            for (int r = 0; r < n; r++)
                if (row[r] >= 0) {
                    lens[k] = B;
                    displs[k++] = (row[r] * n_local + index[c]) * B;
                }
            MPI_Datatype out = add_indexed(s, k, lens, displs, MPI_BYTE);
            if (c == me)
                add_copy(s, came, 1, out, recv, 1, from_others);
            else
                add_send(s, came, 1, out, c);
        }
#undef SEND_AT
#undef RECV_AT
    free(row);
    free(first);
    free(process);
    return 1;
}

/*
 * Alltoallv and alltoallw by process. Their blocks differ in size, so the
 * ranks could not agree on one algorithm without a round more; instead
 * each block between ranks of two processes decides alone: up to
 * ALLTOALL_BY_PROCESS_LIMIT bytes (its sender's count and its receiver's
 * agree, as MPI requires) it goes by process, through the two processes'
 * leaders as in the alltoall above, larger ones directly, as do the blocks
 * between ranks of one process. Every rank tells its leader the sizes of
 * its small blocks to and from the other processes' ranks (a message of
 * 2 x n_remote integers); the leader builds its three rounds from them (a
 * CALL of its schedule), the others have one round. The leader's own
 * direct blocks are awaited only at the end, so that large ones do not
 * hold the small ones back.
 */
typedef struct {
    char *at; /* count x type at 'at' */
    int count;
    MPI_Datatype type;
    int bytes;
} block;

typedef struct {
    int n, me, mine, n_local, n_remote;
    int *process, *index, *leader, *remote; /* of each rank, as in the alltoall */
    int *local;                             /* my process's ranks, in order */
    block *sends, *recvs;                   /* this rank's, for each rank */
    char *send_base, *recv_base;
    int *counts; /* the leader's: per local rank, its small blocks' bytes to
                    and from each remote rank (2 x n_remote) */
} by_process;

static int small(int bytes)
{
    return bytes > 0 && bytes <= ALLTOALL_BY_PROCESS_LIMIT;
}

/* The small blocks between 'p->me' and other processes' ranks, in the
   communicator's order, as one datatype of the schedule's over 'base'. */
static MPI_Datatype add_small_blocks(tdm_virt_sched *s, const by_process *p, const block *blocks,
                                     const char *base, int *bytes)
{
    int k = 0, *lens = malloc(sizeof *lens * (size_t)p->n);
    MPI_Aint *at = malloc(sizeof *at * (size_t)p->n);
    MPI_Datatype *types = malloc(sizeof *types * (size_t)p->n);
    *bytes = 0;
    for (int r = 0; lens && at && types && r < p->n; r++)
        if (p->process[r] != p->mine && small(blocks[r].bytes)) {
            lens[k] = blocks[r].count;
            at[k] = blocks[r].at - base;
            types[k++] = blocks[r].type;
            *bytes += blocks[r].bytes;
        }
    MPI_Datatype made = MPI_DATATYPE_NULL;
    if (!lens || !at || !types)
        s->err = MPI_ERR_NO_MEM;
    else {
        int err = PMPI_Type_create_struct(k, lens, at, types, &made);
        made = keep_type(s, err, made);
    }
    free(lens);
    free(at);
    free(types);
    return made;
}

/* The leader's rounds, once its process's ranks told it their blocks'
   sizes: (1) their small blocks for other processes, gathered; (2) to each
   other process's leader those for its ranks, and from it those for mine;
   (3) to each rank of mine the blocks that came for it. */
static void leader_rounds(tdm_virt_sched *s, void *arg)
{
    by_process *p = arg;
    int R = p->n_remote, L = p->n_local, n = p->n;
#define OUT(a, k) p->counts[(a)*2 * R + (k)]
#define IN(c, k) p->counts[(c)*2 * R + R + (k)]
    int *gat_at = malloc(sizeof *gat_at * ((size_t)L * R + 1));
    int *came_at = malloc(sizeof *came_at * ((size_t)R * L + 1));
    int *lens = malloc(sizeof *lens * (size_t)(n + L) * (size_t)(L > 1 ? L : 1));
    int *displs = malloc(sizeof *displs * (size_t)(n + L) * (size_t)(L > 1 ? L : 1));
    if (!gat_at || !came_at || !lens || !displs) {
        s->err = MPI_ERR_NO_MEM;
        goto out;
    }
    int total = 0;
    for (int a = 0; a < L; a++)
        for (int k = 0; k < R; k++)
            gat_at[a * R + k] = total, total += OUT(a, k);
    char *gathered = total ? add_scratch(s, total, MPI_BYTE) : NULL;
    for (int a = 0; a < L && s->err == MPI_SUCCESS; a++) {
        int bytes = (a + 1 < L ? gat_at[(a + 1) * R] : total) - gat_at[a * R];
        if (bytes && p->local[a] == p->me) {
            int mine;
            MPI_Datatype type = add_small_blocks(s, p, p->sends, p->send_base, &mine);
            add_copy(s, p->send_base, 1, type, gathered + gat_at[a * R], bytes, MPI_BYTE);
        } else if (bytes) {
            add_recv(s, gathered + gat_at[a * R], bytes, MPI_BYTE, p->local[a]);
        }
    }
    add_fence(s);

    /* came: from each other leader q, for each rank j of q's, for each of
       mine c, the block j sends c */
    int came = 0;
    for (int q = 0; q < n; q++)
        if (p->leader[q] == q && p->process[q] != p->mine)
            for (int j = q; j < n; j++)
                if (p->leader[j] == q)
                    for (int c = 0; c < L; c++)
                        came_at[p->remote[j] * L + c] = came, came += IN(c, p->remote[j]);
    char *from = came ? add_scratch(s, came, MPI_BYTE) : NULL;
    for (int q = 0; q < n && s->err == MPI_SUCCESS; q++) {
        if (p->leader[q] != q || p->process[q] == p->mine)
            continue;
        int first = -1, bytes = 0, k = 0;
        for (int j = q; j < n; j++)
            if (p->leader[j] == q)
                for (int c = 0; c < L; c++) {
                    first = first < 0 ? came_at[p->remote[j] * L + c] : first;
                    bytes += IN(c, p->remote[j]);
                }
        if (bytes)
            add_recv(s, from + first, bytes, MPI_BYTE, q);
        bytes = 0;
        for (int a = 0; a < L; a++)
            for (int j = q; j < n; j++)
                if (p->leader[j] == q) {
                    lens[k] = OUT(a, p->remote[j]);
                    displs[k++] = gat_at[a * R + p->remote[j]];
                    bytes += OUT(a, p->remote[j]);
                }
        if (bytes)
            add_send(s, gathered, 1, add_indexed(s, k, lens, displs, MPI_BYTE), q);
    }
    add_fence(s);

    for (int c = 0; c < L && s->err == MPI_SUCCESS; c++) {
        int k = 0, bytes = 0;
        for (int r = 0; r < n; r++)
            if (p->process[r] != p->mine) {
                lens[k] = IN(c, p->remote[r]);
                displs[k++] = came_at[p->remote[r] * L + c];
                bytes += IN(c, p->remote[r]);
            }
        if (!bytes)
            continue;
        MPI_Datatype type = add_indexed(s, k, lens, displs, MPI_BYTE);
        if (p->local[c] == p->me) {
            int mine;
            MPI_Datatype into = add_small_blocks(s, p, p->recvs, p->recv_base, &mine);
            add_copy(s, from, 1, type, p->recv_base, 1, into);
        } else {
            add_send(s, from, 1, type, p->local[c]);
        }
    }
#undef OUT
#undef IN
out:
    free(gat_at);
    free(came_at);
    free(lens);
    free(displs);
}

/* Returns 0 where it does not apply (every process holds one rank of the
   communicator, or one process all): then the direct schedule is built. */
static int build_alltoallw_by_process(tdm_virt_sched *s, const block *sends, const block *recvs,
                                      const char *send_base, char *recv_base)
{
    int n = s->size, me = s->rank, last = 0, spanned = 0, most = 0;
    int *process = malloc(sizeof *process * (size_t)n);
    for (int r = 0; process && r < n; r++) {
        process[r] = tdm_virt_net_process_of(s->world[r]);
        last = process[r] > last ? process[r] : last;
    }
    /* per process: its ranks so far, and its first in the communicator */
    int *held = process ? malloc(sizeof *held * 2 * ((size_t)last + 1)) : NULL, *first = held;
    if (held) {
        first = held + last + 1;
        for (int q = 0; q <= last; q++)
            held[q] = 0, first[q] = -1;
        for (int r = 0; r < n; r++) {
            spanned += held[process[r]]++ == 0;
            most = held[process[r]] > most ? held[process[r]] : most;
        }
    }
    by_process *p = NULL;
    int *ints = NULL;
    block *copies = NULL;
    if (held && spanned >= 2 && most >= 2) {
        p = (by_process *)add_scratch(s, (int)sizeof *p, MPI_BYTE);
        ints = (int *)add_scratch(s, (int)sizeof(int) * 5 * n, MPI_BYTE);
        copies = (block *)add_scratch(s, (int)sizeof(block) * 2 * n, MPI_BYTE);
    }
    if (!p || !ints || !copies) {
        int applies = held && spanned >= 2 && most >= 2; /* then the schedule's error is set */
        free(held);
        free(process);
        return applies;
    }
    *p = (by_process){.n = n,
                      .me = me,
                      .mine = process[me],
                      .process = ints,
                      .index = ints + n,
                      .leader = ints + 2 * n,
                      .remote = ints + 3 * n,
                      .local = ints + 4 * n,
                      .sends = copies,
                      .recvs = copies + n,
                      .send_base = (char *)send_base,
                      .recv_base = recv_base};
    memcpy(p->sends, sends, sizeof *sends * (size_t)n);
    memcpy(p->recvs, recvs, sizeof *recvs * (size_t)n);
    for (int q = 0; q <= last; q++)
        held[q] = 0;
    for (int r = 0; r < n; r++) {
        int q = process[r];
        first[q] = first[q] < 0 ? r : first[q];
        p->process[r] = q;
        p->leader[r] = first[q];
        p->index[r] = held[q]++;
        if (q == p->mine)
            p->local[p->n_local++] = r;
        else
            p->remote[r] = p->n_remote++;
    }
    free(held);
    free(process);
    int R = p->n_remote, leader = p->leader[me] == me;
    int *told = (int *)add_scratch(s, (int)sizeof(int) * 2 * (R ? R : 1), MPI_BYTE);
    if (!told)
        return 1;
    for (int r = 0; r < n; r++)
        if (p->process[r] != p->mine) {
            told[p->remote[r]] = small(sends[r].bytes) ? sends[r].bytes : 0;
            told[R + p->remote[r]] = small(recvs[r].bytes) ? recvs[r].bytes : 0;
        }
    if (leader)
        p->counts = (int *)add_scratch(s, (int)sizeof(int) * 2 * R * p->n_local, MPI_BYTE);

    /* The one round of every rank but the leader; the leader's first. */
    for (int r = 0; r < n; r++)
        if (r != me && (p->process[r] == p->mine || !small(recvs[r].bytes))) {
            add_recv(s, recvs[r].at, recvs[r].count, recvs[r].type, r);
            if (leader && s->n_ops)
                s->ops[s->n_ops - 1].late = 1;
        }
    int in_bytes = 0, out_bytes = 0;
    MPI_Datatype from_leader = MPI_DATATYPE_NULL, to_leader = MPI_DATATYPE_NULL;
    if (!leader) {
        from_leader = add_small_blocks(s, p, recvs, recv_base, &in_bytes);
        to_leader = add_small_blocks(s, p, sends, send_base, &out_bytes);
    }
    if (leader && p->counts) {
        for (int a = 0; a < p->n_local; a++)
            if (p->local[a] != me)
                add_recv(s, p->counts + (size_t)a * 2 * R, 2 * R, MPI_INT, p->local[a]);
            else
                add_copy(s, told, 2 * R, MPI_INT, p->counts + (size_t)a * 2 * R, 2 * R, MPI_INT);
    } else if (!leader && in_bytes) {
        add_recv(s, recv_base, 1, from_leader, p->leader[me]);
    }
    for (int i = 1; i <= n; i++) { /* each rank starting with its next */
        int r = (me + i) % n;
        if (r == me)
            add_copy(s, sends[r].at, sends[r].count, sends[r].type, recvs[r].at, recvs[r].count,
                     recvs[r].type);
        else if (p->process[r] == p->mine || !small(sends[r].bytes)) {
            add_send(s, sends[r].at, sends[r].count, sends[r].type, r);
            if (leader && s->n_ops)
                s->ops[s->n_ops - 1].late = 1;
        }
    }
    if (!leader) {
        add_send(s, told, 2 * R, MPI_INT, p->leader[me]);
        if (out_bytes)
            add_send(s, send_base, 1, to_leader, p->leader[me]);
    } else {
        add_fence(s);
        step *o = add(s, OP_CALL);
        if (o)
            *o = (step){.kind = OP_CALL, .call = leader_rounds, .buf = p};
    }
    return 1;
}

/* The blocks of an alltoallv (extent-counted displacements, one datatype
   per side) or an alltoallw (byte displacements, a datatype per block). */
static void fill_blocks(block *blocks, int n, const char *buf, const int *counts, const int *displs,
                        MPI_Datatype type, const MPI_Datatype *types)
{
    MPI_Aint extent = types ? 1 : extent_of(type);
    for (int r = 0; r < n; r++) {
        int size = 0;
        MPI_Datatype t = types ? types[r] : type;
        PMPI_Type_size(t, &size);
        blocks[r] = (block){.at = (char *)buf + (MPI_Aint)displs[r] * extent,
                            .count = counts[r],
                            .type = t,
                            .bytes = size * counts[r]};
    }
}

/* by process where that applies (1), else 0 */
static int alltoallw_by_process(tdm_virt_sched *s, const void *sendbuf, const int *sendcounts,
                                const int *sdispls, MPI_Datatype sendtype,
                                const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                                const int *rdispls, MPI_Datatype recvtype,
                                const MPI_Datatype *recvtypes)
{
    block *blocks = malloc(sizeof *blocks * 2 * (size_t)s->size);
    if (!blocks)
        return 0;
    fill_blocks(blocks, s->size, sendbuf, sendcounts, sdispls, sendtype, sendtypes);
    fill_blocks(blocks + s->size, s->size, recvbuf, recvcounts, rdispls, recvtype, recvtypes);
    int done = build_alltoallw_by_process(s, blocks, blocks + s->size, sendbuf, recvbuf);
    free(blocks);
    return done;
}

/* ------------------------------------------------------------ entry points */

static int finish_build(tdm_virt_rank *self, tdm_virt_sched *s, tdm_virt_request **out)
{
    return out ? start(self, s, out) : run(self, s);
}

int tdm_virt_barrier(tdm_virt_rank *self, tdm_virt_comm *comm, tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Ibarrier" : "MPI_Barrier");
    if (s)
        build_barrier(s);
    return finish_build(self, s, out);
}

int tdm_virt_bcast(tdm_virt_rank *self, tdm_virt_comm *comm, void *buf, int count,
                   MPI_Datatype type, int root, tdm_virt_request **out)
{
    if (bad_root(comm, root))
        return MPI_ERR_ROOT;
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Ibcast" : "MPI_Bcast");
    if (s)
        build_bcast(s, buf, count, type, root);
    return finish_build(self, s, out);
}

int tdm_virt_reduce(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, void *recvbuf,
                    int count, MPI_Datatype type, MPI_Op op, int root, tdm_virt_request **out)
{
    if (bad_root(comm, root))
        return MPI_ERR_ROOT;
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Ireduce" : "MPI_Reduce");
    if (s)
        build_reduce(s, sendbuf, recvbuf, count, type, op, root);
    return finish_build(self, s, out);
}

int tdm_virt_allreduce(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, void *recvbuf,
                       int count, MPI_Datatype type, MPI_Op op, tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Iallreduce" : "MPI_Allreduce");
    if (s)
        build_allreduce(s, sendbuf, recvbuf, count, type, op);
    return finish_build(self, s, out);
}

int tdm_virt_gatherv(tdm_virt_rank *self, tdm_virt_comm *comm, const char *call,
                     const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int *recvcounts, const int *displs, int recvcount, MPI_Datatype recvtype,
                     int root, tdm_virt_request **out)
{
    if (bad_root(comm, root))
        return MPI_ERR_ROOT;
    tdm_virt_sched *s = sched_new(comm, call);
    if (s && !recvcounts)
        build_gather(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
    else if (s)
        build_gatherv(s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvcount,
                      recvtype, root);
    return finish_build(self, s, out);
}

int tdm_virt_scatterv(tdm_virt_rank *self, tdm_virt_comm *comm, const char *call,
                      const void *sendbuf, const int *sendcounts, const int *displs, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, tdm_virt_request **out)
{
    if (bad_root(comm, root))
        return MPI_ERR_ROOT;
    tdm_virt_sched *s = sched_new(comm, call);
    if (s && !sendcounts)
        build_scatter(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
    else if (s)
        build_scatterv(s, sendbuf, sendcounts, displs, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root);
    return finish_build(self, s, out);
}

int tdm_virt_allgather(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Iallgather" : "MPI_Allgather");
    if (s)
        build_allgather(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return finish_build(self, s, out);
}

int tdm_virt_alltoall(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Ialltoall" : "MPI_Alltoall");
    if (s && sendbuf == MPI_IN_PLACE) {
        MPI_Aint lo = 1, hi = 0;
        widen(0, recvcount * s->size, recvtype, &lo, &hi);
        sendbuf = in_place_copy(s, recvbuf, lo, hi);
        sendcount = recvcount;
        sendtype = recvtype;
    }
    if (s && sendbuf &&
        !build_alltoall_by_process(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype))
        build_alltoallv(s, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL, recvcount,
                        recvtype);
    return finish_build(self, s, out);
}

/* Every rank's block to every other directly (one round), its own copied
   unless sendbuf is MPI_IN_PLACE (then it is already in its place). */
/* As build_allgather, each subtree's blocks one datatype of the schedule's
   (add_blocks) wherever the displacements put them. */
static void build_allgatherv(tdm_virt_sched *s, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                             const int *displs, MPI_Datatype recvtype)
{
    int n = s->size, rel = s->rank, bound = tree_children_below(rel, n), children = 0;
    if (sendbuf != MPI_IN_PLACE)
        add_copy(s, sendbuf, sendcount, sendtype,
                 (char *)recvbuf + (MPI_Aint)displs[rel] * extent_of(recvtype), recvcounts[rel],
                 recvtype);
    for (int m = 1; m < bound && rel + m < n; m <<= 1, children++) {
        int blocks = m < n - rel - m ? m : n - rel - m;
        add_recv(s, recvbuf, 1, add_blocks(s, recvcounts, displs, rel + m, blocks, recvtype),
                 rel + m);
    }
    if (children)
        add_fence(s);
    if (rel) {
        int blocks = bound < n - rel ? bound : n - rel;
        add_send(s, recvbuf, 1, add_blocks(s, recvcounts, displs, rel, blocks, recvtype),
                 tree_parent(rel));
        add_fence(s);
    }
    build_bcast(s, recvbuf, 1, add_blocks(s, recvcounts, displs, 0, n, recvtype), 0);
}

/* Inclusive scan along the ranks: rank r gets r0 op ... op rr from r - 1's
   partial result, in MPI's order. */
static void build_scan(tdm_virt_sched *s, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype type, MPI_Op mpi_op)
{
    int me = s->rank;
    if (sendbuf != MPI_IN_PLACE)
        add_copy(s, sendbuf, count, type, recvbuf, count, type);
    if (me > 0) {
        char *partial = add_scratch(s, count, type);
        add_recv(s, partial, count, type, me - 1);
        add_fence(s);
        add_reduce(s, partial, recvbuf, count, type, mpi_op);
    }
    if (me < s->size - 1)
        add_send(s, recvbuf, count, type, me + 1);
}

/* Exclusive scan: rank r > 0 gets r0 op ... op r(r-1); rank 0's recvbuf is
   left as it is. */
static void build_exscan(tdm_virt_sched *s, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype type, MPI_Op mpi_op)
{
    int me = s->rank, n = s->size;
    const void *mine = sendbuf;
    if (sendbuf == MPI_IN_PLACE && me < n - 1) {
        char *copy = add_scratch(s, count, type);
        add_copy(s, recvbuf, count, type, copy, count, type);
        mine = copy;
    }
    if (me == 0) {
        if (n > 1)
            add_send(s, mine, count, type, 1);
        return;
    }
    add_recv(s, recvbuf, count, type, me - 1);
    add_fence(s);
    if (me < n - 1) {
        char *next = add_scratch(s, count, type);
        add_copy(s, mine, count, type, next, count, type);
        add_reduce(s, recvbuf, next, count, type, mpi_op);
        add_send(s, next, count, type, me + 1);
    }
}

/* Reduce to rank 0 into a buffer of the schedule, then scatter the blocks
   (counts NULL: 'count' each). */
static void build_reduce_scatter(tdm_virt_sched *s, const void *sendbuf, void *recvbuf,
                                 const int *counts, int count, MPI_Datatype type, MPI_Op mpi_op)
{
    int n = s->size, total = 0;
    int *displs = counts ? malloc(sizeof *displs * (size_t)n) : NULL;
    if (counts && !displs) {
        s->err = MPI_ERR_NO_MEM;
        return;
    }
    for (int r = 0; r < n; r++) {
        if (displs)
            displs[r] = total;
        total += counts ? counts[r] : count;
    }
    if (sendbuf == MPI_IN_PLACE)
        sendbuf = recvbuf;
    char *all = s->rank == 0 ? add_scratch(s, total, type) : NULL;
    build_reduce(s, sendbuf, all, total, type, mpi_op, 0);
    add_fence(s);
    if (counts)
        build_scatterv(s, all, counts, displs, count, type, recvbuf, counts[s->rank], type, 0);
    else
        build_scatter(s, all, count, type, recvbuf, count, type, 0);
    free(displs);
}

int tdm_virt_allgatherv(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                        const int *displs, MPI_Datatype recvtype, tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Iallgatherv" : "MPI_Allgatherv");
    if (s)
        build_allgatherv(s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return finish_build(self, s, out);
}

int tdm_virt_alltoallv(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                       const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                       void *recvbuf, const int *recvcounts, const int *rdispls,
                       MPI_Datatype recvtype, tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Ialltoallv" : "MPI_Alltoallv");
    if (s && sendbuf == MPI_IN_PLACE) {
        MPI_Aint lo = 1, hi = 0, extent = extent_of(recvtype);
        for (int r = 0; r < s->size; r++)
            widen((MPI_Aint)rdispls[r] * extent, recvcounts[r], recvtype, &lo, &hi);
        sendbuf = in_place_copy(s, recvbuf, lo, hi);
        sendcounts = recvcounts;
        sdispls = rdispls;
        sendtype = recvtype;
    }
    if (s && sendbuf &&
        !alltoallw_by_process(s, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts,
                              rdispls, recvtype, NULL))
        build_alltoallv(s, sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts, rdispls,
                        0, recvtype);
    return finish_build(self, s, out);
}

/* Alltoallw: as alltoallv's schedule, with each block's own datatype and
   its displacement in bytes. */
static void build_alltoallw(tdm_virt_sched *s, const void *sendbuf, const int *sendcounts,
                            const int *sdispls, const MPI_Datatype *sendtypes, void *recvbuf,
                            const int *recvcounts, const int *rdispls,
                            const MPI_Datatype *recvtypes)
{
    int n = s->size, me = s->rank;
    for (int r = 0; r < n; r++)
        if (r != me)
            add_recv(s, (char *)recvbuf + rdispls[r], recvcounts[r], recvtypes[r], r);
    for (int i = 1; i <= n; i++) {
        int r = (me + i) % n;
        const char *from = (const char *)sendbuf + sdispls[r];
        if (r != me)
            add_send(s, from, sendcounts[r], sendtypes[r], r);
        else
            add_copy(s, from, sendcounts[r], sendtypes[r], (char *)recvbuf + rdispls[r],
                     recvcounts[r], recvtypes[r]);
    }
}

int tdm_virt_alltoallw(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                       const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                       void *recvbuf, const int *recvcounts, const int *rdispls,
                       const MPI_Datatype *recvtypes, tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, out ? "MPI_Ialltoallw" : "MPI_Alltoallw");
    if (s && sendbuf == MPI_IN_PLACE) {
        MPI_Aint lo = 1, hi = 0;
        for (int r = 0; r < s->size; r++)
            widen(rdispls[r], recvcounts[r], recvtypes[r], &lo, &hi);
        sendbuf = in_place_copy(s, recvbuf, lo, hi);
        sendcounts = recvcounts;
        sdispls = rdispls;
        sendtypes = recvtypes;
    }
    if (s && sendbuf &&
        !alltoallw_by_process(s, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes,
                              recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes))
        build_alltoallw(s, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes);
    return finish_build(self, s, out);
}

int tdm_virt_scan(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf, void *recvbuf,
                  int count, MPI_Datatype type, MPI_Op op, int exclusive, tdm_virt_request **out)
{
    const char *call =
        exclusive ? (out ? "MPI_Iexscan" : "MPI_Exscan") : (out ? "MPI_Iscan" : "MPI_Scan");
    tdm_virt_sched *s = sched_new(comm, call);
    if (s && exclusive)
        build_exscan(s, sendbuf, recvbuf, count, type, op);
    else if (s)
        build_scan(s, sendbuf, recvbuf, count, type, op);
    return finish_build(self, s, out);
}

int tdm_virt_reduce_scatter(tdm_virt_rank *self, tdm_virt_comm *comm, const void *sendbuf,
                            void *recvbuf, const int *recvcounts, int recvcount, MPI_Datatype type,
                            MPI_Op op, tdm_virt_request **out)
{
    const char *call = recvcounts
                           ? (out ? "MPI_Ireduce_scatter" : "MPI_Reduce_scatter")
                           : (out ? "MPI_Ireduce_scatter_block" : "MPI_Reduce_scatter_block");
    tdm_virt_sched *s = sched_new(comm, call);
    if (s)
        build_reduce_scatter(s, sendbuf, recvbuf, recvcounts, recvcount, type, op);
    return finish_build(self, s, out);
}

/* A neighbourhood collective: from each in-neighbour k (a rank of the
   communicator, or MPI_PROC_NULL: nothing) recvcounts[k] x recvtypes[k] at
   recvbuf + rdispls[k] bytes, and to each out-neighbour k sendcounts[k] x
   sendtypes[k] from sendbuf + sdispls[k] bytes; one round, the receives
   posted in the neighbours' order before the sends. 'paired': the
   neighbours are a Cartesian topology's pairs (a dimension's -1, then +1),
   whose sends go +1 first: where one rank is both (a periodic dimension of
   1 or 2 ranks) the block from the -1 neighbour is the one it sent toward
   +1, as a halo exchange needs (MPICH 4.0.2 and Open MPI 4.1 do so in
   MPI_Neighbor_alltoall, and differ in other forms). */
int tdm_virt_neighbor(tdm_virt_rank *self, tdm_virt_comm *comm, const char *call, int n_in,
                      const int *sources, int n_out, const int *dests, int paired,
                      const void *sendbuf, const int *sendcounts, const MPI_Aint *sdispls,
                      const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                      const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                      tdm_virt_request **out)
{
    tdm_virt_sched *s = sched_new(comm, call);
    for (int k = 0; s && k < n_in; k++)
        if (sources[k] != MPI_PROC_NULL)
            add_recv(s, (char *)recvbuf + rdispls[k], recvcounts[k], recvtypes[k], sources[k]);
    for (int i = 0; s && i < n_out; i++) {
        int k = paired ? i ^ 1 : i;
        if (dests[k] != MPI_PROC_NULL)
            add_send(s, (const char *)sendbuf + sdispls[k], sendcounts[k], sendtypes[k], dests[k]);
    }
    return finish_build(self, s, out);
}
