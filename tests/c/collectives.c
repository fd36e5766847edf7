/* Every blocking and nonblocking collective Tandem intercepts, with
   MPI_IN_PLACE where the standard allows it, on MPI_COMM_WORLD and on a split
   communicator; several nonblocking collectives in flight at once. */
#include "testlib.h"

#define N 1000

static void run(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *s = malloc(sizeof(int) * N * (size_t)size), *r = malloc(sizeof(int) * N * (size_t)size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int *wdispls = malloc(sizeof(int) * (size_t)size);
    int *sym = malloc(sizeof(int) * (size_t)size); /* alltoallv: what i sends j, j receives */
    for (int i = 0; i < N * size; i++)
        s[i] = rank * 1000003 + i;
    for (int i = 0; i < size; i++) {
        counts[i] = N / size + i;
        displs[i] = i * N;
        types[i] = MPI_INT;
        wdispls[i] = i * N * (int)sizeof(int);
        sym[i] = N / size + rank + i;
    }
    int root = size - 1;
#define RESULT(what, bytes) tlog("%s %s: %lu", name, what, tsum(r, bytes))
#define CLEAR() memset(r, 0, sizeof(int) * N * (size_t)size)
    size_t all = sizeof(int) * N * (size_t)size;

    /* Blocking. */
    check_mpi(MPI_Barrier(comm));
    memcpy(r, s, sizeof(int) * N);
    check_mpi(MPI_Bcast(r, N, MPI_INT, root, comm));
    RESULT("bcast", sizeof(int) * N);
    CLEAR();
    check_mpi(MPI_Gather(s, N, MPI_INT, r, N, MPI_INT, root, comm));
    if (rank == root)
        RESULT("gather", all);
    CLEAR();
    check_mpi(MPI_Gatherv(s, counts[rank], MPI_INT, r, counts, displs, MPI_INT, root, comm));
    if (rank == root)
        RESULT("gatherv", all);
    CLEAR();
    check_mpi(MPI_Scatter(s, N, MPI_INT, r, N, MPI_INT, root, comm));
    RESULT("scatter", sizeof(int) * N);
    CLEAR();
    check_mpi(MPI_Scatterv(s, counts, displs, MPI_INT, r, counts[rank], MPI_INT, root, comm));
    RESULT("scatterv", sizeof(int) * (size_t)counts[rank]);
    CLEAR();
    check_mpi(MPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, comm));
    RESULT("allgather", all);
    CLEAR();
    check_mpi(MPI_Allgatherv(s, counts[rank], MPI_INT, r, counts, displs, MPI_INT, comm));
    RESULT("allgatherv", all);
    CLEAR();
    check_mpi(MPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, comm));
    RESULT("alltoall", all);
    CLEAR();
    check_mpi(MPI_Alltoallv(s, sym, displs, MPI_INT, r, sym, displs, MPI_INT, comm));
    RESULT("alltoallv", all);
    CLEAR();
    check_mpi(MPI_Alltoallw(s, sym, wdispls, types, r, sym, wdispls, types, comm));
    RESULT("alltoallw", all);
    CLEAR();
    check_mpi(MPI_Reduce(s, r, N, MPI_INT, MPI_SUM, root, comm));
    if (rank == root)
        RESULT("reduce", sizeof(int) * N);
    CLEAR();
    check_mpi(MPI_Allreduce(s, r, N, MPI_INT, MPI_MAX, comm));
    RESULT("allreduce", sizeof(int) * N);
    memcpy(r, s, sizeof(int) * N);
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, r, N, MPI_INT, MPI_SUM, comm));
    RESULT("allreduce in place", sizeof(int) * N);
    CLEAR();
    check_mpi(MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, comm));
    RESULT("reduce_scatter", sizeof(int) * (size_t)counts[rank]);
    CLEAR();
    check_mpi(MPI_Reduce_scatter_block(s, r, N, MPI_INT, MPI_SUM, comm));
    RESULT("reduce_scatter_block", sizeof(int) * N);
    CLEAR();
    check_mpi(MPI_Scan(s, r, N, MPI_INT, MPI_SUM, comm));
    RESULT("scan", sizeof(int) * N);
    CLEAR();
    check_mpi(MPI_Exscan(s, r, N, MPI_INT, MPI_SUM, comm));
    if (rank > 0)
        RESULT("exscan", sizeof(int) * N);

    /* Nonblocking, all in flight at once on separate buffers. */
    enum { K = 16 };
    int *rb[K];
    for (int k = 0; k < K; k++) {
        rb[k] = calloc((size_t)N * (size_t)size, sizeof(int));
    }
    MPI_Request q[K];
    memcpy(rb[1], s, sizeof(int) * N);
    check_mpi(MPI_Ibarrier(comm, &q[0]));
    check_mpi(MPI_Ibcast(rb[1], N, MPI_INT, root, comm, &q[1]));
    check_mpi(MPI_Igather(s, N, MPI_INT, rb[2], N, MPI_INT, root, comm, &q[2]));
    check_mpi(
        MPI_Igatherv(s, counts[rank], MPI_INT, rb[3], counts, displs, MPI_INT, root, comm, &q[3]));
    check_mpi(MPI_Iscatter(s, N, MPI_INT, rb[4], N, MPI_INT, root, comm, &q[4]));
    check_mpi(
        MPI_Iscatterv(s, counts, displs, MPI_INT, rb[5], counts[rank], MPI_INT, root, comm, &q[5]));
    check_mpi(MPI_Iallgather(s, N, MPI_INT, rb[6], N, MPI_INT, comm, &q[6]));
    check_mpi(
        MPI_Iallgatherv(s, counts[rank], MPI_INT, rb[7], counts, displs, MPI_INT, comm, &q[7]));
    check_mpi(MPI_Ialltoall(s, N, MPI_INT, rb[8], N, MPI_INT, comm, &q[8]));
    check_mpi(MPI_Ialltoallv(s, sym, displs, MPI_INT, rb[9], sym, displs, MPI_INT, comm, &q[9]));
    check_mpi(MPI_Ialltoallw(s, sym, wdispls, types, rb[10], sym, wdispls, types, comm, &q[10]));
    check_mpi(MPI_Ireduce(s, rb[11], N, MPI_INT, MPI_SUM, root, comm, &q[11]));
    check_mpi(MPI_Iallreduce(s, rb[12], N, MPI_INT, MPI_MIN, comm, &q[12]));
    check_mpi(MPI_Ireduce_scatter(s, rb[13], counts, MPI_INT, MPI_SUM, comm, &q[13]));
    check_mpi(MPI_Ireduce_scatter_block(s, rb[14], N, MPI_INT, MPI_SUM, comm, &q[14]));
    check_mpi(MPI_Iscan(s, rb[15], N, MPI_INT, MPI_SUM, comm, &q[15]));
    check_mpi(MPI_Waitall(K, q, MPI_STATUSES_IGNORE));
    for (int k = 1; k < K; k++)
        tlog("%s nonblocking %d: %lu", name, k, tsum(rb[k], all));
    int *ex = calloc(N, sizeof(int));
    MPI_Request exq;
    check_mpi(MPI_Iexscan(s, ex, N, MPI_INT, MPI_SUM, comm, &exq));
    check_mpi(MPI_Wait(&exq, MPI_STATUS_IGNORE));
    if (rank > 0)
        tlog("%s iexscan: %lu", name, tsum(ex, sizeof(int) * N));
    free(ex);
    for (int k = 0; k < K; k++)
        free(rb[k]);
    free(s);
    free(r);
    free(counts);
    free(displs);
    free(types);
    free(wdispls);
    free(sym);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    run(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    run(half, rank % 2 ? "odd" : "even");
    MPI_Comm_free(&half);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
