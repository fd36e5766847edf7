/*
 * Every collective, blocking and nonblocking, with nonsense in every argument
 * that is not significant at the calling rank: NULL buffers, count -1,
 * MPI_DATATYPE_NULL, NULL count, displacement and type arrays. Which
 * arguments those are comes from the table Tandem's interception reads
 * (src/coll/significance.h, MPI-4.0 chapter 6), for each root, with and
 * without MPI_IN_PLACE. A second pass gives every significant side zero
 * elements and NULL buffers. The sides mix types of one signature (a strided
 * vector on one side, contiguous ints on the other), so that the decision to
 * run a call may not rest on counts that differ between ranks.
 *
 * Printed: a checksum of each rank's result per call; each result is also
 * checked against what it must be.
 */
#include "coll/significance.h"
#include "testlib.h"

enum { N = 3 }; /* ints per rank's block */

static int rank, size;
static MPI_Datatype vec; /* N ints, every other one: 1 x vec ~ N x MPI_INT */

static int v(int r, int i)
{
    return 100 * r + i + 1;
}

/* What rank 'from' sends rank 'to' in an all-to-all. */
static int w(int from, int to, int i)
{
    return 10000 * from + 100 * to + i + 1;
}

/* The arguments of one call. 'count' and 'type' are those of bcast and the
   reductions, significant everywhere. */
typedef struct {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    const int *sendcounts, *sdispls;
    const MPI_Datatype *sendtypes;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    const int *recvcounts, *rdispls;
    const MPI_Datatype *recvtypes;
    int count;
    MPI_Datatype type;
    int root;
} args;

/* Nonsense wherever the table says this rank does not read. */
static void spoil(tdm_coll_sig_index which, args *a)
{
    unsigned reads = tdm_coll_reads(which, rank, a->root, a->sendbuf, a->recvbuf);
    if (!(reads & TDM_READS_SEND)) {
        if (a->sendbuf != MPI_IN_PLACE)
            a->sendbuf = NULL;
        a->sendcount = -1;
        a->sendtype = MPI_DATATYPE_NULL;
        a->sendcounts = a->sdispls = NULL;
        a->sendtypes = NULL;
    }
    if (!(reads & TDM_READS_RECV)) {
        /* MPICH 4.0.2 rejects a NULL recvbuf at rank 0 of MPI_Exscan, where
           it is not significant: a buffer nobody reads instead */
        static int unread[2 * N * 8];
        if (a->recvbuf != MPI_IN_PLACE)
            a->recvbuf = which == TDM_SIG_EXSCAN ? unread : NULL;
        a->recvcount = -1;
        a->recvtype = MPI_DATATYPE_NULL;
        a->recvcounts = a->rdispls = NULL;
        a->recvtypes = NULL;
    }
}

