/* MPI_Init, optionally one MPI_Barrier, MPI_Finalize: the smallest program
 * that hangs in MPICH 4.0.2's MPI_Finalize over UCX's TCP transport
 * (docs/perf/finalize-hang/loop.sh). Argument: "barrier" (default) or
 * "none" (no communication at all). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || strcmp(argv[1], "none") != 0)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("finalizing\n");
    MPI_Finalize();
    return 0;
}
