/* Blocking point-to-point in every mode, probes, matched probes, and an error
   returned through the communicator's error handler. */
#include "testlib.h"

int main(int argc, char **argv)
{
    int rank, size, left, right, count;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    enum { N = 50000 };
    int *a = malloc(sizeof(int) * N), *b = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++)
        a[i] = rank * N + i;
    MPI_Status st;

    /* Sendrecv, then Sendrecv_replace. */
    check_mpi(MPI_Sendrecv(a, N, MPI_INT, right, 1, b, N, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    tlog("sendrecv: source %d count %d sum %lu", st.MPI_SOURCE, count, tsum(b, sizeof(int) * N));
    check_mpi(MPI_Sendrecv_replace(b, N, MPI_INT, right, 2, left, 2, MPI_COMM_WORLD, &st));
    tlog("sendrecv_replace: source %d sum %lu", st.MPI_SOURCE, tsum(b, sizeof(int) * N));

    /* Send / Ssend / Bsend / Rsend to the next rank, rank by rank. */
    int bufsize = (int)sizeof(int) * N + MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)bufsize);
    MPI_Buffer_attach(attached, bufsize);
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request r;
        check_mpi(MPI_Irecv(b, N, MPI_INT, left, 10 + mode, MPI_COMM_WORLD, &r));
        MPI_Barrier(MPI_COMM_WORLD); /* receive posted everywhere: Rsend is legal */
        int n = 1000 * (mode + 1);
        if (mode == 0)
            check_mpi(MPI_Send(a, n, MPI_INT, right, 10 + mode, MPI_COMM_WORLD));
        else if (mode == 1)
            check_mpi(MPI_Ssend(a, n, MPI_INT, right, 10 + mode, MPI_COMM_WORLD));
        else if (mode == 2)
            check_mpi(MPI_Bsend(a, n, MPI_INT, right, 10 + mode, MPI_COMM_WORLD));
        else
            check_mpi(MPI_Rsend(a, n, MPI_INT, right, 10 + mode, MPI_COMM_WORLD));
        check_mpi(MPI_Wait(&r, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        tlog("mode %d: tag %d count %d sum %lu", mode, st.MPI_TAG, count,
             tsum(b, sizeof(int) * (size_t)count));
    }
    MPI_Buffer_detach(&attached, &bufsize);
    free(attached);

    /* Probe then Recv; Mprobe then Mrecv; zero-size message. */
    MPI_Request r;
    check_mpi(MPI_Isend(a, 321, MPI_INT, right, 20, MPI_COMM_WORLD, &r));
    check_mpi(MPI_Probe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    tlog("probe: tag %d count %d", st.MPI_TAG, count);
    check_mpi(
        MPI_Recv(b, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_mpi(MPI_Isend(a, 0, MPI_INT, right, 21, MPI_COMM_WORLD, &r));
    MPI_Message msg;
    check_mpi(MPI_Mprobe(left, 21, MPI_COMM_WORLD, &msg, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    check_mpi(MPI_Mrecv(b, N, MPI_INT, &msg, &st));
    check(msg == MPI_MESSAGE_NULL);
    tlog("mprobe/mrecv: tag %d count %d", st.MPI_TAG, count);
    check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* An invalid destination: the error reaches the application's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc = MPI_Send(a, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    tlog("invalid rank: error class is MPI_ERR_RANK: %d", cls == MPI_ERR_RANK);
    rc = MPI_Recv(b, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    tlog("null communicator: error class is MPI_ERR_COMM: %d", cls == MPI_ERR_COMM);

    free(a);
    free(b);
    rc = tfinish();
    MPI_Finalize();
    return rc;
}
