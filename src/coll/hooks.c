/*
 * The collective entry points Tandem takes over: MPI_I* under TANDEM_COLL=
 * tandem (the schedule runs in the background, the application gets a
 * generalized request) and the blocking forms under TANDEM_COLL_BLOCKING=
 * tandem (the same schedule, run by the calling thread).
 *
 * Each collective has one function below that checks the arguments, picks the
 * algorithm and builds the schedule; it returns -1 when Tandem leaves the call
 * to the MPI library: an inter-communicator, messages beyond what one int
 * count can carry, or arguments the MPI library must reject (it then raises
 * the error).
 *
 * It reads only the arguments that are significant at this rank
 * (coll/significance.h): the others become neutral (0 x MPI_BYTE) before
 * anything below sees them, and the decision to take the call rests on what
 * every rank of a correct program agrees on (the communicator, the root, and
 * the bytes of a block, which the type signatures make equal at every rank,
 * where the counts and types may differ). Running out of memory is not such a
 * decision: it is an error (MPI_ERR_NO_MEM) through the communicator's error
 * handler. The MPI entry points are the thin wrappers at the end.
 */
#include <limits.h>

#include "coll/algorithms.h"
#include "coll/significance.h"
#include "impl/impl.h"
#include "monitor/monitor.h"
#include "wrappers/gen_hooks.h"

/* ------------------------------------------------------------- checks */

/* An intra-communicator with 'root' in range (0 for the collectives without
   one): this rank and the size. */
static int intra(MPI_Comm comm, int root, int *rank, int *size)
{
    int inter = 1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, size) != MPI_SUCCESS || PMPI_Comm_rank(comm, rank) != MPI_SUCCESS)
        return 0;
    return root >= 0 && root < *size;
}

/* The sides of collective 'which' that this rank reads, or -1 when it passed
   MPI_IN_PLACE where the standard does not allow it. */
static int reads(tdm_coll_sig_index which, int rank, int root, const void *sendbuf,
                 const void *recvbuf)
{
    unsigned r = tdm_coll_reads(which, rank, root, sendbuf, recvbuf);
    return r & TDM_READS_MISPLACED ? -1 : (int)r;
}

/* One side of a call, 'count' elements of 'type': its bytes, or -1 when the
   MPI library must reject it. A side this rank does not read ('read' 0) and
   one that moves nothing (no element, or a type of size zero) become 0 x
   MPI_BYTE, so that nothing below reads their type (nor their buffer: no
   algorithm touches the buffer of an empty side). */
static long long side(int read, MPI_Count *count, MPI_Datatype *type)
{
    int size = 0;
    if (read && *count < 0)
        return -1;
    if (read && *count > 0 &&
        (*type == MPI_DATATYPE_NULL || tdm_impl_type_size(*type, &size) != MPI_SUCCESS))
        return -1;
    if (!read || size == 0) {
        *count = 0;
        *type = MPI_BYTE;
        return 0;
    }
    return *count > LLONG_MAX / size ? LLONG_MAX : (long long)*count * size;
}

/* The count, type and operation of a reduction, significant at every rank:
   as side(), but a type of size zero stays (the operation is defined on it). */
static int reduction(MPI_Count *count, MPI_Datatype *type, MPI_Op op)
{
    int size = 0;
    if (op == MPI_OP_NULL || *count < 0 || *count > INT_MAX)
        return 0;
    if (*count == 0)
        *type = MPI_BYTE; /* nothing is combined: the operation is never applied */
    return *type != MPI_DATATYPE_NULL && tdm_impl_type_size(*type, &size) == MPI_SUCCESS;
}

/* 'n' blocks of 'block' bytes fit in one message of int count (a block's
   count is at most its bytes where the type is not empty). */
static int fits(long long block, int n)
{
    return block >= 0 && block <= INT_MAX / (n > 0 ? n : 1);
}

/* The counts and displacements of a v form, one per rank, and its type: the
   MPI would accept them. Where every count is zero the type becomes MPI_BYTE
   (it may then be anything). */