static int call(tdm_coll_sig_index which, int nonblocking, const args *a)
{
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Request request = MPI_REQUEST_NULL, *r = nonblocking ? &request : NULL;
    int rc = MPI_ERR_OTHER;
#define FORM(Iname, Name, ...) (r ? MPI_##Iname(__VA_ARGS__, c, r) : MPI_##Name(__VA_ARGS__, c))
    switch (which) {
    case TDM_SIG_BARRIER: rc = r ? MPI_Ibarrier(c, r) : MPI_Barrier(c); break;
    case TDM_SIG_BCAST:
        rc = FORM(Ibcast, Bcast, (void *)a->sendbuf, a->count, a->type, a->root);
        break;
    case TDM_SIG_GATHER:
        rc = FORM(Igather, Gather, a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                  a->recvtype, a->root);
        break;
    case TDM_SIG_GATHERV:
        rc = FORM(Igatherv, Gatherv, a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                  a->recvcounts, a->rdispls, a->recvtype, a->root);
        break;
    case TDM_SIG_SCATTER:
        rc = FORM(Iscatter, Scatter, a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                  a->recvcount, a->recvtype, a->root);
        break;
    case TDM_SIG_SCATTERV:
        rc = FORM(Iscatterv, Scatterv, a->sendbuf, a->sendcounts, a->sdispls, a->sendtype,
                  a->recvbuf, a->recvcount, a->recvtype, a->root);
        break;
    case TDM_SIG_ALLGATHER:
        rc = FORM(Iallgather, Allgather, a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                  a->recvcount, a->recvtype);
        break;
    case TDM_SIG_ALLGATHERV:
        rc = FORM(Iallgatherv, Allgatherv, a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                  a->recvcounts, a->rdispls, a->recvtype);
        break;
    case TDM_SIG_ALLTOALL:
        rc = FORM(Ialltoall, Alltoall, a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                  a->recvcount, a->recvtype);
        break;
    case TDM_SIG_ALLTOALLV:
        rc = FORM(Ialltoallv, Alltoallv, a->sendbuf, a->sendcounts, a->sdispls, a->sendtype,
                  a->recvbuf, a->recvcounts, a->rdispls, a->recvtype);
        break;
    case TDM_SIG_ALLTOALLW:
        rc = FORM(Ialltoallw, Alltoallw, a->sendbuf, a->sendcounts, a->sdispls, a->sendtypes,
                  a->recvbuf, a->recvcounts, a->rdispls, a->recvtypes);
        break;
    case TDM_SIG_REDUCE:
        rc = FORM(Ireduce, Reduce, a->sendbuf, a->recvbuf, a->count, a->type, MPI_SUM, a->root);
        break;
    case TDM_SIG_ALLREDUCE:
        rc = FORM(Iallreduce, Allreduce, a->sendbuf, a->recvbuf, a->count, a->type, MPI_SUM);
        break;
    case TDM_SIG_REDUCE_SCATTER:
        rc = FORM(Ireduce_scatter, Reduce_scatter, a->sendbuf, a->recvbuf, a->recvcounts, a->type,
                  MPI_SUM);
        break;
    case TDM_SIG_REDUCE_SCATTER_BLOCK:
        rc = FORM(Ireduce_scatter_block, Reduce_scatter_block, a->sendbuf, a->recvbuf, a->count,
                  a->type, MPI_SUM);
        break;
    case TDM_SIG_SCAN:
        rc = FORM(Iscan, Scan, a->sendbuf, a->recvbuf, a->count, a->type, MPI_SUM);
        break;
    case TDM_SIG_EXSCAN:
        rc = FORM(Iexscan, Exscan, a->sendbuf, a->recvbuf, a->count, a->type, MPI_SUM);
        break;
    case TDM_SIG_COLLECTIVES: break;
    }
#undef FORM
    if (rc == MPI_SUCCESS && r)
        rc = MPI_Wait(r, MPI_STATUS_IGNORE);
    return rc;
}

/* Buffers, big enough for any call: 'in' for what a rank gives, 'out' for
   what it gets; the arrays of the v and w forms. */
static int in[2 * N * 8], out[2 * N * 8];
static int counts[8], displs[8];
static MPI_Datatype ints[8], vecs[8];

/* Whether this rank sees the result of 'which', and what int i of 'out'
   must be then. */
static int expected(tdm_coll_sig_index which, int root, int in_place, int i, int *value)
{
    int block = i / N, k = i % N, sum = 0;
    switch (which) {
    case TDM_SIG_BCAST: *value = i < N ? v(root, i) : -1; return rank != root;
    case TDM_SIG_GATHER:
    case TDM_SIG_GATHERV: *value = i < N * size ? v(block, k) : -1; return rank == root;
    case TDM_SIG_SCATTER:
    case TDM_SIG_SCATTERV:
        if (rank == root && in_place)
            return 0; /* the root's block stays in its send buffer */
        *value = i < 2 * N && i % 2 == 0 ? v(rank, i / 2) : -1;
        return 1;
    case TDM_SIG_ALLGATHER:
    case TDM_SIG_ALLGATHERV: *value = i < N * size ? v(block, k) : -1; return 1;
    case TDM_SIG_ALLTOALL:
    case TDM_SIG_ALLTOALLV:
    case TDM_SIG_ALLTOALLW: *value = i < N * size ? w(block, rank, k) : -1; return 1;
    case TDM_SIG_REDUCE:
    case TDM_SIG_ALLREDUCE:
    case TDM_SIG_SCAN:
    case TDM_SIG_EXSCAN: {
        int last = which == TDM_SIG_SCAN ? rank : which == TDM_SIG_EXSCAN ? rank - 1 : size - 1;
        for (int r = 0; r <= last; r++)
            sum += v(r, k);
        *value = i < N ? sum : -1;
        if (which == TDM_SIG_EXSCAN && rank == 0)
            return 0; /* undefined */
        return which != TDM_SIG_REDUCE || rank == root;
    }
    case TDM_SIG_REDUCE_SCATTER:
    case TDM_SIG_REDUCE_SCATTER_BLOCK: /* block 'rank' of the sums, first in the buffer */
        for (int r = 0; r < size; r++)
            sum += w(r, 0, rank * N + i);
        *value = i < N ? sum : in_place && i < N * size ? w(rank, 0, i) : -1;
        return 1;
    default: return 0;
    }
}

