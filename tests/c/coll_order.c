/*
 * Blocking and nonblocking collectives called in a different order on
 * different ranks of one communicator: the even ranks post the nonblocking
 * one and then call the blocking one, the odd ranks the reverse, and each
 * waits for the nonblocking one last. The standard asks for one order on
 * every rank, but both MPI libraries keep the two kinds apart and run such a
 * program, and so does Tandem (coll/schedule.h). Pairs: MPI_Iallreduce with
 * MPI_Barrier, MPI_Ibcast with MPI_Allreduce, MPI_Igather with MPI_Bcast,
 * MPI_Ibarrier with MPI_Alltoall, each small (Tandem's shared-memory slots)
 * and large (point-to-point schedules).
 *
 * Printed: every rank's results, checked against what they must be.
 */
#include "testlib.h"

static int rank, size;

typedef enum { IALLREDUCE_BARRIER, IBCAST_ALLREDUCE, IGATHER_BCAST, IBARRIER_ALLTOALL, PAIRS } pair;

static void run(pair which, int n)
{
    int *a = malloc(sizeof(int) * (size_t)n * (size_t)size);
    int *b = malloc(sizeof(int) * (size_t)n * (size_t)size);
    int *c = malloc(sizeof(int) * (size_t)n * (size_t)size);
    int *d = malloc(sizeof(int) * (size_t)n * (size_t)size);
    int bad = 0, root = size - 1;
    for (int i = 0; i < n * size; i++) {
        a[i] = rank + i;
        b[i] = c[i] = d[i] = -1;
    }
    if (rank == root)
        for (int i = 0; i < n; i++)
            c[i] = 3 * i + 1;
    MPI_Request request;
    for (int step = 0; step < 2; step++) {
        int nonblocking_now = (rank % 2 == 0) == (step == 0);
        if (nonblocking_now) {
            switch (which) {
            case IALLREDUCE_BARRIER:
                check_mpi(MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request));
                break;
            case IBCAST_ALLREDUCE:
                check_mpi(MPI_Ibcast(c, n, MPI_INT, root, MPI_COMM_WORLD, &request));
                break;
            case IGATHER_BCAST:
                check_mpi(MPI_Igather(a, n, MPI_INT, b, n, MPI_INT, 0, MPI_COMM_WORLD, &request));
                break;
            case IBARRIER_ALLTOALL: check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request)); break;
            case PAIRS: break;
            }
        } else {
            switch (which) {
            case IALLREDUCE_BARRIER: check_mpi(MPI_Barrier(MPI_COMM_WORLD)); break;
            case IBCAST_ALLREDUCE:
                check_mpi(MPI_Allreduce(a, d, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
                break;
            case IGATHER_BCAST: check_mpi(MPI_Bcast(c, n, MPI_INT, root, MPI_COMM_WORLD)); break;
            case IBARRIER_ALLTOALL:
                check_mpi(MPI_Alltoall(a, n, MPI_INT, d, n, MPI_INT, MPI_COMM_WORLD));
                break;
            case PAIRS: break;
            }
        }
    }
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int i = 0; i < n && !bad; i++) {
        switch (which) {
        case IALLREDUCE_BARRIER: bad = b[i] != size * i + size * (size - 1) / 2; break;
        case IBCAST_ALLREDUCE: bad = c[i] != 3 * i + 1 || d[i] != size - 1 + i; break;
        case IGATHER_BCAST:
            bad = c[i] != 3 * i + 1;
            for (int r = 0; r < size && rank == 0; r++)
                bad |= b[r * n + i] != r + i;
            break;
        case IBARRIER_ALLTOALL:
            for (int r = 0; r < size; r++)
                bad |= d[r * n + i] != r + rank * n + i;
            break;
        case PAIRS: break;
        }
    }
    check(!bad);
    static const char *const names[PAIRS] = {"iallreduce/barrier", "ibcast/allreduce",
                                             "igather/bcast", "ibarrier/alltoall"};
    size_t bytes = sizeof(int) * (size_t)n * (size_t)size;
    tlog("%s, %d ints: %lx %lx %lx", names[which], n, tsum(b, bytes), tsum(c, bytes),
         tsum(d, bytes));
    free(a);
    free(b);
    free(c);
    free(d);
}

int main(int argc, char **argv)
{
    int left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    for (int n = 4; n <= 1 << 16; n *= 128)
        for (int which = 0; which < PAIRS; which++)
            run((pair)which, n);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
