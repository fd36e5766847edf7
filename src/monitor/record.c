/*
 * What each monitored MPI call records. The dispatchers call tdm_monitor_Name
 * with the call's arguments once the call returned MPI_SUCCESS, while
 * monitoring records (a call that failed moved nothing to count); the
 * receives record in their hooks (src/p2p/), because the size and source
 * come from the status.
 *
 * Collectives record the "logical" volume per call the way Open MPI's coll
 * monitoring does: a rooted one-to-all call (bcast, scatter) on its root, for
 * each other rank, what the root sends it; an all-to-one call (gather,
 * reduce) on its root, for each other rank, what it receives from it; an
 * all-to-all call on every rank, for each other rank, what it sends it.
 * Each call also counts once in its communicator's one-to-all, all-to-one or
 * all-to-all line, with the total of its per-peer bytes.
 */
#include <stddef.h>

#include "core/runtime.h"
#include "monitor/monitor.h"
#include "wrappers/gen_hooks.h"

/* Each function takes every argument of its MPI call and uses a few. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* -------------------------------------------------------- point-to-point */

#define SEND_RECORDS(COUNT, suffix)                                                               \
    void tdm_monitor_Send##suffix(const void *buf, COUNT count, MPI_Datatype datatype, int dest,  \
                                  int tag, MPI_Comm comm)                                         \
    {                                                                                             \
        tdm_monitor_send(count, datatype, dest, comm);                                            \
    }                                                                                             \
    void tdm_monitor_Bsend##suffix(const void *buf, COUNT count, MPI_Datatype datatype, int dest, \
                                   int tag, MPI_Comm comm)                                        \
    {                                                                                             \
        tdm_monitor_Send##suffix(buf, count, datatype, dest, tag, comm);                          \
    }                                                                                             \
    void tdm_monitor_Ssend##suffix(const void *buf, COUNT count, MPI_Datatype datatype, int dest, \
                                   int tag, MPI_Comm comm)                                        \
    {                                                                                             \
        tdm_monitor_Send##suffix(buf, count, datatype, dest, tag, comm);                          \
    }                                                                                             \
    void tdm_monitor_Rsend##suffix(const void *buf, COUNT count, MPI_Datatype datatype, int dest, \
                                   int tag, MPI_Comm comm)                                        \
    {                                                                                             \
        tdm_monitor_Send##suffix(buf, count, datatype, dest, tag, comm);                          \
    }

SEND_RECORDS(int, )
#if MPI_VERSION >= 4
SEND_RECORDS(MPI_Count, _c)
#endif

/* ----------------------------------------------------------- collectives */

/* Is this rank the root of a rooted call? (MPI_ROOT on an inter-communicator.) */
static int is_root(MPI_Comm comm, int root)
{
    int inter = 0, rank = -1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root == MPI_ROOT;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

/* The peers a call records: the remote group of an inter-communicator, else
   every other rank. Returns their number; *self is this rank or -1. */
static int peers_of(MPI_Comm comm, int *self)
{
    int inter = 0, n = 0;
    PMPI_Comm_test_inter(comm, &inter);
    *self = -1;
    if (inter) {
        PMPI_Comm_remote_size(comm, &n);
    } else {
        PMPI_Comm_size(comm, &n);
        PMPI_Comm_rank(comm, self);
    }
    return n;
}

/* Record 'bytes_of(i)' for every peer i and count the call in 'shape'. */
typedef uint64_t (*bytes_fn)(int peer, const void *arg);

static void record_peers(MPI_Comm comm, int shape, bytes_fn bytes_of, const void *arg, int after)
{
    int self, n = peers_of(comm, &self);
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (i == self || (after && i < self))
            continue;
        uint64_t bytes = bytes_of(i, arg);
        tdm_monitor_coll_peer(comm, i, bytes);
        total += bytes;
    }
    tdm_monitor_coll(comm, shape, total);
}

typedef struct {
    MPI_Count count;
    MPI_Datatype type;
    const int *counts;         /* v variants: per-peer counts */
    const MPI_Datatype *types; /* w variants: per-peer types */
} volume;

static uint64_t volume_of(int peer, const void *arg)
{
    const volume *v = arg;
    MPI_Datatype type = v->types ? v->types[peer] : v->type;
    return tdm_monitor_bytes(v->counts ? v->counts[peer] : v->count, type);
}

static void rooted(MPI_Comm comm, int root, int shape, volume v)
{
    if (is_root(comm, root))
        record_peers(comm, shape, volume_of, &v, 0);
}

