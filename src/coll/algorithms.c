/*
 * The collective algorithms, each built as a schedule of rounds
 * (schedule.h); hooks.c checks the arguments, picks the algorithm
 * (select.h) and starts or runs the schedule. Ranks and blocks below are
 * those of the communicator; "relative" ranks count from the root.
 *
 *   barrier         dissemination
 *   bcast           binomial tree | flat tree | scatter + ring allgather
 *   scatter, gather binomial tree | flat tree (the v forms: flat)
 *   allgather(v)    ring | recursive doubling (a power of two of ranks) | Bruck
 *   alltoall(v,w)   pairwise exchange | linear (everything at once)
 *   reduce          binomial tree
 *   allreduce       recursive doubling | reduce-scatter + allgather | ring
 *   reduce_scatter  pairwise exchange | ring (also for the _block form)
 *   scan, exscan    a chain in rank order (any operation)
 *
 * A non-commutative operation must be applied in rank order, x0 op x1 op ...
 * op xn-1. The shared-memory path does so; off it, reduce runs a binomial
 * tree rooted at rank 0 that keeps each rank's part in order, allreduce runs
 * recursive doubling with the lower half's data first, and reduce_scatter
 * runs that reduce followed by a flat scatter from rank 0.
 */
#include "coll/algorithms.h"

static int add(tdm_schedule *s, tdm_op_kind kind, void *buf, MPI_Count count, MPI_Datatype type,
               int peer)
{
    tdm_op op = {.kind = kind, .buf = buf, .count = count, .type = type, .peer = peer};
    return tdm_schedule_add(s, op);
}

static int local(tdm_schedule *s, tdm_op_kind kind, void *dst, const void *src, MPI_Count count,
                 MPI_Datatype type, MPI_Op op)
{
    tdm_op o = {.kind = kind,
                .buf = dst,
                .src = src,
                .count = count,
                .type = type,
                .op = op,
                .src_count = count,
                .src_type = type};
    return tdm_schedule_add(s, o);
}

static MPI_Aint extent_of(MPI_Datatype type)
{
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    return extent;
}

/* Block i of 'count' elements of 'type' in 'buf'. */
static void *block(const void *buf, MPI_Count i, MPI_Count count, MPI_Datatype type)
{
    return (char *)buf + i * count * extent_of(type);
}

static void *at(const void *buf, MPI_Aint offset)
{
    return (char *)buf + offset;
}

/* A scratch buffer for 'count' elements of 'type', freed with the schedule. */
static void *scratch(tdm_schedule *s, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint true_lb = 0, true_extent = 0;
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint bytes = count > 0 ? true_extent + (count - 1) * extent_of(type) : 1;
    char *p = tdm_schedule_scratch(s, (size_t)bytes);
    return p ? p - true_lb : NULL;
}

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* This rank and the size of the schedule's communicator (0 and 0 for no
   schedule: the caller returns NULL then). */
static void begin(const tdm_schedule *s, int *rank, int *size)
{
    *rank = *size = 0;
    if (s)
        tdm_schedule_ranks(s, rank, size);
}

/* The schedule, or NULL when it could not be built (no memory). */
static tdm_schedule *built(tdm_schedule *s)
{
    if (s && tdm_schedule_failed(s)) {
        tdm_schedule_discard(s);
        return NULL;
    }
    return s;
}

static tdm_span *spans(tdm_schedule *s, int n)
{
    return tdm_schedule_scratch(s, sizeof(tdm_span) * (size_t)(n > 0 ? n : 1));
}

/* 'count' elements of 'type' cut into n nearly equal blocks. */
static tdm_span *split(tdm_schedule *s, MPI_Count count, int n, MPI_Datatype type)
{
    tdm_span *b = spans(s, n);
    MPI_Count start = 0;
    for (int i = 0; b && i < n; i++) {
        b[i].count = count / n + (i < count % n);
        b[i].offset = start * extent_of(type);
        start += b[i].count;
    }
    return b;
}

static MPI_Count largest(const tdm_span *b, int n)
{
    MPI_Count most = 0;
    for (int i = 0; i < n; i++)
        most = b[i].count > most ? b[i].count : most;
    return most;
}

/* This rank's own block: 'sendcount' x 'sendtype' from 'sendbuf' into
   'recvbuf' as 'recvcount' x 'recvtype' (the signatures match), in memory. */
static void self_copy(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                      MPI_Datatype recvtype)
{
    tdm_op o = {.kind = TDM_OP_COPY,
                .buf = recvbuf,
                .src = sendbuf,
                .count = recvcount,
                .type = recvtype,
                .src_count = sendcount,
                .src_type = sendtype};
    tdm_schedule_add(s, o);
}

/* ---------------------------------------------------- shared-memory slots */

/* A use of a slot (schedule.h): every rank first waits until every rank
   acknowledged the slot's previous use (so no flag or segment is touched
   while an older collective still reads it), writes its segment and raises
   its 'posted' flag, reads what it needs once the writers' flags are up, and
   ends with its 'ack'. Data moves with one copy into the slot and one copy
   out; nothing goes through the MPI library. */

static char *flag_of(char *flags, int r)
{
    return flags + (size_t)r * TDM_SLOT_FLAG;
}

static char *segment(const tdm_slot *slot, int r)
{
    return slot->data + (size_t)r * slot->bytes;
}

static void wait_flags(tdm_schedule *s, char *flags, int count, unsigned long long value)
{
    tdm_op o = {
        .kind = TDM_OP_WAIT, .src = flags, .count = count, .value = value, .stride = TDM_SLOT_FLAG};
    tdm_schedule_add(s, o);
}

static void raise_flag(tdm_schedule *s, char *flag, unsigned long long value)
{
    tdm_op o = {.kind = TDM_OP_SIGNAL, .buf = flag, .value = value};
    tdm_schedule_add(s, o);
}

