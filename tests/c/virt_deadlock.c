/*
 * Every virtual rank receives from the next one, which never sends: the
 * runtime must stop with a message listing each rank's blocking call
 * (tests/CMakeLists.txt, virt.deadlock). Rank 0 waits in MPI_Wait instead,
 * and the last rank (with more than two) in a barrier that rank 0 never
 * reaches.
 *
 *   virt_deadlock [send|unreceived]
 *
 * send: every rank sends 64 KiB to the next one, which never receives (a
 * message that large waits for its receive, in a process and between
 * processes): stuck in MPI_Send. unreceived: every rank sends the next one
 * 64 KiB and 100 bytes, frees the requests and finishes without receiving
 * them: the run ends, and rank 0 prints "finished".
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static char big[65536];

int main(int argc, char **argv)
{
    int rank, size, value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    int next = (rank + 1) % size;
    if (strcmp(mode, "send") == 0) {
        MPI_Send(big, (int)sizeof big, MPI_CHAR, next, 4, MPI_COMM_WORLD);
    } else if (strcmp(mode, "unreceived") == 0) {
        MPI_Request sent[2];
        MPI_Isend(big, (int)sizeof big, MPI_CHAR, next, 5, MPI_COMM_WORLD, &sent[0]);
        MPI_Isend(big, 100, MPI_CHAR, next, 5, MPI_COMM_WORLD, &sent[1]);
        MPI_Request_free(&sent[0]);
        MPI_Request_free(&sent[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("finished\n");
    } else if (rank == 0) {
        MPI_Request req;
        MPI_Irecv(&value, 1, MPI_INT, 1 % size, 3, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == size - 1 && size > 2) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
