/*
 * The collectives Tandem runs itself (TANDEM_COLL=tandem), each built as a
 * schedule of rounds (schedule.h):
 *
 *   MPI_Ibarrier    dissemination: in round k, send to rank + 2^k and
 *                   receive from rank - 2^k; ceil(log2 n) rounds
 *   MPI_Ibcast      binomial tree (minimum spanning tree) rooted at 'root':
 *                   receive from the parent, then send to every child
 *   MPI_Iallreduce  recursive doubling (non-powers of two: the first ranks
 *                   pair up before and after)
 *   MPI_Ireduce     binomial tree towards the root
 *   MPI_Igather(v), MPI_Iscatter(v)   flat trees
 *   MPI_Iscan, MPI_Iexscan   a chain in rank order (any operation)
 *   MPI_Iallgather  ring
 *   MPI_Ialltoall   pairwise exchange
 *
 * Reductions take commutative operations only (Tandem combines in its own
 * order); the large-count (_c) forms stay with the MPI library.
 * A call Tandem does not handle -- TANDEM_COLL=native, an inter-communicator,
 * arguments the MPI library must reject (it then raises the error itself) --
 * goes to the MPI library unchanged.
 */
#include <limits.h>

#include "coll/schedule.h"
#include "wrappers/gen_hooks.h"

/* Arguments the MPI library would accept, for a call Tandem takes over. */
static int valid(MPI_Comm comm, MPI_Count count, MPI_Datatype type, int root, int *size)
{
    int type_size = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, size) != MPI_SUCCESS)
        return 0;
    if (count < 0 || count > INT_MAX || root < 0 || root >= *size)
        return 0;
    return type == MPI_DATATYPE_NULL ? count == 0 : PMPI_Type_size(type, &type_size) == MPI_SUCCESS;
}

static int add(tdm_schedule *s, tdm_op_kind kind, void *buf, MPI_Count count, MPI_Datatype type,
               int peer)
{
    tdm_op op = {kind, buf, NULL, count, type, peer, MPI_OP_NULL};
    return tdm_schedule_add(s, op);
}

int tdm_hook_Ibarrier(int lang, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rank;
    tdm_schedule *s;
    if (!tdm_coll_on || !valid(comm, 0, MPI_BYTE, 0, &size) || !(s = tdm_schedule_new(comm)))
        return PMPI_Ibarrier(comm, request);
    PMPI_Comm_rank(comm, &rank);
    for (int distance = 1; distance < size; distance *= 2) {
        if (distance > 1)
            tdm_schedule_round(s);
        add(s, TDM_OP_SEND, NULL, 0, MPI_BYTE, (rank + distance) % size);
        add(s, TDM_OP_RECV, NULL, 0, MPI_BYTE, (rank - distance + size) % size);
    }
    return tdm_schedule_start(s, request);
}

/* Binomial tree over the ranks relative to the root: the parent of relative
   rank v clears its lowest set bit; its children set each lower bit. */
static int ibcast(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    int v = (rank - root + size) % size, mask = 1;
    while (mask < size && !(v & mask))
        mask <<= 1;
    if (v != 0) {
        add(s, TDM_OP_RECV, buffer, count, datatype, ((v - mask) + root) % size);
        tdm_schedule_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < size)
            add(s, TDM_OP_SEND, buffer, count, datatype, (v + mask + root) % size);
    return tdm_schedule_start(s, request);
}

int tdm_hook_Ibcast(int lang, void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || !valid(comm, count, datatype, root, &size) ||
        (rc = ibcast(buffer, count, datatype, root, comm, request)) < 0)
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    return rc;
}

#if MPI_VERSION >= 4
int tdm_hook_Ibcast_c(int lang, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                      MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || !valid(comm, count, datatype, root, &size) ||
        (rc = ibcast(buffer, count, datatype, root, comm, request)) < 0)
        return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
    return rc;
}
#endif

/* ------------------------------------------------------------ helpers */

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

/* A scratch buffer for 'count' elements of 'type', freed with the schedule. */
static void *scratch(tdm_schedule *s, MPI_Count count, MPI_Datatype type)
{
    MPI_Aint true_lb = 0, true_extent = 0;
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint bytes = count > 0 ? true_extent + (count - 1) * extent_of(type) : 1;
    char *p = tdm_schedule_scratch(s, (size_t)bytes);
    return p ? p - true_lb : NULL;
}