static int valid_counts(const int counts[], const int displs[], int n, MPI_Datatype *type)
{
    int size, any = 0;
    if (!counts || !displs)
        return 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return 0;
        any |= counts[i] > 0;
    }
    if (!any)
        *type = MPI_BYTE;
    return *type != MPI_DATATYPE_NULL && tdm_impl_type_size(*type, &size) == MPI_SUCCESS;
}

/* The same for a w form: a type per rank, significant where its count is
   not zero (the algorithm sends 0 x MPI_BYTE for the others). */
static int valid_w(const int counts[], const int displs[], const MPI_Datatype types[], int n)
{
    int size;
    if (!counts || !displs || !types)
        return 0;
    for (int i = 0; i < n; i++)
        if (counts[i] < 0 ||
            (counts[i] > 0 &&
             (types[i] == MPI_DATATYPE_NULL || tdm_impl_type_size(types[i], &size) != MPI_SUCCESS)))
            return 0;
    return 1;
}

/* Whether 'op' is commutative (every predefined one is): the others take
   algorithms that combine in rank order (algorithms.h). */
static int commutative(MPI_Op op)
{
    int yes = 0;
    return op != MPI_OP_NULL && PMPI_Op_commutative(op, &yes) == MPI_SUCCESS && yes;
}

/* A new schedule for the call: a blocking one where there is no request. */
static tdm_schedule *schedule(MPI_Comm comm, const MPI_Request *request)
{
    return tdm_schedule_new(comm, request == NULL);
}

/* Start the schedule (request) or run it here (request NULL: the blocking
   form, whose errors go to the communicator's handler); -1 without one. */
static int launch(tdm_schedule *s, MPI_Request *request, MPI_Comm comm)
{
    /* The arguments were valid, so no schedule means no memory. The other
       ranks run the collective in Tandem: leaving this rank's call to the MPI
       library would hang them, so the error goes to the application. */
    int rc = !s ? MPI_ERR_NO_MEM : request ? tdm_schedule_start(s, request) : tdm_schedule_run(s);
    if (rc != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

/* ----------------------------------------------------- one per collective */

static int barrier(MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, 0, &rank, &size))
        return -1;
    return launch(tdm_coll_barrier(schedule(comm, request)), request, comm);
}

static int bcast(void *buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, root, &rank, &size))
        return -1;
    long long bytes = side(1, &count, &type);
    if (bytes < 0 || bytes > INT_MAX)
        return -1;
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_BCAST, bytes, size);
    return launch(tdm_coll_bcast(schedule(comm, request), buffer, count, type, root, alg), request,
                  comm);
}

/* The rooted one-to-all (scatter) and all-to-one (gather): the root's
   side for every rank ('all') and every rank's own ('mine'). The block of
   one rank is as many bytes at the root as at every other rank. */
static int rooted(tdm_coll_sig_index which, int root, int rank, int size, const void *sendbuf,
                  MPI_Count *sendcount, MPI_Datatype *sendtype, const void *recvbuf,
                  MPI_Count *recvcount, MPI_Datatype *recvtype, long long *block)
{
    int r = reads(which, rank, root, sendbuf, recvbuf);
    long long send = r < 0 ? -1 : side(r & TDM_READS_SEND, sendcount, sendtype);
    long long recv = r < 0 ? -1 : side(r & TDM_READS_RECV, recvcount, recvtype);
    if (send < 0 || recv < 0)
        return 0;
    *block = (which == TDM_SIG_SCATTER) == (rank == root) ? send : recv;
    return fits(*block, size);
}

static int scatter(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    int rank, size;
    long long block;
    if (!intra(comm, root, &rank, &size) ||
        !rooted(TDM_SIG_SCATTER, root, rank, size, sendbuf, &sendcount, &sendtype, recvbuf,
                &recvcount, &recvtype, &block))
        return -1;
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_SCATTER, block, size);
    return launch(tdm_coll_scatter(schedule(comm, request), sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, recvtype, root, alg),
                  request, comm);
}

