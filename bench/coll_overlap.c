/*
 * Overlap of nonblocking collectives with computation, as the OSU
 * micro-benchmarks define it. For a collective and a size (bytes per rank):
 *   pure     post + wait with nothing between
 *   compute  a fixed amount of work, calibrated to last about 'pure'
 *   overall  post + the same work + wait
 *   overlap  = max(0, 100 - (overall - compute) / pure * 100)
 * Every rank computes; the slowest rank's times count. Medians over the
 * trials. One JSON object per size on stdout.
 *
 *   coll_overlap ibcast|iallreduce|iscatter|ialltoall[,...] SIZE[,SIZE...] [TRIALS [SETTLE_US]]
 *
 * Several collectives, comma-separated, run one after the other, each over
 * every size.
 *
 * SETTLE_US (default 0): every rank sleeps that long before each timing, so
 * that every timing starts from a rested network. On the shaped network (a
 * token bucket of 256 KB refilled at 2 Gbit/s) a message within the bucket
 * moves at loopback speed when the bucket is full and at the shaped rate
 * when the timings before drained it; without a pause a 64 KiB time read
 * anything between the two, depending on how fast the trials before ran.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

typedef enum { IBCAST, IALLREDUCE, ISCATTER, IALLTOALL } collective;

static char *a, *b;
static long settle_us;

static void post(collective c, int bytes, int size, MPI_Request *r)
{
    int n = bytes / (int)sizeof(int);
    switch (c) {
    case IBCAST: MPI_Ibcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, r); break;
    case IALLREDUCE: MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r); break;
    case ISCATTER:
        MPI_Iscatter(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, r);
        break;
    case IALLTOALL:
        MPI_Ialltoall(a, bytes / size, MPI_BYTE, b, bytes / size, MPI_BYTE, MPI_COMM_WORLD, r);
        break;
    }
}

/* One timing: post, 'sweeps' of work, wait (c < 0: the work alone); the
   slowest rank's time. */
static double timed(int c, int bytes, int size, long sweeps)
{
    MPI_Request r;
    struct timespec rest = {settle_us / 1000000, (settle_us % 1000000) * 1000};
    while (settle_us > 0 && nanosleep(&rest, &rest) != 0)
        ;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (c >= 0)
        post((collective)c, bytes, size, &r);
    if (sweeps > 0)
        compute(sweeps);
    if (c >= 0)
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    double mine = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const char *const names[] = {"ibcast", "iallreduce", "iscatter", "ialltoall"};
    enum { MAX_SIZES = 64 };
    int chosen[4], nchosen = 0, sizes[MAX_SIZES], nsizes = 0, usable = argc > 2;
    for (char *item = usable ? strtok(argv[1], ",") : NULL; item; item = strtok(NULL, ",")) {
        int which = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(item, names[i]) == 0)
                which = i;
        usable = usable && which >= 0 && nchosen < 4;
        if (usable)
            chosen[nchosen++] = which;
    }
    for (char *item = usable ? strtok(argv[2], ",") : NULL; item; item = strtok(NULL, ",")) {
        usable = usable && nsizes < MAX_SIZES && atoi(item) >= 0;
        if (usable)
            sizes[nsizes++] = atoi(item);
    }
    if (!usable || nchosen == 0 || nsizes == 0) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_overlap ibcast|iallreduce|iscatter|ialltoall[,...] "
                            "SIZE[,SIZE...] [TRIALS [SETTLE_US]]\n");
        MPI_Finalize();
        return 1;
    }
    int trials = argc > 3 ? atoi(argv[3]) : 5;
    trials = trials < 1 ? 1 : trials;
    settle_us = argc > 4 ? atol(argv[4]) : 0;
    double *pure = malloc(sizeof(double) * (size_t)trials);
    double *work = malloc(sizeof(double) * (size_t)trials);
    double *overall = malloc(sizeof(double) * (size_t)trials);
    compute(1); /* first touch */
    for (int k = 0; k < nchosen; k++) {
        int which = chosen[k];
        for (int s = 0; s < nsizes; s++) {
            int bytes = sizes[s];
            size_t room = (size_t)bytes * (size_t)size + 64;
            a = calloc(room, 1);
            b = calloc(room, 1);
            timed(which, bytes, size, 0);               /* warm-up */
            double sweep = timed(-1, 0, size, 50) / 50; /* the work's pace, now */
            for (int t = 0; t < trials; t++) {
                pure[t] = timed(which, bytes, size, 0);
                long sweeps = (long)(pure[t] / sweep) + 1;
                work[t] = timed(-1, 0, size, sweeps);
                overall[t] = timed(which, bytes, size, sweeps);
            }
            double p = median(pure, trials), w = median(work, trials);
            double o = median(overall, trials), overlap = 100 - (o - w) / p * 100;
            if (rank == 0)
                printf("{\"test\": \"coll_overlap\", \"collective\": \"%s\", \"ranks\": %d, "
                       "\"bytes\": %d, \"trials\": %d, \"settle_us\": %ld, \"pure_s\": %.7f, "
                       "\"compute_s\": %.7f, "
                       "\"overall_s\": %.7f, \"overlap\": %.2f}\n",
                       names[which], size, bytes, trials, settle_us, p, w, o,
                       overlap < 0 ? 0 : overlap);
            fflush(stdout);
            free(a);
            free(b);
        }
    }
    free(pure);
    free(work);
    free(overall);
    MPI_Finalize();
    return 0;
}
