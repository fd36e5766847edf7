/*
 * Back-to-back nonblocking collectives, each waited for at once: the time
 * of one post + MPI_Wait, best of 7 repetitions of ITERS, from the slowest
 * rank. With MULTIPLE set in the environment the program asks for
 * MPI_THREAD_MULTIPLE itself (what that level costs the MPI library, the
 * level Tandem's progress thread needs).
 *   loop ibcast|iallreduce|iscatter|ialltoall BYTES ITERS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided;
    if (getenv("MULTIPLE"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: loop ibcast|iallreduce|iscatter|ialltoall BYTES ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *coll = argv[1];
    int bytes = atoi(argv[2]), iters = atoi(argv[3]), rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *a = calloc((size_t)bytes * size + 8, 1), *b = calloc((size_t)bytes * size + 8, 1);
    double best = 1e9;
    for (int rep = 0; rep < 7; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Request r;
            if (!strcmp(coll, "ibcast"))
                MPI_Ibcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
            else if (!strcmp(coll, "iallreduce"))
                MPI_Iallreduce(a, b, bytes / 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
            else if (!strcmp(coll, "iscatter"))
                MPI_Iscatter(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
            else
                MPI_Ialltoall(a, bytes / size, MPI_BYTE, b, bytes / size, MPI_BYTE, MPI_COMM_WORLD,
                              &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        double mine = (MPI_Wtime() - t0) / iters, most;
        MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (most < best)
            best = most;
    }
    if (rank == 0)
        printf("%.3f\n", best * 1e6);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