static int gather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    int rank, size;
    long long block;
    if (!intra(comm, root, &rank, &size) ||
        !rooted(TDM_SIG_GATHER, root, rank, size, sendbuf, &sendcount, &sendtype, recvbuf,
                &recvcount, &recvtype, &block))
        return -1;
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_GATHER, block, size);
    return launch(tdm_coll_gather(schedule(comm, request), sendbuf, sendcount, sendtype, recvbuf,
                                  recvcount, recvtype, root, alg),
                  request, comm);
}

static int scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, root, &rank, &size))
        return -1;
    int r = reads(TDM_SIG_SCATTERV, rank, root, sendbuf, recvbuf);
    if (r < 0 || side(r & TDM_READS_RECV, &recvcount, &recvtype) < 0 ||
        ((r & TDM_READS_SEND) && !valid_counts(sendcounts, displs, size, &sendtype)))
        return -1;
    if (!(r & TDM_READS_SEND))
        sendcounts = displs = NULL, sendtype = MPI_BYTE;
    return launch(tdm_coll_scatterv(schedule(comm, request), sendbuf, sendcounts, displs, sendtype,
                                    recvbuf, recvcount, recvtype, root),
                  request, comm);
}

static int gatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, root, &rank, &size))
        return -1;
    int r = reads(TDM_SIG_GATHERV, rank, root, sendbuf, recvbuf);
    if (r < 0 || side(r & TDM_READS_SEND, &sendcount, &sendtype) < 0 ||
        ((r & TDM_READS_RECV) && !valid_counts(recvcounts, displs, size, &recvtype)))
        return -1;
    if (!(r & TDM_READS_RECV))
        recvcounts = displs = NULL, recvtype = MPI_BYTE;
    return launch(tdm_coll_gatherv(schedule(comm, request), sendbuf, sendcount, sendtype, recvbuf,
                                   recvcounts, displs, recvtype, root),
                  request, comm);
}

/* allgather and alltoall: every rank's block is 'recvcount' x 'recvtype'. */
static int all_to_all(tdm_coll_sig_index which, const void *sendbuf, MPI_Count *sendcount,
                      MPI_Datatype *sendtype, const void *recvbuf, MPI_Count *recvcount,
                      MPI_Datatype *recvtype, int rank, int size, long long *block)
{
    int r = reads(which, rank, 0, sendbuf, recvbuf);
    if (r < 0 || side(r & TDM_READS_SEND, sendcount, sendtype) < 0)
        return 0;
    *block = side(r & TDM_READS_RECV, recvcount, recvtype);
    return fits(*block, size);
}

static int allgather(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    int rank, size;
    long long block;
    if (!intra(comm, 0, &rank, &size) ||
        !all_to_all(TDM_SIG_ALLGATHER, sendbuf, &sendcount, &sendtype, recvbuf, &recvcount,
                    &recvtype, rank, size, &block))
        return -1;
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_ALLGATHER, block, size);
    return launch(tdm_coll_allgather(schedule(comm, request), sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, alg),
                  request, comm);
}

static int allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, 0, &rank, &size))
        return -1;
    int r = reads(TDM_SIG_ALLGATHERV, rank, 0, sendbuf, recvbuf);
    if (r < 0 || side(r & TDM_READS_SEND, &sendcount, &sendtype) < 0 ||
        !valid_counts(recvcounts, displs, size, &recvtype))
        return -1;
    long long total = 0; /* every rank knows every count: the same choice everywhere */
    for (int i = 0; i < size; i++)
        total += recvcounts[i];
    tdm_coll_alg alg =
        tdm_coll_select(TDM_COLL_ALLGATHER, tdm_coll_bytes(total, recvtype) / size, size);
    return launch(tdm_coll_allgatherv(schedule(comm, request), sendbuf, sendcount, sendtype,
                                      recvbuf, recvcounts, displs, recvtype, alg),
                  request, comm);
}