/* 'count' x 'type' into a segment, as packed bytes, and back. 'reader' is
   the rank that reads it (-1: every other rank), for monitoring. */
static void to_segment(tdm_schedule *s, char *seg, const void *buf, MPI_Count count,
                       MPI_Datatype type, int reader, int size)
{
    for (int r = reader < 0 ? 0 : reader; r < (reader < 0 ? size : reader + 1); r++) {
        tdm_op note = {.kind = TDM_OP_NOTE, .count = count, .type = type, .peer = r};
        tdm_schedule_add(s, note);
    }
    tdm_op o = {.kind = TDM_OP_COPY,
                .buf = seg,
                .src = buf,
                .count = tdm_coll_bytes(count, type),
                .type = MPI_BYTE,
                .src_count = count,
                .src_type = type};
    tdm_schedule_add(s, o);
}

static void from_segment(tdm_schedule *s, void *buf, MPI_Count count, MPI_Datatype type,
                         const char *seg)
{
    tdm_op o = {.kind = TDM_OP_COPY,
                .buf = buf,
                .src = seg,
                .count = count,
                .type = type,
                .src_count = tdm_coll_bytes(count, type),
                .src_type = MPI_BYTE};
    tdm_schedule_add(s, o);
}

/* Take a slot for 's' when its communicator has the shared path and 'bytes'
   fit a rank's segment (the same answer on every rank). */
static int slot_for(tdm_schedule *s, MPI_Aint bytes, tdm_slot *slot)
{
    size_t room = tdm_schedule_slot_bytes(s);
    if (room == 0 || bytes < 0 || (size_t)bytes > room)
        return 0;
    tdm_schedule_slot(s, slot);
    return 1;
}

/* Whether a collective of 'kind' whose algorithm is *alg runs through a
   slot: *alg is shared (select.h) and 'bytes' fit. When it does not, a
   shared *alg becomes the built-in rule's point-to-point algorithm for
   'chosen_for', the size the choice was made for (the same on every
   rank). */
static int shared(tdm_schedule *s, tdm_coll_alg *alg, tdm_coll_kind kind, long long chosen_for,
                  MPI_Aint bytes, int size, tdm_slot *slot)
{
    if (*alg != TDM_ALG_SHARED)
        return 0;
    if (slot_for(s, bytes, slot))
        return 1;
    *alg = tdm_coll_default_messages(kind, chosen_for, size);
    return 0;
}

static void slot_open(tdm_schedule *s, tdm_slot *slot, int size)
{
    wait_flags(s, slot->acks, size, slot->previous);
}

static void slot_post(tdm_schedule *s, tdm_slot *slot, int rank)
{
    raise_flag(s, flag_of(slot->posted, rank), slot->use);
}

static void slot_close(tdm_schedule *s, tdm_slot *slot, int rank)
{
    raise_flag(s, flag_of(slot->acks, rank), slot->use);
}

/* A datatype whose elements lie back to back from offset 0, as in a segment
   (reductions there). */
static int flat_type(MPI_Datatype type)
{
    MPI_Aint offset, bytes;
    return tdm_coll_contiguous(2, type, &offset, &bytes) && offset == 0 && bytes > 0;
}

/* ---------------------------------------------------------------- barrier */

/* Dissemination: in round k, send to rank + 2^k and receive from rank - 2^k. */
tdm_schedule *tdm_coll_barrier(tdm_schedule *s)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_slot slot;
    if (s && slot_for(s, 0, &slot)) { /* every rank raises its flag, waits for all */
        slot_open(s, &slot, size);
        slot_post(s, &slot, rank);
        wait_flags(s, slot.posted, size, slot.use);
        slot_close(s, &slot, rank);
        return built(s);
    }
    for (int distance = 1; s && distance < size; distance *= 2) {
        tdm_schedule_round(s);
        add(s, TDM_OP_SEND, NULL, 0, MPI_BYTE, mod(rank + distance, size));
        add(s, TDM_OP_RECV, NULL, 0, MPI_BYTE, mod(rank - distance, size));
    }
    return built(s);
}

/* -------------------------------------------------------------- allgather */

/* Every rank ends with every block of 'buf' (b[i]: count and byte offset of
   block i); rank r starts with block (r + shift) mod n. */
static void allgather_blocks(tdm_schedule *s, void *buf, const tdm_span *b, MPI_Datatype type,
                             int shift, tdm_coll_alg alg, int rank, int n)
{
    if (alg == TDM_ALG_RECURSIVE_DOUBLING && (n & (n - 1)) == 0) {
        /* step 'mask': exchange with rank ^ mask the mask blocks each holds */
        for (int mask = 1; mask < n; mask <<= 1) {
            int partner = rank ^ mask, mine = rank & ~(mask - 1), theirs = partner & ~(mask - 1);
            tdm_schedule_round(s);
            for (int j = 0; j < mask; j++) {
                const tdm_span *out = &b[mod(mine + j + shift, n)];
                add(s, TDM_OP_SEND, at(buf, out->offset), out->count, type, partner);
            }
            for (int j = 0; j < mask; j++) {
                const tdm_span *in = &b[mod(theirs + j + shift, n)];
                add(s, TDM_OP_RECV, at(buf, in->offset), in->count, type, partner);
            }
        }
        return;
    }
    if (alg == TDM_ALG_BRUCK) {
        /* step d: the blocks held so far (r + j, j < d) go to rank - d and as
           many come from rank + d, straight to their places: log2(n) steps
           for any n */
        for (int d = 1; d < n; d <<= 1) {
            int count = d < n - d ? d : n - d;
            tdm_schedule_round(s);
            for (int j = 0; j < count; j++) {
                const tdm_span *out = &b[mod(rank + j + shift, n)];
                add(s, TDM_OP_SEND, at(buf, out->offset), out->count, type, mod(rank - d, n));
            }
            for (int j = 0; j < count; j++) {
                const tdm_span *in = &b[mod(rank + d + j + shift, n)];
                add(s, TDM_OP_RECV, at(buf, in->offset), in->count, type, mod(rank + d, n));
            }
        }
        return;
    }
    /* ring: in step k pass on to the right the block received in step k - 1 */
    for (int k = 0; k < n - 1; k++) {
        const tdm_span *out = &b[mod(rank + shift - k, n)], *in = &b[mod(rank + shift - k - 1, n)];
        tdm_schedule_round(s);
        add(s, TDM_OP_SEND, at(buf, out->offset), out->count, type, mod(rank + 1, n));
        add(s, TDM_OP_RECV, at(buf, in->offset), in->count, type, mod(rank - 1, n));
    }
}

