/* What a rank blocked in MPI_Recv costs its core: rank 0 sleeps 300 ms, then
   sends 1 MiB; rank 1 waits for it in MPI_Recv and prints the wall time and
   the CPU time of its thread during that call (Tandem's progress thread is
   not counted). A spinning wait uses about as much CPU as wall time; a
   lending one (TANDEM_WAIT) a small part of it. With the argument "borrow",
   rank 0 has a 1 MiB MPI_Irecv outstanding meanwhile (its progress thread
   has work), which rank 1 matches after its receive. Two ranks. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { BYTES = 1 << 20 };
    char *buf = calloc(BYTES, 1);
    if (size != 2 || !buf) {
        if (rank == 0)
            fprintf(stderr, "blocked_cpu: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int borrow = argc > 1 && strcmp(argv[1], "borrow") == 0;
    char *back = calloc(BYTES, 1);
    MPI_Request pending = MPI_REQUEST_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (borrow)
            MPI_Irecv(back, BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &pending);
        struct timespec pause = {0, 300 * 1000 * 1000};
        nanosleep(&pause, NULL);
        memset(buf, 7, BYTES);
        MPI_Send(buf, BYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Wait(&pending, MPI_STATUS_IGNORE);
    } else {
        MPI_Status st;
        double wall = clock_s(CLOCK_MONOTONIC), cpu = clock_s(CLOCK_THREAD_CPUTIME_ID);
        MPI_Recv(buf, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
        cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu;
        wall = clock_s(CLOCK_MONOTONIC) - wall;
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        printf("received %d bytes from %d, all %s: wall %.4f s cpu %.4f s\n", count, st.MPI_SOURCE,
               buf[0] == 7 && buf[BYTES - 1] == 7 ? "right" : "wrong", wall, cpu);
        if (borrow)
            MPI_Send(back, BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
