/*
 * Which arguments of each collective are significant at which rank (MPI-4.0,
 * chapter 6). A rank may pass anything in an argument that is not significant
 * there (NULL, -1, MPI_DATATYPE_NULL): Tandem reads only what this table
 * allows, and decides whether it runs a call from those arguments alone, so
 * that every rank of a correct program decides the same (coll/hooks.c).
 * tests/c/coll_significance.c passes such values in every other place.
 *
 * The arguments fall in two sides: the send side (sendbuf, sendcount(s),
 * sendtype(s), sdispls; the buffer, count and type of a bcast) and the
 * receive side (recvbuf, recvcount(s), recvtype(s), rdispls). The count,
 * type and operation of a reduction, the root and the communicator are
 * significant at every rank. A side of zero elements (or of a type of size
 * zero) moves nothing: its buffer is never read.
 *
 * MPI_IN_PLACE is allowed in one place per collective and makes other
 * arguments insignificant where it is passed:
 *   - as the sendbuf of every rank (allgather(v), alltoall(v,w), allreduce,
 *     reduce_scatter(_block), scan, exscan) or of the root (gather(v),
 *     reduce): the send side's other arguments are ignored, the receive
 *     buffer holds the input;
 *   - as the recvbuf of the root (scatter(v)): the receive side's count and
 *     type are ignored, the root's own block stays where it is.
 * This header needs only mpi.h, so that the test reads the same table.
 */
#ifndef TDM_COLL_SIGNIFICANCE_H
#define TDM_COLL_SIGNIFICANCE_H

#include <mpi.h>

/* Where a side is significant. */
typedef enum {
    TDM_AT_NONE,      /* nowhere: the collective has no such side (barrier) */
    TDM_AT_ALL,       /* at every rank */
    TDM_AT_ROOT,      /* at the root only */
    TDM_AT_NOT_RANK0, /* at every rank but rank 0 (exscan's result) */
} tdm_coll_where;

/* Where MPI_IN_PLACE may be passed, and what it replaces. */
typedef enum {
    TDM_IN_PLACE_NEVER,
    TDM_IN_PLACE_SEND,         /* as sendbuf, at every rank */
    TDM_IN_PLACE_SEND_AT_ROOT, /* as sendbuf, at the root */
    TDM_IN_PLACE_RECV_AT_ROOT, /* as recvbuf, at the root */
} tdm_coll_in_place;

/* The collectives, by the index of their line in the table. */
typedef enum {
    TDM_SIG_BARRIER,
    TDM_SIG_BCAST,
    TDM_SIG_GATHER,
    TDM_SIG_GATHERV,
    TDM_SIG_SCATTER,
    TDM_SIG_SCATTERV,
    TDM_SIG_ALLGATHER,
    TDM_SIG_ALLGATHERV,
    TDM_SIG_ALLTOALL,
    TDM_SIG_ALLTOALLV,
    TDM_SIG_ALLTOALLW,
    TDM_SIG_REDUCE,
    TDM_SIG_ALLREDUCE,
    TDM_SIG_REDUCE_SCATTER,
    TDM_SIG_REDUCE_SCATTER_BLOCK,
    TDM_SIG_SCAN,
    TDM_SIG_EXSCAN,
    TDM_SIG_COLLECTIVES
} tdm_coll_sig_index;

typedef struct {
    const char *name; /* the blocking form's name; the nonblocking one adds an I */
    tdm_coll_where send, recv;
    tdm_coll_in_place in_place;
} tdm_coll_signature;