static int local(tdm_schedule *s, tdm_op_kind kind, void *dst, const void *src, MPI_Count count,
                 MPI_Datatype type, MPI_Op op)
{
    tdm_op o = {kind, dst, src, count, type, 0, op};
    return tdm_schedule_add(s, o);
}

/* Reductions: Tandem combines in its own order, so it takes commutative
   operations only (every predefined one); the others stay with the MPI. */
static int commutative(MPI_Op op)
{
    int yes = 0;
    return op != MPI_OP_NULL && PMPI_Op_commutative(op, &yes) == MPI_SUCCESS && yes;
}

/* --------------------------------------------------------- reductions */

/* Recursive doubling over the largest power of two p <= n: the first 2(n-p)
   ranks pair up first (the even one hands its data to the odd one and waits
   for the result at the end). */
static int iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    void *tmp = scratch(s, count, type);
    if (sendbuf != MPI_IN_PLACE)
        local(s, TDM_OP_COPY, recvbuf, sendbuf, count, type, op);
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, newrank;
    if (rank < 2 * rem) {
        tdm_schedule_round(s);
        if (rank % 2 == 0) {
            add(s, TDM_OP_SEND, recvbuf, count, type, rank + 1);
            newrank = -1;
        } else {
            add(s, TDM_OP_RECV, tmp, count, type, rank - 1);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, tmp, count, type, op);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int partner = newrank ^ mask;
            partner = partner < rem ? partner * 2 + 1 : partner + rem;
            tdm_schedule_round(s);
            add(s, TDM_OP_SEND, recvbuf, count, type, partner);
            add(s, TDM_OP_RECV, tmp, count, type, partner);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, tmp, count, type, op);
        }
    }
    if (rank < 2 * rem) {
        tdm_schedule_round(s);
        if (rank % 2)
            add(s, TDM_OP_SEND, recvbuf, count, type, rank - 1);
        else
            add(s, TDM_OP_RECV, recvbuf, count, type, rank + 1);
    }
    return tdm_schedule_start(s, request);
}

/* Binomial tree towards the root: each rank combines what its children send,
   then sends the result to its parent. */
static int ireduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    void *acc = rank == root ? recvbuf : scratch(s, count, type);
    void *tmp = scratch(s, count, type);
    if (!(rank == root && sendbuf == MPI_IN_PLACE))
        local(s, TDM_OP_COPY, acc, sendbuf, count, type, op);
    int v = (rank - root + size) % size;
    for (int mask = 1; mask < size; mask <<= 1) {
        tdm_schedule_round(s);
        if (v & mask) {
            add(s, TDM_OP_SEND, acc, count, type, (v - mask + root) % size);
            break;
        }
        if (v + mask < size) {
            add(s, TDM_OP_RECV, tmp, count, type, (v + mask + root) % size);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, acc, tmp, count, type, op);
        }
    }
    return tdm_schedule_start(s, request);
}

/* ------------------------------------------ gather, scatter, all-to-all */

/* Flat trees: the root receives from (or sends to) every rank at once. */
static int igather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    if (rank != root) {
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, root);
        return tdm_schedule_start(s, request);
    }
    for (int i = 0; i < size; i++)
        if (i != rank)
            add(s, TDM_OP_RECV, block(recvbuf, i, recvcount, recvtype), recvcount, recvtype, i);
    if (sendbuf != MPI_IN_PLACE) { /* the root's own block, through itself */
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, rank);
        add(s, TDM_OP_RECV, block(recvbuf, rank, recvcount, recvtype), recvcount, recvtype, rank);
    }
    return tdm_schedule_start(s, request);
}

static int iscatter(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    if (rank != root) {
        add(s, TDM_OP_RECV, recvbuf, recvcount, recvtype, root);
        return tdm_schedule_start(s, request);
    }
    for (int i = 0; i < size; i++)
        if (i != rank)
            add(s, TDM_OP_SEND, block(sendbuf, i, sendcount, sendtype), sendcount, sendtype, i);
    if (recvbuf != MPI_IN_PLACE) {
        add(s, TDM_OP_SEND, block(sendbuf, rank, sendcount, sendtype), sendcount, sendtype, rank);
        add(s, TDM_OP_RECV, recvbuf, recvcount, recvtype, rank);
    }
    return tdm_schedule_start(s, request);
}