/* Allgather into the blocks b of recvbuf, this rank's from sendbuf. */
static void allgather(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void *recvbuf, const tdm_span *b,
                      MPI_Datatype recvtype, tdm_coll_alg alg, long long chosen_for, int rank,
                      int size)
{
    tdm_slot slot;
    MPI_Aint most = 0;
    for (int r = 0; r < size; r++)
        most = tdm_coll_bytes(b[r].count, recvtype) > most ? tdm_coll_bytes(b[r].count, recvtype)
                                                           : most;
    if (shared(s, &alg, TDM_COLL_ALLGATHER, chosen_for, most, size, &slot)) {
        /* each writes its block, then reads all */
        slot_open(s, &slot, size);
        if (sendbuf == MPI_IN_PLACE) {
            to_segment(s, segment(&slot, rank), at(recvbuf, b[rank].offset), b[rank].count,
                       recvtype, -1, size);
        } else {
            to_segment(s, segment(&slot, rank), sendbuf, sendcount, sendtype, -1, size);
            self_copy(s, sendbuf, sendcount, sendtype, at(recvbuf, b[rank].offset), b[rank].count,
                      recvtype);
        }
        slot_post(s, &slot, rank);
        wait_flags(s, slot.posted, size, slot.use);
        for (int r = 0; r < size; r++)
            if (r != rank)
                from_segment(s, at(recvbuf, b[r].offset), b[r].count, recvtype, segment(&slot, r));
        slot_close(s, &slot, rank);
        return;
    }
    if (sendbuf != MPI_IN_PLACE)
        self_copy(s, sendbuf, sendcount, sendtype, at(recvbuf, b[rank].offset), b[rank].count,
                  recvtype);
    allgather_blocks(s, recvbuf, b, recvtype, 0, alg, rank, size);
}

/* ------------------------------------------------------------------ bcast */

/* Binomial tree over the ranks relative to the root: the parent of relative
   rank v clears its lowest set bit; its children set each lower bit. */
static void bcast_binomial(tdm_schedule *s, void *buffer, MPI_Count count, MPI_Datatype type,
                           int root, int rank, int size)
{
    int v = mod(rank - root, size), mask = 1;
    while (mask < size && !(v & mask))
        mask <<= 1;
    if (v != 0) {
        add(s, TDM_OP_RECV, buffer, count, type, mod(v - mask + root, size));
        tdm_schedule_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < size)
            add(s, TDM_OP_SEND, buffer, count, type, mod(v + mask + root, size));
}

tdm_schedule *tdm_coll_bcast(tdm_schedule *s, void *buffer, MPI_Count count, MPI_Datatype type,
                             int root, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_slot slot;
    if (!s)
        return NULL;
    long long bytes = tdm_coll_bytes(count, type);
    if (shared(s, &alg, TDM_COLL_BCAST, bytes, (bytes + size - 1) / size, size, &slot)) {
        /* the root fills the slot's whole data area, the others read it */
        slot_open(s, &slot, size);
        if (rank == root) {
            to_segment(s, slot.data, buffer, count, type, -1, size);
            slot_post(s, &slot, root);
        } else {
            wait_flags(s, flag_of(slot.posted, root), 1, slot.use);
            from_segment(s, buffer, count, type, slot.data);
        }
        slot_close(s, &slot, rank);
    } else if (alg == TDM_ALG_FLAT) {
        for (int i = 0; i < size; i++)
            if (rank == root && i != root)
                add(s, TDM_OP_SEND, buffer, count, type, i);
        if (rank != root)
            add(s, TDM_OP_RECV, buffer, count, type, root);
    } else if (alg == TDM_ALG_SCATTER_ALLGATHER) {
        /* relative rank v gets block v from the root, then a ring gathers all */
        tdm_span *b = split(s, count, size, type);
        int v = mod(rank - root, size);
        for (int w = 1; b && v == 0 && w < size; w++)
            add(s, TDM_OP_SEND, at(buffer, b[w].offset), b[w].count, type, mod(w + root, size));
        if (b && v != 0)
            add(s, TDM_OP_RECV, at(buffer, b[v].offset), b[v].count, type, root);
        if (b)
            allgather_blocks(s, buffer, b, type, size - root, TDM_ALG_RING, rank, size);
    } else {
        bcast_binomial(s, buffer, count, type, root, rank, size);
    }
    return built(s);
}

/* -------------------------------------------------------- scatter, gather */

/* The size of the binomial subtree of relative rank v (v = 0: the root). */
static int subtree(int v, int size, int *mask)
{
    *mask = 1;
    while (*mask < size && !(v & *mask))
        *mask <<= 1;
    return v == 0 ? size : (*mask < size - v ? *mask : size - v);
}

/* Binomial scatter: each rank receives its subtree's blocks from its parent
   (in relative order) and passes on its children's. The root first puts its
   blocks in relative order when it is not rank 0. */
