/*
 * Errors inside nonblocking operations reach the application: a receive
 * buffer too small for the message (MPI_ERR_TRUNCATE) completed by MPI_Wait,
 * MPI_Waitall (MPI_ERR_IN_STATUS, the status naming the failed request),
 * MPI_Test and MPI_Waitany, and by the blocking MPI_Recv and MPI_Sendrecv,
 * with the application's own error handler on
 * MPI_COMM_WORLD. Under TANDEM_PROGRESS=proxy these are generalized requests
 * completed by Tandem's thread; the return codes, the statuses and the number
 * of handler calls must be those of the MPI library alone.
 */
#include "testlib.h"

enum { N = 20000, SHORT = 100 };

static int handler_calls;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    __atomic_add_fetch(&handler_calls, 1, __ATOMIC_RELAXED);
}

static int error_class(int code)
{
    int cls = code;
    MPI_Error_class(code, &cls);
    return cls;
}

static const char *name(int cls)
{
    return cls == MPI_SUCCESS         ? "MPI_SUCCESS"
           : cls == MPI_ERR_TRUNCATE  ? "MPI_ERR_TRUNCATE"
           : cls == MPI_ERR_IN_STATUS ? "MPI_ERR_IN_STATUS"
                                      : "another error";
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    MPI_Errhandler handler;
    MPI_Comm_create_errhandler(count_errors, &handler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
    int *out = malloc(sizeof(int) * N), *in = malloc(sizeof(int) * N * 2);
    for (int i = 0; i < N; i++)
        out[i] = i + rank;
    MPI_Request sends[4], recvs[2];
    MPI_Status st, sts[2];
    int count, rc;

    /* Wait on a truncated receive. */
    MPI_Irecv(in, SHORT, MPI_INT, left, 1, MPI_COMM_WORLD, &recvs[0]);
    MPI_Isend(out, N, MPI_INT, right, 1, MPI_COMM_WORLD, &sends[0]);
    rc = MPI_Wait(&recvs[0], &st);
    tlog("Wait: %s, request %s", name(error_class(rc)),
         recvs[0] == MPI_REQUEST_NULL ? "freed" : "kept");

    /* Waitall over a truncated and a good receive. */
    MPI_Irecv(in, SHORT, MPI_INT, left, 2, MPI_COMM_WORLD, &recvs[0]);
    MPI_Irecv(in + N, N, MPI_INT, left, 3, MPI_COMM_WORLD, &recvs[1]);
    MPI_Isend(out, N, MPI_INT, right, 2, MPI_COMM_WORLD, &sends[1]);
    MPI_Isend(out, N, MPI_INT, right, 3, MPI_COMM_WORLD, &sends[2]);
    rc = MPI_Waitall(2, recvs, sts);
    tlog("Waitall: %s, first status %s", name(error_class(rc)),
         name(error_class(sts[0].MPI_ERROR)));
    /* The good receive either completed (MPI_SUCCESS) or, as MPICH leaves it,
       is still pending (MPI_ERR_PENDING); both are what MPI allows. */
    check(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING);
    if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
        check_mpi(MPI_Wait(&recvs[1], &sts[1]));
    MPI_Get_count(&sts[1], MPI_INT, &count);
    tlog("good receive: count %d, from left %d, tag %d, data %s", count, sts[1].MPI_SOURCE == left,
         sts[1].MPI_TAG, in[N + N - 1] == N - 1 + left ? "right" : "wrong");

    /* Test until done, then Waitany, on truncated receives. */
    int flag = 0;
    MPI_Irecv(in, SHORT, MPI_INT, left, 4, MPI_COMM_WORLD, &recvs[0]);
    MPI_Isend(out, N, MPI_INT, right, 4, MPI_COMM_WORLD, &sends[3]);
    do
        rc = MPI_Test(&recvs[0], &flag, &st);
    while (!flag && rc == MPI_SUCCESS);
    tlog("Test: %s, flag %d", name(error_class(rc)), flag);
    MPI_Waitall(4, sends, MPI_STATUSES_IGNORE);

    int index = -1;
    recvs[0] = MPI_REQUEST_NULL;
    MPI_Irecv(in, SHORT, MPI_INT, left, 5, MPI_COMM_WORLD, &recvs[1]);
    MPI_Isend(out, N, MPI_INT, right, 5, MPI_COMM_WORLD, &sends[0]);
    rc = MPI_Waitany(2, recvs, &index, &st);
    tlog("Waitany: %s, index %d", name(error_class(rc)), index);
    MPI_Wait(&sends[0], MPI_STATUS_IGNORE);

    /* Blocking calls whose receive is too short (under TANDEM_WAIT=lend,
       Tandem posts them nonblocking and polls them): one handler call each. */
    MPI_Barrier(MPI_COMM_WORLD);
    int before = handler_calls;
    MPI_Isend(out, N, MPI_INT, right, 6, MPI_COMM_WORLD, &sends[0]);
    rc = MPI_Recv(in, SHORT, MPI_INT, left, 6, MPI_COMM_WORLD, &st);
    tlog("Recv: %s, handler calls %d", name(error_class(rc)), handler_calls - before);
    MPI_Wait(&sends[0], MPI_STATUS_IGNORE);
    before = handler_calls;
    rc = MPI_Sendrecv(out, N, MPI_INT, right, 7, in, SHORT, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    tlog("Sendrecv: %s, handler calls %d", name(error_class(rc)), handler_calls - before);

    MPI_Barrier(MPI_COMM_WORLD);
    tlog("handler called: %s", handler_calls > 0 ? "yes" : "no");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&handler);
    free(out);
    free(in);
    int failed = tfinish();
    MPI_Finalize();
    return failed;
}
