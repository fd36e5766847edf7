/*
 * The cost of monitoring one message, on MPI_COMM_SELF: post a batch of
 * receives, then a tight loop of blocking sends that each find their receive
 * posted, then MPI_Waitall on the receives. Each rank works on its own, so
 * the time is the CPU time of the calls, not a network's. Per trial, the time
 * per message of the sends, and of the receives (posting + completion), as the
 * minimum over BATCHES batches of BATCH messages (the least disturbed batch
 * on a shared machine):
 *
 *   {"test": "monitor_cost", "bytes": 8, "trial": 0, "send_ns": ..., "recv_ns": ...}
 *
 * Compare the same program without Tandem, with Tandem and monitoring off,
 * with TANDEM_MONITOR=1, and under Open MPI's own monitoring.
 *
 *   monitor_cost BYTES TRIALS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BATCH = 256, BATCHES = 400 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: monitor_cost BYTES TRIALS\n");
        MPI_Finalize();
        return 1;
    }
    int bytes = atoi(argv[1]), trials = atoi(argv[2]);
    char *out = calloc((size_t)bytes + 1, 1), *in = calloc((size_t)BATCH * (size_t)bytes + 1, 1);
    MPI_Request requests[BATCH];
    for (int t = -1; t < trials; t++) { /* trial -1 warms up */
        double send = 1e9, recv = 1e9;
        for (int b = 0; b < BATCHES; b++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < BATCH; i++)
                MPI_Irecv(in + (size_t)i * (size_t)bytes, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF,
                          &requests[i]);
            double t1 = MPI_Wtime();
            for (int i = 0; i < BATCH; i++)
                MPI_Send(out, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF);
            double t2 = MPI_Wtime();
            MPI_Waitall(BATCH, requests, MPI_STATUSES_IGNORE);
            double t3 = MPI_Wtime();
            send = t2 - t1 < send ? t2 - t1 : send;
            recv = (t1 - t0) + (t3 - t2) < recv ? (t1 - t0) + (t3 - t2) : recv;
        }
        if (t >= 0 && rank == 0)
            printf("{\"test\": \"monitor_cost\", \"bytes\": %d, \"trial\": %d, \"send_ns\": %.2f, "
                   "\"recv_ns\": %.2f}\n",
                   bytes, t, 1e9 * send / BATCH, 1e9 * recv / BATCH);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
