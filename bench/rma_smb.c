/*
 * Host overhead and application availability of one-sided operations, the
 * measurement of Sandia's SMB "overhead" test as DART-MPI's paper adapted it to
 * RMA (docs/PERFORMANCE.md, "One-sided: overhead and availability"). Rank 0
 * (the origin) holds a shared lock on rank 1's MPI_Win_allocate window for the
 * whole run and repeats, per iteration:
 *
 *     t0; MPI_Get or MPI_Put of SIZE bytes to rank 1; work(n); MPI_Win_flush; t1
 *
 * while rank 1 (the target) runs the same work(n) without a single MPI call,
 * then both meet in a barrier. base_t is the iteration with no work (the
 * transfer alone, the target waiting in the barrier); the work doubles until
 * an iteration takes more than 1.5 times base_t, and there
 *
 *     overhead = iter_t - work_t        availability = 1 - overhead / base_t
 *
 * work_t being the same work timed alone. A library that moves the data only
 * inside MPI calls of both sides finishes the transfer after the work
 * (availability about 0); one that moves it in the background hides it
 * (about 1). The target's own work is timed too: what serving the origin
 * costs the target's computation ("target_slowdown"). Every get's data and,
 * at the end of each size, the target's window after the puts are checked.
 * Ranks beyond the first two wait in the barriers.
 *
 *   rma_smb [OPS [SIZE[,SIZE...] [ITERATIONS]]]
 *     OPS get, put or get,put (default); SIZE bytes (default 4 KiB to 4 MiB,
 *     times 4); ITERATIONS per work count, medians taken (default 20).
 * One JSON object per operation and size on stdout (rank 0).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

enum { MAX_SWEEPS = 1 << 20 };

static double now(void) /* no MPI call: a library may progress inside any */
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Not periodic in any power of two up to 1 MiB: a piece of an operation
   copied to another piece's place shows (the offload moves 1 MiB pieces). */
static unsigned char pattern(long i, long bytes, int op)
{
    return (unsigned char)(i * 11 + (i >> 12) * 7 + (i >> 20) * 13 + bytes / 4096 + op * 29 + 3);
}