static void scatter_binomial(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                             MPI_Datatype recvtype, int root, int rank, int size)
{
    int v = mod(rank - root, size), mask, m = subtree(v, size, &mask);
    const void *data = sendbuf; /* the subtree's blocks, in relative order */
    MPI_Count unit = sendcount;
    MPI_Datatype type = sendtype;
    if (v == 0) {
        if (root != 0) {
            void *tmp = scratch(s, (MPI_Count)size * sendcount, sendtype);
            local(s, TDM_OP_COPY, tmp, block(sendbuf, root, sendcount, sendtype),
                  (MPI_Count)(size - root) * sendcount, sendtype, MPI_OP_NULL);
            local(s, TDM_OP_COPY, block(tmp, size - root, sendcount, sendtype), sendbuf,
                  (MPI_Count)root * sendcount, sendtype, MPI_OP_NULL);
            data = tmp;
        }
        if (recvbuf != MPI_IN_PLACE)
            self_copy(s, data, sendcount, sendtype, recvbuf, recvcount, recvtype);
    } else if (m == 1) {
        add(s, TDM_OP_RECV, recvbuf, recvcount, recvtype, mod(v - mask + root, size));
        return;
    } else {
        void *tmp = scratch(s, (MPI_Count)m * recvcount, recvtype);
        add(s, TDM_OP_RECV, tmp, (MPI_Count)m * recvcount, recvtype, mod(v - mask + root, size));
        tdm_schedule_round(s);
        local(s, TDM_OP_COPY, recvbuf, tmp, recvcount, recvtype, MPI_OP_NULL);
        data = tmp, unit = recvcount, type = recvtype;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < size) {
            int child = mask < size - v - mask ? mask : size - v - mask;
            add(s, TDM_OP_SEND, block(data, mask, unit, type), (MPI_Count)child * unit, type,
                mod(v + mask + root, size));
        }
}

/* Binomial gather: the reverse of the scatter above. */
static void gather_binomial(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int root, int rank, int size)
{
    int v = mod(rank - root, size), mask, m = subtree(v, size, &mask);
    if (v != 0 && m == 1) {
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, mod(v - mask + root, size));
        return;
    }
    void *data = recvbuf; /* the subtree's blocks, in relative order */
    MPI_Count unit = recvcount;
    MPI_Datatype type = recvtype;
    if (v != 0) {
        data = scratch(s, (MPI_Count)m * sendcount, sendtype), unit = sendcount, type = sendtype;
        local(s, TDM_OP_COPY, data, sendbuf, sendcount, sendtype, MPI_OP_NULL);
    } else {
        if (root != 0)
            data = scratch(s, (MPI_Count)size * recvcount, recvtype);
        if (sendbuf != MPI_IN_PLACE)
            self_copy(s, sendbuf, sendcount, sendtype, block(recvbuf, root, recvcount, recvtype),
                      recvcount, recvtype);
    }
    for (int c = 1; c < mask && v + c < size; c <<= 1) {
        int child = c < size - v - c ? c : size - v - c;
        add(s, TDM_OP_RECV, block(data, c, unit, type), (MPI_Count)child * unit, type,
            mod(v + c + root, size));
    }
    tdm_schedule_round(s);
    if (v != 0) {
        add(s, TDM_OP_SEND, data, (MPI_Count)m * unit, type, mod(v - mask + root, size));
    } else if (root != 0) { /* relative block w is rank w + root's */
        local(s, TDM_OP_COPY, block(recvbuf, root + 1, recvcount, recvtype),
              block(data, 1, recvcount, recvtype), (MPI_Count)(size - root - 1) * recvcount,
              recvtype, MPI_OP_NULL);
        local(s, TDM_OP_COPY, recvbuf, block(data, size - root, recvcount, recvtype),
              (MPI_Count)root * recvcount, recvtype, MPI_OP_NULL);
    }
}

/* Flat trees: the root sends (receives) every rank's block at once; b[i] is
   rank i's block in the root's buffer. */
static void scatter_flat(tdm_schedule *s, const void *sendbuf, const tdm_span *b,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, int rank, int size)
{
    if (rank != root) {
        add(s, TDM_OP_RECV, recvbuf, recvcount, recvtype, root);
        return;
    }
    for (int i = 0; i < size; i++)
        if (i != rank)
            add(s, TDM_OP_SEND, at(sendbuf, b[i].offset), b[i].count, sendtype, i);
    if (recvbuf != MPI_IN_PLACE)
        self_copy(s, at(sendbuf, b[rank].offset), b[rank].count, sendtype, recvbuf, recvcount,
                  recvtype);
}

static void gather_flat(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const tdm_span *b,
                        MPI_Datatype recvtype, int root, int rank, int size)
{
    if (rank != root) {
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, root);
        return;
    }
    for (int i = 0; i < size; i++)
        if (i != rank)
            add(s, TDM_OP_RECV, at(recvbuf, b[i].offset), b[i].count, recvtype, i);
    if (sendbuf != MPI_IN_PLACE)
        self_copy(s, sendbuf, sendcount, sendtype, at(recvbuf, b[rank].offset), b[rank].count,
                  recvtype);
}

/* Blocks of 'count' elements of 'type', one per rank, one after the other. */
static tdm_span *uniform(tdm_schedule *s, MPI_Count count, MPI_Datatype type, int n)
{
    tdm_span *b = spans(s, n);
    for (int i = 0; b && i < n; i++)
        b[i] = (tdm_span){count, i * count * extent_of(type)};
    return b;
}

/* The blocks of a v form: counts[i] elements at displs[i] x the extent (NULL
   at a rank where they are not significant). */
static tdm_span *vector(tdm_schedule *s, const int counts[], const int displs[], MPI_Datatype type,
                        int n)
{
    tdm_span *b = spans(s, n);
    for (int i = 0; b && counts && i < n; i++)
        b[i] = (tdm_span){counts[i], (MPI_Aint)displs[i] * extent_of(type)};
    return b;
}

