/* Nonblocking point-to-point: every send mode, every completion call, probes,
   matched probes, cancel and request_free, over a ring of any size. */
#include "testlib.h"

#define NSIZES 5
static const int sizes[NSIZES] = {0, 1, 17, 4096, 300000};

static void fill(int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++)
        buf[i] = seed * 7919 + i;
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    int maxn = sizes[NSIZES - 1];
    int *sendbuf = malloc(sizeof(int) * (size_t)maxn * NSIZES);
    int *recvbuf = malloc(sizeof(int) * (size_t)maxn * NSIZES);
    MPI_Request reqs[2 * NSIZES];
    MPI_Status stats[2 * NSIZES];

    /* Isend / Irecv of every size, completed with Waitall. */
    for (int k = 0; k < NSIZES; k++) {
        fill(sendbuf + k * maxn, sizes[k], rank * 100 + k);
        check_mpi(MPI_Irecv(recvbuf + k * maxn, maxn, MPI_INT, left, k, MPI_COMM_WORLD, &reqs[k]));
        check_mpi(MPI_Isend(sendbuf + k * maxn, sizes[k], MPI_INT, right, k, MPI_COMM_WORLD,
                            &reqs[NSIZES + k]));
    }
    check_mpi(MPI_Waitall(2 * NSIZES, reqs, stats));
    for (int k = 0; k < NSIZES; k++) {
        int count;
        MPI_Get_count(&stats[k], MPI_INT, &count);
        tlog("waitall size %d: source %d tag %d count %d sum %lu", sizes[k], stats[k].MPI_SOURCE,
             stats[k].MPI_TAG, count, tsum(recvbuf + k * maxn, sizeof(int) * (size_t)count));
        check(reqs[k] == MPI_REQUEST_NULL);
    }

    /* Issend and Irecv with MPI_ANY_SOURCE / MPI_ANY_TAG, completed with Waitany. */
    for (int k = 0; k < NSIZES; k++) {
        check_mpi(MPI_Irecv(recvbuf + k * maxn, maxn, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                            MPI_COMM_WORLD, &reqs[k]));
    }
    for (int k = 0; k < NSIZES; k++)
        check_mpi(MPI_Issend(sendbuf + k * maxn, sizes[k], MPI_INT, right, 100 + k, MPI_COMM_WORLD,
                             &reqs[NSIZES + k]));
    unsigned long anysum = 0;
    for (int done = 0; done < 2 * NSIZES; done++) {
        int index;
        MPI_Status st;
        check_mpi(MPI_Waitany(2 * NSIZES, reqs, &index, &st));
        check(index >= 0 && index < 2 * NSIZES);
        if (index < NSIZES) {
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            anysum += (unsigned long)(st.MPI_TAG * 1000 + count) + (unsigned long)st.MPI_SOURCE;
        }
    }
    tlog("waitany: sum of tags, counts, sources %lu", anysum);
    int index;
    check_mpi(MPI_Waitany(2 * NSIZES, reqs, &index, MPI_STATUS_IGNORE));
    check(index == MPI_UNDEFINED);

    /* Ibsend with an attached buffer, Irsend after a barrier, Waitsome. */
    int bufsize = (int)sizeof(int) * maxn + MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)bufsize);
    MPI_Buffer_attach(attached, bufsize);
    check_mpi(MPI_Irecv(recvbuf, maxn, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Irecv(recvbuf + maxn, maxn, MPI_INT, left, 8, MPI_COMM_WORLD, &reqs[1]));
    MPI_Barrier(MPI_COMM_WORLD); /* both receives are posted everywhere: Irsend is legal */
    check_mpi(MPI_Ibsend(sendbuf, maxn, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[2]));
    check_mpi(MPI_Irsend(sendbuf + maxn, 33, MPI_INT, right, 8, MPI_COMM_WORLD, &reqs[3]));
    int completed = 0, seen_tag[2] = {-1, -1}, seen_count[2] = {-1, -1};
    while (completed < 4) {
        int outcount, indices[4];
        check_mpi(MPI_Waitsome(4, reqs, &outcount, indices, stats));
        for (int i = 0; i < outcount; i++)
            if (indices[i] < 2) { /* completion order varies: log in request order below */
                seen_tag[indices[i]] = stats[i].MPI_TAG;
                MPI_Get_count(&stats[i], MPI_INT, &seen_count[indices[i]]);
            }
        completed += outcount;
    }
    for (int i = 0; i < 2; i++)
        tlog("waitsome: request %d tag %d count %d", i, seen_tag[i], seen_count[i]);
    MPI_Buffer_detach(&attached, &bufsize);
    free(attached);

    /* Test, Testany, Testsome, Testall loops. */
    check_mpi(MPI_Irecv(recvbuf, maxn, MPI_INT, left, 9, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Isend(sendbuf, 1000, MPI_INT, right, 9, MPI_COMM_WORLD, &reqs[1]));
    int flag = 0;
    MPI_Status st;
    while (!flag)
        check_mpi(MPI_Test(&reqs[0], &flag, &st));
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    tlog("test: tag %d count %d", st.MPI_TAG, count);
    flag = 0;
    while (!flag)
        check_mpi(MPI_Testany(2, reqs, &index, &flag, &st));
    check(index == 1 || index == MPI_UNDEFINED);
    check_mpi(MPI_Irecv(recvbuf, maxn, MPI_INT, left, 10, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Isend(sendbuf, 10, MPI_INT, right, 10, MPI_COMM_WORLD, &reqs[1]));
    completed = 0;
    while (completed < 2) {
        int outcount, indices[2];
        check_mpi(MPI_Testsome(2, reqs, &outcount, indices, stats));
        if (outcount != MPI_UNDEFINED)
            completed += outcount;
    }
    check_mpi(MPI_Irecv(recvbuf, maxn, MPI_INT, left, 11, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Isend(sendbuf, 11, MPI_INT, right, 11, MPI_COMM_WORLD, &reqs[1]));
    flag = 0;
    while (!flag)
        check_mpi(MPI_Testall(2, reqs, &flag, stats));
    MPI_Get_count(&stats[0], MPI_INT, &count);
    tlog("testall: tag %d count %d", stats[0].MPI_TAG, count);

    /* Request_get_status does not free; Cancel an unmatched receive. */
    check_mpi(MPI_Irecv(recvbuf, maxn, MPI_INT, left, 12, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Isend(sendbuf, 12, MPI_INT, right, 12, MPI_COMM_WORLD, &reqs[1]));
    flag = 0;
    while (!flag)
        check_mpi(MPI_Request_get_status(reqs[0], &flag, &st));
    check(reqs[0] != MPI_REQUEST_NULL);
    check_mpi(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    check_mpi(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    check(reqs[0] == MPI_REQUEST_NULL);
    check_mpi(MPI_Irecv(recvbuf, maxn, MPI_INT, left, 999, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Cancel(&reqs[0]));
    check_mpi(MPI_Wait(&reqs[0], &st));
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    tlog("cancel: cancelled %d", cancelled);

    /* Request_free on a send, completion known through a reply. */
    check_mpi(MPI_Isend(sendbuf, 5, MPI_INT, right, 13, MPI_COMM_WORLD, &reqs[0]));
    check_mpi(MPI_Request_free(&reqs[0]));
    check(reqs[0] == MPI_REQUEST_NULL);
    check_mpi(MPI_Recv(recvbuf, maxn, MPI_INT, left, 13, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    tlog("request_free: received count %d sum %lu", count, tsum(recvbuf, 5 * sizeof(int)));

    /* Iprobe, Improbe and Imrecv. */
    check_mpi(MPI_Isend(sendbuf, 77, MPI_INT, right, 14, MPI_COMM_WORLD, &reqs[1]));
    flag = 0;
    while (!flag)
        check_mpi(MPI_Iprobe(left, 14, MPI_COMM_WORLD, &flag, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    tlog("iprobe: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_Message msg = MPI_MESSAGE_NULL;
    flag = 0;
    while (!flag)
        check_mpi(MPI_Improbe(left, 14, MPI_COMM_WORLD, &flag, &msg, &st));
    check_mpi(MPI_Imrecv(recvbuf, maxn, MPI_INT, &msg, &reqs[0]));
    check(msg == MPI_MESSAGE_NULL);
    check_mpi(MPI_Waitall(2, reqs, stats));
    MPI_Get_count(&stats[0], MPI_INT, &count);
    tlog("imrecv: count %d sum %lu", count, tsum(recvbuf, sizeof(int) * (size_t)count));

    free(sendbuf);
    free(recvbuf);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
