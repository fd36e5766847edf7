// A plain MPI C++ program for `tandem c++` (tests/python/test_virt.py): a
// vector, a range for, iostream, and an MPI_Allgather of the ranks.
#include <mpi.h>
#include <cstdio>
#include <iostream>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(size);
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    long sum = 0;
    for (int r : all)
        sum += r;
    if (rank == 0)
        std::cout << "ranks " << size << " sum " << sum << std::endl;
    MPI_Finalize();
    return 0;
}