static void usage(const char *why)
{
    fprintf(stderr,
            "rma_smb: %s\n"
            "usage: rma_smb [get|put|get,put [SIZE[,SIZE...] [ITERATIONS]]] on 2 or more ranks\n",
            why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

struct point {
    double iter_t, work_t, target_work_t, target_alone_t;
};

/* 'iterations' of one work count: the medians of the origin's iteration and
   of the target's work, and the same work timed alone on each side. */
static struct point iterate(int op, long bytes, long sweeps, int iterations, unsigned char *buffer,
                            MPI_Win win, int rank, double *scratch)
{
    struct point p = {0, 0, 0, 0};
    for (int i = 0; i < iterations; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        if (rank == 0) {
            if (op == 0)
                MPI_Get(buffer, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            else
                MPI_Put(buffer, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
            compute(sweeps);
            MPI_Win_flush(1, win);
            scratch[i] = now() - t0;
        } else if (rank == 1) {
            compute(sweeps);
            scratch[i] = now() - t0;
        }
    }
    double iter = median(scratch, iterations);
    for (int i = 0; i < iterations; i++) { /* the same work alone */
        double t0 = now();
        compute(sweeps);
        scratch[i] = now() - t0;
    }
    double alone = median(scratch, iterations);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        p.iter_t = iter;
        p.work_t = alone;
    }
    /* the target's times travel to the origin */
    double mine[2] = {iter, alone}, theirs[2] = {0, 0};
    if (rank == 1)
        MPI_Send(mine, 2, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
    else if (rank == 0)
        MPI_Recv(theirs, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    p.target_work_t = theirs[0];
    p.target_alone_t = theirs[1];
    return p;
}

/* One operation and size: the JSON object on rank 0; returns wrong bytes. */
static long measure(int op, long bytes, int iterations, int rank, int nranks)
{
    unsigned char *base = NULL;
    MPI_Win win;
    MPI_Win_allocate(rank == 1 ? (MPI_Aint)bytes : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    unsigned char *buffer = rank == 0 ? malloc((size_t)bytes) : NULL;
    double *scratch = malloc((size_t)iterations * sizeof(double));
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        for (long i = 0; i < bytes; i++)
            base[i] = pattern(i, bytes, 0);
        MPI_Win_unlock(1, win);
    }
    if (rank == 0 && op == 1)
        for (long i = 0; i < bytes; i++)
            buffer[i] = pattern(i, bytes, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);

    struct point base_point = iterate(op, bytes, 0, iterations, buffer, win, rank, scratch);
    struct point at = base_point;
    long sweeps = 1;
    int stop = 0;
    while (!stop) { /* doubled until an iteration takes 1.5 times base_t */
        at = iterate(op, bytes, sweeps, iterations, buffer, win, rank, scratch);
        if (rank == 0)
            stop = at.iter_t > 1.5 * base_point.iter_t || sweeps >= MAX_SWEEPS;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!stop)
            sweeps *= 2;
    }

    long wrong = 0;
    if (rank == 0) {
        MPI_Win_unlock(1, win);
        if (op == 0)
            for (long i = 0; i < bytes; i++)
                wrong += buffer[i] != pattern(i, bytes, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && op == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        for (long i = 0; i < bytes; i++)
            wrong += base[i] != pattern(i, bytes, 1);
        MPI_Win_unlock(1, win);
        MPI_Send(&wrong, 1, MPI_LONG, 0, 8, MPI_COMM_WORLD);
        wrong = 0;
    } else if (rank == 0 && op == 1) {
        MPI_Recv(&wrong, 1, MPI_LONG, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    if (rank == 0) {
        double base_t = base_point.iter_t, overhead = at.iter_t - at.work_t;
        double availability = base_t > 0 ? 1 - overhead / base_t : 0;
        printf("{\"op\": \"%s\", \"bytes\": %ld, \"ranks\": %d, \"iterations\": %d, "
               "\"sweeps\": %ld, \"base_s\": %.9f, \"iter_s\": %.9f, \"work_s\": %.9f, "
               "\"overhead_s\": %.9f, \"availability\": %.4f, \"target_work_s\": %.9f, "
               "\"target_alone_s\": %.9f, \"target_slowdown\": %.4f, \"wrong_bytes\": %ld}\n",
               op ? "put" : "get", bytes, nranks, iterations, sweeps, base_t, at.iter_t, at.work_t,
               overhead, availability, at.target_work_t, at.target_alone_t,
               at.target_alone_t > 0 ? at.target_work_t / at.target_alone_t - 1 : 0.0, wrong);
        fflush(stdout);
    }
    MPI_Win_free(&win);
    free(buffer);
    free(scratch);
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *ops = argc > 1 ? argv[1] : "get,put";
    const char *sizes = argc > 2 ? argv[2] : "4096,16384,65536,262144,1048576,4194304";
    int iterations = argc > 3 ? atoi(argv[3]) : 20;
    if (nranks < 2)
        usage("needs 2 or more ranks (rank 0 reaches rank 1's window)");
    if (strcmp(ops, "get") && strcmp(ops, "put") && strcmp(ops, "get,put"))
        usage("OPS must be get, put or get,put");
    if (iterations < 1 || iterations > 10000)
        usage("ITERATIONS must be 1 to 10000");
    compute(1); /* first touch of the work's arrays */
    long wrong = 0;
    for (int op = 0; op < 2; op++) {
        if (!strstr(ops, op ? "put" : "get"))
            continue;
        for (const char *at = sizes; *at;) {
            char *end;
            long bytes = strtol(at, &end, 10);
            if (end == at || (*end && *end != ',') || bytes <= 0 || bytes > (1L << 30))
                usage("SIZE must be 1 to 1073741824 bytes, several separated by commas");
            wrong += measure(op, bytes, iterations, rank, nranks);
            at = *end ? end + 1 : end;
        }
    }
    MPI_Finalize();
    return rank == 0 && wrong ? 1 : 0;
}
