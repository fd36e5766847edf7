/*
 * What a thread level costs the MPI library, and whether a lock of the
 * caller's own at MPI_THREAD_SERIALIZED costs less than MPI_THREAD_MULTIPLE.
 * No Tandem: 2 ranks, an 8-byte blocking ping-pong (one-way time, median and
 * minimum of 9 batches of 20000 round trips) and the rate of 8-byte
 * MPI_Isend/MPI_Irecv in windows of 64 completed by MPI_Waitall (median of
 * 9 batches of 300 windows). LEVEL selects:
 *   single        MPI_Init_thread(MPI_THREAD_SINGLE), no second thread
 *   single-thread the same with a second thread that sleeps in pause()
 *   serialized    MPI_THREAD_SERIALIZED and the sleeping second thread
 *   serialized-lock  the same, every MPI call inside one pthread mutex (what a
 *                 progress thread sharing the library through a lock of its
 *                 own would cost when nothing contends)
 *   multiple      MPI_THREAD_MULTIPLE and the sleeping second thread
 * Prints one line: LEVEL provided latency_median_us latency_min_us rate_per_s
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BATCHES = 9, ROUND_TRIPS = 20000, WINDOW = 64, WINDOWS = 300 };

static pthread_mutex_t library = PTHREAD_MUTEX_INITIALIZER;
static int locked;

/* One MPI call, inside the mutex when LEVEL=serialized-lock. */
#define CALL(call)                          \
    do {                                    \
        if (locked)                         \
            pthread_mutex_lock(&library);   \
        call;                               \
        if (locked)                         \
            pthread_mutex_unlock(&library); \
    } while (0)

static void *sleeper(void *unused)
{
    (void)unused;
    for (;;)
        pause();
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *level = getenv("LEVEL") ? getenv("LEVEL") : "single";
    int required = MPI_THREAD_SINGLE, second_thread = 1, provided;
    if (strcmp(level, "single") == 0)
        second_thread = 0;
    else if (strcmp(level, "serialized") == 0)
        required = MPI_THREAD_SERIALIZED;
    else if (strcmp(level, "serialized-lock") == 0)
        required = MPI_THREAD_SERIALIZED, locked = 1;
    else if (strcmp(level, "multiple") == 0)
        required = MPI_THREAD_MULTIPLE;
    else if (strcmp(level, "single-thread") != 0) {
        fprintf(stderr,
                "LEVEL=%s: expected single, single-thread, serialized, "
                "serialized-lock or multiple\n",
                level);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, required, &provided);
    pthread_t thread;
    if (second_thread)
        pthread_create(&thread, NULL, sleeper, NULL);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    char byte8[8] = {0}, small[WINDOW][8];
    MPI_Request requests[WINDOW];
    double latency[BATCHES], rate[BATCHES];

    for (int k = -1; k < BATCHES; k++) { /* k = -1 warms up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < ROUND_TRIPS; r++) {
            if (rank == 0) {
                CALL(MPI_Send(byte8, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
                CALL(MPI_Recv(byte8, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                CALL(MPI_Recv(byte8, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CALL(MPI_Send(byte8, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
            }
        }
        if (k >= 0)
            latency[k] = (MPI_Wtime() - t0) / (2.0 * ROUND_TRIPS) * 1e6;
    }
    for (int k = -1; k < BATCHES; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int w = 0; w < WINDOWS; w++) {
            for (int i = 0; i < WINDOW; i++) {
                if (rank == 0)
                    CALL(MPI_Isend(small[i], 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &requests[i]));
                else
                    CALL(MPI_Irecv(small[i], 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &requests[i]));
            }
            CALL(MPI_Waitall(WINDOW, requests, MPI_STATUSES_IGNORE));
            if (rank == 0)
                CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            else
                CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
        }
        if (k >= 0)
            rate[k] = (double)WINDOW * WINDOWS / (MPI_Wtime() - t0);
    }
    qsort(latency, BATCHES, sizeof *latency, by_value);
    qsort(rate, BATCHES, sizeof *rate, by_value);
    if (rank == 0)
        printf("%s %d %.3f %.3f %.3g\n", level, provided, latency[BATCHES / 2], latency[0],
               rate[BATCHES / 2]);
    MPI_Finalize();
    return 0;
}