static const tdm_coll_signature tdm_coll_signatures[TDM_SIG_COLLECTIVES] = {
    [TDM_SIG_BARRIER] = {"MPI_Barrier", TDM_AT_NONE, TDM_AT_NONE, TDM_IN_PLACE_NEVER},
    [TDM_SIG_BCAST] = {"MPI_Bcast", TDM_AT_ALL, TDM_AT_NONE, TDM_IN_PLACE_NEVER},
    [TDM_SIG_GATHER] = {"MPI_Gather", TDM_AT_ALL, TDM_AT_ROOT, TDM_IN_PLACE_SEND_AT_ROOT},
    [TDM_SIG_GATHERV] = {"MPI_Gatherv", TDM_AT_ALL, TDM_AT_ROOT, TDM_IN_PLACE_SEND_AT_ROOT},
    [TDM_SIG_SCATTER] = {"MPI_Scatter", TDM_AT_ROOT, TDM_AT_ALL, TDM_IN_PLACE_RECV_AT_ROOT},
    [TDM_SIG_SCATTERV] = {"MPI_Scatterv", TDM_AT_ROOT, TDM_AT_ALL, TDM_IN_PLACE_RECV_AT_ROOT},
    [TDM_SIG_ALLGATHER] = {"MPI_Allgather", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_ALLGATHERV] = {"MPI_Allgatherv", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_ALLTOALL] = {"MPI_Alltoall", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_ALLTOALLV] = {"MPI_Alltoallv", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_ALLTOALLW] = {"MPI_Alltoallw", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_REDUCE] = {"MPI_Reduce", TDM_AT_ALL, TDM_AT_ROOT, TDM_IN_PLACE_SEND_AT_ROOT},
    [TDM_SIG_ALLREDUCE] = {"MPI_Allreduce", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_REDUCE_SCATTER] = {"MPI_Reduce_scatter", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_REDUCE_SCATTER_BLOCK] = {"MPI_Reduce_scatter_block", TDM_AT_ALL, TDM_AT_ALL,
                                      TDM_IN_PLACE_SEND},
    [TDM_SIG_SCAN] = {"MPI_Scan", TDM_AT_ALL, TDM_AT_ALL, TDM_IN_PLACE_SEND},
    [TDM_SIG_EXSCAN] = {"MPI_Exscan", TDM_AT_ALL, TDM_AT_NOT_RANK0, TDM_IN_PLACE_SEND},
};

/* What tdm_coll_reads returns: the sides this rank reads, whether its
   MPI_IN_PLACE is in force, and whether it passed MPI_IN_PLACE in a
   significant place where the standard does not allow it (an error the MPI
   library reports). */
enum {
    TDM_READS_SEND = 1,
    TDM_READS_RECV = 2,
    TDM_READS_IN_PLACE = 4,
    TDM_READS_MISPLACED = 8,
};

static inline int tdm_coll_at(tdm_coll_where where, int rank, int root)
{
    return where == TDM_AT_ALL || (where == TDM_AT_ROOT && rank == root) ||
           (where == TDM_AT_NOT_RANK0 && rank != 0);
}

/* The sides of collective 'which' that 'rank' reads, given the root (any
   value for the collectives without one) and the two buffers it passed
   (NULL for bcast's receive buffer, which it does not have). */
static inline unsigned tdm_coll_reads(tdm_coll_sig_index which, int rank, int root,
                                      const void *sendbuf, const void *recvbuf)
{
    const tdm_coll_signature *c = &tdm_coll_signatures[which];
    int send = tdm_coll_at(c->send, rank, root), recv = tdm_coll_at(c->recv, rank, root);
    int at_root = rank == root;
    int in_place =
        (c->in_place == TDM_IN_PLACE_SEND && sendbuf == MPI_IN_PLACE) ||
        (c->in_place == TDM_IN_PLACE_SEND_AT_ROOT && at_root && sendbuf == MPI_IN_PLACE) ||
        (c->in_place == TDM_IN_PLACE_RECV_AT_ROOT && at_root && recvbuf == MPI_IN_PLACE);
    int misplaced =
        !in_place && ((send && sendbuf == MPI_IN_PLACE) || (recv && recvbuf == MPI_IN_PLACE));
    if (in_place && c->in_place == TDM_IN_PLACE_RECV_AT_ROOT) {
        recv = 0;
    } else if (in_place) {
        send = 0;
        recv = 1; /* the input is there (exscan's rank 0 too) */
    }
    return (send ? TDM_READS_SEND : 0u) | (recv ? TDM_READS_RECV : 0u) |
           (in_place ? TDM_READS_IN_PLACE : 0u) | (misplaced ? TDM_READS_MISPLACED : 0u);
}

#endif
