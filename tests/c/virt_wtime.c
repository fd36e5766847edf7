/*
 * MPI_Wtime of virtual ranks (TANDEM_VIRT_WTIME, tests/python/test_virt.py):
 * every rank computes COMPUTE seconds of the monotonic clock, without an
 * MPI call but MPI_Wtime, between two barriers. With several ranks on one
 * core they take turns, so the rank that computes first sees, on the wall,
 * its own turn and every other rank's; its own time (rank) sees its turn.
 * Rank 0 prints the longest and shortest MPI_Wtime span of the ranks, in
 * milliseconds, and whether MPI_Wtime ever went back.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define COMPUTE 0.1

static double monotonic(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime(), last = start;
    int back = 0;
    for (double until = monotonic() + COMPUTE; monotonic() < until;) {
        double now = MPI_Wtime();
        back |= now < last;
        last = now;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double span = MPI_Wtime() - start, longest, shortest;
    back |= span < 0;
    MPI_Reduce(&span, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&span, &shortest, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    int any_back;
    MPI_Reduce(&back, &any_back, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d, compute %.0f ms each: MPI_Wtime spans %.1f to %.1f ms, %s\n", size,
               COMPUTE * 1e3, shortest * 1e3, longest * 1e3,
               any_back ? "went back" : "never went back");
    MPI_Finalize();
    return 0;
}
