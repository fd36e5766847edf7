// A program written for TinyMPI (its report, seed 004), for `tandem c++`
// (tests/python/test_virt.py): the entry TMPI_main, TMPI_* calls, types and
// constants only, no TMPI_Init or TMPI_Finalize. A ring of Sendrecv, an
// Isend/Irecv pair per neighbour with Waitall and Get_count, an Allreduce,
// a Bcast, a Barrier and an Allgather, from rank 0's point of view.
#include <tmpi.h>

#include <cstdio>
#include <vector>

int TMPI_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, size;
    TMPI_Comm_rank(TMPI_COMM_WORLD, &rank);
    TMPI_Comm_size(TMPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int got = -1;
    TMPI_Sendrecv(&rank, 1, TMPI_INT, right, 1, &got, 1, TMPI_INT, left, 1, TMPI_COMM_WORLD,
                  TMPI_STATUS_IGNORE);

    std::vector<double> out(3, rank), in(6, -1.0);
    TMPI_Request requests[4];
    TMPI_Status statuses[4];
    TMPI_Irecv(in.data(), 3, TMPI_DOUBLE, left, 2, TMPI_COMM_WORLD, &requests[0]);
    TMPI_Irecv(in.data() + 3, 3, TMPI_DOUBLE, right, 3, TMPI_COMM_WORLD, &requests[1]);
    TMPI_Isend(out.data(), 3, TMPI_DOUBLE, right, 2, TMPI_COMM_WORLD, &requests[2]);
    TMPI_Isend(out.data(), 3, TMPI_DOUBLE, left, 3, TMPI_COMM_WORLD, &requests[3]);
    TMPI_Waitall(4, requests, statuses);
    int count = 0;
    TMPI_Get_count(&statuses[0], TMPI_DOUBLE, &count);

    long sum = 0, mine = rank;
    TMPI_Allreduce(&mine, &sum, 1, TMPI_LONG, TMPI_SUM, TMPI_COMM_WORLD);
    int root_value = rank == 0 ? 42 : 0;
    TMPI_Bcast(&root_value, 1, TMPI_INT, 0, TMPI_COMM_WORLD);
    TMPI_Barrier(TMPI_COMM_WORLD);
    std::vector<int> all(size);
    TMPI_Allgather(&rank, 1, TMPI_INT, all.data(), 1, TMPI_INT, TMPI_COMM_WORLD);
    int type_size = 0;
    TMPI_Type_size(TMPI_DOUBLE, &type_size);
    double t = TMPI_Wtime();

    bool ok = got == left && in[0] == left && in[3] == right && count == 3 &&
              sum == (long)size * (size - 1) / 2 && root_value == 42 && type_size == 8 && t >= 0;
    for (int r = 0; r < size; r++)
        ok = ok && all[r] == r;
    int fine = ok ? 1 : 0, all_fine = 0;
    TMPI_Allreduce(&fine, &all_fine, 1, TMPI_INT, TMPI_MIN, TMPI_COMM_WORLD);
    if (rank == 0)
        std::printf("tinympi ring of %d: %s\n", size, all_fine ? "ok" : "WRONG");
    return all_fine ? 0 : 1;
}