/* The MPI name of the call: MPI_Gather or MPI_Igather. */
static const char *name_of(tdm_coll_sig_index which, int nonblocking)
{
    static char name[64];
    const char *blocking = tdm_coll_signatures[which].name;
    if (!nonblocking)
        return blocking;
    snprintf(name, sizeof name, "MPI_I%c%s", blocking[4] - 'A' + 'a', blocking + 5);
    return name;
}

/* Set up 'which' for this rank (root, MPI_IN_PLACE where 'in_place'), call
   it with nonsense where nothing is significant, and check the result. */
static void run(tdm_coll_sig_index which, int root, int in_place, int nonblocking)
{
    args a = {.sendbuf = in,
              .recvbuf = out,
              .count = N,
              .type = MPI_INT,
              .root = root,
              .sendcounts = counts,
              .sdispls = displs,
              .recvcounts = counts,
              .rdispls = displs};
    for (int i = 0; i < 2 * N * 8; i++)
        in[i] = out[i] = -1;
    for (int r = 0; r < size; r++) {
        counts[r] = N;
        displs[r] = N * r;
        ints[r] = MPI_INT;
        vecs[r] = vec;
    }
    switch (which) {
    case TDM_SIG_BARRIER: break;
    case TDM_SIG_BCAST: /* the root gives a vector, the others get ints */
        for (int i = 0; i < N; i++)
            out[rank == root ? 2 * i : i] = rank == root ? v(root, i) : -1;
        if (rank == root)
            a.count = 1, a.type = vec;
        a.sendbuf = out; /* bcast's buffer is its send side (significance.h) */
        break;
    case TDM_SIG_GATHER:
    case TDM_SIG_GATHERV: /* a vector each, ints at the root */
        for (int i = 0; i < N; i++) {
            in[2 * i] = v(rank, i);
            if (in_place && rank == root)
                out[root * N + i] = v(root, i);
        }
        a.sendcount = 1, a.sendtype = vec, a.recvcount = N, a.recvtype = MPI_INT;
        if (in_place && rank == root)
            a.sendbuf = MPI_IN_PLACE;
        break;
    case TDM_SIG_SCATTER:
    case TDM_SIG_SCATTERV: /* ints from the root, a vector each */
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++)
                in[r * N + i] = v(r, i);
        a.sendcount = N, a.sendtype = MPI_INT, a.recvcount = 1, a.recvtype = vec;
        if (in_place && rank == root)
            a.recvbuf = MPI_IN_PLACE;
        break;
    case TDM_SIG_ALLGATHER:
    case TDM_SIG_ALLGATHERV:
        for (int i = 0; i < N; i++) {
            in[2 * i] = v(rank, i);
            if (in_place)
                out[rank * N + i] = v(rank, i);
        }
        a.sendcount = 1, a.sendtype = vec, a.recvcount = N, a.recvtype = MPI_INT;
        if (in_place)
            a.sendbuf = MPI_IN_PLACE;
        break;
    case TDM_SIG_ALLTOALL:
    case TDM_SIG_ALLTOALLV:
    case TDM_SIG_ALLTOALLW: /* a vector to each rank (ints in place) */
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++) {
                in[2 * N * r + 2 * i] = w(rank, r, i);
                if (in_place)
                    out[N * r + i] = w(rank, r, i);
            }
        a.sendcount = 1, a.sendtype = vec, a.recvcount = N, a.recvtype = MPI_INT;
        a.sendtypes = vecs, a.recvtypes = ints;
        if (which != TDM_SIG_ALLTOALL) { /* vectors of 2N ints each */
            static int ones[8], vdispls[8], wdispls[8], rdispls[8];
            for (int r = 0; r < size; r++) {
                ones[r] = 1;
                vdispls[r] = r;
                wdispls[r] = (int)(2 * N * r * sizeof(int));
                rdispls[r] = which == TDM_SIG_ALLTOALLW ? (int)(N * r * sizeof(int)) : N * r;
            }
            a.sendcounts = ones, a.sdispls = which == TDM_SIG_ALLTOALLW ? wdispls : vdispls;
            a.rdispls = rdispls;
        }
        if (in_place)
            a.sendbuf = MPI_IN_PLACE;
        break;
    case TDM_SIG_REDUCE:
    case TDM_SIG_ALLREDUCE:
    case TDM_SIG_SCAN:
    case TDM_SIG_EXSCAN:
        for (int i = 0; i < N; i++) {
            in[i] = v(rank, i);
            out[i] = in_place ? v(rank, i) : -1;
        }
        if (in_place && (which != TDM_SIG_REDUCE || rank == root))
            a.sendbuf = MPI_IN_PLACE;
        break;
    case TDM_SIG_REDUCE_SCATTER:
    case TDM_SIG_REDUCE_SCATTER_BLOCK:
        for (int i = 0; i < N * size; i++)
            in[i] = w(rank, 0, i);
        if (in_place) {
            for (int i = 0; i < N * size; i++)
                out[i] = w(rank, 0, i);
            a.sendbuf = MPI_IN_PLACE;
        }
        break;
    case TDM_SIG_COLLECTIVES: break;
    }
    spoil(which, &a);
    check_mpi(call(which, nonblocking, &a));
    int seen = 1;
    for (int i = 0; i < 2 * N * 4 && seen; i++) {
        int value = -1;
        seen = expected(which, root, in_place, i, &value);
        if (seen && out[i] != value) {
            tlog("%s root %d%s: int %d is %d, not %d", name_of(which, nonblocking), root,
                 in_place ? " in place" : "", i, out[i], value);
            check(out[i] == value);
            break;
        }
    }
    tlog("%s root %d%s: %lx", name_of(which, nonblocking), root, in_place ? " in place" : "",
         seen ? tsum(out, sizeof out) : 0UL);
}