tdm_schedule *tdm_coll_scatter(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype recvtype, int root, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? uniform(s, sendcount, sendtype, size) : NULL;
    tdm_slot slot;
    MPI_Aint bytes =
        rank == root ? tdm_coll_bytes(sendcount, sendtype) : tdm_coll_bytes(recvcount, recvtype);
    if (b && shared(s, &alg, TDM_COLL_SCATTER, bytes, bytes, size, &slot)) {
        slot_open(s, &slot, size);
        if (rank == root) {
            for (int r = 0; r < size; r++)
                if (r != root)
                    to_segment(s, segment(&slot, r), at(sendbuf, b[r].offset), sendcount, sendtype,
                               r, size);
            if (recvbuf != MPI_IN_PLACE)
                self_copy(s, at(sendbuf, b[root].offset), sendcount, sendtype, recvbuf, recvcount,
                          recvtype);
            slot_post(s, &slot, root);
        } else {
            wait_flags(s, flag_of(slot.posted, root), 1, slot.use);
            from_segment(s, recvbuf, recvcount, recvtype, segment(&slot, rank));
        }
        slot_close(s, &slot, rank);
    } else if (b && alg == TDM_ALG_BINOMIAL)
        scatter_binomial(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, rank,
                         size);
    else if (b)
        scatter_flat(s, sendbuf, b, sendtype, recvbuf, recvcount, recvtype, root, rank, size);
    return built(s);
}

tdm_schedule *tdm_coll_scatterv(tdm_schedule *s, const void *sendbuf, const int sendcounts[],
                                const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, int root)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? vector(s, rank == root ? sendcounts : NULL, displs, sendtype, size) : NULL;
    if (b)
        scatter_flat(s, sendbuf, b, sendtype, recvbuf, recvcount, recvtype, root, rank, size);
    return built(s);
}

tdm_schedule *tdm_coll_gather(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                              MPI_Datatype recvtype, int root, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? uniform(s, recvcount, recvtype, size) : NULL;
    tdm_slot slot;
    MPI_Aint bytes =
        rank == root ? tdm_coll_bytes(recvcount, recvtype) : tdm_coll_bytes(sendcount, sendtype);
    if (b && shared(s, &alg, TDM_COLL_GATHER, bytes, bytes, size, &slot)) {
        slot_open(s, &slot, size);
        if (rank != root) {
            to_segment(s, segment(&slot, rank), sendbuf, sendcount, sendtype, root, size);
            slot_post(s, &slot, rank);
        } else {
            if (sendbuf != MPI_IN_PLACE)
                self_copy(s, sendbuf, sendcount, sendtype, at(recvbuf, b[root].offset), recvcount,
                          recvtype);
            slot_post(s, &slot, root);
            wait_flags(s, slot.posted, size, slot.use);
            for (int r = 0; r < size; r++)
                if (r != root)
                    from_segment(s, at(recvbuf, b[r].offset), recvcount, recvtype,
                                 segment(&slot, r));
        }
        slot_close(s, &slot, rank);
    } else if (b && alg == TDM_ALG_BINOMIAL)
        gather_binomial(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, rank,
                        size);
    else if (b)
        gather_flat(s, sendbuf, sendcount, sendtype, recvbuf, b, recvtype, root, rank, size);
    return built(s);
}

tdm_schedule *tdm_coll_gatherv(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int displs[], MPI_Datatype recvtype, int root)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? vector(s, rank == root ? recvcounts : NULL, displs, recvtype, size) : NULL;
    if (b)
        gather_flat(s, sendbuf, sendcount, sendtype, recvbuf, b, recvtype, root, rank, size);
    return built(s);
}

/* -------------------------------------------------------------- allgather */

tdm_schedule *tdm_coll_allgather(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? uniform(s, recvcount, recvtype, size) : NULL;
    if (b)
        allgather(s, sendbuf, sendcount, sendtype, recvbuf, b, recvtype, alg,
                  tdm_coll_bytes(recvcount, recvtype), rank, size);
    return built(s);
}

tdm_schedule *tdm_coll_allgatherv(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                  const int displs[], MPI_Datatype recvtype, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? vector(s, recvcounts, displs, recvtype, size) : NULL;
    long long total = 0; /* as the choice was made (hooks.c) */
    for (int i = 0; b && i < size; i++)
        total += recvcounts[i];
    if (b)
        allgather(s, sendbuf, sendcount, sendtype, recvbuf, b, recvtype, alg,
                  tdm_coll_bytes(total, recvtype) / size, rank, size);
    return built(s);
}

/* --------------------------------------------------------------- alltoall */

/* One message per pair of ranks: out[i] goes to rank i, in[i] comes from it;
   pairwise: in step k, to rank + k and from rank - k; linear: every step at
   once. */
static void alltoall_parts(tdm_schedule *s, const tdm_part *out, const tdm_part *in,
                           tdm_coll_alg alg, int rank, int size)
{
    for (int k = 0; k < size; k++) {
        int to = mod(rank + k, size), from = mod(rank - k, size);
        if (k > 0 && alg != TDM_ALG_LINEAR)
            tdm_schedule_round(s);
        if (k == 0) { /* this rank's own block */
            self_copy(s, out[to].buf, out[to].count, out[to].type, in[from].buf, in[from].count,
                      in[from].type);
            continue;
        }
        add(s, TDM_OP_SEND, out[to].buf, out[to].count, out[to].type, to);
        add(s, TDM_OP_RECV, in[from].buf, in[from].count, in[from].type, from);
    }
}

static tdm_part *parts(tdm_schedule *s, int n)
{
    return tdm_schedule_scratch(s, sizeof(tdm_part) * (size_t)n);
}

