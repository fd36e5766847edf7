/*
 * Calls Tandem does not intercept, beyond the standard it builds on, pass
 * through to the MPI library and meet Tandem's state without harm:
 *   - persistent collectives (MPI-4's MPI_*_init in MPICH 4.0; Open MPI
 *     4.1's MPIX_*_init extension), started three times and completed through
 *     Tandem's MPI_Start and MPI_Wait;
 *   - MPICH: partitioned communication (MPI_Psend_init, MPI_Precv_init,
 *     MPI_Pready, MPI_Parrived); a generalized request with a poll function
 *     (MPIX_Grequest_start) completed through MPI_Wait; a session
 *     (MPI_Session_init) and a communicator made from its group;
 *   - Open MPI: MPIX_Query_cuda_support.
 * MPICH 4.0.2's ch4 device implements none of its fault-tolerance calls
 * (MPIX_Comm_agree, _shrink, _revoke, _failure_ack, _failure_get_acked stop
 * the program on an assertion, with Tandem or without); the other
 * extensions (MPIX_Query_*_support, the error class and string deletion)
 * touch nothing of Tandem's (docs/COMPATIBILITY.md).
 *
 * Printed: the results of each call.
 */
#include "testlib.h"

#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

static int rank, size;

/* A persistent allreduce, broadcast and barrier, each started three times. */
static void persistent_collectives(void)
{
#if defined(MPICH_VERSION) && MPI_VERSION >= 4
#define ALLREDUCE_INIT(...) MPI_Allreduce_init(__VA_ARGS__)
#define BCAST_INIT(...) MPI_Bcast_init(__VA_ARGS__)
#define BARRIER_INIT(...) MPI_Barrier_init(__VA_ARGS__)
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define ALLREDUCE_INIT(...) MPIX_Allreduce_init(__VA_ARGS__)
#define BCAST_INIT(...) MPIX_Bcast_init(__VA_ARGS__)
#define BARRIER_INIT(...) MPIX_Barrier_init(__VA_ARGS__)
#endif
#ifdef ALLREDUCE_INIT
    int in[4], out[4], data[4];
    MPI_Request requests[3];
    check_mpi(
        ALLREDUCE_INIT(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[0]));
    check_mpi(BCAST_INIT(data, 4, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[1]));
    check_mpi(BARRIER_INIT(MPI_COMM_WORLD, MPI_INFO_NULL, &requests[2]));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++) {
            in[i] = rank * round + i;
            data[i] = rank == 0 ? 10 * round + i : -1;
        }
        check_mpi(MPI_Startall(3, requests));
        check_mpi(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++) {
            check(out[i] == round * size * (size - 1) / 2 + size * i);
            check(data[i] == 10 * round + i);
        }
        tlog("persistent collectives, round %d: %d %d %d %d, %d", round, out[0], out[1], out[2],
             out[3], data[3]);
    }
    for (int i = 0; i < 3; i++)
        check_mpi(MPI_Request_free(&requests[i]));
#endif
}

#if defined(MPICH_VERSION) && MPI_VERSION >= 4
/* Each rank sends 4 partitions of 2 ints to the next rank. */
static void partitioned(void)
{
    enum { PARTS = 4, EACH = 2 };
    int out[PARTS * EACH], in[PARTS * EACH], arrived = 0;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request send, recv;
    check_mpi(
        MPI_Precv_init(in, PARTS, EACH, MPI_INT, from, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &recv));
    check_mpi(
        MPI_Psend_init(out, PARTS, EACH, MPI_INT, to, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &send));
    check_mpi(MPI_Start(&recv));
    check_mpi(MPI_Start(&send));
    for (int p = PARTS - 1; p >= 0; p--) {
        for (int i = 0; i < EACH; i++)
            out[p * EACH + i] = 100 * rank + p * EACH + i;
        check_mpi(MPI_Pready(p, send));
    }
    while (!arrived)
        check_mpi(MPI_Parrived(recv, PARTS - 1, &arrived));
    check_mpi(MPI_Wait(&send, MPI_STATUS_IGNORE));
    check_mpi(MPI_Wait(&recv, MPI_STATUS_IGNORE));
    for (int i = 0; i < PARTS * EACH; i++)
        check(in[i] == 100 * from + i);
    tlog("partitioned: %d .. %d from %d", in[0], in[PARTS * EACH - 1], from);
    check_mpi(MPI_Request_free(&send));
    check_mpi(MPI_Request_free(&recv));
}

static int poll_calls;

static int poll_complete(void *state, MPI_Status *status)
{
    (void)status;
    if (++poll_calls == 3)
        MPI_Grequest_complete(*(MPI_Request *)state);
    return MPI_SUCCESS;
}

/* Waits by polling until the request is complete. */
static int wait_polling(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    for (int i = 0; i < count; i++)
        while (poll_calls < 3)
            poll_complete(states[i], status);
    return MPI_SUCCESS;
}

static int query(void *state, MPI_Status *status)
{
    (void)state;
    MPI_Status_set_elements(status, MPI_BYTE, 7);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_state(void *state)
{
    (void)state;
    return MPI_SUCCESS;
}

static int cancel_nothing(void *state, int complete)
{
    (void)state, (void)complete;
    return MPI_SUCCESS;
}

/* A generalized request that its poll function completes on the third poll
   (MPI_Wait polls, or calls the wait function, which polls). */
static void polled_request(void)
{
    static MPI_Request request, handle;
    MPI_Status status;
    int count = -1;
    check_mpi(MPIX_Grequest_start(query, free_state, cancel_nothing, poll_complete, wait_polling,
                                  &handle, &request));
    handle = request;
    check_mpi(MPI_Wait(&request, &status));
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count));
    check(count == 7 && poll_calls >= 3);
    tlog("polled generalized request: %d bytes", count);
}

/* A session, and a communicator of its world group. */
static void session(void)
{
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comm;
    int sum = 0, one = 1;
    check_mpi(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
    check_mpi(MPI_Group_from_session_pset(session, "mpi://WORLD", &group));
    check_mpi(MPI_Comm_create_from_group(group, "tandem.test.session", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &comm));
    check_mpi(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
    check(sum == size);
    check_mpi(MPI_Comm_free(&comm));
    check_mpi(MPI_Group_free(&group));
    check_mpi(MPI_Session_finalize(&session));
    tlog("session: allreduce %d", sum);
}
#endif

int main(int argc, char **argv)
{
    int left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    persistent_collectives();
#if defined(MPICH_VERSION) && MPI_VERSION >= 4
    partitioned();
    polled_request();
    session();
#endif
#if defined(OPEN_MPI)
    tlog("cuda support: %d", MPIX_Query_cuda_support());
#endif
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