/* Every significant side empty (zero elements; the send buffer NULL, the
   receive buffer one that must stay as it is: an MPI library may reject two
   equal pointers), with types that are valid where significant. */
static void run_empty(tdm_coll_sig_index which, int nonblocking)
{
    static int zeros[8];
    for (int i = 0; i < 2 * N * 8; i++)
        out[i] = -1;
    args a = {.recvbuf = out,
              .count = 0,
              .type = MPI_INT,
              .sendcount = 0,
              .sendtype = MPI_INT,
              .recvcount = 0,
              .recvtype = MPI_INT,
              .sendcounts = zeros,
              .sdispls = zeros,
              .recvcounts = zeros,
              .rdispls = zeros,
              .sendtypes = ints,
              .recvtypes = ints,
              .root = size - 1};
    spoil(which, &a);
    check_mpi(call(which, nonblocking, &a));
    for (int i = 0; i < 2 * N * 8; i++)
        check(out[i] == -1);
    tlog("%s empty: done", name_of(which, nonblocking));
}

int main(int argc, char **argv)
{
    int left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    MPI_Datatype strided;
    MPI_Type_vector(N, 1, 2, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, (MPI_Aint)(2 * N * sizeof(int)), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&strided);
    for (int which = 0; which < TDM_SIG_COLLECTIVES; which++) {
        const tdm_coll_signature *c = &tdm_coll_signatures[which];
        int rooted = c->send == TDM_AT_ROOT || c->recv == TDM_AT_ROOT || which == TDM_SIG_BCAST;
        for (int nonblocking = 0; nonblocking < 2; nonblocking++) {
            for (int root = 0; root<(rooted ? size : 1); root += size> 1 ? size - 1 : 1)
                for (int in_place = 0; in_place <= (c->in_place != TDM_IN_PLACE_NEVER); in_place++)
                    run((tdm_coll_sig_index)which, root, in_place, nonblocking);
            run_empty((tdm_coll_sig_index)which, nonblocking);
        }
    }
    MPI_Type_free(&vec);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
