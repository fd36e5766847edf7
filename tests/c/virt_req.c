/*
 * Persistent requests, MPI_Cancel of a receive, MPI_Request_get_status and
 * the counts of statuses, for the virtual ranks' transparency test
 * (tests/virt_compare.py): the same output with N processes as with N
 * virtual ranks. Rank 0 prints every result. No global variable is
 * written: the virtual ranks of a process share them.
 */
#include "virt_testlib.h"

static long count_of(const MPI_Status *st, MPI_Datatype type)
{
    int n = -7;
    MPI_Get_count(st, type, &n);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* A ring of persistent requests, started three times by MPI_Startall,
       then by MPI_Start each, completed by MPI_Waitall, MPI_Test and
       MPI_Wait. */
    int out[3], in[3] = {-1, -1, -1};
    MPI_Request ring[2];
    MPI_Recv_init(in, 3, MPI_INT, prev, 7, MPI_COMM_WORLD, &ring[0]);
    MPI_Send_init(out, 3, MPI_INT, next, 7, MPI_COMM_WORLD, &ring[1]);
    long got[6] = {0, 0, 0, 0, 0, 0};
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 3; i++)
            out[i] = rank * 100 + round * 10 + i;
        MPI_Startall(2, ring);
        MPI_Status st[2];
        MPI_Waitall(2, ring, st);
        got[round] = in[0] + in[1] + in[2];
        if (round == 2) {
            got[3] = st[0].MPI_SOURCE;
            got[4] = st[0].MPI_TAG;
            got[5] = count_of(&st[0], MPI_INT);
        }
    }
    print_all(rank, size, "persistent ring (3 rounds, source, tag, count)", got, 6);
    out[0] = 5;
    MPI_Start(&ring[0]);
    MPI_Start(&ring[1]);
    int flag = 0;
    MPI_Status st;
    while (!flag)
        MPI_Test(&ring[0], &flag, &st);
    MPI_Wait(&ring[1], MPI_STATUS_IGNORE);
    /* Inactive now: a wait and a test return at once, with an empty status. */
    MPI_Status empty;
    MPI_Wait(&ring[0], &empty);
    int flag2 = 0;
    MPI_Test(&ring[1], &flag2, MPI_STATUS_IGNORE);
    long after[5] = {in[0], count_of(&st, MPI_INT), ring[0] != MPI_REQUEST_NULL, flag2,
                     count_of(&empty, MPI_INT)};
    print_all(rank, size, "start + test, inactive wait", after, 5);
    MPI_Request_free(&ring[0]);
    MPI_Request_free(&ring[1]);
    long freed = ring[0] == MPI_REQUEST_NULL && ring[1] == MPI_REQUEST_NULL;
    print_all(rank, size, "freed", &freed, 1);

    /* A persistent receive from MPI_PROC_NULL. */
    MPI_Request nul;
    MPI_Recv_init(in, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &nul);
    MPI_Start(&nul);
    MPI_Wait(&nul, &st);
    /* (Its source is not compared: MPICH 4.0.2 does not set MPI_PROC_NULL
       there.) */
    long pn[2] = {st.MPI_TAG == MPI_ANY_TAG, count_of(&st, MPI_INT)};
    MPI_Request_free(&nul);
    print_all(rank, size, "proc_null (tag, count)", pn, 2);

    /* MPI_Cancel of a receive that nothing matches, and of one already
       matched (a message to itself). */
    int never = -1, c1 = -1, c2 = -1, mine = rank + 1000, back = -1;
    MPI_Request r;
    MPI_Irecv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &c1);
    MPI_Request pair[2];
    MPI_Irecv(&back, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, &pair[0]);
    MPI_Isend(&mine, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, &pair[1]);
    MPI_Wait(&pair[1], MPI_STATUS_IGNORE);
    flag = 0;
    while (!flag)
        MPI_Request_get_status(pair[0], &flag, MPI_STATUS_IGNORE);
    MPI_Cancel(&pair[0]);
    MPI_Wait(&pair[0], &st);
    MPI_Test_cancelled(&st, &c2);
    long cancel[4] = {c1, never, c2, back};
    print_all(rank, size, "cancel (cancelled, value; matched: cancelled, value)", cancel, 4);

    /* MPI_Request_get_status before and after the message, then the wait
       (the request stays until then). */
    char text[5] = {0, 0, 0, 0, 0};
    MPI_Irecv(text, 5, MPI_CHAR, prev, 6, MPI_COMM_WORLD, &r);
    int before = -1;
    MPI_Request_get_status(r, &before, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request s;
    MPI_Isend("abc", 3, MPI_CHAR, next, 6, MPI_COMM_WORLD, &s);
    flag = 0;
    while (!flag)
        MPI_Request_get_status(r, &flag, &st);
    long gs[4] = {before, flag, count_of(&st, MPI_CHAR), st.MPI_SOURCE};
    MPI_Wait(&r, &st);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    long gs2[5] = {gs[0], gs[1], gs[2], gs[3], count_of(&st, MPI_CHAR) * 1000 + text[2]};
    print_all(rank, size, "request_get_status (before, after, count, source; wait)", gs2, 5);

    /* Counts through every call that fills a status. */
    int buf[4] = {1, 2, 3, 4}, rb[4];
    MPI_Sendrecv(buf, rank % 4 + 1, MPI_INT, next, 2, rb, 4, MPI_INT, prev, 2, MPI_COMM_WORLD, &st);
    long counts[6];
    counts[0] = count_of(&st, MPI_INT);
    MPI_Isend(buf, 2, MPI_INT, next, 3, MPI_COMM_WORLD, &s);
    MPI_Probe(prev, 3, MPI_COMM_WORLD, &st);
    counts[1] = count_of(&st, MPI_INT);
    MPI_Irecv(rb, 4, MPI_INT, prev, 3, MPI_COMM_WORLD, &r);
    int index;
    MPI_Waitany(1, &r, &index, &st);
    counts[2] = count_of(&st, MPI_INT);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Isend(buf, 3, MPI_INT, next, 4, MPI_COMM_WORLD, &s);
    MPI_Irecv(rb, 4, MPI_INT, prev, 4, MPI_COMM_WORLD, &r);
    flag = 0;
    while (!flag)
        MPI_Testany(1, &r, &index, &flag, &st);
    counts[3] = count_of(&st, MPI_INT);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Recv(rb, 4, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st);
    counts[4] = count_of(&st, MPI_INT);
    MPI_Isend(buf, 4, MPI_INT, next, 5, MPI_COMM_WORLD, &s);
    MPI_Recv(rb, 4, MPI_INT, prev, 5, MPI_COMM_WORLD, &st);
    int elements = -1;
    MPI_Get_elements(&st, MPI_INT, &elements);
    counts[5] = elements;
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    print_all(rank, size, "counts (sendrecv, probe, waitany, testany, proc_null, elements)", counts,
              6);

    MPI_Finalize();
    return 0;
}
