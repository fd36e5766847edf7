/*
 * Every virtual rank receives from the next one, which never sends: the
 * runtime must stop with a message listing each rank's blocking call
 * (tests/CMakeLists.txt, virt.deadlock). Rank 0 waits in MPI_Wait instead,
 * and the last rank (with more than two) in a barrier that rank 0 never
 * reaches.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
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
