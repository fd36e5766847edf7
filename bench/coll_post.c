/*
 * What posting a nonblocking collective costs, and what waiting for it costs,
 * right after the process was busy (no pause) or idle (a pause of IDLE_US
 * microseconds, in which Tandem's progress thread goes to sleep: the post then
 * pays for waking it).
 *
 *   coll_post BYTES IDLE_US[,IDLE_US...] [TRIALS]
 *
 * Each trial: a barrier, the pause, MPI_Ibcast of BYTES from rank 0 (timed:
 * post), MPI_Wait (timed: wait). One JSON object per pause on stdout, rank
 * 0's medians in seconds, and the median over the trials of the slowest
 * rank's post + wait (slowest_s).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stats.h"

static void pause_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (us > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_post BYTES IDLE_US[,IDLE_US...] [TRIALS]\n");
        MPI_Finalize();
        return 2;
    }
    int bytes = atoi(argv[1]), trials = argc > 3 ? atoi(argv[3]) : 1001;
    char *buffer = calloc((size_t)bytes + 1, 1);
    double *post = malloc(sizeof(double) * (size_t)trials);
    double *wait = malloc(sizeof(double) * (size_t)trials);
    double *slowest = malloc(sizeof(double) * (size_t)trials);
    for (char *item = strtok(argv[2], ","); item; item = strtok(NULL, ",")) {
        long idle = atol(item);
        for (int t = 0; t < trials; t++) {
            MPI_Request request;
            MPI_Barrier(MPI_COMM_WORLD);
            pause_us(idle);
            double t0 = MPI_Wtime();
            MPI_Ibcast(buffer, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &request);
            double t1 = MPI_Wtime();
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            double t2 = MPI_Wtime();
            post[t] = t1 - t0;
            wait[t] = t2 - t1;
            double mine = t2 - t0;
            MPI_Allreduce(&mine, &slowest[t], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        if (rank == 0)
            printf("{\"test\": \"coll_post\", \"ranks\": %d, \"bytes\": %d, \"idle_us\": %ld, "
                   "\"trials\": %d, \"post_s\": %.8f, \"wait_s\": %.8f, \"slowest_s\": %.8f}\n",
                   size, bytes, idle, trials, median(post, trials), median(wait, trials),
                   median(slowest, trials));
    }
    free(buffer);
    free(post);
    free(wait);
    free(slowest);
    MPI_Finalize();
    return 0;
}
