/*
 * What one cheap MPI call costs while nonblocking collectives are in flight:
 * rank 0 posts K broadcasts rooted at rank 1 and times a loop of MPI_Iprobe
 * calls while rank 1 holds back (it posts its broadcasts only after the loop).
 * Each Iprobe then moves the pending collectives: the MPI library's progress
 * engine for its own, one poll of the schedules for Tandem's. Prints one JSON
 * line: the least of 5 timings of 200000 calls, in nanoseconds per call.
 *
 *   coll_poll_cost K        (2 ranks or more; K <= 64)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CALLS = 200000, TRIALS = 5, MAX_K = 64, COUNT = 16 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int k = argc > 1 ? atoi(argv[1]) : 0;
    if (size < 2 || k < 0 || k > MAX_K) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_poll_cost K (0 <= K <= %d, 2 ranks or more)\n", MAX_K);
        MPI_Finalize();
        return 1;
    }
    static double buf[MAX_K][COUNT];
    MPI_Request requests[MAX_K];
    if (rank == 0) {
        for (int i = 0; i < k; i++)
            MPI_Ibcast(buf[i], COUNT, MPI_DOUBLE, 1, MPI_COMM_WORLD, &requests[i]);
        double best = 1e9;
        int flag;
        for (int t = 0; t < TRIALS; t++) {
            double t0 = MPI_Wtime();
            for (int c = 0; c < CALLS; c++)
                MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            double per_call = (MPI_Wtime() - t0) / CALLS;
            best = per_call < best ? per_call : best;
        }
        printf("{\"in_flight\": %d, \"iprobe_ns\": %.1f}\n", k, best * 1e9);
        fflush(stdout);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    } else {
        if (rank == 1)
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < k; i++)
            MPI_Ibcast(buf[i], COUNT, MPI_DOUBLE, 1, MPI_COMM_WORLD, &requests[i]);
    }
    MPI_Waitall(k, requests, MPI_STATUSES_IGNORE);
    MPI_Finalize();
    return 0;
}
