/* What a rank blocked in a 1 MiB MPI_Recv costs its core, and whether a
   rank blocked in a 1 MiB MPI_Send gets its message through while the
   receiver computes. Two ranks.
     (no argument)  rank 0 sleeps 300 ms, then sends; rank 1 waits in
                    MPI_Recv and prints the wall time and the CPU time of its
                    thread during the call (Tandem's progress thread is not
                    counted), and how many times the thread went to sleep
                    (its voluntary context switches): a spinning wait uses
                    about as much CPU as wall time on an idle machine and
                    hardly sleeps, a lending one (TANDEM_WAIT) uses a small
                    part of it and sleeps between its polls, however busy
                    the machine is.
     borrow         the same, and rank 0 has a 1 MiB MPI_Irecv outstanding
                    meanwhile (its progress thread has work), which rank 1
                    matches after its receive.
     send           see send_while_receiver_computes.
     wait           as without argument, rank 1 waiting in MPI_Irecv and
                    MPI_Wait instead of MPI_Recv.
   The receiver checks the data. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double clock_s(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Busy for 'seconds' of wall time: a rank that computes. */
static void compute(double seconds)
{
    volatile double x = 1.0;
    for (double end = clock_s(CLOCK_MONOTONIC) + seconds; clock_s(CLOCK_MONOTONIC) < end;)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
}

static int all_seven(const char *buf, int bytes)
{
    return buf[0] == 7 && buf[bytes / 2] == 7 && buf[bytes - 1] == 7;
}

/* The send mode, five times: rank 0 posts the receive and computes for
   100 ms before it waits; rank 1 sends 20 ms into that, and counts the sends that returned
   before rank 0 began to wait (both read one machine's monotonic clock). */
static void send_while_receiver_computes(int rank, char *buf, int bytes)
{
    enum { TIMES = 5 };
    int early = 0, right = 0;
    for (int i = 0; i < TIMES; i++) {
        MPI_Request request = MPI_REQUEST_NULL;
        double waits;
        if (rank == 0)
            MPI_Irecv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &request);
        else
            memset(buf, 7, (size_t)bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            compute(0.1);
            waits = clock_s(CLOCK_MONOTONIC);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            right += all_seven(buf, bytes);
            memset(buf, 0, (size_t)bytes);
            MPI_Send(&waits, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
        } else {
            /* Let rank 0 leave the barrier first: the MPI library could match
               the message inside it. */
            struct timespec pause = {0, 20 * 1000 * 1000};
            nanosleep(&pause, NULL);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            double sent = clock_s(CLOCK_MONOTONIC);
            MPI_Recv(&waits, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            early += sent < waits;
        }
    }
    if (rank == 0)
        printf("received %d x %d bytes from 1, %d right\n", TIMES, bytes, right);
    else
        printf("sent %d x %d bytes to 0, %d before the receiver waited\n", TIMES, bytes, early);
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
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "send") == 0) {
        send_while_receiver_computes(rank, buf, BYTES);
        fflush(stdout);
        free(buf);
        MPI_Finalize();
        return 0;
    }
    int borrow = strcmp(mode, "borrow") == 0, nonblocking = strcmp(mode, "wait") == 0;
    char *back = calloc(BYTES, 1);
    MPI_Request pending = MPI_REQUEST_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* rank 1 waits in MPI_Recv (or MPI_Wait) */
        if (borrow)
            MPI_Irecv(back, BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &pending);
        struct timespec pause = {0, 300 * 1000 * 1000};
        nanosleep(&pause, NULL);
        memset(buf, 7, BYTES);
        MPI_Send(buf, BYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Wait(&pending, MPI_STATUS_IGNORE);
    } else {
        MPI_Status st;
        struct rusage before, after;
        getrusage(RUSAGE_THREAD, &before);
        double wall = clock_s(CLOCK_MONOTONIC), cpu = clock_s(CLOCK_THREAD_CPUTIME_ID);
        if (nonblocking) {
            MPI_Request request;
            MPI_Irecv(buf, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &request);
            MPI_Wait(&request, &st);
        } else {
            MPI_Recv(buf, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
        }
        cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu;
        wall = clock_s(CLOCK_MONOTONIC) - wall;
        getrusage(RUSAGE_THREAD, &after);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        printf("received %d bytes from %d, all %s: wall %.4f s cpu %.4f s sleeps %ld\n", count,
               st.MPI_SOURCE, all_seven(buf, BYTES) ? "right" : "wrong", wall, cpu,
               after.ru_nvcsw - before.ru_nvcsw);
        if (borrow)
            MPI_Send(back, BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    fflush(stdout);
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
