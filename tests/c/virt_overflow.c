/*
 * Virtual rank 1 recurses without end: the runtime must say that its stack
 * overflowed, naming the rank (tests/CMakeLists.txt, virt.overflow).
 */
#include <mpi.h>
#include <stdio.h>

static int deeper(volatile char *above, int depth)
{
    volatile char frame[512];
    frame[0] = above ? above[0] : 1;
    frame[511] = (char)depth;
    return deeper(frame, depth + 1) + frame[511];
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        printf("%d\n", deeper(NULL, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