tdm_schedule *tdm_coll_alltoall(tdm_schedule *s, const void *sendbuf, MPI_Count sendcount,
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype recvtype, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_part *out = s ? parts(s, size) : NULL, *in = s ? parts(s, size) : NULL;
    if (!out || !in)
        return built(s);
    if (sendbuf == MPI_IN_PLACE) { /* send from a copy of what recvbuf holds */
        void *copy = scratch(s, (MPI_Count)size * recvcount, recvtype);
        local(s, TDM_OP_COPY, copy, recvbuf, (MPI_Count)size * recvcount, recvtype, MPI_OP_NULL);
        sendbuf = copy, sendcount = recvcount, sendtype = recvtype;
    }
    for (int i = 0; i < size; i++) {
        out[i] = (tdm_part){block(sendbuf, i, sendcount, sendtype), sendcount, sendtype};
        in[i] = (tdm_part){block(recvbuf, i, recvcount, recvtype), recvcount, recvtype};
    }
    alltoall_parts(s, out, in, alg, rank, size);
    return built(s);
}

tdm_schedule *tdm_coll_alltoallw(tdm_schedule *s, const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                 const int recvcounts[], const int rdispls[],
                                 const MPI_Datatype recvtypes[], int w_form, tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_part *out = s ? parts(s, size) : NULL, *in = s ? parts(s, size) : NULL;
    if (!out || !in)
        return built(s);
    for (int i = 0; i < size; i++) {
        /* the w form: a type per rank, displacements in bytes; an empty
           block's type is not significant (hooks.c) */
        MPI_Datatype rt = recvcounts[i] ? recvtypes[w_form ? i : 0] : MPI_BYTE;
        MPI_Aint ro = w_form ? 1 : extent_of(rt);
        in[i] = (tdm_part){at(recvbuf, rdispls[i] * ro), recvcounts[i], rt};
        if (sendbuf == MPI_IN_PLACE) { /* send from a copy of the block it replaces */
            out[i] = in[i];
            if (i != rank && (out[i].buf = scratch(s, in[i].count, rt)) != NULL)
                local(s, TDM_OP_COPY, out[i].buf, in[i].buf, in[i].count, rt, MPI_OP_NULL);
            continue;
        }
        MPI_Datatype st = sendcounts[i] ? sendtypes[w_form ? i : 0] : MPI_BYTE;
        MPI_Aint so = w_form ? 1 : extent_of(st);
        out[i] = (tdm_part){at(sendbuf, sdispls[i] * so), sendcounts[i], st};
    }
    alltoall_parts(s, out, in, alg, rank, size);
    return built(s);
}

/* ------------------------------------------------------------- reductions */

/* Through the slot: every rank writes its data; the root (root < 0: every
   rank) combines the segments in rank order, s0 op (s1 op (... op s(n-1))). */
static int reduce_shm(tdm_schedule *s, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype type, MPI_Op op, int root, int rank, int size)
{
    tdm_slot slot;
    if (!flat_type(type) || !slot_for(s, tdm_coll_bytes(count, type), &slot))
        return 0; /* the type is the same on every rank */
    slot_open(s, &slot, size);
    to_segment(s, segment(&slot, rank), sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type,
               root, size);
    slot_post(s, &slot, rank);
    if (root < 0 || rank == root) {
        wait_flags(s, slot.posted, size, slot.use);
        from_segment(s, recvbuf, count, type, segment(&slot, size - 1));
        for (int r = size - 2; r >= 0; r--)
            local(s, TDM_OP_REDUCE, recvbuf, segment(&slot, r), count, type, op);
    }
    slot_close(s, &slot, rank);
    return 1;
}

/* Binomial tree towards rank 0 in rank order, for any operation: rank v holds
   the combination of ranks [v, v + mask); when v + mask < size it receives
   that of [v + mask, v + 2 mask) and puts it after its own (the two buffers
   take turns). Rank 0 ends with the whole and hands it to the root. */
static void reduce_in_order(tdm_schedule *s, const void *input, void *recvbuf, MPI_Count count,
                            MPI_Datatype type, MPI_Op op, int root, int rank, int size)
{
    void *acc = scratch(s, count, type), *other = scratch(s, count, type);
    local(s, TDM_OP_COPY, acc, input, count, type, op);
    for (int mask = 1; mask < size; mask <<= 1) {
        tdm_schedule_round(s);
        if (rank & mask) {
            add(s, TDM_OP_SEND, acc, count, type, rank - mask);
            break;
        }
        if (rank + mask < size) {
            add(s, TDM_OP_RECV, other, count, type, rank + mask);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, other, acc, count, type, op); /* other = acc op other */
            void *swap = acc;
            acc = other;
            other = swap;
        }
    }
    if (rank == 0 && root == 0) {
        local(s, TDM_OP_COPY, recvbuf, acc, count, type, op);
    } else if (rank == 0) {
        tdm_schedule_round(s);
        add(s, TDM_OP_SEND, acc, count, type, root);
    } else if (rank == root) {
        tdm_schedule_round(s);
        add(s, TDM_OP_RECV, recvbuf, count, type, 0);
    }
}

/* Binomial tree towards the root: each rank combines what its children send,
   then sends the result to its parent. */
