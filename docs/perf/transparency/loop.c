/*
 * The per-call cost of the collectives that the transparency fixes touch most:
 * MPI_Barrier and an 8-byte MPI_Allreduce (blocking: one more progress call
 * after a shared-memory round, its own tags and slots) and MPI_Iallreduce +
 * MPI_Wait (nonblocking: the holds, a progress call where every schedule
 * waits for flags). One JSON line per call: the median over TRIALS batches
 * of the mean time of BATCH calls, on rank 0.
 *
 *   loop TRIALS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BATCH = 200 };

static int by_value(const void *x, const void *y)
{
    double d = *(const double *)x - *(const double *)y;
    return (d > 0) - (d < 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, trials = argc > 1 ? atoi(argv[1]) : 51;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *t = malloc(sizeof(double) * (size_t)trials), in = 1, out = 0;
    const char *names[3] = {"barrier", "allreduce_8B", "iallreduce_8B"};
    for (int call = 0; call < 3; call++) {
        for (int k = -3; k < trials; k++) { /* 3 batches of warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < BATCH; i++) {
                MPI_Request r;
                if (call == 0)
                    MPI_Barrier(MPI_COMM_WORLD);
                else if (call == 1)
                    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else {
                    MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                }
            }
            if (k >= 0)
                t[k] = (MPI_Wtime() - t0) / BATCH;
        }
        qsort(t, (size_t)trials, sizeof(double), by_value);
        if (rank == 0)
            printf("{\"call\": \"%s\", \"ranks\": %d, \"median_s\": %.9f}\n", names[call], size,
                   t[trials / 2]);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
