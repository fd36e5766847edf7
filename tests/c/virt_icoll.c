/*
 * Nonblocking collectives for the virtual ranks' transparency test
 * (tests/virt_compare.py): the same output with N processes as with N
 * virtual ranks. Several in flight at once on one communicator, completed
 * by each of the waits and tests; a blocking call in between; large
 * messages; a receive of any source and tag posted before them that only
 * the program's own message matches. Rank 0 prints every result. No global
 * variable is written: the virtual ranks of a process share them.
 */
#include "virt_testlib.h"

/* Every rank's value, printed by rank 0. */
static void show(int rank, int size, const char *what, long v, long *all)
{
    MPI_Gather(&v, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, what, all, size);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long *all = malloc(sizeof(long) * 4 * (size_t)size);

    /* A receive of anything, posted first: collective traffic must not
       match it. */
    int any = -1;
    MPI_Request user;
    MPI_Irecv(&any, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &user);

    /* Eight collectives in flight at once, completed by one MPI_Waitall. */
    MPI_Op op;
    MPI_Op_create(affine, 0, &op);
    MPI_Request reqs[8];
    long b[3] = {0, 0, 0};
    if (rank == size - 1)
        b[0] = 7, b[1] = 8, b[2] = 9;
    long mine[2] = {rank + 2, rank + 1}, sum[2] = {0, 0}, red[2] = {-1, -1};
    long sq = (long)rank * rank, *squares = malloc(sizeof(long) * (size_t)size);
    long *seq = malloc(sizeof(long) * (size_t)size), part = -1;
    long *gathered = malloc(sizeof(long) * (size_t)size);
    long *send = malloc(sizeof(long) * (size_t)size), *recv = malloc(sizeof(long) * (size_t)size);
    for (int i = 0; i < size; i++) {
        seq[i] = 100 + i;
        send[i] = rank * 10 + i;
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]);
    MPI_Ibcast(b, 3, MPI_LONG, size - 1, MPI_COMM_WORLD, &reqs[1]);
    MPI_Iallreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &reqs[2]);
    MPI_Ireduce(mine, red, 2, MPI_LONG, op, 0, MPI_COMM_WORLD, &reqs[3]);
    MPI_Iallgather(&sq, 1, MPI_LONG, squares, 1, MPI_LONG, MPI_COMM_WORLD, &reqs[4]);
    MPI_Iscatter(seq, 1, MPI_LONG, &part, 1, MPI_LONG, 0, MPI_COMM_WORLD, &reqs[5]);
    MPI_Igather(&sq, 1, MPI_LONG, gathered, 1, MPI_LONG, size - 1, MPI_COMM_WORLD, &reqs[6]);
    /* (MPICH 4.0.2's own MPI_Ialltoall hangs in a world of one process
       when in flight with the others: it is left out there.) */
    reqs[7] = MPI_REQUEST_NULL;
    if (size > 1)
        MPI_Ialltoall(send, 1, MPI_LONG, recv, 1, MPI_LONG, MPI_COMM_WORLD, &reqs[7]);
    else
        recv[0] = send[0];
    MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE);
    /* The operation that does not commute, to a root in the middle: its
       tree is rooted at rank 0, which sends the result on. */
    long middle[2] = {-1, -1}, map[2] = {rank + 2, (long)rank * rank + 3};
    MPI_Request to_middle;
    MPI_Ireduce(map, middle, 2, MPI_LONG, op, size / 2, MPI_COMM_WORLD, &to_middle);
    MPI_Wait(&to_middle, MPI_STATUS_IGNORE);
    MPI_Bcast(middle, 2, MPI_LONG, size / 2, MPI_COMM_WORLD);
    print_longs(rank, "ireduce noncommutative to the middle", middle, 2);

    /* The program's own message, sent after all of that, is the one the
       first receive gets. */
    MPI_Request sent;
    MPI_Isend(&rank, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD, &sent);
    MPI_Status st;
    MPI_Wait(&user, &st);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    show(rank, size, "receive of any source and tag",
         any * 10000L + st.MPI_SOURCE * 100 + st.MPI_TAG, all);

    long b_sum[5] = {b[0], b[1], b[2], sum[0], sum[1]};
    print_longs(rank, "ibcast+iallreduce", b_sum, 5);
    print_longs(rank, "ireduce noncommutative", red, 2);
    print_longs(rank, "iallgather", squares, size);
    show(rank, size, "iscatter", part, all);
    /* (To rank 0, which may be the same rank: nonblocking.) */
    MPI_Request moved = MPI_REQUEST_NULL;
    if (rank == size - 1)
        MPI_Isend(gathered, size, MPI_LONG, 0, 5, MPI_COMM_WORLD, &moved);
    if (rank == 0) {
        MPI_Recv(all, size, MPI_LONG, size - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        print_longs(rank, "igather", all, size);
    }
    MPI_Wait(&moved, MPI_STATUS_IGNORE);
    long sum_recv = 0;
    for (int i = 0; i < size; i++)
        sum_recv = sum_recv * 7 + recv[i];
    show(rank, size, "ialltoall", sum_recv, all);

    /* Completed by MPI_Test in a loop, with a blocking collective posted
       while the nonblocking one is in flight. */
    long in_place[2] = {rank, 1};
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, in_place, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &r);
    long root_value = rank == 0 ? 42 : 0;
    MPI_Bcast(&root_value, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    int flag = 0;
    while (!flag)
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    long both[3] = {in_place[0], in_place[1], root_value};
    print_longs(rank, "test loop + blocking bcast", both, 3);

    /* Ten at once, waited for in reverse order, then MPI_Waitany and
       MPI_Testall. */
    MPI_Request many[10];
    long vals[10], outs[10];
    for (int i = 0; i < 10; i++) {
        vals[i] = rank * (i + 1);
        MPI_Iallreduce(&vals[i], &outs[i], 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &many[i]);
    }
    for (int i = 9; i >= 0; i--)
        MPI_Wait(&many[i], MPI_STATUS_IGNORE);
    print_longs(rank, "ten iallreduce", outs, 10);
    for (int i = 0; i < 3; i++)
        MPI_Ibcast(&outs[i], 1, MPI_LONG, i % size, MPI_COMM_WORLD, &many[i]);
    for (int n = 0; n < 3; n++) {
        int index;
        MPI_Waitany(3, many, &index, MPI_STATUS_IGNORE);
    }
    int done_flag = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &many[0]);
    MPI_Ibcast(&outs[3], 1, MPI_LONG, 0, MPI_COMM_WORLD, &many[1]);
    while (!done_flag)
        MPI_Testall(2, many, &done_flag, MPI_STATUSES_IGNORE);
    print_longs(rank, "waitany + testall", outs, 4);

    /* A nonblocking barrier that completes while its rank waits for a
       message that another rank sends only after its own barrier. */
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    if (size > 1 && rank == 0) {
        int got = -1;
        MPI_Recv(&got, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        printf("ibarrier moved on in a receive: %d\n", got);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rank == 1)
            MPI_Send(&rank, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
    }

    /* Large messages (beyond the eager limit) and a split communicator. */
    int n = 6000;
    double *big = malloc(sizeof(double) * (size_t)n * (size_t)size);
    double *bigr = malloc(sizeof(double) * (size_t)n * (size_t)size);
    for (int i = 0; i < n * size; i++)
        big[i] = rank == 0 ? i * 0.5 : -1;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    long hsum = 0, me = rank;
    MPI_Request two[3];
    MPI_Ibcast(big, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &two[0]);
    MPI_Iallreduce(&me, &hsum, 1, MPI_LONG, MPI_SUM, half, &two[1]);
    MPI_Wait(&two[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n * size; i++)
        big[i] = rank * 1000.0 + i / n + (i < n ? big[i] : 0);
    MPI_Ialltoall(big, n, MPI_DOUBLE, bigr, n, MPI_DOUBLE, MPI_COMM_WORLD, &two[2]);
    MPI_Waitall(2, &two[1], MPI_STATUSES_IGNORE);
    double check = 0;
    for (int i = 0; i < n * size; i++)
        check += bigr[i] * (i % 7 + 1);
    show(rank, size, "large ibcast + ialltoall", (long)check, all);
    show(rank, size, "iallreduce on a split communicator", hsum, all);
    MPI_Comm_free(&half);

    MPI_Op_free(&op);
    free(big);
    free(bigr);
    free(squares);
    free(seq);
    free(gathered);
    free(send);
    free(recv);
    free(all);
    MPI_Finalize();
    return 0;
}