tdm_schedule *tdm_coll_reduce(tdm_schedule *s, const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype type, MPI_Op op, int commutative, int root)
{
    int size, rank;
    begin(s, &rank, &size);
    if (!s)
        return NULL;
    if (reduce_shm(s, sendbuf, recvbuf, count, type, op, root, rank, size))
        return built(s);
    if (!commutative) {
        const void *input = rank == root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
        reduce_in_order(s, input, recvbuf, count, type, op, root, rank, size);
        return built(s);
    }
    void *acc = rank == root ? recvbuf : scratch(s, count, type);
    void *tmp = scratch(s, count, type);
    if (!(rank == root && sendbuf == MPI_IN_PLACE))
        local(s, TDM_OP_COPY, acc, sendbuf, count, type, op);
    int v = mod(rank - root, size);
    for (int mask = 1; mask < size; mask <<= 1) {
        tdm_schedule_round(s);
        if (v & mask) {
            add(s, TDM_OP_SEND, acc, count, type, mod(v - mask + root, size));
            break;
        }
        if (v + mask < size) {
            add(s, TDM_OP_RECV, tmp, count, type, mod(v + mask + root, size));
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, acc, tmp, count, type, op);
        }
    }
    return built(s);
}

/* Recursive doubling over the largest power of two p <= n: the first 2(n-p)
   ranks pair up first (the even one hands its data to the odd one and waits
   for the result at the end). New ranks keep the order of the ranks whose
   data they hold, and at each step the lower partner's data goes first, so a
   non-commutative operation is applied in rank order.
   'input' (or NULL): this rank's data, not yet in 'recvbuf'. Then the op is
   commutative, and the rank's first exchange sends from 'input', receives
   the partner's data straight into 'recvbuf' and combines 'input' into it:
   the copy of 'input' into 'recvbuf' that would come first is spared. */
static void allreduce_doubling(tdm_schedule *s, const void *input, void *recvbuf, MPI_Count count,
                               MPI_Datatype type, MPI_Op op, int commutative, int rank, int size)
{
    void *tmp = NULL; /* the partner's data, once recvbuf holds this rank's */
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, newrank = rank - rem;
    if (rank < 2 * rem) {
        tdm_schedule_round(s);
        newrank = rank % 2 ? rank / 2 : -1;
        if (rank % 2 == 0) {
            add(s, TDM_OP_SEND, input ? (void *)input : recvbuf, count, type, rank + 1);
        } else if (input) {
            add(s, TDM_OP_RECV, recvbuf, count, type, rank - 1);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, input, count, type, op);
            input = NULL;
        } else {
            tmp = scratch(s, count, type);
            add(s, TDM_OP_RECV, tmp, count, type, rank - 1);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, tmp, count, type, op);
        }
    }
    for (int mask = 1; newrank >= 0 && mask < pof2; mask <<= 1) {
        int partner = newrank ^ mask;
        partner = partner < rem ? partner * 2 + 1 : partner + rem;
        tdm_schedule_round(s);
        if (input) {
            add(s, TDM_OP_SEND, (void *)input, count, type, partner);
            add(s, TDM_OP_RECV, recvbuf, count, type, partner);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, input, count, type, op);
            input = NULL;
            continue;
        }
        if (!tmp)
            tmp = scratch(s, count, type);
        add(s, TDM_OP_SEND, recvbuf, count, type, partner);
        add(s, TDM_OP_RECV, tmp, count, type, partner);
        tdm_schedule_round(s);
        if (commutative || (newrank & mask)) { /* the partner's data first */
            local(s, TDM_OP_REDUCE, recvbuf, tmp, count, type, op);
        } else {
            local(s, TDM_OP_REDUCE, tmp, recvbuf, count, type, op);
            local(s, TDM_OP_COPY, recvbuf, tmp, count, type, op);
        }
    }
    if (rank < 2 * rem) {
        tdm_schedule_round(s);
        add(s, rank % 2 ? TDM_OP_SEND : TDM_OP_RECV, recvbuf, count, type,
            rank % 2 ? rank - 1 : rank + 1);
    }
}

/* Pairwise reduce-scatter: in step k, send 'input''s block rank + k to that
   rank and combine into 'acc' (rank's own block) what rank - k sends. */
static void reduce_scatter_pairwise(tdm_schedule *s, const void *input, void *acc,
                                    const tdm_span *b, MPI_Datatype type, MPI_Op op, int rank,
                                    int size)
{
    void *tmp = scratch(s, largest(b, size), type);
    if (acc != at(input, b[rank].offset))
        local(s, TDM_OP_COPY, acc, at(input, b[rank].offset), b[rank].count, type, op);
    for (int k = 1; k < size; k++) {
        int to = mod(rank + k, size);
        tdm_schedule_round(s);
        if (k > 1)
            local(s, TDM_OP_REDUCE, acc, tmp, b[rank].count, type, op);
        add(s, TDM_OP_SEND, at(input, b[to].offset), b[to].count, type, to);
        add(s, TDM_OP_RECV, tmp, b[rank].count, type, mod(rank - k, size));
    }
    if (size > 1) {
        tdm_schedule_round(s);
        local(s, TDM_OP_REDUCE, acc, tmp, b[rank].count, type, op);
    }
}

/* Ring reduce-scatter in place in 'work': in step k, send block rank-1-k to
   the right and combine block rank-2-k from the left; after n-1 steps block
   'rank' holds every rank's contribution. */
static void reduce_scatter_ring(tdm_schedule *s, void *work, const tdm_span *b, MPI_Datatype type,
                                MPI_Op op, int rank, int size)
{
    void *tmp = scratch(s, largest(b, size), type);
    for (int k = 0; k < size - 1; k++) {
        const tdm_span *out = &b[mod(rank - 1 - k, size)]; /* received in step k - 1 */
        tdm_schedule_round(s);
        if (k > 0)
            local(s, TDM_OP_REDUCE, at(work, out->offset), tmp, out->count, type, op);
        add(s, TDM_OP_SEND, at(work, out->offset), out->count, type, mod(rank + 1, size));
        add(s, TDM_OP_RECV, tmp, b[mod(rank - 2 - k, size)].count, type, mod(rank - 1, size));
    }
    if (size > 1) {
        tdm_schedule_round(s);
        local(s, TDM_OP_REDUCE, at(work, b[rank].offset), tmp, b[rank].count, type, op);
    }
}