static int alltoall(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    long long block;
    if (!intra(comm, 0, &rank, &size) ||
        !all_to_all(TDM_SIG_ALLTOALL, sendbuf, &sendcount, &sendtype, recvbuf, &recvcount,
                    &recvtype, rank, size, &block))
        return -1;
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_ALLTOALL, block, size);
    return launch(tdm_coll_alltoall(schedule(comm, request), sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, recvtype, alg),
                  request, comm);
}

/* The v and w forms. Each pair of ranks exchanges exactly one message each
   way whatever the algorithm, so ranks may choose differently: the size is
   this rank's mean block. */
static int alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                     const int rdispls[], const MPI_Datatype recvtypes[], int w_form, MPI_Comm comm,
                     MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, 0, &rank, &size))
        return -1;
    int r = reads(w_form ? TDM_SIG_ALLTOALLW : TDM_SIG_ALLTOALLV, rank, 0, sendbuf, recvbuf);
    MPI_Datatype sendtype = sendtypes ? sendtypes[0] : MPI_DATATYPE_NULL;
    MPI_Datatype recvtype = recvtypes ? recvtypes[0] : MPI_DATATYPE_NULL;
    if (r < 0 || !recvtypes ||
        !(w_form ? valid_w(recvcounts, rdispls, recvtypes, size)
                 : valid_counts(recvcounts, rdispls, size, &recvtype)))
        return -1;
    if ((r & TDM_READS_SEND) &&
        (!sendtypes || !(w_form ? valid_w(sendcounts, sdispls, sendtypes, size)
                                : valid_counts(sendcounts, sdispls, size, &sendtype))))
        return -1;
    long long bytes = 0;
    for (int i = 0; i < size; i++)
        bytes += tdm_coll_bytes(recvcounts[i], w_form ? recvtypes[i] : recvtype);
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_ALLTOALL, bytes / size, size);
    return launch(tdm_coll_alltoallw(schedule(comm, request), sendbuf, sendcounts, sdispls,
                                     w_form ? sendtypes : &sendtype, recvbuf, recvcounts, rdispls,
                                     w_form ? recvtypes : &recvtype, w_form, alg),
                  request, comm);
}

static int reduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, root, &rank, &size) ||
        reads(TDM_SIG_REDUCE, rank, root, sendbuf, recvbuf) < 0 || !reduction(&count, &type, op))
        return -1;
    return launch(tdm_coll_reduce(schedule(comm, request), sendbuf, recvbuf, count, type, op,
                                  commutative(op), root),
                  request, comm);
}

static int allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, 0, &rank, &size) || reads(TDM_SIG_ALLREDUCE, rank, 0, sendbuf, recvbuf) < 0 ||
        !reduction(&count, &type, op))
        return -1;
    long long bytes = tdm_coll_bytes(count, type);
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_ALLREDUCE, bytes, size);
    tdm_coll_alg gather_alg = tdm_coll_select(TDM_COLL_ALLGATHER, bytes / size, size);
    return launch(tdm_coll_allreduce(schedule(comm, request), sendbuf, recvbuf, count, type, op,
                                     commutative(op), alg, gather_alg),
                  request, comm);
}

/* recvcounts, or NULL and recvcount for every rank (the _block form). */
static int reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                          MPI_Count recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request)
{
    int rank, size;
    tdm_coll_sig_index which = recvcounts ? TDM_SIG_REDUCE_SCATTER : TDM_SIG_REDUCE_SCATTER_BLOCK;
    if (!intra(comm, 0, &rank, &size) || reads(which, rank, 0, sendbuf, recvbuf) < 0)
        return -1;
    long long total = recvcounts ? 0 : recvcount * size;
    for (int i = 0; recvcounts && i < size; i++) {
        if (recvcounts[i] < 0)
            return -1;
        total += recvcounts[i];
    }
    MPI_Count all = total;
    if (recvcount < 0 || total > INT_MAX || !reduction(&all, &type, op))
        return -1;
    tdm_coll_alg alg = tdm_coll_select(TDM_COLL_REDUCE_SCATTER, tdm_coll_bytes(total, type), size);
    return launch(tdm_coll_reduce_scatter(schedule(comm, request), sendbuf, recvbuf, recvcounts,
                                          recvcount, type, op, commutative(op), alg),
                  request, comm);
}

