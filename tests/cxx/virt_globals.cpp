/*
 * Privatized globals in C++ (tests/python/test_virt.py): a class's static
 * member, and a function's static object that owns memory (a string longer
 * than its inline buffer), built by every rank in its own copy. Built with
 * `tandem c++ --privatize`, each rank prints its own values, and each
 * rank's copy of the object is destroyed once at exit.
 */
#include <mpi.h>

#include <cstdio>
#include <string>

struct Counter {
    static int total;
};
int Counter::total = 0;

static std::string &name()
{
    static std::string kept("a rank's name, longer than a string's inline buffer: ");
    return kept;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Counter::total = 10 * rank;
    name() += std::to_string(rank);
    for (int i = 0; i < 3; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        Counter::total++;
    }
    std::printf("rank %d: total %d, %s\n", rank, Counter::total, name().c_str());
    MPI_Finalize();
    return 0;
}
