/*
 * Latency of the small collectives: MPI_Barrier, MPI_Bcast of 8 bytes
 * (the root moving round the ranks), MPI_Reduce of one double to a moving
 * root, MPI_Allreduce of one double, MPI_Allgather, MPI_Gather and
 * MPI_Scatter of one double per rank (the root moving), MPI_Alltoall of
 * BLOCK doubles per pair of ranks (default 1), and MPI_Alltoallv of the
 * same blocks.
 * A plain MPI program, built as virtual ranks (tandem-bench-virt-coll,
 * `tandem cc`) and against the real MPI (tandem-bench-virt-coll-real), so
 * that the same source times the virtual ranks' collectives and the real
 * MPI's. Each collective runs ITERS times after a pass of ITERS to warm up;
 * the time per call is the slowest rank's, printed by rank 0 as one JSON
 * line per collective:
 *
 *   virt_coll [ITERS [BLOCK]]        (default 200, 1)
 *   {"collective": "barrier", "ranks": 64, "iters": 200, "us": 48.6}
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum {
    BARRIER,
    BCAST,
    REDUCE,
    ALLREDUCE,
    ALLGATHER,
    GATHER,
    SCATTER,
    ALLTOALL,
    ALLTOALLV,
    COLLECTIVES
};
static const char *const names[COLLECTIVES] = {"barrier",   "bcast",     "reduce",
                                               "allreduce", "allgather", "gather",
                                               "scatter",   "alltoall",  "alltoallv"};

static int block = 1; /* the same for every rank: the virtual ranks of a process share it */

/* counts and displs: alltoallv's, block doubles for each rank (each
   rank's own arrays) */
static void one(int which, int i, int size, double *x, double *y, double *all, double *other,
                const int *counts, const int *displs)
{
    switch (which) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(x, 1, MPI_DOUBLE, i % size, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(x, y, 1, MPI_DOUBLE, MPI_SUM, i % size, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, i % size, MPI_COMM_WORLD); break;
    case SCATTER:
        MPI_Scatter(all, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, i % size, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(all, block, MPI_DOUBLE, other, block, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    default:
        MPI_Alltoallv(all, counts, displs, MPI_DOUBLE, other, counts, displs, MPI_DOUBLE,
                      MPI_COMM_WORLD);
        break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 200;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (iters < 1) {
        if (rank == 0)
            fprintf(stderr, "virt_coll: ITERS must be a positive number, not %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    block = argc > 2 ? atoi(argv[2]) : 1;
    if (block < 1) {
        if (rank == 0)
            fprintf(stderr, "virt_coll: BLOCK must be a positive number, not %s\n", argv[2]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double x = rank, y = 0, *all = calloc((size_t)size * (size_t)block, sizeof(double));
    double *other = calloc((size_t)size * (size_t)block, sizeof(double));
    int *counts = malloc(sizeof *counts * (size_t)size);
    int *displs = malloc(sizeof *displs * (size_t)size);
    for (int r = 0; r < size; r++)
        counts[r] = block, displs[r] = r * block;
    for (int which = 0; which < COLLECTIVES; which++) {
        double spent = 0;
        for (int pass = 0; pass < 2; pass++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                one(which, i, size, &x, &y, all, other, counts, displs);
            spent = (MPI_Wtime() - start) / iters;
        }
        double slowest;
        MPI_Reduce(&spent, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("{\"collective\": \"%s\", \"ranks\": %d, \"iters\": %d, \"block\": %d, "
                   "\"us\": %.3f}\n",
                   names[which], size, iters, which >= ALLTOALL ? block : 1, slowest * 1e6);
    }
    free(all);
    free(other);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