static int scan(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                int exclusive, MPI_Comm comm, MPI_Request *request)
{
    int rank, size;
    if (!intra(comm, 0, &rank, &size) ||
        reads(exclusive ? TDM_SIG_EXSCAN : TDM_SIG_SCAN, rank, 0, sendbuf, recvbuf) < 0 ||
        !reduction(&count, &type, op))
        return -1;
    return launch(
        tdm_coll_scan(schedule(comm, request), sendbuf, recvbuf, count, type, op, exclusive),
        request, comm);
}

/* ------------------------------------------------------- the entry points */

/* Tandem's result when it took the call (on), else the MPI library's; which
   of the two ran it is left for monitoring, which records the call after. */
#define ROUTE(on, tandem_call, mpi_call)       \
    do {                                       \
        (void)lang;                            \
        int rc_ = (on) ? (tandem_call) : -1;   \
        tdm_monitor_coll_by_tandem = rc_ >= 0; \
        return rc_ >= 0 ? rc_ : (mpi_call);    \
    } while (0)

#define NB tdm_coll_on
#define BL tdm_coll_blocking_on

int tdm_hook_Ibarrier(int lang, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, barrier(comm, request), PMPI_Ibarrier(comm, request));
}

int tdm_hook_Barrier(int lang, MPI_Comm comm)
{
    ROUTE(BL, barrier(comm, NULL), PMPI_Barrier(comm));
}

int tdm_hook_Ibcast(int lang, void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, bcast(buffer, count, datatype, root, comm, request),
          PMPI_Ibcast(buffer, count, datatype, root, comm, request));
}

int tdm_hook_Bcast(int lang, void *buffer, int count, MPI_Datatype datatype, int root,
                   MPI_Comm comm)
{
    ROUTE(BL, bcast(buffer, count, datatype, root, comm, NULL),
          PMPI_Bcast(buffer, count, datatype, root, comm));
}

int tdm_hook_Iscatter(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    ROUTE(NB,
          scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request),
          PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request));
}

int tdm_hook_Scatter(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ROUTE(BL, scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL),
          PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int tdm_hook_Igather(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    ROUTE(NB,
          gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request),
          PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request));
}

int tdm_hook_Gather(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ROUTE(BL, gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL),
          PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int tdm_hook_Iscatterv(int lang, const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB,
          scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                   request),
          PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, request));
}

int tdm_hook_Scatterv(int lang, const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm)
{
    ROUTE(BL,
          scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                   NULL),
          PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        comm));
}

int tdm_hook_Igatherv(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB,
          gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                  request),
          PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, request));
}

int tdm_hook_Gatherv(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ROUTE(BL,
          gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                  NULL),
          PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm));
}

int tdm_hook_Iallgather(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request *request)
{
    ROUTE(
        NB, allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),
        PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request));
}

int tdm_hook_Allgather(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ROUTE(BL, allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL),
          PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int tdm_hook_Iallgatherv(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB,
          allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                     request),
          PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, request));
}

int tdm_hook_Allgatherv(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    ROUTE(
        BL,
        allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, NULL),
        PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

int tdm_hook_Ialltoall(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    ROUTE(
        NB, alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),
        PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request));
}

int tdm_hook_Alltoall(int lang, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ROUTE(BL, alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL),
          PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int tdm_hook_Ialltoallv(int lang, const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request *request)
{
    ROUTE(NB,
          alltoallw(sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls,
                    &recvtype, 0, comm, request),
          PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request));
}

int tdm_hook_Alltoallv(int lang, const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ROUTE(BL,
          alltoallw(sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls,
                    &recvtype, 0, comm, NULL),
          PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm));
}

