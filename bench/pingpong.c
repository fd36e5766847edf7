/*
 * Ping-pong latency and bandwidth, and the small-message rate, between two
 * ranks. For each size: the median over TRIALS batches of the one-way time
 * (half a round trip, each batch of many round trips), and the bandwidth it
 * gives. Then the message rate: windows of 64 nonblocking 8-byte sends
 * answered by one acknowledgement. One JSON object per line.
 *
 *   pingpong SIZE[,SIZE...] [TRIALS [WINDOWS]]
 *
 * WINDOWS (default 500) windows of the message rate; 0 leaves the rate out,
 * which takes most of a run's time (bench/hosts_cost.py times only the
 * ping-pong).
 *
 * BENCH_THREAD_LEVEL=multiple makes the program itself ask for
 * MPI_THREAD_MULTIPLE (MPI_Init_thread), to measure what that level costs the
 * MPI library without Tandem.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int main(int argc, char **argv)
{
    const char *level = getenv("BENCH_THREAD_LEVEL");
    if (level && strcmp(level, "multiple") == 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: pingpong SIZE[,SIZE...] [TRIALS] (2 ranks)\n");
        MPI_Finalize();
        return 1;
    }
    int trials = argc > 2 ? atoi(argv[2]) : 7;
    int windows = argc > 3 ? atoi(argv[3]) : 500;
    double *t = malloc(sizeof(double) * (size_t)trials);
    int peer = 1 - rank;
    for (char *item = strtok(argv[1], ","); item; item = strtok(NULL, ",")) {
        int bytes = atoi(item);
        int reps = bytes <= 4096 ? 2000 : bytes <= (1 << 18) ? 200 : 20;
        char *buf = calloc((size_t)bytes + 1, 1);
        for (int k = -1; k < trials; k++) { /* k = -1 warms up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int r = 0; r < reps; r++) {
                if (rank == 0) {
                    MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                }
            }
            if (k >= 0)
                t[k] = (MPI_Wtime() - t0) / reps / 2;
        }
        if (rank == 0) {
            double one_way = median(t, trials);
            printf("{\"test\": \"pingpong\", \"bytes\": %d, \"latency_us\": %.3f, "
                   "\"bandwidth_mbs\": %.1f}\n",
                   bytes, one_way * 1e6, bytes / one_way / 1e6);
            fflush(stdout);
        }
        free(buf);
    }

    enum { WINDOW = 64 };
    char small[WINDOW][8];
    MPI_Request reqs[WINDOW];
    for (int k = -1; k < trials && windows > 0; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int w = 0; w < windows; w++) {
            for (int i = 0; i < WINDOW; i++) {
                if (rank == 0)
                    MPI_Isend(small[i], 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &reqs[i]);
                else
                    MPI_Irecv(small[i], 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &reqs[i]);
            }
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            if (rank == 0)
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        }
        if (k >= 0)
            t[k] = (MPI_Wtime() - t0) / (WINDOW * windows);
    }
    if (rank == 0 && windows > 0)
        printf("{\"test\": \"message_rate\", \"bytes\": 8, \"rate_per_s\": %.0f}\n",
               1.0 / median(t, trials));
    free(t);
    MPI_Finalize();
    return 0;
}
