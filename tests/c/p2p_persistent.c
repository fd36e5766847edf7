/* Persistent requests in every mode, started with Start and Startall many times. */
#include "testlib.h"

int main(int argc, char **argv)
{
    int rank, size, left, right, count;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    enum { N = 20000, ITERS = 5 };
    double *out = malloc(sizeof(double) * N), *in = malloc(sizeof(double) * 4 * N);
    int bufsize = (int)sizeof(double) * N + MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)bufsize);
    MPI_Buffer_attach(attached, bufsize);

    MPI_Request recv[4], send[4];
    for (int m = 0; m < 4; m++)
        check_mpi(MPI_Recv_init(in + m * N, N, MPI_DOUBLE, left, m, MPI_COMM_WORLD, &recv[m]));
    check_mpi(MPI_Send_init(out, N, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &send[0]));
    check_mpi(MPI_Ssend_init(out, N / 2, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &send[1]));
    check_mpi(MPI_Bsend_init(out, N / 4, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &send[2]));
    check_mpi(MPI_Rsend_init(out, 3, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &send[3]));

    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < N; i++)
            out[i] = rank + it * 0.5 + i;
        check_mpi(MPI_Startall(4, recv));
        MPI_Barrier(MPI_COMM_WORLD); /* receives are posted: Rsend is legal */
        for (int m = 0; m < 4; m++)
            check_mpi(MPI_Start(&send[m]));
        MPI_Status st[4];
        check_mpi(MPI_Waitall(4, send, MPI_STATUSES_IGNORE));
        check_mpi(MPI_Waitall(4, recv, st));
        for (int m = 0; m < 4; m++) {
            MPI_Get_count(&st[m], MPI_DOUBLE, &count);
            tlog("iteration %d mode %d: tag %d count %d sum %lu", it, m, st[m].MPI_TAG, count,
                 tsum(in + m * N, sizeof(double) * (size_t)count));
            check(recv[m] != MPI_REQUEST_NULL); /* persistent requests stay allocated */
        }
    }
    for (int m = 0; m < 4; m++) {
        check_mpi(MPI_Request_free(&recv[m]));
        check_mpi(MPI_Request_free(&send[m]));
        check(recv[m] == MPI_REQUEST_NULL && send[m] == MPI_REQUEST_NULL);
    }
    MPI_Buffer_detach(&attached, &bufsize);
    free(attached);
    free(out);
    free(in);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