int tdm_hook_Ialltoallw(int lang, const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Request *request)
{
    ROUTE(NB,
          alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, 1, comm, request),
          PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm, request));
}

int tdm_hook_Alltoallw(int lang, const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    ROUTE(BL,
          alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, 1, comm, NULL),
          PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm));
}

int tdm_hook_Ireduce(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request),
          PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request));
}

int tdm_hook_Reduce(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int root, MPI_Comm comm)
{
    ROUTE(BL, reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL),
          PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm));
}

int tdm_hook_Iallreduce(int lang, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, allreduce(sendbuf, recvbuf, count, datatype, op, comm, request),
          PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int tdm_hook_Allreduce(int lang, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL),
          PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

int tdm_hook_Ireduce_scatter(int lang, const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB,
          recvcounts ? reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, request)
                     : -1,
          PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int tdm_hook_Reduce_scatter(int lang, const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL,
          recvcounts ? reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, NULL)
                     : -1,
          PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

int tdm_hook_Ireduce_scatter_block(int lang, const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request)
{
    ROUTE(NB, reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, request),
          PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

int tdm_hook_Reduce_scatter_block(int lang, const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, NULL),
          PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

int tdm_hook_Iscan(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, scan(sendbuf, recvbuf, count, datatype, op, 0, comm, request),
          PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int tdm_hook_Scan(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, scan(sendbuf, recvbuf, count, datatype, op, 0, comm, NULL),
          PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm));
}

int tdm_hook_Iexscan(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, scan(sendbuf, recvbuf, count, datatype, op, 1, comm, request),
          PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int tdm_hook_Exscan(int lang, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, scan(sendbuf, recvbuf, count, datatype, op, 1, comm, NULL),
          PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
}

/* ------------------------------------------- communicator constructors */

/* Every rank of the new communicator is in this call, so Tandem's state of
   it is made here, where waiting for the others is safe: made in its first
   MPI_I* collective instead, it would make that call wait for every rank. */
#define COMM_CREATE(call)                    \
    do {                                     \
        (void)lang;                          \
        int rc = (call);                     \
        if (rc == MPI_SUCCESS)               \
            tdm_coll_comm_created(*newcomm); \
        return rc;                           \
    } while (0)

int tdm_hook_Comm_dup(int lang, MPI_Comm comm, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_dup(comm, newcomm));
}

int tdm_hook_Comm_dup_with_info(int lang, MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_dup_with_info(comm, info, newcomm));
}

int tdm_hook_Comm_split(int lang, MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_split(comm, color, key, newcomm));
}

int tdm_hook_Comm_split_type(int lang, MPI_Comm comm, int split_type, int key, MPI_Info info,
                             MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

int tdm_hook_Comm_create(int lang, MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_create(comm, group, newcomm));
}

int tdm_hook_Comm_create_group(int lang, MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_create_group(comm, group, tag, newcomm));
}

int tdm_hook_Cart_create(int lang, MPI_Comm comm_old, int ndims, const int dims[],
                         const int periods[], int reorder, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, newcomm));
}

int tdm_hook_Cart_sub(int lang, MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Cart_sub(comm, remain_dims, newcomm));
}

int tdm_hook_Graph_create(int lang, MPI_Comm comm_old, int nnodes, const int indx[],
                          const int edges[], int reorder, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, newcomm));
}

int tdm_hook_Dist_graph_create_adjacent(int lang, MPI_Comm comm_old, int indegree,
                                        const int sources[], const int sourceweights[],
                                        int outdegree, const int destinations[],
                                        const int destweights[], MPI_Info info, int reorder,
                                        MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                                outdegree, destinations, destweights, info, reorder,
                                                newcomm));
}

int tdm_hook_Dist_graph_create(int lang, MPI_Comm comm_old, int n, const int sources[],
                               const int degrees[], const int destinations[], const int weights[],
                               MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                       reorder, newcomm));
}

