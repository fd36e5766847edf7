/*
 * FastMPJ's micro-benchmark of nonblocking collectives (Ramos et al.,
 * figure 6), for broadcast and scatter, after LibNBC's test:
 *   block        the blocking collective (MPI_Bcast, MPI_Scatter)
 *   nbc          the nonblocking one with MPI_Wait at once: its overhead
 *   nbc+overlap  the nonblocking one, then a synthetic workload as long as
 *                'nbc' with MPI_Test calls spread over it (TESTS of them),
 *                then MPI_Wait
 * Each figure is the latency of the communication calls only (the
 * collective, the tests, the wait), not of the workload: with overlap, less
 * of the operation is left to wait for. The slowest rank's latency counts;
 * medians over the trials. One JSON object per size on stdout.
 *
 *   coll_seed bcast|scatter SIZE[,SIZE...] [TRIALS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

enum { TESTS = 10 };

static char *a, *b;
static int scatter;

static void blocking(int bytes)
{
    if (scatter)
        MPI_Scatter(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    else
        MPI_Bcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void nonblocking(int bytes, MPI_Request *r)
{
    if (scatter)
        MPI_Iscatter(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, r);
    else
        MPI_Ibcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, r);
}

static double slowest(double mine)
{
    double most;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

/* One latency: mode 0 block, 1 nbc, 2 nbc+overlap with 'sweeps' of work. */
static double latency(int mode, int bytes, long sweeps)
{
    MPI_Request r;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), spent = 0;
    if (mode == 0) {
        blocking(bytes);
        return slowest(MPI_Wtime() - t0);
    }
    nonblocking(bytes, &r);
    if (mode == 2) {
        spent = MPI_Wtime() - t0;
        for (int i = 0; i < TESTS; i++) {
            int done;
            compute(sweeps / TESTS + (i < sweeps % TESTS));
            double t = MPI_Wtime();
            MPI_Test(&r, &done, MPI_STATUS_IGNORE);
            spent += MPI_Wtime() - t;
        }
        t0 = MPI_Wtime();
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return slowest(spent + MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || (strcmp(argv[1], "bcast") != 0 && strcmp(argv[1], "scatter") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_seed bcast|scatter SIZE[,SIZE...] [TRIALS]\n");
        MPI_Finalize();
        return 1;
    }
    scatter = strcmp(argv[1], "scatter") == 0;
    int trials = argc > 3 ? atoi(argv[3]) : 9;
    double *v[3];
    for (int m = 0; m < 3; m++)
        v[m] = malloc(sizeof(double) * (size_t)trials);
    compute(1); /* first touch */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    compute(50);
    double sweep = slowest(MPI_Wtime() - t0) / 50; /* the work's pace */
    for (char *item = strtok(argv[2], ","); item; item = strtok(NULL, ",")) {
        int bytes = atoi(item);
        size_t room = (size_t)bytes * (size_t)size + 64;
        a = calloc(room, 1);
        b = calloc(room, 1);
        latency(0, bytes, 0), latency(1, bytes, 0); /* warm-up */
        for (int t = 0; t < trials; t++) {          /* the three modes alternate */
            v[0][t] = latency(0, bytes, 0);
            v[1][t] = latency(1, bytes, 0);
            v[2][t] = latency(2, bytes, (long)(v[1][t] / sweep) + 1);
        }
        double block = median(v[0], trials), nbc = median(v[1], trials);
        double overlap = median(v[2], trials);
        if (rank == 0)
            printf("{\"test\": \"coll_seed\", \"collective\": \"%s\", \"ranks\": %d, "
                   "\"bytes\": %d, \"trials\": %d, \"block_s\": %.7f, \"nbc_s\": %.7f, "
                   "\"nbc_overlap_s\": %.7f}\n",
                   argv[1], size, bytes, trials, block, nbc, overlap);
        fflush(stdout);
        free(a);
        free(b);
    }
    for (int m = 0; m < 3; m++)
        free(v[m]);
    MPI_Finalize();
    return 0;
}
