/*
 * Collectives and communicators for the virtual ranks' transparency test
 * (tests/virt_compare.py): the same output with N processes as with N
 * virtual ranks. Rank 0 prints every result. No global variable is
 * written: the virtual ranks of a process share them.
 */
#include "virt_testlib.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long *all = malloc(sizeof(long) * 4 * (size_t)size);

    MPI_Barrier(MPI_COMM_WORLD);
    long b[3] = {0, 0, 0};
    if (rank == size - 1)
        b[0] = 7, b[1] = 8, b[2] = 9;
    MPI_Bcast(b, 3, MPI_LONG, size - 1, MPI_COMM_WORLD);
    long mine[2] = {rank + 2, rank + 1}, sum[2], red[2] = {-1, -1};
    MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long b_sum[5] = {b[0], b[1], b[2], sum[0], sum[1]};
    print_longs(rank, "bcast+allreduce", b_sum, 5);

    MPI_Op op;
    MPI_Op_create(affine, 0, &op);
    MPI_Reduce(mine, red, 2, MPI_LONG, op, 0, MPI_COMM_WORLD);
    print_longs(rank, "reduce noncommutative", red, 2);
    /* Up the tree to every kind of root: the operation that does not
       commute, and a commutative one in place at the root. */
    int roots[3] = {0, size / 2, size - 1};
    for (int k = 0; k < 3; k++) {
        int root = roots[k];
        long ordered[2] = {-1, -1}, contribution[2] = {rank * 3 + 1, rank}, total[2] = {-1, -1};
        /* x -> a x + c maps whose order shows: (a, c) = (rank + 2, rank^2 + 3) */
        long map[2] = {rank + 2, (long)rank * rank + 3};
        MPI_Reduce(map, ordered, 2, MPI_LONG, op, root, MPI_COMM_WORLD);
        if (rank == root) {
            total[0] = contribution[0], total[1] = contribution[1];
            MPI_Reduce(MPI_IN_PLACE, total, 2, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
        } else {
            MPI_Reduce(contribution, total, 2, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
        }
        long both[5] = {root, ordered[0], ordered[1], total[0], total[1]};
        MPI_Bcast(both + 1, 4, MPI_LONG, root, MPI_COMM_WORLD);
        print_longs(rank, "reduce to root", both, 5);
    }
    MPI_Op_free(&op);
    long inplace[2] = {rank, 1};
    MPI_Allreduce(MPI_IN_PLACE, inplace, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    print_longs(rank, "allreduce in place", inplace, 2);

    long sq = (long)rank * rank;
    MPI_Allgather(&sq, 1, MPI_LONG, all, 1, MPI_LONG, MPI_COMM_WORLD);
    print_longs(rank, "allgather", all, size);
    /* Two longs each, in place, then as one item of a derived type. */
    for (int i = 0; i < 2 * size; i++)
        all[i] = i / 2 == rank ? rank * 100 + i % 2 : -1;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_LONG, MPI_COMM_WORLD);
    print_longs(rank, "allgather in place", all, 2 * size);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_LONG, &pair);
    MPI_Type_commit(&pair);
    long two[2] = {rank, -rank};
    MPI_Allgather(two, 2, MPI_LONG, all, 1, pair, MPI_COMM_WORLD);
    print_longs(rank, "allgather of pairs", all, 2 * size);
    MPI_Type_free(&pair);
    long part = -1;
    for (int i = 0; i < size; i++)
        all[i] = 100 + i;
    MPI_Scatter(all, 1, MPI_LONG, &part, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(&part, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "scatter+gather", all, size);
    /* Down and up the trees from a root in the middle: pairs, in place at
       the root, and pairs as one item of a derived type. */
    int mid = size / 2;
    MPI_Datatype two_longs;
    MPI_Type_contiguous(2, MPI_LONG, &two_longs);
    MPI_Type_commit(&two_longs);
    for (int i = 0; i < 2 * size; i++)
        all[i] = 1000 + i;
    long duo[2] = {-1, -1};
    MPI_Scatter(all, 1, two_longs, rank == mid ? MPI_IN_PLACE : duo, 2, MPI_LONG, mid,
                MPI_COMM_WORLD);
    if (rank == mid)
        duo[0] = all[2 * mid], duo[1] = all[2 * mid + 1];
    duo[0] += rank * 10, duo[1] -= rank * 10;
    for (int i = 0; i < 2 * size; i++)
        all[i] = i / 2 == rank ? duo[i % 2] : -1;
    MPI_Gather(rank == mid ? MPI_IN_PLACE : duo, 2, MPI_LONG, all, 1, two_longs, mid,
               MPI_COMM_WORLD);
    MPI_Bcast(all, 2 * size, MPI_LONG, mid, MPI_COMM_WORLD);
    print_longs(rank, "scatter+gather of pairs from the middle", all, 2 * size);
    MPI_Type_free(&two_longs);
    long *send = malloc(sizeof(long) * (size_t)size), *recv = malloc(sizeof(long) * (size_t)size);
    for (int i = 0; i < size; i++)
        send[i] = rank * 10 + i;
    MPI_Alltoall(send, 1, MPI_LONG, recv, 1, MPI_LONG, MPI_COMM_WORLD);
    long sum_recv = 0;
    for (int i = 0; i < size; i++)
        sum_recv = sum_recv * 7 + recv[i];
    MPI_Gather(&sum_recv, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "alltoall", all, size);

    /* Alltoalls of small blocks (between processes, gathered by process):
       3 longs a block on the world, the blocks sent from every other long
       of a vector; and on a communicator whose ranks interleave the
       processes (a key that scatters them), nonblocking, then in place. */
    MPI_Datatype spaced;
    MPI_Type_vector(3, 1, 2, MPI_LONG, &spaced);
    MPI_Type_create_resized(spaced, 0, 6 * sizeof(long), &spaced);
    MPI_Type_commit(&spaced);
    long *wide = malloc(sizeof(long) * 6 * (size_t)size),
         *three = malloc(sizeof(long) * 3 * (size_t)size);
    for (int i = 0; i < 6 * size; i++)
        wide[i] = i % 2 ? -1 : rank * 1000 + i / 2;
    MPI_Alltoall(wide, 1, spaced, three, 3, MPI_LONG, MPI_COMM_WORLD);
    long digest = 0;
    for (int i = 0; i < 3 * size; i++)
        digest = (digest * 31 + three[i]) % 1000003;
    MPI_Gather(&digest, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "alltoall of 3 longs from a vector", all, size);
    MPI_Type_free(&spaced);
    MPI_Comm mixed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank * 5) % size + rank * size, &mixed);
    int mr, ms;
    MPI_Comm_rank(mixed, &mr);
    MPI_Comm_size(mixed, &ms);
    for (int i = 0; i < 3 * ms; i++)
        three[i] = mr * 100 + i;
    MPI_Request mreq;
    MPI_Ialltoall(three, 3, MPI_LONG, wide, 3, MPI_LONG, mixed, &mreq);
    MPI_Wait(&mreq, MPI_STATUS_IGNORE);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, wide, 3, MPI_LONG, mixed);
    digest = mr;
    for (int i = 0; i < 3 * ms; i++)
        digest = (digest * 31 + wide[i]) % 1000003;
    MPI_Gather(&digest, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "ialltoall and in place on interleaved ranks", all, size);
    MPI_Comm_free(&mixed);
    free(wide);
    free(three);

    /* Split into even and odd ranks, reversed by key; dup; a message on
       the new communicator does not match a receive on the world. */
    MPI_Comm half, copy;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    MPI_Comm_dup(half, &copy);
    long hsum = 0, me = rank;
    MPI_Allreduce(&me, &hsum, 1, MPI_LONG, MPI_SUM, copy);
    long desc[3] = {hr, hs, hsum};
    MPI_Gather(desc, 3, MPI_LONG, all, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "split", all, 3 * size);
    long got[2] = {-1, 0};
    if (hs > 1) {
        int v = rank, w = -1, flag = 1;
        MPI_Send(&v, 1, MPI_INT, (hr + 1) % hs, 3, copy);
        MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(&w, 1, MPI_INT, (hr + hs - 1) % hs, 3, copy, MPI_STATUS_IGNORE);
        got[0] = w;
        got[1] = flag;
    }
    MPI_Gather(got, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "message on the split communicator", all, 2 * size);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&half);
    MPI_Comm none;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none);
    long is_null = none == MPI_COMM_NULL;
    MPI_Gather(&is_null, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    print_longs(rank, "undefined color", all, size);
    if (none != MPI_COMM_NULL)
        MPI_Comm_free(&none);
    double t0 = MPI_Wtime();
    if (rank == 0)
        printf("wtime %s\n", MPI_Wtime() >= t0 ? "ok" : "wrong");
    free(send);
    free(recv);
    free(all);
    MPI_Finalize();
    return 0;
}