static void everyone(MPI_Comm comm, volume v, int after)
{
    record_peers(comm, TDM_A2A, volume_of, &v, after);
}

/* What this rank contributes to an allgather or alltoall (MPI_IN_PLACE: the
   receive arguments describe it). */
static volume contribution(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           MPI_Count recvcount, MPI_Datatype recvtype)
{
    volume v = {sendcount, sendtype, NULL, NULL};
    if (sendbuf == MPI_IN_PLACE) {
        v.count = recvcount;
        v.type = recvtype;
    }
    return v;
}

#define COUNTED_COLLECTIVES(COUNT, suffix, I, REQ)                                                 \
    void tdm_monitor_##I##bcast##suffix(void *buffer, COUNT count, MPI_Datatype datatype,          \
                                        int root, MPI_Comm comm REQ)                               \
    {                                                                                              \
        rooted(comm, root, TDM_O2A, (volume){count, datatype, NULL, NULL});                        \
    }                                                                                              \
    void tdm_monitor_##I##gather##suffix(const void *sendbuf, COUNT sendcount,                     \
                                         MPI_Datatype sendtype, void *recvbuf, COUNT recvcount,    \
                                         MPI_Datatype recvtype, int root, MPI_Comm comm REQ)       \
    {                                                                                              \
        rooted(comm, root, TDM_A2O, (volume){recvcount, recvtype, NULL, NULL});                    \
    }                                                                                              \
    void tdm_monitor_##I##scatter##suffix(const void *sendbuf, COUNT sendcount,                    \
                                          MPI_Datatype sendtype, void *recvbuf, COUNT recvcount,   \
                                          MPI_Datatype recvtype, int root, MPI_Comm comm REQ)      \
    {                                                                                              \
        rooted(comm, root, TDM_O2A, (volume){sendcount, sendtype, NULL, NULL});                    \
    }                                                                                              \
    void tdm_monitor_##I##allgather##suffix(const void *sendbuf, COUNT sendcount,                  \
                                            MPI_Datatype sendtype, void *recvbuf, COUNT recvcount, \
                                            MPI_Datatype recvtype, MPI_Comm comm REQ)              \
    {                                                                                              \
        everyone(comm, contribution(sendbuf, sendcount, sendtype, recvcount, recvtype), 0);        \
    }                                                                                              \
    void tdm_monitor_##I##alltoall##suffix(const void *sendbuf, COUNT sendcount,                   \
                                           MPI_Datatype sendtype, void *recvbuf, COUNT recvcount,  \
                                           MPI_Datatype recvtype, MPI_Comm comm REQ)               \
    {                                                                                              \
        everyone(comm, contribution(sendbuf, sendcount, sendtype, recvcount, recvtype), 0);        \
    }                                                                                              \
    void tdm_monitor_##I##reduce##suffix(const void *sendbuf, void *recvbuf, COUNT count,          \
                                         MPI_Datatype datatype, MPI_Op op, int root,               \
                                         MPI_Comm comm REQ)                                        \
    {                                                                                              \
        rooted(comm, root, TDM_A2O, (volume){count, datatype, NULL, NULL});                        \
    }                                                                                              \
    void tdm_monitor_##I##allreduce##suffix(const void *sendbuf, void *recvbuf, COUNT count,       \
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm REQ)   \
    {                                                                                              \
        everyone(comm, (volume){count, datatype, NULL, NULL}, 0);                                  \
    }                                                                                              \
    void tdm_monitor_##I##reduce_scatter_block##suffix(const void *sendbuf, void *recvbuf,         \
                                                       COUNT recvcount, MPI_Datatype datatype,     \
                                                       MPI_Op op, MPI_Comm comm REQ)               \
    {                                                                                              \
        everyone(comm, (volume){recvcount, datatype, NULL, NULL}, 0);                              \
    }                                                                                              \
    void tdm_monitor_##I##scan##suffix(const void *sendbuf, void *recvbuf, COUNT count,            \
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm REQ)        \
    {                                                                                              \
        everyone(comm, (volume){count, datatype, NULL, NULL}, 1);                                  \
    }                                                                                              \
    void tdm_monitor_##I##exscan##suffix(const void *sendbuf, void *recvbuf, COUNT count,          \
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm REQ)      \
    {                                                                                              \
        everyone(comm, (volume){count, datatype, NULL, NULL}, 1);                                  \
    }

