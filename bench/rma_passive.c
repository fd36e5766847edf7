/*
 * Truly passive target: does a one-sided get complete while its target
 * computes without calling MPI? Rank 0 (the origin) gets SIZE bytes from
 * rank 1's window under MPI_Win_lock / MPI_Win_unlock, timed from the lock to
 * the unlock, in two cases, alternated over the trials:
 *   pure  the target waits in MPI_Barrier meanwhile (inside MPI, so any MPI
 *         library serves the get)
 *   busy  the target computes WORK seconds without a single MPI call, then
 *         enters the barrier
 * A passive target answers the busy get in about the pure time; one that
 * needs the target's MPI calls answers it only once the computation is over,
 * about WORK seconds later. Every get's data is checked. Ranks beyond the
 * first two wait in the barriers. One JSON object per size on stdout (rank
 * 0): medians and every trial of both cases, and busy / pure.
 *
 *   rma_passive [SIZE[,SIZE...] [WORK [TRIALS [FLAVOUR]]]]
 *     SIZE bytes (default 8 MiB), WORK seconds (default 1.0), TRIALS per case
 *     (default 5), FLAVOUR allocate (default) or create: the window's memory
 *     from MPI_Win_allocate or the program's own under MPI_Win_create.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

/* Compute for 'seconds' of wall-clock time without any MPI call (MPI_Wtime
   too is left alone: an MPI library may progress inside any of its calls). */
static void compute_for(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        compute(4);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < seconds);
}

static unsigned char pattern(long i, int trial)
{
    return (unsigned char)(i * 7 + trial * 13 + 1);
}

static void usage(const char *why)
{
    fprintf(stderr,
            "rma_passive: %s\n"
            "usage: rma_passive [SIZE[,SIZE...] [WORK [TRIALS [allocate|create]]]] on 2 or more "
            "ranks\n",
            why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The gets of one size: the JSON object on rank 0; returns the wrong bytes. */
static long measure(long bytes, double work, int trials, const char *flavour, int rank, int size)
{
    MPI_Aint extent = rank == 1 ? (MPI_Aint)bytes : 0;
    unsigned char *base = NULL;
    MPI_Win win;
    if (flavour[0] == 'a') {
        MPI_Win_allocate(extent, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    } else {
        base = extent ? malloc((size_t)extent) : NULL;
        MPI_Win_create(base, extent, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    unsigned char *got = rank == 0 ? malloc((size_t)bytes) : NULL;
    double *pure = calloc((size_t)trials, sizeof(double));
    double *busy = calloc((size_t)trials, sizeof(double));
    long wrong = 0;
    for (int t = 0; t < 2 * trials; t++) {
        int is_busy = t % 2, trial = t / 2;
        if (rank == 1) { /* new contents for every get, written under its own lock */
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            for (long i = 0; i < bytes; i++)
                base[i] = pattern(i, t);
            MPI_Win_unlock(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double t0 = MPI_Wtime();
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Get(got, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
            double took = MPI_Wtime() - t0;
            (is_busy ? busy : pure)[trial] = took;
            for (long i = 0; i < bytes; i++)
                wrong += got[i] != pattern(i, t);
        } else if (rank == 1 && is_busy) {
            compute_for(work);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    if (rank == 0) {
        printf("{\"bytes\": %ld, \"work_s\": %.3f, \"trials\": %d, \"flavour\": \"%s\", "
               "\"ranks\": %d, \"wrong_bytes\": %ld, \"pure\": [",
               bytes, work, trials, flavour, size, wrong);
        for (int i = 0; i < trials; i++)
            printf("%s%.6f", i ? ", " : "", pure[i]);
        printf("], \"busy\": [");
        for (int i = 0; i < trials; i++)
            printf("%s%.6f", i ? ", " : "", busy[i]);
        double p = median(pure, trials), b = median(busy, trials);
        printf("], \"pure_s\": %.6f, \"busy_s\": %.6f, \"busy_over_pure\": %.2f, "
               "\"busy_over_work\": %.3f}\n",
               p, b, p > 0 ? b / p : 0.0, work > 0 ? b / work : 0.0);
        fflush(stdout);
    }
    MPI_Win_free(&win);
    if (flavour[0] == 'c')
        free(base);
    free(got);
    free(pure);
    free(busy);
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *sizes = argc > 1 ? argv[1] : "8388608";
    double work = argc > 2 ? atof(argv[2]) : 1.0;
    int trials = argc > 3 ? atoi(argv[3]) : 5;
    const char *flavour = argc > 4 ? argv[4] : "allocate";
    if (size < 2)
        usage("needs 2 or more ranks (rank 0 gets from rank 1)");
    if (work < 0 || work > 60)
        usage("WORK must be 0 to 60 seconds");
    if (trials < 1 || trials > 1000)
        usage("TRIALS must be 1 to 1000");
    if (strcmp(flavour, "allocate") != 0 && strcmp(flavour, "create") != 0)
        usage("FLAVOUR must be allocate or create");
    compute(1); /* first touch of the work's arrays */
    long wrong = 0;
    for (const char *at = sizes; *at;) {
        char *end;
        long bytes = strtol(at, &end, 10);
        if (end == at || (*end && *end != ',') || bytes <= 0 || bytes > (1L << 30))
            usage("SIZE must be 1 to 1073741824 bytes, several separated by commas");
        wrong += measure(bytes, work, trials, flavour, rank, size);
        at = *end ? end + 1 : end;
    }
    MPI_Finalize();
    return rank == 0 && wrong ? 1 : 0;
}