int tdm_hook_Intercomm_merge(int lang, MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    MPI_Comm *newcomm = newintracomm;
    COMM_CREATE(PMPI_Intercomm_merge(intercomm, high, newcomm));
}

/* MPI_Comm_idup returns before the other ranks arrive: Tandem's duplicate is
   posted beside it, nonblocking too. */
int tdm_hook_Comm_idup(int lang, MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    (void)lang;
    int rc = PMPI_Comm_idup(comm, newcomm, request);
    if (rc == MPI_SUCCESS)
        tdm_coll_comm_posted(comm, *newcomm);
    return rc;
}

#if MPI_VERSION >= 4
int tdm_hook_Comm_idup_with_info(int lang, MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                 MPI_Request *request)
{
    (void)lang;
    int rc = PMPI_Comm_idup_with_info(comm, info, newcomm, request);
    if (rc == MPI_SUCCESS)
        tdm_coll_comm_posted(comm, *newcomm);
    return rc;
}

/* Collective over the group: every rank of the new communicator is here. */
int tdm_hook_Comm_create_from_group(int lang, MPI_Group group, const char *stringtag, MPI_Info info,
                                    MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    COMM_CREATE(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm));
}
#endif

int tdm_hook_Comm_free(int lang, MPI_Comm *comm)
{
    (void)lang;
    if (comm) /* else the MPI library reports the error */
        tdm_coll_comm_freeing(*comm);
    return PMPI_Comm_free(comm);
}

#if MPI_VERSION >= 4
/* The large-count forms: Tandem runs them while every message fits an int
   count (the checks above), the MPI library beyond. */
int tdm_hook_Ibcast_c(int lang, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                      MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, bcast(buffer, count, datatype, root, comm, request),
          PMPI_Ibcast_c(buffer, count, datatype, root, comm, request));
}

int tdm_hook_Bcast_c(int lang, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                     MPI_Comm comm)
{
    ROUTE(BL, bcast(buffer, count, datatype, root, comm, NULL),
          PMPI_Bcast_c(buffer, count, datatype, root, comm));
}

int tdm_hook_Iscatter_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB,
          scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request),
          PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          request));
}

int tdm_hook_Scatter_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm)
{
    ROUTE(BL, scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL),
          PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int tdm_hook_Igather_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB,
          gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request),
          PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request));
}

int tdm_hook_Gather_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm)
{
    ROUTE(BL, gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL),
          PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int tdm_hook_Iallgather_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request)
{
    ROUTE(NB, allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),
          PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request));
}

int tdm_hook_Allgather_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ROUTE(BL, allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL),
          PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int tdm_hook_Ialltoall_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *request)
{
    ROUTE(NB, alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),
          PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request));
}

int tdm_hook_Alltoall_c(int lang, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ROUTE(BL, alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL),
          PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int tdm_hook_Ireduce_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    ROUTE(NB, reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request),
          PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request));
}

int tdm_hook_Reduce_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    ROUTE(BL, reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL),
          PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm));
}

int tdm_hook_Iallreduce_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, allreduce(sendbuf, recvbuf, count, datatype, op, comm, request),
          PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int tdm_hook_Allreduce_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL),
          PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm));
}

int tdm_hook_Ireduce_scatter_block_c(int lang, const void *sendbuf, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, request),
          PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

int tdm_hook_Reduce_scatter_block_c(int lang, const void *sendbuf, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm)
{
    ROUTE(BL, reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, NULL),
          PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

int tdm_hook_Iscan_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, scan(sendbuf, recvbuf, count, datatype, op, 0, comm, request),
          PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int tdm_hook_Scan_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, scan(sendbuf, recvbuf, count, datatype, op, 0, comm, NULL),
          PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm));
}

int tdm_hook_Iexscan_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ROUTE(NB, scan(sendbuf, recvbuf, count, datatype, op, 1, comm, request),
          PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int tdm_hook_Exscan_c(int lang, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ROUTE(BL, scan(sendbuf, recvbuf, count, datatype, op, 1, comm, NULL),
          PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm));
}
#endif