/* The collectives without a large-count variant: vectors and barrier. */
#define VECTOR_COLLECTIVES(I, REQ)                                                                 \
    void tdm_monitor_##I##barrier(MPI_Comm comm REQ)                                               \
    {                                                                                              \
        everyone(comm, (volume){0, MPI_BYTE, NULL, NULL}, 0);                                      \
    }                                                                                              \
    void tdm_monitor_##I##gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,       \
                                  void *recvbuf, const int recvcounts[], const int displs[],       \
                                  MPI_Datatype recvtype, int root, MPI_Comm comm REQ)              \
    {                                                                                              \
        rooted(comm, root, TDM_A2O, (volume){0, recvtype, recvcounts, NULL});                      \
    }                                                                                              \
    void tdm_monitor_##I##scatterv(                                                                \
        const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,    \
        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm REQ)          \
    {                                                                                              \
        rooted(comm, root, TDM_O2A, (volume){0, sendtype, sendcounts, NULL});                      \
    }                                                                                              \
    void tdm_monitor_##I##allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,    \
                                     void *recvbuf, const int recvcounts[], const int displs[],    \
                                     MPI_Datatype recvtype, MPI_Comm comm REQ)                     \
    {                                                                                              \
        int rank = 0;                                                                              \
        PMPI_Comm_rank(comm, &rank);                                                               \
        everyone(comm, contribution(sendbuf, sendcount, sendtype, recvcounts[rank], recvtype), 0); \
    }                                                                                              \
    void tdm_monitor_##I##alltoallv(const void *sendbuf, const int sendcounts[],                   \
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,     \
                                    const int recvcounts[], const int rdispls[],                   \
                                    MPI_Datatype recvtype, MPI_Comm comm REQ)                      \
    {                                                                                              \
        int in_place = sendbuf == MPI_IN_PLACE;                                                    \
        everyone(                                                                                  \
            comm,                                                                                  \
            (volume){0, in_place ? recvtype : sendtype, in_place ? recvcounts : sendcounts, NULL}, \
            0);                                                                                    \
    }                                                                                              \
    void tdm_monitor_##I##alltoallw(const void *sendbuf, const int sendcounts[],                   \
                                    const int sdispls[], const MPI_Datatype sendtypes[],           \
                                    void *recvbuf, const int recvcounts[], const int rdispls[],    \
                                    const MPI_Datatype recvtypes[], MPI_Comm comm REQ)             \
    {                                                                                              \
        int in_place = sendbuf == MPI_IN_PLACE;                                                    \
        everyone(comm,                                                                             \
                 (volume){0, MPI_BYTE, in_place ? recvcounts : sendcounts,                         \
                          in_place ? recvtypes : sendtypes},                                       \
                 0);                                                                               \
    }                                                                                              \
    void tdm_monitor_##I##reduce_scatter(const void *sendbuf, void *recvbuf,                       \
                                         const int recvcounts[], MPI_Datatype datatype, MPI_Op op, \
                                         MPI_Comm comm REQ)                                        \
    {                                                                                              \
        everyone(comm, (volume){0, datatype, recvcounts, NULL}, 0);                                \
    }

/* The generated names are MPI's (Bcast, Ibcast): map the lower-case macro
   names onto them. */
#define tdm_monitor_bcast tdm_monitor_Bcast
#define tdm_monitor_gather tdm_monitor_Gather
#define tdm_monitor_scatter tdm_monitor_Scatter
#define tdm_monitor_allgather tdm_monitor_Allgather
#define tdm_monitor_alltoall tdm_monitor_Alltoall
#define tdm_monitor_reduce tdm_monitor_Reduce
#define tdm_monitor_allreduce tdm_monitor_Allreduce
#define tdm_monitor_reduce_scatter_block tdm_monitor_Reduce_scatter_block
#define tdm_monitor_scan tdm_monitor_Scan
#define tdm_monitor_exscan tdm_monitor_Exscan
#define tdm_monitor_bcast_c tdm_monitor_Bcast_c
#define tdm_monitor_gather_c tdm_monitor_Gather_c
#define tdm_monitor_scatter_c tdm_monitor_Scatter_c
#define tdm_monitor_allgather_c tdm_monitor_Allgather_c
#define tdm_monitor_alltoall_c tdm_monitor_Alltoall_c
#define tdm_monitor_reduce_c tdm_monitor_Reduce_c
#define tdm_monitor_allreduce_c tdm_monitor_Allreduce_c
#define tdm_monitor_reduce_scatter_block_c tdm_monitor_Reduce_scatter_block_c
#define tdm_monitor_scan_c tdm_monitor_Scan_c
#define tdm_monitor_exscan_c tdm_monitor_Exscan_c
#define tdm_monitor_barrier tdm_monitor_Barrier
#define tdm_monitor_gatherv tdm_monitor_Gatherv
#define tdm_monitor_scatterv tdm_monitor_Scatterv
#define tdm_monitor_allgatherv tdm_monitor_Allgatherv
#define tdm_monitor_alltoallv tdm_monitor_Alltoallv
#define tdm_monitor_alltoallw tdm_monitor_Alltoallw
#define tdm_monitor_reduce_scatter tdm_monitor_Reduce_scatter

