/*
 * How a virtual rank stops the job (tests/CMakeLists.txt, virt.abort.*):
 * "abort", rank 1 calls MPI_Abort with error code 3; "bad-rank", rank 0
 * sends to a rank that does not exist, under MPI_ERRORS_ARE_FATAL. The
 * other ranks wait in a receive that never completes.
 */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "abort";
    if (strcmp(what, "abort") == 0 && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (strcmp(what, "bad-rank") == 0 && rank == 0)
        MPI_Send(&value, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
