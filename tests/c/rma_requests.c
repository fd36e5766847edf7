/*
 * Request-based one-sided operations (MPI_Rput, MPI_Rget) on an
 * MPI_Win_allocate window, completed every way a program may: MPI_Wait,
 * a loop of MPI_Test, MPI_Waitall over puts and gets mixed, MPI_Testany,
 * and a put still in flight at a flush (MPI_Request_free of one is left
 * out: MPICH 4.0.2 alone refuses it, "The supplied request was invalid
 * (kind=12)"). Under progress
 * processes with the origin offload (TANDEM_RMA_OFFLOAD_LIMIT) each is a
 * generalized request that the progress process's answer completes: a get
 * must hold its bytes once its request is complete, a put's must be at the
 * target once the epoch ends. Each rank reads from and writes to the next
 * one on a ring, 256 KiB at a time.
 */
#include "testlib.h"

enum { BYTES = 256 << 10, SLOTS = 4 };

static unsigned char pattern(int rank, int slot, int i)
{
    return (unsigned char)(rank * 31 + slot * 7 + i);
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    unsigned char *base = NULL, *in = malloc((size_t)BYTES * SLOTS);
    unsigned char *out = malloc((size_t)BYTES * SLOTS);
    MPI_Win win;
    check_mpi(
        MPI_Win_allocate((MPI_Aint)BYTES * SLOTS, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int s = 0; s < SLOTS; s++)
        for (int i = 0; i < BYTES; i++)
            base[(size_t)s * BYTES + (size_t)i] = pattern(rank, s, i);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Gets from the next rank: Wait, a Test loop, Waitall, Testany. */
    MPI_Request requests[SLOTS];
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    check_mpi(MPI_Rget(in, BYTES, MPI_BYTE, right, 0, BYTES, MPI_BYTE, win, &requests[0]));
    check_mpi(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
    check_mpi(
        MPI_Rget(in + BYTES, BYTES, MPI_BYTE, right, BYTES, BYTES, MPI_BYTE, win, &requests[1]));
    for (int done = 0; !done;)
        check_mpi(MPI_Test(&requests[1], &done, MPI_STATUS_IGNORE));
    check(requests[1] == MPI_REQUEST_NULL);
    for (int s = 2; s < SLOTS; s++)
        check_mpi(MPI_Rget(in + (size_t)s * BYTES, BYTES, MPI_BYTE, right, (MPI_Aint)s * BYTES,
                           BYTES, MPI_BYTE, win, &requests[s]));
    int index = MPI_UNDEFINED, flag = 0;
    while (!flag)
        check_mpi(MPI_Testany(2, requests + 2, &index, &flag, MPI_STATUS_IGNORE));
    check(index == 0 || index == 1);
    check_mpi(MPI_Waitall(2, requests + 2, MPI_STATUSES_IGNORE));
    /* each get's bytes are there once its request completed, before the unlock */
    long wrong = 0;
    for (int s = 0; s < SLOTS; s++)
        for (int i = 0; i < BYTES; i++)
            wrong += in[(size_t)s * BYTES + (size_t)i] != pattern(right, s, i);
    MPI_Win_unlock(right, win);
    tlog("gets: %d x %d bytes, %ld wrong", SLOTS, BYTES, wrong);
    check(wrong == 0);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Puts to the next rank: Waitall, then a get, and a put whose request
       is completed after the flush that completes it at the target. */
    for (int s = 0; s < SLOTS; s++)
        for (int i = 0; i < BYTES; i++)
            out[(size_t)s * BYTES + (size_t)i] = pattern(rank + 100, s, i);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    check_mpi(MPI_Rput(out, BYTES, MPI_BYTE, right, 0, BYTES, MPI_BYTE, win, &requests[0]));
    check_mpi(
        MPI_Rput(out + BYTES, BYTES, MPI_BYTE, right, BYTES, BYTES, MPI_BYTE, win, &requests[1]));
    check_mpi(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    check_mpi(MPI_Win_flush(right, win));
    check_mpi(MPI_Rget(in, BYTES, MPI_BYTE, right, 0, BYTES, MPI_BYTE, win, &requests[2]));
    check_mpi(MPI_Rput(out + 2 * BYTES, 2 * BYTES, MPI_BYTE, right, 2 * BYTES, 2 * BYTES, MPI_BYTE,
                       win, &requests[3]));
    check_mpi(MPI_Wait(&requests[2], MPI_STATUS_IGNORE));
    check_mpi(MPI_Win_flush(right, win));
    check_mpi(MPI_Wait(&requests[3], MPI_STATUS_IGNORE));
    wrong = 0;
    for (int i = 0; i < BYTES; i++)
        wrong += in[i] != pattern(rank + 100, 0, i);
    check_mpi(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int s = 0; s < SLOTS; s++)
        for (int i = 0; i < BYTES; i++)
            wrong += base[(size_t)s * BYTES + (size_t)i] != pattern(left + 100, s, i);
    MPI_Win_unlock(rank, win);
    tlog("puts: %d x %d bytes, %ld wrong", SLOTS, BYTES, wrong);
    check(wrong == 0);

    check_mpi(MPI_Win_free(&win));
    free(in);
    free(out);
    int failed = tfinish();
    MPI_Finalize();
    return failed;
}