/* Ring: in round k every rank passes on the block it received in round k-1. */
static int iallgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    if (sendbuf != MPI_IN_PLACE) {
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, rank);
        add(s, TDM_OP_RECV, block(recvbuf, rank, recvcount, recvtype), recvcount, recvtype, rank);
    }
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int k = 0; k < size - 1; k++) {
        int out = (rank - k + size) % size, in = (rank - k - 1 + size) % size;
        tdm_schedule_round(s);
        add(s, TDM_OP_SEND, block(recvbuf, out, recvcount, recvtype), recvcount, recvtype, right);
        add(s, TDM_OP_RECV, block(recvbuf, in, recvcount, recvtype), recvcount, recvtype, left);
    }
    return tdm_schedule_start(s, request);
}

/* Pairwise exchange: in round k, send to rank + k and receive from rank - k. */
static int ialltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    for (int k = 0; k < size; k++) {
        int to = (rank + k) % size, from = (rank - k + size) % size;
        if (k > 0)
            tdm_schedule_round(s);
        add(s, TDM_OP_SEND, block(sendbuf, to, sendcount, sendtype), sendcount, sendtype, to);
        add(s, TDM_OP_RECV, block(recvbuf, from, recvcount, recvtype), recvcount, recvtype, from);
    }
    return tdm_schedule_start(s, request);
}

/* ----------------------------------------------------- prefix reductions */

/* A chain: rank i combines what rank i-1 passes with its own data, in rank
   order (recvbuf = received op own), so any operation works. */
static int iscan(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request, int exclusive)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    void *out = recvbuf; /* what goes on to rank + 1 */
    if (!exclusive) {
        local(s, TDM_OP_COPY, recvbuf, sendbuf, count, type, op);
        if (rank > 0) {
            void *tmp = scratch(s, count, type);
            add(s, TDM_OP_RECV, tmp, count, type, rank - 1);
            tdm_schedule_round(s);
            local(s, TDM_OP_REDUCE, recvbuf, tmp, count, type, op);
        }
    } else if (rank == 0) {
        out = (void *)sendbuf;
    } else {
        add(s, TDM_OP_RECV, recvbuf, count, type, rank - 1);
        tdm_schedule_round(s);
        if (rank < size - 1) {
            out = scratch(s, count, type);
            local(s, TDM_OP_COPY, out, sendbuf, count, type, op);
            local(s, TDM_OP_REDUCE, out, recvbuf, count, type, op);
        }
    }
    if (rank < size - 1)
        add(s, TDM_OP_SEND, out, count, type, rank + 1);
    return tdm_schedule_start(s, request);
}

/* -------------------------------------------------- vector gather, scatter */

static int igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    if (rank != root) {
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, root);
        return tdm_schedule_start(s, request);
    }
    for (int i = 0; i < size; i++)
        if (i != rank || sendbuf != MPI_IN_PLACE)
            add(s, TDM_OP_RECV, block(recvbuf, displs[i], 1, recvtype), recvcounts[i], recvtype, i);
    if (sendbuf != MPI_IN_PLACE)
        add(s, TDM_OP_SEND, (void *)sendbuf, sendcount, sendtype, rank);
    return tdm_schedule_start(s, request);
}

static int iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Request *request)
{
    int size, rank;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tdm_schedule *s = tdm_schedule_new(comm);
    if (!s)
        return -1;
    if (rank != root) {
        add(s, TDM_OP_RECV, recvbuf, recvcount, recvtype, root);
        return tdm_schedule_start(s, request);
    }
    for (int i = 0; i < size; i++)
        if (i != rank || recvbuf != MPI_IN_PLACE)
            add(s, TDM_OP_SEND, block(sendbuf, displs[i], 1, sendtype), sendcounts[i], sendtype, i);
    if (recvbuf != MPI_IN_PLACE)
        add(s, TDM_OP_RECV, recvbuf, recvcount, recvtype, rank);
    return tdm_schedule_start(s, request);
}

/* ---------------------------------------------------------------- hooks */

/* Whether this rank's significant arguments are ones the MPI would accept
   (else the call goes to the MPI, which raises the error). */
static int rank_of(MPI_Comm comm)
{
    int rank = -1;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static int valid_rooted(MPI_Comm comm, int root, MPI_Count mycount, MPI_Datatype mytype,
                        MPI_Count rootcount, MPI_Datatype roottype)
{
    int size;
    if (!valid(comm, mycount, mytype, 0, &size) || root < 0 || root >= size)
        return 0;
    return rank_of(comm) != root || valid(comm, rootcount, roottype, 0, &size);
}

int tdm_hook_Iallreduce(int lang, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || !valid(comm, count, datatype, 0, &size) || !commutative(op) ||
        (rc = iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request)) < 0)
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    return rc;
}

