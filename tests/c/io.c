/* Nonblocking MPI-IO: every MPI_File_i* call, with the count of each status. */
#include "testlib.h"

#define N 100000

/* MPI-IO's sync-barrier-sync: after it, every process reads what any process
   wrote before it (collective I/O may have another process do the writing).
   Collective. */
static void settle(MPI_File fh)
{
    check_mpi(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_mpi(MPI_File_sync(fh));
}

int main(int argc, char **argv)
{
    int rank, size, count;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "tandem-io-test.dat";
    int *out = malloc(sizeof(int) * N), *in = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++)
        out[i] = rank * N + i;
    MPI_File fh;
    MPI_Status st;
    MPI_Request r;
    MPI_Offset mine = (MPI_Offset)rank * N * (MPI_Offset)sizeof(int);
    MPI_Offset block = (MPI_Offset)size * N * (MPI_Offset)sizeof(int);

    check_mpi(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    check_mpi(MPI_File_set_size(fh, 0));
#define DONE(what, buf)                                                                    \
    do {                                                                                   \
        check_mpi(MPI_Wait(&r, &st));                                                      \
        MPI_Get_count(&st, MPI_INT, &count);                                               \
        tlog("%s: count %d sum %lu", what, count, tsum(buf, sizeof(int) * (size_t)count)); \
    } while (0)

    check_mpi(MPI_File_iwrite_at(fh, mine, out, N, MPI_INT, &r));
    DONE("iwrite_at", out);
    settle(fh);
    check_mpi(MPI_File_iread_at(fh, mine, in, N, MPI_INT, &r));
    DONE("iread_at", in);
    check_mpi(MPI_File_iwrite_at_all(fh, block + mine, out, N / 2, MPI_INT, &r));
    DONE("iwrite_at_all", out);
    settle(fh);
    /* Not a short read: Open MPI 4.1.4's fbtl/posix never completes an
       asynchronous read that reaches the end of the file (one process). */
    check_mpi(MPI_File_iread_at_all(fh, block + mine, in, N / 2, MPI_INT, &r));
    DONE("iread_at_all", in);

    /* Individual file pointers: each rank its own region. */
    check_mpi(MPI_File_seek(fh, 2 * block + mine, MPI_SEEK_SET));
    check_mpi(MPI_File_iwrite(fh, out, N, MPI_INT, &r));
    DONE("iwrite", out);
    settle(fh);
    check_mpi(MPI_File_seek(fh, 2 * block + mine, MPI_SEEK_SET));
    check_mpi(MPI_File_iread(fh, in, N, MPI_INT, &r));
    DONE("iread", in);
    check_mpi(MPI_File_seek(fh, 3 * block + mine, MPI_SEEK_SET));
    check_mpi(MPI_File_iwrite_all(fh, out, N, MPI_INT, &r));
    DONE("iwrite_all", out);
    settle(fh);
    check_mpi(MPI_File_seek(fh, 3 * block + mine, MPI_SEEK_SET));
    check_mpi(MPI_File_iread_all(fh, in, N, MPI_INT, &r));
    DONE("iread_all", in);

    /* The shared file pointer (seek_shared is collective); the order of ranks
       on it is not fixed, so only rank 0 moves data through it. */
    check_mpi(MPI_File_seek_shared(fh, 4 * block, MPI_SEEK_SET));
    if (rank == 0) {
        check_mpi(MPI_File_iwrite_shared(fh, out, 1000, MPI_INT, &r));
        DONE("iwrite_shared", out);
    }
    settle(fh);
    check_mpi(MPI_File_seek_shared(fh, 4 * block, MPI_SEEK_SET));
    if (rank == 0) {
        check_mpi(MPI_File_iread_shared(fh, in, 1000, MPI_INT, &r));
        DONE("iread_shared", in);
    }
    check_mpi(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    free(out);
    free(in);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
