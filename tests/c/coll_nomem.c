/*
 * Out of memory inside Tandem while it builds a collective (preload
 * tests/c/inject_nomem.c, armed here around two calls): MPI_Iallreduce and
 * MPI_Allreduce return MPI_ERR_NO_MEM through the communicator's own error
 * handler, on every rank alike, instead of leaving the call to the MPI
 * library while the other ranks run it in Tandem. The next collectives work.
 * Without the injection library both calls succeed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "testlib.h"

static int handled;

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    handled++;
}

static const char *class_name(int rc)
{
    int class = MPI_SUCCESS;
    MPI_Error_class(rc, &class);
    return class == MPI_SUCCESS      ? "MPI_SUCCESS"
           : class == MPI_ERR_NO_MEM ? "MPI_ERR_NO_MEM"
                                     : "other";
}

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    void (*arm)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "inject_nomem_arm");
    MPI_Comm comm;
    MPI_Errhandler errhandler;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(handler, &errhandler);
    MPI_Comm_set_errhandler(comm, errhandler);
    int in = rank + 1, out = 0, want = size * (size + 1) / 2;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm)); /* its state is made */

    if (arm)
        arm(1);
    int nonblocking = MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm, &request);
    int blocking = MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
    if (arm)
        arm(0);
    if (nonblocking == MPI_SUCCESS)
        check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));

    out = 0;
    check_mpi(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm, &request));
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));
    int after = out;
    check_mpi(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm));
    tlog("injection %s: nonblocking %s, blocking %s, handler called %d times, afterwards %s",
         arm ? "armed" : "absent", class_name(nonblocking), class_name(blocking), handled,
         after == want && out == want ? "right" : "wrong");
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&errhandler);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