#define NO_REQUEST
#define WITH_REQUEST , MPI_Request *request

COUNTED_COLLECTIVES(int, , , NO_REQUEST)
COUNTED_COLLECTIVES(int, , I, WITH_REQUEST)
VECTOR_COLLECTIVES(, NO_REQUEST)
VECTOR_COLLECTIVES(I, WITH_REQUEST)
#if MPI_VERSION >= 4
COUNTED_COLLECTIVES(MPI_Count, _c, , NO_REQUEST)
COUNTED_COLLECTIVES(MPI_Count, _c, I, WITH_REQUEST)
#endif

/* ------------------------------------------------------------- one-sided */

/* Origin side only, as Open MPI's osc monitoring: puts and accumulates count
   as sent, gets as received; the atomic read-modify-write calls count both. */
#define ONE_SIDED(COUNT, suffix)                                                                   \
    void tdm_monitor_Put##suffix(const void *origin_addr, COUNT origin_count,                      \
                                 MPI_Datatype origin_datatype, int target_rank,                    \
                                 MPI_Aint target_disp, COUNT target_count,                         \
                                 MPI_Datatype target_datatype, MPI_Win win)                        \
    {                                                                                              \
        tdm_monitor_osc(TANDEM_MONITOR_OSC_PUT, win, target_rank,                                  \
                        tdm_monitor_bytes(origin_count, origin_datatype));                         \
    }                                                                                              \
    void tdm_monitor_Get##suffix(                                                                  \
        void *origin_addr, COUNT origin_count, MPI_Datatype origin_datatype, int target_rank,      \
        MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype, MPI_Win win)       \
    {                                                                                              \
        tdm_monitor_osc(TANDEM_MONITOR_OSC_GET, win, target_rank,                                  \
                        tdm_monitor_bytes(origin_count, origin_datatype));                         \
    }                                                                                              \
    void tdm_monitor_Accumulate##suffix(const void *origin_addr, COUNT origin_count,               \
                                        MPI_Datatype origin_datatype, int target_rank,             \
                                        MPI_Aint target_disp, COUNT target_count,                  \
                                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)      \
    {                                                                                              \
        tdm_monitor_Put##suffix(origin_addr, origin_count, origin_datatype, target_rank,           \
                                target_disp, target_count, target_datatype, win);                  \
    }                                                                                              \
    void tdm_monitor_Rput##suffix(const void *origin_addr, COUNT origin_count,                     \
                                  MPI_Datatype origin_datatype, int target_rank,                   \
                                  MPI_Aint target_disp, COUNT target_count,                        \
                                  MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) \
    {                                                                                              \
        tdm_monitor_Put##suffix(origin_addr, origin_count, origin_datatype, target_rank,           \
                                target_disp, target_count, target_datatype, win);                  \
    }                                                                                              \
    void tdm_monitor_Rget##suffix(void *origin_addr, COUNT origin_count,                           \
                                  MPI_Datatype origin_datatype, int target_rank,                   \
                                  MPI_Aint target_disp, COUNT target_count,                        \
                                  MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) \
    {                                                                                              \
        tdm_monitor_Get##suffix(origin_addr, origin_count, origin_datatype, target_rank,           \
                                target_disp, target_count, target_datatype, win);                  \
    }                                                                                              \
    void tdm_monitor_Raccumulate##suffix(                                                          \
        const void *origin_addr, COUNT origin_count, MPI_Datatype origin_datatype,                 \
        int target_rank, MPI_Aint target_disp, COUNT target_count, MPI_Datatype target_datatype,   \
        MPI_Op op, MPI_Win win, MPI_Request *request)                                              \
    {                                                                                              \
        tdm_monitor_Put##suffix(origin_addr, origin_count, origin_datatype, target_rank,           \
                                target_disp, target_count, target_datatype, win);                  \
    }

