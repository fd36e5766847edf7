/*
 * Written globals (tests/python/test_virt.py): each rank sets a global, an
 * initialised array, a file's static and a function's static to values of
 * its own, meets the others in barriers (where the other ranks of its core
 * run), and prints what it reads back. Processes of the real MPI, or
 * virtual ranks built with `tandem cc --privatize`, print their own values;
 * virtual ranks without it share one copy.
 */
#include <mpi.h>
#include <stdio.h>

int counter;
double table[64] = {1.0};
static long hidden = 7;

static long next_id(void)
{
    static long id; /* a function's static */
    return ++id;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    counter = 100 * rank;
    table[63] = rank + 0.5;
    hidden += rank;
    for (int i = 0; i < 3; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        counter++;
        next_id();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d: counter %d, table %.1f %.1f, hidden %ld, id %ld\n", rank, counter, table[0],
           table[63], hidden, next_id());
    MPI_Finalize();
    return 0;
}
