/*
 * What moving a message costs the CPUs of its two ranks when nothing else
 * runs: rank 0 posts an MPI_Isend, rank 1 an MPI_Irecv, both sleep (so the
 * MPI library moves the data only if something progresses it in the
 * background), then wait. Each rank reports its process CPU time per
 * transfer, user and system (the kernel's TCP work), as medians over the
 * trials. Under Tandem with the event policy this is the CPU a transfer takes
 * from a computation when no core is idle: no overlap can hide more than the
 * transfer time less this.
 *
 *   transfer_cpu SIZE [TRIALS] [SLEEP_MS]
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "stats.h"

static void cpu_times(double *user, double *system)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    *user = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6;
    *system = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: transfer_cpu SIZE [TRIALS] [SLEEP_MS] (2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bytes = atoi(argv[1]);
    int trials = argc > 2 ? atoi(argv[2]) : 20;
    int sleep_ms = argc > 3 ? atoi(argv[3]) : 30;
    if (trials < 1 || trials > 1000)
        trials = 20;
    char *buffer = calloc((size_t)bytes + 1, 1);
    double *users = malloc(sizeof(double) * (size_t)trials);
    double *systems = malloc(sizeof(double) * (size_t)trials);
    double *walls = malloc(sizeof(double) * (size_t)trials);
    struct timespec pause = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
    for (int t = -2; t < trials; t++) { /* two warm-up transfers open the connections */
        MPI_Request request;
        MPI_Barrier(MPI_COMM_WORLD);
        double user0, system0, user1, system1, t0 = MPI_Wtime();
        cpu_times(&user0, &system0);
        if (rank == 0)
            MPI_Isend(buffer, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &request);
        else
            MPI_Irecv(buffer, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &request);
        nanosleep(&pause, NULL);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        cpu_times(&user1, &system1);
        if (t >= 0) {
            users[t] = user1 - user0;
            systems[t] = system1 - system0;
            walls[t] = MPI_Wtime() - t0;
        }
    }
    for (int r = 0; r < 2; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == rank)
            printf("{\"test\": \"transfer_cpu\", \"rank\": %d, \"bytes\": %d, \"trials\": %d, "
                   "\"sleep_s\": %g, \"user_s\": %.6f, \"system_s\": %.6f, \"wall_s\": %.6f}\n",
                   rank, bytes, trials, sleep_ms * 1e-3, median(users, trials),
                   median(systems, trials), median(walls, trials));
        fflush(stdout);
    }
    free(buffer);
    free(users);
    free(systems);
    free(walls);
    MPI_Finalize();
    return 0;
}
