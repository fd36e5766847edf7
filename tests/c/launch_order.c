/*
 * Which launched process plays each rank of MPI_COMM_WORLD: every rank
 * names the place its launcher gave it (OMPI_COMM_WORLD_RANK under Open
 * MPI's mpirun, PMI_RANK under Hydra). Under TANDEM_REORDER the two differ
 * as the mapping says (tests/python/test_place.py).
 */
#include "testlib.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *launched = getenv("OMPI_COMM_WORLD_RANK");
    if (!launched)
        launched = getenv("PMI_RANK");
    int rank, left, right, size, from = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tlog("rank %d launched as %s", rank, launched ? launched : "?");
    /* a ring in the new order: each rank hears from the one before it */
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &from, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    check(from == left);
    int failed = tfinish();
    MPI_Finalize();
    return failed;
}