int tdm_hook_Ireduce(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || !valid(comm, count, datatype, root, &size) || !commutative(op) ||
        (rc = ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request)) < 0)
        return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    return rc;
}

int tdm_hook_Igather(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    (void)lang;
    int rc, in_place = sendbuf == MPI_IN_PLACE;
    if (!tdm_coll_on ||
        !valid_rooted(comm, root, in_place ? 0 : sendcount, in_place ? MPI_BYTE : sendtype,
                      recvcount, recvtype) ||
        (rc = igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request)) < 0)
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request);
    return rc;
}

int tdm_hook_Iscatter(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    (void)lang;
    int rc, in_place = recvbuf == MPI_IN_PLACE;
    if (!tdm_coll_on ||
        !valid_rooted(comm, root, in_place ? 0 : recvcount, in_place ? MPI_BYTE : recvtype,
                      sendcount, sendtype) ||
        (rc = iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request)) < 0)
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             request);
    return rc;
}

int tdm_hook_Iallgather(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request *request)
{
    (void)lang;
    int size, rc, in_place = sendbuf == MPI_IN_PLACE;
    if (!tdm_coll_on ||
        !valid(comm, in_place ? 0 : sendcount, in_place ? MPI_BYTE : sendtype, 0, &size) ||
        !valid(comm, recvcount, recvtype, 0, &size) ||
        (rc = iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         request)) < 0)
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
    return rc;
}

int tdm_hook_Ialltoall(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || sendbuf == MPI_IN_PLACE || !valid(comm, sendcount, sendtype, 0, &size) ||
        !valid(comm, recvcount, recvtype, 0, &size) ||
        (rc = ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        request)) < 0)
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
    return rc;
}

int tdm_hook_Iscan(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || sendbuf == MPI_IN_PLACE || op == MPI_OP_NULL ||
        !valid(comm, count, datatype, 0, &size) ||
        (rc = iscan(sendbuf, recvbuf, count, datatype, op, comm, request, 0)) < 0)
        return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    return rc;
}

int tdm_hook_Iexscan(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc;
    if (!tdm_coll_on || sendbuf == MPI_IN_PLACE || op == MPI_OP_NULL ||
        !valid(comm, count, datatype, 0, &size) ||
        (rc = iscan(sendbuf, recvbuf, count, datatype, op, comm, request, 1)) < 0)
        return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    return rc;
}

/* The vector forms: this rank's significant counts must be valid (the root
   checks every peer's). */
static int valid_counts(MPI_Comm comm, const int counts[], const int displs[], MPI_Datatype type)
{
    int size;
    if (!counts || !displs || !valid(comm, 0, type, 0, &size))
        return 0;
    for (int i = 0; i < size; i++)
        if (counts[i] < 0)
            return 0;
    return 1;
}

int tdm_hook_Igatherv(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc, in_place = sendbuf == MPI_IN_PLACE;
    if (!tdm_coll_on || !valid(comm, 0, MPI_BYTE, root, &size) ||
        !valid(comm, in_place ? 0 : sendcount, in_place ? MPI_BYTE : sendtype, 0, &size) ||
        (rank_of(comm) == root && !valid_counts(comm, recvcounts, displs, recvtype)) ||
        (rc = igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm, request)) < 0)
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             root, comm, request);
    return rc;
}

int tdm_hook_Iscatterv(int lang, const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    int size, rc, in_place = recvbuf == MPI_IN_PLACE;
    if (!tdm_coll_on || !valid(comm, 0, MPI_BYTE, root, &size) ||
        !valid(comm, in_place ? 0 : recvcount, in_place ? MPI_BYTE : recvtype, 0, &size) ||
        (rank_of(comm) == root && !valid_counts(comm, sendcounts, displs, sendtype)) ||
        (rc = iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, request)) < 0)
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                              root, comm, request);
    return rc;
}

#if MPI_VERSION >= 4
/* The large-count forms stay with the MPI library for now. */
int tdm_hook_Iscan_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    return PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}

int tdm_hook_Iexscan_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    return PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}

int tdm_hook_Iallreduce_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}

int tdm_hook_Ireduce_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    (void)lang;
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int tdm_hook_Igather_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          request);
}

int tdm_hook_Iscatter_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Request *request)
{
    (void)lang;
    return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                           request);
}

int tdm_hook_Iallgather_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request)
{
    (void)lang;
    return PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request);
}

int tdm_hook_Ialltoall_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *request)
{
    (void)lang;
    return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request);
}
#endif
