/*
 * Known traffic for the monitoring tests (tests/python/test_monitor.py), run
 * under Open MPI's own monitoring and under Tandem's:
 *
 *   monitor_traffic p2p   a ring with mixed sizes (0 B to 1 MiB) through every
 *                         kind of send and receive (matched probes and
 *                         receives too), wildcards, self-messages; no
 *                         collective, not even inside MPI_Comm_split
 *   monitor_traffic all   the same with persistent sends (2 x 2400 bytes to
 *                         the right), then a ring on a sub-communicator whose
 *                         ranks run backwards, alltoall, bcast, reduce,
 *                         barrier, allreduce, one-sided puts and gets, and
 *                         file writes and reads
 *
 * It prints nothing but a final line: the files are what the tests compare.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {0, 1, 7, 100, 4096, 70000, 1 << 20};
enum { SIZES = sizeof sizes / sizeof sizes[0], MAX = 1 << 20 };

static void ring(MPI_Comm comm, char *out, char *in, int persistent)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < SIZES; i++) {
        MPI_Request r[2];
        MPI_Irecv(in, sizes[i], MPI_CHAR, MPI_ANY_SOURCE, i, comm, &r[0]);
        MPI_Isend(out, sizes[i], MPI_CHAR, right, i, comm, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        MPI_Sendrecv(out, sizes[i] / 4, MPI_INT, right, 50, in, sizes[i] / 4, MPI_INT, left, 50,
                     comm, MPI_STATUS_IGNORE);
    }
    /* A persistent pair started twice: Open MPI's monitoring does not count
       these sends (Tandem does; the test knows the difference). */
    if (persistent) {
        MPI_Request pr[2];
        MPI_Recv_init(in, 300, MPI_DOUBLE, left, 60, comm, &pr[0]);
        MPI_Send_init(out, 300, MPI_DOUBLE, right, 60, comm, &pr[1]);
        for (int k = 0; k < 2; k++) {
            MPI_Startall(2, pr);
            MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
        }
        MPI_Request_free(&pr[0]);
        MPI_Request_free(&pr[1]);
    }
    /* Synchronous and blocking sends (small: eager even to oneself). */
    MPI_Request sync;
    MPI_Issend(out, 33, MPI_CHAR, right, 70, comm, &sync);
    MPI_Recv(in, 33, MPI_CHAR, left, 70, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&sync, MPI_STATUS_IGNORE);
    MPI_Send(out, 17, MPI_CHAR, right, 71, comm);
    MPI_Recv(in, 17, MPI_CHAR, left, 71, comm, MPI_STATUS_IGNORE);
    /* Matched probes: a wildcard MPI_Mprobe then MPI_Mrecv, the status
       ignored; MPI_Improbe until the message is there, then MPI_Imrecv; and
       MPI_PROC_NULL's MPI_MESSAGE_NO_PROC, which receives nothing. */
    MPI_Message message;
    MPI_Request sent, received;
    MPI_Status status;
    int found = 0;
    MPI_Isend(out, 2000, MPI_CHAR, right, 80, comm, &sent);
    MPI_Mprobe(MPI_ANY_SOURCE, 80, comm, &message, MPI_STATUS_IGNORE);
    MPI_Mrecv(in, 2000, MPI_CHAR, &message, MPI_STATUS_IGNORE);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    MPI_Isend(out, 70000, MPI_CHAR, right, 81, comm, &sent);
    while (!found)
        MPI_Improbe(left, 81, comm, &found, &message, &status);
    MPI_Imrecv(in, 70000, MPI_CHAR, &message, &received);
    MPI_Wait(&received, MPI_STATUS_IGNORE);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    MPI_Mprobe(MPI_PROC_NULL, 82, comm, &message, &status);
    MPI_Mrecv(in, 5, MPI_CHAR, &message, &status);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int all = argc > 1 && strcmp(argv[1], "all") == 0;
    char *out = calloc(MAX, 1), *in = calloc(MAX, 1);

    ring(MPI_COMM_WORLD, out, in, all);
    /* Self-messages. */
    MPI_Sendrecv(out, 10, MPI_DOUBLE, rank, 9, in, 10, MPI_DOUBLE, rank, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Request self[2];
    MPI_Irecv(in, 3, MPI_INT, 0, 8, MPI_COMM_SELF, &self[0]);
    MPI_Isend(out, 3, MPI_INT, 0, 8, MPI_COMM_SELF, &self[1]);
    MPI_Waitall(2, self, MPI_STATUSES_IGNORE);
    if (all) {
        MPI_Comm reversed;
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
        ring(reversed, out, in, 1);
        int *a = calloc((size_t)size * 300, sizeof(int)),
            *b = calloc((size_t)size * 300, sizeof(int));
        MPI_Alltoall(a, 3, MPI_INT, b, 3, MPI_INT, MPI_COMM_WORLD);
        MPI_Bcast(a, 5, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Reduce(a, b, 2, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(a, b, 4, MPI_INT, MPI_SUM, reversed);
        if (size > 1) { /* Open MPI 4.1.4 cannot create a window on one process */
            MPI_Win win;
            int *base;
            int right = (rank + 1) % size, left = (rank + size - 1) % size;
            MPI_Win_allocate(1024 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                             &win);
            MPI_Win_fence(0, win);
            MPI_Put(a, 3, MPI_INT, right, 0, 3, MPI_INT, win);
            MPI_Get(b, 100, MPI_INT, left, 10, 100, MPI_INT, win);
            MPI_Win_fence(0, win);
            MPI_Win_free(&win);
        }
        char name[64];
        snprintf(name, sizeof name, "monitor_traffic.%d.tmp", rank);
        MPI_File fh;
        MPI_File_open(MPI_COMM_SELF, name,
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &fh);
        MPI_File_write_at(fh, 0, out, 1000, MPI_CHAR, MPI_STATUS_IGNORE);
        MPI_Request io;
        MPI_File_iwrite_at(fh, 1000, out, 24, MPI_INT, &io);
        MPI_Wait(&io, MPI_STATUS_IGNORE);
        MPI_File_read_at(fh, 0, in, 500, MPI_CHAR, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        free(a);
        free(b);
        MPI_Comm_free(&reversed);
    }
    free(out);
    free(in);
    if (rank == 0)
        printf("monitor_traffic %s: done on %d ranks\n", all ? "all" : "p2p", size);
    MPI_Finalize();
    return 0;
}
