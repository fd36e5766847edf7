/*
 * The overlap demonstration of `make demo`: rank 0 sends a message with
 * MPI_Isend, computes a fixed amount of work, and waits; rank 1 receives.
 * Prints one JSON line with the times and the availability (Sandia SMB's
 * definition: the share of the transfer time the sender could compute).
 *
 *   overlap_demo [bytes] [trials]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

/* Rank 0 sends 'bytes' with MPI_Isend, computes 'sweeps', and waits; rank 1
   receives and answers with an empty message, so that rank 0's time covers
   the delivery, not only the local completion of the send. */
static double exchange(char *buf, int bytes, int rank, int sweeps)
{
    MPI_Request r;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 0) {
        MPI_Isend(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
        compute(sweeps);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

static int cmp(const void *x, const void *y)
{
    double d = *(const double *)x - *(const double *)y;
    return (d > 0) - (d < 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 4 << 20;
    int trials = argc > 2 ? atoi(argv[2]) : 5;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "overlap_demo: run with exactly 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char *buf = malloc((size_t)bytes);
    double *comm = malloc(sizeof(double) * (size_t)trials);
    double *total = malloc(sizeof(double) * (size_t)trials);
    double work_time = 0;
    int sweeps = 1;

    /* Calibrate the work to last about as long as the transfer. */
    for (int round = 0; round < 2; round++) {
        double transfer = exchange(buf, bytes, rank, 0);
        double t0 = MPI_Wtime();
        compute(10);
        double per_sweep = (MPI_Wtime() - t0) / 10;
        sweeps = (int)(transfer / per_sweep) + 1;
        MPI_Bcast(&sweeps, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    for (int t = 0; t < trials; t++) {
        comm[t] = exchange(buf, bytes, rank, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0)
            compute(sweeps);
        double w = MPI_Wtime() - t0;
        work_time = t == 0 || w < work_time ? w : work_time;
        total[t] = exchange(buf, bytes, rank, sweeps);
    }
    if (rank == 0) {
        qsort(comm, (size_t)trials, sizeof(double), cmp);
        qsort(total, (size_t)trials, sizeof(double), cmp);
        double c_med = comm[trials / 2], t_med = total[trials / 2];
        double availability = 1.0 - (t_med - work_time) / c_med;
        if (availability < 0)
            availability = 0;
        printf("{\"bytes\": %d, \"transfer_s\": %.6f, \"work_s\": %.6f, \"total_s\": %.6f, "
               "\"availability\": %.4f}\n",
               bytes, c_med, work_time, t_med, availability);
    }
    free(buf);
    free(comm);
    free(total);
    MPI_Finalize();
    return 0;
}