tdm_schedule *tdm_coll_allreduce(tdm_schedule *s, const void *sendbuf, void *recvbuf,
                                 MPI_Count count, MPI_Datatype type, MPI_Op op, int commutative,
                                 tdm_coll_alg alg, tdm_coll_alg allgather_alg)
{
    int size, rank;
    begin(s, &rank, &size);
    if (!s)
        return NULL;
    long long bytes = tdm_coll_bytes(count, type);
    if (alg == TDM_ALG_SHARED && reduce_shm(s, sendbuf, recvbuf, count, type, op, -1, rank, size))
        return built(s);
    if (alg == TDM_ALG_SHARED) /* the slots cannot serve: as the choice was made (hooks.c) */
        alg = tdm_coll_default_messages(TDM_COLL_ALLREDUCE, bytes, size);
    if (allgather_alg == TDM_ALG_SHARED)
        allgather_alg = tdm_coll_default_messages(TDM_COLL_ALLGATHER, bytes / size, size);
    int doubling = alg == TDM_ALG_RECURSIVE_DOUBLING || !commutative;
    tdm_span *b = doubling ? NULL : split(s, count, size, type);
    /* The input where it is, for the algorithms that read it there rather
       than from a copy in recvbuf: recursive doubling with a commutative op,
       and the pairwise reduce-scatter (which copies only its own block). */
    const void *input = NULL;
    if (sendbuf != MPI_IN_PLACE && size > 1 && (b ? alg != TDM_ALG_RING : commutative))
        input = sendbuf;
    if (sendbuf != MPI_IN_PLACE && !input)
        local(s, TDM_OP_COPY, recvbuf, sendbuf, count, type, op);
    if (!b) {
        allreduce_doubling(s, input, recvbuf, count, type, op, commutative, rank, size);
    } else if (alg == TDM_ALG_RING) {
        reduce_scatter_ring(s, recvbuf, b, type, op, rank, size);
        allgather_blocks(s, recvbuf, b, type, 0, TDM_ALG_RING, rank, size);
    } else {
        reduce_scatter_pairwise(s, input ? input : recvbuf, at(recvbuf, b[rank].offset), b, type,
                                op, rank, size);
        allgather_blocks(s, recvbuf, b, type, 0, allgather_alg, rank, size);
    }
    return built(s);
}

tdm_schedule *tdm_coll_reduce_scatter(tdm_schedule *s, const void *sendbuf, void *recvbuf,
                                      const int recvcounts[], MPI_Count recvcount,
                                      MPI_Datatype type, MPI_Op op, int commutative,
                                      tdm_coll_alg alg)
{
    int size, rank;
    begin(s, &rank, &size);
    tdm_span *b = s ? spans(s, size) : NULL;
    if (!b)
        return built(s);
    MPI_Count total = 0;
    for (int i = 0; i < size; i++) {
        b[i] = (tdm_span){recvcounts ? recvcounts[i] : recvcount, total * extent_of(type)};
        total += b[i].count;
    }
    const void *input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (!commutative) { /* the whole in rank order at rank 0, then its blocks */
        void *whole = rank == 0 ? scratch(s, total, type) : NULL;
        reduce_in_order(s, input, whole, total, type, op, 0, rank, size);
        tdm_schedule_round(s);
        scatter_flat(s, whole, b, type, recvbuf, b[rank].count, type, 0, rank, size);
    } else if (alg == TDM_ALG_RING) {
        void *work = scratch(s, total, type);
        local(s, TDM_OP_COPY, work, input, total, type, op);
        reduce_scatter_ring(s, work, b, type, op, rank, size);
        tdm_schedule_round(s);
        local(s, TDM_OP_COPY, recvbuf, at(work, b[rank].offset), b[rank].count, type, op);
    } else if (sendbuf == MPI_IN_PLACE) { /* recvbuf is read until the end */
        void *acc = scratch(s, b[rank].count, type);
        reduce_scatter_pairwise(s, input, acc, b, type, op, rank, size);
        tdm_schedule_round(s);
        local(s, TDM_OP_COPY, recvbuf, acc, b[rank].count, type, op);
    } else {
        reduce_scatter_pairwise(s, input, recvbuf, b, type, op, rank, size);
    }
    return built(s);
}

/* ------------------------------------------------------ prefix reductions */

/* A chain: rank i combines what rank i-1 passes with its own data, in rank
   order (recvbuf = received op own), so any operation works. */
tdm_schedule *tdm_coll_scan(tdm_schedule *s, const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype type, MPI_Op op, int exclusive)
{
    int size, rank;
    begin(s, &rank, &size);
    if (!s)
        return NULL;
    void *out = recvbuf; /* what goes on to rank + 1 */
    int in_place = sendbuf == MPI_IN_PLACE;
    if (!exclusive) {
        if (!in_place)
            local(s, TDM_OP_COPY, recvbuf, sendbuf, count, type, op);
        if (rank > 0) {
            void *tmp = scratch(s, count, type);
            add(s, TDM_OP_RECV, tmp, count, type, rank - 1);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, tmp, count, type, op);
        }
    } else if (rank == 0) {
        out = in_place ? recvbuf : (void *)sendbuf; /* rank 0's result is undefined */
    } else {
        if (rank < size - 1) { /* out: this rank's data, then the prefix before it */
            out = scratch(s, count, type);
            local(s, TDM_OP_COPY, out, in_place ? recvbuf : sendbuf, count, type, op);
        }
        add(s, TDM_OP_RECV, recvbuf, count, type, rank - 1);
        tdm_schedule_round(s);
        if (rank < size - 1)
            local(s, TDM_OP_REDUCE, out, recvbuf, count, type, op);
    }
    if (rank < size - 1)
        add(s, TDM_OP_SEND, out, count, type, rank + 1);
    return built(s);
}