ONE_SIDED(int, )
#if MPI_VERSION >= 4
ONE_SIDED(MPI_Count, _c)
#endif

static void both_ways(MPI_Win win, int target, uint64_t put, uint64_t got)
{
    tdm_monitor_osc(TANDEM_MONITOR_OSC_PUT, win, target, put);
    tdm_monitor_osc(TANDEM_MONITOR_OSC_GET, win, target, got);
}

void tdm_monitor_Get_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr, int result_count,
                                MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                                int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                MPI_Win win)
{
    both_ways(win, target_rank, tdm_monitor_bytes(origin_count, origin_datatype),
              tdm_monitor_bytes(result_count, result_datatype));
}

void tdm_monitor_Rget_accumulate(const void *origin_addr, int origin_count,
                                 MPI_Datatype origin_datatype, void *result_addr, int result_count,
                                 MPI_Datatype result_datatype, int target_rank,
                                 MPI_Aint target_disp, int target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                 MPI_Request *request)
{
    tdm_monitor_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win);
}

void tdm_monitor_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                              int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    both_ways(win, target_rank, tdm_monitor_bytes(1, datatype), tdm_monitor_bytes(1, datatype));
}

void tdm_monitor_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                                  void *result_addr, MPI_Datatype datatype, int target_rank,
                                  MPI_Aint target_disp, MPI_Win win)
{
    both_ways(win, target_rank, tdm_monitor_bytes(1, datatype), tdm_monitor_bytes(1, datatype));
}

/* ------------------------------------------------------------------- I/O */

/* Bytes asked of each file operation, recorded with this rank as the peer. */
static void file_op(int kind, MPI_Count count, MPI_Datatype datatype)
{
    tdm_monitor_record(kind, tdm_world_rank, tdm_monitor_bytes(count, datatype));
}

#define FILE_OP(name, kind, COUNT, BUF, ...)                                    \
    void tdm_monitor_File_##name(MPI_File fh, __VA_ARGS__ BUF buf, COUNT count, \
                                 MPI_Datatype datatype, FILE_TAIL)              \
    {                                                                           \
        file_op(kind, count, datatype);                                         \
    }

#define FILE_OPS(COUNT, suffix, I)                                                              \
    FILE_OP(I##read##suffix, TANDEM_MONITOR_IO_READ, COUNT, void *, )                           \
    FILE_OP(I##write##suffix, TANDEM_MONITOR_IO_WRITE, COUNT, const void *, )                   \
    FILE_OP(I##read_all##suffix, TANDEM_MONITOR_IO_READ, COUNT, void *, )                       \
    FILE_OP(I##write_all##suffix, TANDEM_MONITOR_IO_WRITE, COUNT, const void *, )               \
    FILE_OP(I##read_shared##suffix, TANDEM_MONITOR_IO_READ, COUNT, void *, )                    \
    FILE_OP(I##write_shared##suffix, TANDEM_MONITOR_IO_WRITE, COUNT, const void *, )            \
    FILE_OP(I##read_at##suffix, TANDEM_MONITOR_IO_READ, COUNT, void *, MPI_Offset offset, )     \
    FILE_OP(I##write_at##suffix, TANDEM_MONITOR_IO_WRITE, COUNT, const void *,                  \
            MPI_Offset offset, )                                                                \
    FILE_OP(I##read_at_all##suffix, TANDEM_MONITOR_IO_READ, COUNT, void *, MPI_Offset offset, ) \
    FILE_OP(I##write_at_all##suffix, TANDEM_MONITOR_IO_WRITE, COUNT, const void *,              \
            MPI_Offset offset, )

#define FILE_BLOCKING_OPS(COUNT, suffix)                                   \
    FILE_OPS(COUNT, suffix, )                                              \
    FILE_OP(read_ordered##suffix, TANDEM_MONITOR_IO_READ, COUNT, void *, ) \
    FILE_OP(write_ordered##suffix, TANDEM_MONITOR_IO_WRITE, COUNT, const void *, )

#define FILE_TAIL MPI_Status *status
FILE_BLOCKING_OPS(int, )
#if MPI_VERSION >= 4
FILE_BLOCKING_OPS(MPI_Count, _c)
#endif
#undef FILE_TAIL

#define FILE_TAIL MPI_Request *request
FILE_OPS(int, , i)
#if MPI_VERSION >= 4
FILE_OPS(MPI_Count, _c, i)
#endif
